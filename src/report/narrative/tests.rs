//! Unit tests of `narrative.rs`.

use super::*;

#[test]
fn clock_reads_as_people_say_it() {
    assert_eq!(clock(45.0), "45 s");
    assert_eq!(clock(2.5), "2.5 s");
    assert_eq!(clock(750.0), "12 min 30 s");
    assert_eq!(clock(600.0), "10 min");
    assert_eq!(clock(7500.0), "2 h 5 min");
    assert_eq!(clock(7200.0), "2 h");
}

fn stretches(health: &str) -> Vec<Stretch> {
    health
        .chars()
        .enumerate()
        .map(|(k, c)| Stretch {
            from_s: 10.0 * k as f64,
            to_s: 10.0 * (k + 1) as f64,
            value: Some(if c == 'h' { 1.0 } else { 0.0 }),
            healthy: c == 'h',
        })
        .collect()
}

fn shape(runs: &[Run]) -> Vec<(bool, f64, f64)> {
    runs.iter().map(|r| (r.healthy, r.from_s, r.to_s)).collect()
}

/// One noisy stretch never splits a run in two (nor is a turn of the story), but a
/// change that lasts is told, and so is a short one at either end of the run.
#[test]
fn noise_is_not_a_turn_of_the_story() {
    let runs = health_runs(&stretches("hhhhuhhhhh"), 20.0);
    assert_eq!(shape(&runs), [(true, 0.0, 100.0)]);
    let runs = health_runs(&stretches("hhhuuuuhuuu"), 20.0);
    assert_eq!(shape(&runs), [(true, 0.0, 30.0), (false, 30.0, 110.0)]);
    let runs = health_runs(&stretches("hhhuuuhhhh"), 20.0);
    assert_eq!(
        shape(&runs),
        [(true, 0.0, 30.0), (false, 30.0, 60.0), (true, 60.0, 100.0)]
    );
    let runs = health_runs(&stretches("uhhhhhhhhu"), 20.0);
    assert_eq!(
        shape(&runs),
        [(false, 0.0, 10.0), (true, 10.0, 90.0), (false, 90.0, 100.0)]
    );
}

#[test]
fn the_mean_value_weighs_stretches_by_their_overlap() {
    let s = stretches("hu");
    assert_eq!(mean_value(&s, 0.0, 20.0), Some(0.5));
    assert_eq!(mean_value(&s, 5.0, 20.0), Some(5.0 / 15.0));
    assert_eq!(mean_value(&s, 20.0, 30.0), None);
}

/// What sustains a fall (issue 24, item 5): a fall that outlasts its trigger is a
/// loop; one that ends with its trigger, or no fall at all, is not.
#[test]
fn a_fall_that_outlasts_its_trigger_is_sustained() {
    let sc = crate::scenario::Loader::resolve(std::path::Path::new("retry-storm"))
        .unwrap()
        .load(None, &[])
        .unwrap();
    let columns = crate::scenario::columns::columns(&sc.config);
    let trigger = |from: f64, to: f64| Marker {
        kind: MarkerKind::Event,
        name: "t".into(),
        label: "t".into(),
        start_s: from,
        end_s: Some(to),
    };
    let told = |health: &str, markers: &[Marker]| {
        let st = stretches(health);
        // Rows of 10 s without values: the stretches carry the health.
        let rows: Vec<Vec<f64>> = (0..health.len())
            .map(|k| {
                let mut row = vec![f64::NAN; columns.len()];
                row[0] = 10.0 * k as f64;
                row
            })
            .collect();
        sustained(&Story {
            cfg: &sc.config,
            columns: &columns,
            rows: &rows,
            markers,
            stretches: &st,
            measure: String::new(),
            health: Health::Above(0.5),
            class: None,
            end_s: 10.0 * health.len() as f64,
            finished: true,
        })
    };
    // The trigger from 30 s to 60 s.
    let during = [trigger(30.0, 60.0)];
    assert_eq!(told("hhhhhhhhhh", &during), Sustained::Healthy);
    assert_eq!(told("hhhuuuhhhh", &during), Sustained::Transient);
    assert_eq!(told("", &during), Sustained::Unknown);
    let Sustained::Loop {
        since_s, until_s, ..
    } = told("hhhuuuuuuu", &during)
    else {
        panic!("a fall to the end is sustained");
    };
    assert_eq!((since_s, until_s), (30.0, None));
    // Two rows' worth (20 s) past the trigger's end is noise; three are not.
    assert_eq!(told("hhhuuuuuhh", &during), Sustained::Transient);
    let Sustained::Loop { until_s, .. } = told("hhhuuuuuuhh", &during) else {
        panic!("a fall 30 s past its trigger is sustained");
    };
    assert_eq!(until_s, Some(90.0));
    // Without a trigger, a fall is its own.
    assert!(matches!(told("hhhuuuhhhh", &[]), Sustained::Loop { .. }));
}

#[test]
fn measures_in_words() {
    assert_eq!(
        measure_words("goodput_ratio.request"),
        "the goodput ratio of `request`"
    );
    assert_eq!(
        measure_words("slo.api"),
        "the share of SLO windows `api` meets"
    );
    assert_eq!(measure_words("db.utilization"), "`db.utilization`");
}
