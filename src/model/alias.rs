//! Walker's alias table (Vose's construction): a discrete law drawn in O(1) from one
//! uniform draw, whatever the law. A cache tier's Zipf key popularity draws its keys
//! from one.

/// Walker's alias table for a discrete law on `0..n` (Vose's construction): one uniform
/// draw picks a column and a coin within it, O(1) whatever the law, exact to 2⁻³².
#[derive(Debug)]
pub struct Alias {
    /// Per column: the coin's threshold (scaled to 2³²) below which the column's own
    /// value is drawn, and the value drawn above it, its alias (side by side: one draw
    /// reads one place).
    column: Vec<(u32, u32)>,
}

impl Alias {
    /// Bytes per value of the law.
    pub const BYTES_PER_KEY: usize = 8;

    /// The Zipf law on ranks 1..=n with exponent `s` (P(k) ∝ k^−s), as keys `0..n`
    /// (key k − 1 for rank k).
    pub fn zipf(n: u32, s: f64) -> Self {
        let w: Vec<f64> = (1..=n as u64).map(|k| (k as f64).powf(-s)).collect();
        Self::new(&w)
    }

    /// [`Alias::zipf`], one table per (n, s) for the whole process while any run holds
    /// it: runs side by side read one table, so the processor's caches hold one copy.
    pub fn zipf_shared(n: u32, s: f64) -> std::sync::Arc<Self> {
        use std::sync::{Arc, Mutex, Weak};
        static TABLES: Mutex<Vec<(u32, u64, Weak<Alias>)>> = Mutex::new(Vec::new());
        let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
        tables.retain(|(_, _, t)| t.strong_count() > 0);
        if let Some(t) = tables
            .iter()
            .find(|(m, b, _)| *m == n && *b == s.to_bits())
            .and_then(|(_, _, t)| t.upgrade())
        {
            return t;
        }
        let t = Arc::new(Self::zipf(n, s));
        tables.push((n, s.to_bits(), Arc::downgrade(&t)));
        t
    }

    /// The law with weights `w` (not all zero, none negative).
    pub fn new(w: &[f64]) -> Self {
        let n = w.len();
        let total: f64 = w.iter().sum();
        // Scaled so a column holds 1: the mean weight.
        let mut p: Vec<f64> = w.iter().map(|x| x * n as f64 / total).collect();
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) =
            (0..n as u32).partition(|&i| p[i as usize] < 1.0);
        while let (Some(&l), Some(&g)) = (small.last(), large.last()) {
            small.pop();
            alias[l as usize] = g;
            p[g as usize] -= 1.0 - p[l as usize];
            if p[g as usize] < 1.0 {
                large.pop();
                small.push(g);
            }
        }
        // What is left holds 1 up to rounding: its own value always.
        for i in small.into_iter().chain(large) {
            p[i as usize] = 1.0;
        }
        let column = p
            .iter()
            .zip(alias)
            .map(|(&x, a)| ((x * 4_294_967_296.0).min(u32::MAX as f64) as u32, a))
            .collect();
        Self { column }
    }

    /// The column 64 uniform bits pick (their high 32).
    #[inline(always)]
    fn column_of(&self, bits: u64) -> usize {
        let n = self.column.len() as u64;
        (((bits >> 32) * n) >> 32) as usize
    }

    /// Starts loading the column `bits` will read (a table of a large keyspace is far
    /// beyond the first caches: a hint, so several draws' loads can overlap).
    #[inline(always)]
    pub fn prefetch(&self, bits: u64) {
        if let Some(c) = self.column.get(self.column_of(bits)) {
            super::simulation::prefetch(c);
        }
    }

    /// The value for 64 uniform bits: the high 32 pick the column, the low 32 the coin.
    #[inline]
    pub fn draw(&self, bits: u64) -> u32 {
        let i = self.column_of(bits);
        let (cut, alias) = self.column[i];
        // A select, not a branch: the coin is unpredictable.
        std::hint::select_unpredictable((bits as u32) < cut, i as u32, alias)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream_rng;

    /// Law: Walker's alias method draws value i with probability wᵢ / Σw. Over 4·10⁶
    /// draws of a Zipf law (n = 1000, s = 0.9), each of the first 20 ranks' frequency is
    /// within 5 standard errors of its probability, and the total variation distance over
    /// all ranks is below 0.01 (its sampling noise is about 0.006 here).
    #[test]
    fn the_alias_table_draws_the_zipf_law() {
        let (n, s) = (1000u32, 0.9);
        let table = Alias::zipf(n, s);
        let z: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
        let mut rng = stream_rng(3, 0, "zipf");
        let draws = 4_000_000u64;
        let mut count = vec![0u64; n as usize];
        for _ in 0..draws {
            count[table.draw(rand::Rng::next_u64(&mut rng)) as usize] += 1;
        }
        let mut tv = 0.0;
        for (i, &c) in count.iter().enumerate() {
            let p = ((i + 1) as f64).powf(-s) / z;
            let f = c as f64 / draws as f64;
            tv += (f - p).abs() / 2.0;
            if i < 20 {
                let se = (p * (1.0 - p) / draws as f64).sqrt();
                assert!((f - p).abs() < 5.0 * se, "rank {}: {f} against {p}", i + 1);
            }
        }
        assert!(tv < 0.01, "total variation {tv}");
    }

    #[test]
    fn the_alias_table_never_draws_a_weightless_value() {
        let table = Alias::new(&[1.0, 0.0, 3.0, 0.0]);
        let mut rng = stream_rng(4, 0, "alias");
        let mut count = [0u64; 4];
        for _ in 0..100_000 {
            count[table.draw(rand::Rng::next_u64(&mut rng)) as usize] += 1;
        }
        assert_eq!((count[1], count[3]), (0, 0));
        // 1 : 3 within 5 standard errors (sd of the share 0.0014).
        let share = count[0] as f64 / 100_000.0;
        assert!((share - 0.25).abs() < 0.007, "{share}");
    }
}
