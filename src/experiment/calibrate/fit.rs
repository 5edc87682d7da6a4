//! The search of `brink calibrate --fit`: Nelder-Mead over the fitted keys' logarithms,
//! inside a box (each key within a factor of 4 of its value in the file), with a budget of
//! objective evaluations. Every evaluation runs the same seeds (common random numbers), so
//! the objective is a deterministic function of the keys and the search is reproducible.

/// Where a search ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The best point found.
    pub x: Vec<f64>,
    /// The objective there.
    pub value: f64,
    /// Evaluations made.
    pub evaluations: usize,
}

/// Minimises `f` over the box `[lo, hi]` from `start` (inside it), starting from a
/// simplex of `step` along each axis, until the simplex is smaller than `tol` on every
/// axis or `budget` evaluations are spent. A point outside the box is projected onto it.
/// `f` may return infinity (a point the scenario refuses).
pub fn nelder_mead(
    f: &mut dyn FnMut(&[f64]) -> f64,
    start: &[f64],
    step: f64,
    (lo, hi): (&[f64], &[f64]),
    budget: usize,
    tol: f64,
) -> Found {
    let n = start.len();
    let clamp = |x: Vec<f64>| -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, v)| v.clamp(lo[i], hi[i]))
            .collect()
    };
    let mut evaluations = 0;
    let mut eval = |x: &[f64], evaluations: &mut usize| {
        *evaluations += 1;
        let v = f(x);
        if v.is_nan() { f64::INFINITY } else { v }
    };
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    let x0 = clamp(start.to_vec());
    let v0 = eval(&x0, &mut evaluations);
    simplex.push((x0.clone(), v0));
    for i in 0..n {
        let mut x = x0.clone();
        // Step inward when the start sits on the box's upper side.
        x[i] = if x[i] + step <= hi[i] {
            x[i] + step
        } else {
            x[i] - step
        };
        let x = clamp(x);
        let v = eval(&x, &mut evaluations);
        simplex.push((x, v));
    }
    while evaluations < budget {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let size = (0..n)
            .map(|i| {
                let (a, b) = simplex.iter().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| {
                    (a.min(x[i]), b.max(x[i]))
                });
                b - a
            })
            .fold(0.0, f64::max);
        if size < tol {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|i| simplex[..n].iter().map(|(x, _)| x[i]).sum::<f64>() / n as f64)
            .collect();
        let worst = simplex[n].clone();
        let along = |t: f64| -> Vec<f64> {
            clamp(
                (0..n)
                    .map(|i| centroid[i] + t * (worst.0[i] - centroid[i]))
                    .collect(),
            )
        };
        let xr = along(-1.0);
        let vr = eval(&xr, &mut evaluations);
        if vr < simplex[0].1 {
            let xe = along(-2.0);
            let ve = eval(&xe, &mut evaluations);
            simplex[n] = if ve < vr { (xe, ve) } else { (xr, vr) };
        } else if vr < simplex[n - 1].1 {
            simplex[n] = (xr, vr);
        } else {
            let (xc, vc) = if vr < worst.1 {
                let x = along(-0.5);
                let v = eval(&x, &mut evaluations);
                (x, v)
            } else {
                let x = along(0.5);
                let v = eval(&x, &mut evaluations);
                (x, v)
            };
            if vc < worst.1.min(vr) {
                simplex[n] = (xc, vc);
            } else {
                // Shrink towards the best point.
                let best = simplex[0].0.clone();
                for point in simplex.iter_mut().skip(1) {
                    if evaluations >= budget {
                        break;
                    }
                    let x: Vec<f64> = (0..n)
                        .map(|i| best[i] + 0.5 * (point.0[i] - best[i]))
                        .collect();
                    let v = eval(&x, &mut evaluations);
                    *point = (x, v);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (x, value) = simplex.swap_remove(0);
    Found {
        x,
        value,
        evaluations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skewed quadratic bowl in two dimensions is found to 1e-4 from a corner-ish start,
    /// and a minimum outside the box ends on its edge.
    #[test]
    fn finds_the_bottom_of_a_bowl() {
        let mut f = |x: &[f64]| (x[0] - 0.3).powi(2) + 4.0 * (x[1] + 0.2).powi(2) + x[0] * x[1];
        let (a, b) = (0.3f64, -0.2f64);
        // The gradient vanishes where 2(x0 - a) + x1 = 0 and 8(x1 - b) + x0 = 0.
        let x1 = (8.0 * b - a) / 7.5;
        let x0 = a - x1 / 2.0;
        let r = nelder_mead(
            &mut f,
            &[1.0, 1.0],
            0.25,
            (&[-2.0, -2.0], &[2.0, 2.0]),
            400,
            1e-6,
        );
        assert!(
            (r.x[0] - x0).abs() < 1e-4 && (r.x[1] - x1).abs() < 1e-4,
            "{r:?}"
        );
        let mut g = |x: &[f64]| (x[0] - 5.0).powi(2);
        let r = nelder_mead(&mut g, &[0.0], 0.25, (&[-1.0], &[1.0]), 100, 1e-6);
        assert!((r.x[0] - 1.0).abs() < 1e-6, "{r:?}");
        assert!(r.evaluations <= 100);
    }
}
