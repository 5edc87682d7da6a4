//! The sequential test that decides a probe of an adaptive sweep: is the collapse
//! probability at this value below one half, or above?
//!
//! Wald's sequential probability ratio test of `p <= P0` against `p >= P1` (an
//! indifference band around 0.5), with error rates `ALPHA` (saying "above" when `p <=
//! P0`) and `BETA` (saying "below" when `p >= P1`). After `f` failed and `h` healthy
//! seeds the log-likelihood ratio is `f ln(P1/P0) + h ln((1-P1)/(1-P0))`; the test says
//! "above" once it reaches `ln((1-BETA)/ALPHA)` and "below" once it falls to
//! `ln(BETA/(1-ALPHA))`. With the band 0.1-0.9 and 5% errors that is "two more of one
//! kind than of the other": a probe far from the crossing costs two seeds, one near it
//! keeps adding seeds until it is decided or the sweep's `seeds` (the most per probe) are
//! spent, and is then undecided, which says its probability lies in the band.
//!
//! The exact error rates of the truncated test are computed in the tests (no
//! approximation): 1.2% at the band's edges, 10% at a collapse probability of 0.25 or
//! 0.75. The test only places probes: the tipping point and its interval come from every
//! run (`crate::stats::logistic`), and their coverage is measured over independent sweeps
//! (`tests/integration/confidence.rs`). Until issue 27 the band was 0.25-0.75 ("three
//! more of one kind", 3.6% at its edges): a third more runs for unanimous probes, which
//! are most of a sweep's.

/// The band's lower edge: a probability at or below it should be called "below".
pub const P0: f64 = 0.1;
/// The band's upper edge.
pub const P1: f64 = 0.9;
/// The chance of saying "above" when the probability is at most [`P0`] (Wald's bound).
pub const ALPHA: f64 = 0.05;
/// The chance of saying "below" when the probability is at least [`P1`].
pub const BETA: f64 = 0.05;

/// What the seeds of a probe say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The collapse probability is below one half (at most [`P0`], at error [`BETA`]).
    Below,
    /// Above one half.
    Above,
    /// Not decided yet (or, with the seeds spent, inside the band).
    Undecided,
}

/// The test's decision after `failed` failed and `healthy` healthy seeds.
pub fn decide(failed: usize, healthy: usize) -> Decision {
    let up = (P1 / P0).ln();
    let down = ((1.0 - P1) / (1.0 - P0)).ln();
    let llr = failed as f64 * up + healthy as f64 * down;
    if llr >= ((1.0 - BETA) / ALPHA).ln() {
        Decision::Above
    } else if llr <= (BETA / (1.0 - ALPHA)).ln() {
        Decision::Below
    } else {
        Decision::Undecided
    }
}

/// The fewest seeds that can decide a probe (two): a sweep whose `seeds` is smaller
/// leaves every probe undecided and places its probes by their majorities.
pub fn fewest_seeds() -> usize {
    (1..)
        .find(|&n| decide(n, 0) == Decision::Above)
        .unwrap_or(1)
}

/// The fewest more seeds that could decide a probe now at `failed` and `healthy`: all of
/// one kind, whichever kind decides sooner. Fewer cannot decide it, whatever they give,
/// so that many can run side by side without running one the test would not have.
pub fn seeds_to_decide(failed: usize, healthy: usize) -> u32 {
    (1..=u32::MAX)
        .find(|&m| {
            decide(failed + m as usize, healthy) != Decision::Undecided
                || decide(failed, healthy + m as usize) != Decision::Undecided
        })
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact chances that the test, truncated at `max` seeds, ends "below", "above"
    /// or undecided when each seed fails with probability `p` (dynamic programming over
    /// the counts of failed seeds: no approximation).
    fn outcome(p: f64, max: usize) -> [f64; 3] {
        let mut live = vec![1.0]; // live[f]: undecided with f failed after n seeds
        let mut ends = [0.0; 3];
        for n in 0..max {
            let mut next = vec![0.0; n + 2];
            for (f, &w) in live.iter().enumerate() {
                next[f + 1] += w * p;
                next[f] += w * (1.0 - p);
            }
            for (f, w) in next.iter_mut().enumerate() {
                match decide(f, n + 1 - f) {
                    Decision::Below => ends[0] += *w,
                    Decision::Above => ends[1] += *w,
                    Decision::Undecided => continue,
                }
                *w = 0.0;
            }
            live = next;
        }
        ends[2] = live.iter().sum();
        ends
    }

    /// Law: Wald's bounds. At the band's edges the truncated test errs at most
    /// alpha/(1-beta) (5.3%); exactly, by gambler's ruin with odds 9 and two steps to
    /// either end, (9^2 - 1)/(9^4 - 1) = 80/6560 = 1.2%. At 0.25 (odds 3) 8/80 = 10%; far
    /// from the crossing it errs less (odds 19 at 0.05: 360/130320); at one half it is a
    /// fair coin.
    #[test]
    fn error_rates_are_within_walds_bounds() {
        for max in [3, 5, 10, 40, 200] {
            let [_, above, _] = outcome(P0, max);
            let [below, _, _] = outcome(P1, max);
            assert!(above <= ALPHA / (1.0 - BETA), "max {max}: {above}");
            assert!(below <= BETA / (1.0 - ALPHA), "max {max}: {below}");
        }
        let [_, above, undecided] = outcome(P0, 400);
        assert!((above - 80.0 / 6560.0).abs() < 1e-9, "{above}");
        assert!(undecided < 1e-12);
        let [_, above, _] = outcome(0.25, 400);
        assert!((above - 8.0 / 80.0).abs() < 1e-9, "{above}");
        let [below, above, _] = outcome(0.05, 40);
        assert!((above - 360.0 / 130320.0).abs() < 1e-9, "{above}");
        assert!(below > 0.997, "{below}");
        let [below, above, _] = outcome(0.5, 40);
        assert!((below - above).abs() < 1e-12, "{below} {above}");
    }

    /// Two seeds of one kind decide; mixed seeds need two more of one kind.
    #[test]
    fn two_more_of_one_kind_decide() {
        assert_eq!(fewest_seeds(), 2);
        assert_eq!(decide(2, 0), Decision::Above);
        assert_eq!(decide(0, 2), Decision::Below);
        assert_eq!(decide(1, 0), Decision::Undecided);
        assert_eq!(decide(3, 2), Decision::Undecided);
        assert_eq!(decide(4, 2), Decision::Above);
        assert_eq!(decide(2, 4), Decision::Below);
        assert_eq!(seeds_to_decide(0, 0), 2);
        assert_eq!(seeds_to_decide(2, 1), 1);
        assert_eq!(seeds_to_decide(1, 1), 2);
        // No fewer seeds can decide: the batch never holds a run the test would skip.
        for (f, h) in [(0, 0), (1, 0), (2, 1), (4, 4), (4, 3)] {
            let m = seeds_to_decide(f, h) as usize;
            for k in 0..m {
                for g in 0..=k {
                    assert_eq!(
                        decide(f + g, h + k - g),
                        Decision::Undecided,
                        "{f} {h} {k} {g}"
                    );
                }
            }
        }
    }
}
