//! The one draw of any service law (`ServiceCfg::draw`): a pool's service time before cost
//! and slowdowns, a population's think time. The laws themselves are plain distributions in
//! [`crate::laws`], below the scenario that validates them; the draw lives here, with the
//! model that calls it.

use crate::engine::Rng;
use crate::scenario::Law;
use rand::RngExt;
use rand_distr::Exp1;

impl crate::scenario::ServiceCfg {
    /// One draw of the law (ns): a pool's service time before cost and slowdowns, a
    /// population's think time. Exp and const draw inline, as they always have; every other
    /// law from its parameters solved at validation (a lognormal's mu and sigma, which it
    /// used to solve at every draw: two logarithms and a square root, 11% of a Grab run).
    #[inline(always)]
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        let mean = self.mean_ns as f64;
        match self.law {
            Law::Exp => {
                let e: f64 = rng.sample(Exp1);
                e * mean
            }
            Law::Const => mean,
            _ => match &self.solved {
                Some(s) => s.draw(rng),
                None => mean,
            },
        }
    }
}
