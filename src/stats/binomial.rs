//! Intervals of a proportion: what a probe's seeds say of its collapse probability.

/// The 95% Wilson score interval of a proportion `p` observed over `n` trials.
pub fn wilson(p: f64, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (z, n) = (1.959_963_984_540_054_f64, n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wilson score intervals: one seed that collapsed says little (0.21 to 1); 20 of 20
    /// are sure (above 0.83); the interval always holds the observed share.
    #[test]
    fn wilson_intervals() {
        let [lo, hi] = wilson(1.0, 1);
        assert!((lo - 0.2065).abs() < 1e-3 && hi == 1.0, "{lo} {hi}");
        let [lo, _] = wilson(1.0, 20);
        assert!((lo - 0.8389).abs() < 1e-3, "{lo}");
        let [lo, hi] = wilson(0.5, 10);
        assert!(
            (lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3,
            "{lo} {hi}"
        );
        for n in 1..30 {
            for k in 0..=n {
                let p = k as f64 / n as f64;
                let [lo, hi] = wilson(p, n);
                assert!(lo <= p + 1e-12 && p <= hi + 1e-12, "{k}/{n}: {lo} {hi}");
            }
        }
    }
}
