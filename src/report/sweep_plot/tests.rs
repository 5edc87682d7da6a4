//! Unit tests of `sweep_plot.rs`.

use super::*;

/// Labels stay inside the plot and off their lines (finding 16 of the new-user review:
/// "spontaneous" clipped at the right edge, "overload 119.79" ran into the right-hand
/// axis, "tipping 97.08" was printed on its own line).
/// A header too long for its picture breaks after the last separator that fits.
#[test]
fn a_long_header_breaks_at_the_last_separator_that_fits() {
    let fits = |t: &str| t.len() <= 20;
    assert_eq!(
        wrap_point("aaaa, bbbb; cccc, dddddddddddddd", &fits),
        Some(17)
    );
    assert_eq!(wrap_point("aaaaaaaaaaaaaaaaaaaaaaa, b", &fits), None);
}

#[test]
fn labels_stay_inside_the_plot_and_beside_their_lines() {
    // A name centred near the right edge moves left to fit; one in the middle stays.
    assert_eq!(centred_within(690, 80, (100, 700)), 618);
    assert_eq!(centred_within(105, 80, (100, 700)), 102);
    assert_eq!(centred_within(400, 80, (100, 700)), 360);
    // A point's label starts right of its line, or ends left of it near the edge.
    assert_eq!(beside(300, 100, 700), 305);
    assert_eq!(beside(650, 100, 700), 545);
}
