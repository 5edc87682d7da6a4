//! `timeseries.csv`: the columns of a class, a pool with replicas and a cache.

use super::*;
use crate::model::metrics::TimeSeries;
use crate::scenario::{Column, Measure, Owner};

/// The columns of one class, one pool with replicas and one cache, as the schema has them.
fn series() -> TimeSeries {
    let mut columns = vec![Column {
        owner: Owner::Time,
        measure: Measure::Time,
        name: "time_s".into(),
    }];
    let mut add = |owner, component: &str, measure: Measure| {
        columns.push(Column {
            owner,
            measure,
            name: format!("{component}.{}", measure.suffix()),
        })
    };
    // An open class without an SLO measure: no population or slow-request column.
    for m in
        Measure::of("class").filter(|&m| !matches!(m, Measure::UsersWaiting | Measure::SlowPerS))
    {
        add(Owner::Class(0), "request", m);
    }
    for m in [
        Measure::Utilization,
        Measure::QueueLen,
        Measure::QueriesPerS,
        Measure::PrimaryUtilization,
    ] {
        add(Owner::Pool(0), "db", m);
    }
    add(Owner::Cache(0), "memcached", Measure::HitRatio);
    let nan = f64::NAN;
    TimeSeries {
        columns,
        rows: vec![
            // A quiet step: nothing succeeded, so no latency.
            vec![0.0, 5.0, 5.0, 0.0, 0.0, 0.0, nan, 0.0, 0.0, 5.0, 0.0, nan],
            vec![
                5.0, 5.2, 6.4, 5.0, 0.2, 0.0, 0.123, 0.5, 1.25, 6.4, 0.75, 0.9,
            ],
            // A storm: large rates, long queues, fractions at full precision.
            vec![
                10.0,
                5.0,
                123.456789,
                1.0 / 3.0,
                4.6,
                0.2,
                29.99,
                1.0,
                1e6,
                1e15,
                1.0,
                1e-7,
            ],
        ],
    }
}

#[test]
fn timeseries_csv_golden() {
    golden("timeseries.csv", &timeseries_csv(&series()));
}
