//! Which runs of a sweep's variants are one run: sources (an earlier variant's branch
//! whose table is a variant's own, [`Sweep::sources`]) and kin (an earlier variant's
//! branch that differs only in knobs, [`super::kin`]).

use super::{Kin, Sources, Sweep, kin};
use crate::experiment::Error;
use crate::stats::plan::Branch;

/// A variant's configuration (as loaded, before the sweep's overrides: the same
/// components) and its sweep's measure name.
pub(super) type Design = (std::sync::Arc<crate::scenario::Config>, String);

impl Sweep {
    /// Per variant and branch, the first earlier variant's branch whose runs it repeats:
    /// whose table, with the sweep's overrides but without the swept values, is the same,
    /// so that its scenario at every value is the same ([`crate::scenario::Loader::table`]). An incident
    /// replay's "no response" variant leaves out only the `[[at]]` timeline that sweeps
    /// leave out too, and a variant that switches its trigger off runs the base design's
    /// baseline on both branches. Across branches only without `recover_within` (which
    /// judges a triggered run by its recovery, a baseline run by its measure).
    pub(super) fn sources(&self, tables: &[[toml::Table; 2]]) -> Vec<Sources> {
        let both = [Branch::Baseline, Branch::Triggered];
        let across = self.plan.recover_within_s.is_none();
        let tolerance = |v: usize| self.plan.variants[v].tolerance.to_bits();
        (0..tables.len())
            .map(|v| {
                both.map(|b| {
                    (0..v).flat_map(|u| both.map(|c| (u, c))).find(|&(u, c)| {
                        (c == b || across)
                            && tolerance(u) == tolerance(v)
                            && same(&tables[u][c as usize], &tables[v][b as usize])
                    })
                })
            })
            .collect()
    }

    /// Each variant's table on each branch (its overrides and the sweep's, no swept value).
    pub(super) fn tables(&self) -> Result<Vec<[toml::Table; 2]>, Error> {
        let both = [Branch::Baseline, Branch::Triggered];
        (0..self.variants.len())
            .map(|v| {
                let [b, t] = both.map(|b| {
                    let sets = self.sets_at(v, None, b);
                    self.loader.table(self.variants[v].as_deref(), &sets)
                });
                Ok([b?, t?])
            })
            .collect()
    }

    /// Per variant and branch without a source: the earlier variants' branches that are
    /// its kin ([`kin`]), in order, with the knobs they differ in. `designs` holds each
    /// variant's configuration and measure name: the earlier variant's name its
    /// components (the two are alike but for the knobs).
    pub(super) fn kin(&self, tables: &[[toml::Table; 2]], designs: &[Design]) -> Vec<Kin> {
        let both = [Branch::Baseline, Branch::Triggered];
        let across = self.plan.recover_within_s.is_none();
        (0..tables.len())
            .map(|v| {
                both.map(|b| {
                    if self.sources[v][b as usize].is_some() {
                        return Vec::new();
                    }
                    let mine = &tables[v][b as usize];
                    (0..v)
                        .flat_map(|u| both.map(|c| (u, c)))
                        .filter(|&(_, c)| c == b || across)
                        .filter_map(|(u, c)| {
                            let (cfg, measured) = &designs[u];
                            let knobs = kin::knobs(&tables[u][c as usize], mine, cfg, measured)?;
                            (!knobs.is_empty()).then_some((u, c, knobs))
                        })
                        .collect()
                })
            })
            .collect()
    }
}

/// True when two tables are the same, key for key in the same order (the order of a
/// table's entries is the order of what they build: classes, pools, events), floats bit
/// for bit.
pub(super) fn same(a: &toml::Table, b: &toml::Table) -> bool {
    fn value(a: &toml::Value, b: &toml::Value) -> bool {
        use toml::Value::{Array, Float, Table};
        match (a, b) {
            (Table(x), Table(y)) => same(x, y),
            (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| value(p, q)),
            (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k, p), (l, q))| k == l && value(p, q))
}
