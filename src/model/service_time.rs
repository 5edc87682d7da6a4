//! The one draw of any service law (`ServiceCfg::draw`): a pool's service time before cost
//! and slowdowns, a population's think time. The laws themselves are plain distributions in
//! [`crate::laws`], below the scenario that validates them; the draw lives here, with the
//! model that calls it.

use crate::engine::Rng;
use crate::scenario::Law;
use rand::RngExt;
use rand_distr::{Exp1, StandardNormal};

impl crate::scenario::ServiceCfg {
    /// One draw of the law (ns): a pool's service time before cost and slowdowns, a
    /// population's think time. Exp, const and lognormal draw inline, as they always have.
    #[inline(always)]
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        let mean = self.mean_ns as f64;
        match self.law {
            Law::Exp => {
                let e: f64 = rng.sample(Exp1);
                e * mean
            }
            Law::Const => mean,
            Law::Lognormal => {
                let s2 = (1.0 + self.cv * self.cv).ln();
                let mu = mean.ln() - s2 / 2.0;
                let z: f64 = rng.sample(StandardNormal);
                (mu + s2.sqrt() * z).exp()
            }
            _ => match &self.solved {
                Some(s) => s.draw(rng),
                None => mean,
            },
        }
    }
}
