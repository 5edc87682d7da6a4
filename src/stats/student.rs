//! Student's t interval of a mean over independent seeds: what a calibration's per-seed
//! figures say of the figure's mean (`brink calibrate`; coverage measured in
//! `tests/integration/calibrate.rs`).

/// The 0.975 quantile of Student's t for 1 to 30 degrees of freedom.
const T975: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom (at least 1): the table
/// up to 30, beyond it the Cornish-Fisher expansion about the normal quantile (error
/// under 1e-5 there).
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        _ => {
            let (z, v) = (1.959_963_984_540_054_f64, df as f64);
            let (z3, z5) = (z.powi(3), z.powi(5));
            z + (z3 + z) / (4.0 * v)
                + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z.powi(7) + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        }
    }
}

/// The mean of `xs` and its 95% Student t confidence interval (`mean ± t975(n-1)·s/√n`,
/// `s` the sample standard deviation); the interval is none for fewer than two values.
/// None for no values or any value not finite.
pub fn mean_ci95(xs: &[f64]) -> Option<(f64, Option<[f64; 2]>)> {
    if xs.is_empty() || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return Some((mean, None));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = t975(xs.len() - 1) * (var / n).sqrt();
    Some((mean, Some([mean - half, mean + half])))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table and the expansion meet at 30 (2.0423) and tend to the normal quantile;
    /// 40 and 60 degrees of freedom are 2.0211 and 2.0003 (published tables).
    #[test]
    fn quantiles() {
        assert!((t975(31) - 2.039_513).abs() < 1e-5, "{}", t975(31));
        assert!((t975(40) - 2.021_075).abs() < 1e-5, "{}", t975(40));
        assert!((t975(60) - 2.000_298).abs() < 1e-5, "{}", t975(60));
        assert!((t975(100_000) - 1.959_99).abs() < 1e-4);
    }

    /// Three values 1, 2, 3: mean 2, s = 1, half-width 4.303/√3.
    #[test]
    fn interval_of_three() {
        let (m, ci) = mean_ci95(&[1.0, 2.0, 3.0]).unwrap();
        let [lo, hi] = ci.unwrap();
        assert_eq!(m, 2.0);
        assert!(
            (hi - 2.0 - 4.302_653 / 3f64.sqrt()).abs() < 1e-9
                && (2.0 - lo - (hi - 2.0)).abs() < 1e-12
        );
        assert_eq!(mean_ci95(&[5.0]), Some((5.0, None)));
        assert_eq!(mean_ci95(&[]), None);
        assert_eq!(mean_ci95(&[1.0, f64::NAN]), None);
    }
}
