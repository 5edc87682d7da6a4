//! Load balancing: which of several candidates takes a query, by the pool's `balance`
//! policy. The candidates are a pool's shards, for a one-part keyless query (a keyless
//! pool's shards are interchangeable servers behind the balancer), or a shard's servers,
//! for a read that may go to several (`replica`, `any`, and `latency` when it falls to the
//! replicas).
//!
//! One function, [`Balancer::choose`], serves both: it sees only a candidate count and, per
//! candidate index, whether the clients' view holds it up and how many jobs it holds
//! ([`Candidate`]), so the caller decides what a candidate is (a server, a shard, or
//! whatever set of servers is routable at the moment).
//!
//! `random` is not chosen here: it keeps its original draws (the simulation's `routing`
//! stream for the shard, the pool's stream through [`uniform_up`] for the replica), so a
//! scenario that does not name a policy runs exactly as before. The other policies draw
//! from the pool's own `balance.<pool>` stream.

use crate::engine::Rng;
use crate::scenario::Balance;
use rand::RngExt;

/// What a policy reads of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The clients' view holds it up (a candidate held down is skipped).
    pub up: bool,
    /// Jobs in service and queued on it (`busy + queue.len()`).
    pub outstanding: u32,
}

/// A pool's balancing state: the policies' random stream, the round-robin cursors (slot 0
/// for the shard choice, slot `1 + shard` for that shard's servers) and a scratch list of
/// tied candidates (reused: choosing allocates nothing once warm).
#[derive(Clone)]
pub struct Balancer {
    pub rng: Rng,
    cursors: Vec<u32>,
    ties: Vec<u32>,
}

impl Balancer {
    pub fn new(rng: Rng) -> Self {
        Self {
            rng,
            cursors: Vec::new(),
            ties: Vec::new(),
        }
    }

    /// Chooses one of the candidates `0..n` by `policy`, skipping those the view holds
    /// down; `None` when it holds every one down (the caller falls back). `slot` names the
    /// round-robin cursor. The rules:
    /// - round-robin: the first candidate held up at or after the cursor (cyclically); the
    ///   cursor moves past it;
    /// - least-outstanding: the fewest outstanding; ties uniformly at random;
    /// - power-of-two: two distinct candidates uniformly at random, the one with fewer
    ///   outstanding (ties: the first drawn);
    /// - random: uniformly at random (not used by the pool paths, see the module doc).
    #[inline(never)]
    pub fn choose(
        &mut self,
        policy: Balance,
        slot: usize,
        n: u32,
        cand: impl Fn(u32) -> Candidate,
    ) -> Option<u32> {
        match policy {
            Balance::Random => uniform_up(&mut self.rng, n, |i| cand(i).up),
            Balance::RoundRobin => {
                if self.cursors.len() <= slot {
                    self.cursors.resize(slot + 1, 0);
                }
                // The set may have changed size since the cursor was last moved.
                let start = self.cursors[slot] % n.max(1);
                let i = (0..n).map(|k| (start + k) % n).find(|&i| cand(i).up)?;
                self.cursors[slot] = (i + 1) % n;
                Some(i)
            }
            Balance::LeastOutstanding => {
                self.ties.clear();
                let mut least = u32::MAX;
                for i in 0..n {
                    let c = cand(i);
                    if !c.up || c.outstanding > least {
                        continue;
                    }
                    if c.outstanding < least {
                        least = c.outstanding;
                        self.ties.clear();
                    }
                    self.ties.push(i);
                }
                match self.ties.len() {
                    0 => None,
                    1 => Some(self.ties[0]),
                    k => Some(self.ties[self.rng.random_range(0..k)]),
                }
            }
            Balance::PowerOfTwo => {
                let (a, b) = self.two_up(n, &cand)?;
                let Some(b) = b else { return Some(a) };
                Some(if cand(b).outstanding < cand(a).outstanding {
                    b
                } else {
                    a
                })
            }
        }
    }

    /// Two distinct candidates held up, uniformly at random (the second `None` when only
    /// one is up). When every candidate is up, as almost always, this is two draws; else
    /// the two are drawn again among those held up. Both ways every ordered pair of up
    /// candidates is equally likely: a first draw that hits a down one is thrown away
    /// whole.
    fn two_up(&mut self, n: u32, cand: &impl Fn(u32) -> Candidate) -> Option<(u32, Option<u32>)> {
        if n >= 2 {
            let (a, b) = distinct_pair(&mut self.rng, n);
            if cand(a).up && cand(b).up {
                return Some((a, Some(b)));
            }
        }
        let n_up = (0..n).filter(|&i| cand(i).up).count() as u32;
        let nth_up = |k: u32| (0..n).filter(|&i| cand(i).up).nth(k as usize);
        match n_up {
            0 => None,
            1 => Some((nth_up(0)?, None)),
            _ => {
                let (a, b) = distinct_pair(&mut self.rng, n_up);
                Some((nth_up(a)?, nth_up(b)))
            }
        }
    }
}

/// Two distinct indices of `0..n` (n ≥ 2), uniformly: the second is drawn among the other
/// n − 1.
fn distinct_pair(rng: &mut Rng, n: u32) -> (u32, u32) {
    let a = rng.random_range(0..n);
    let b = rng.random_range(0..n - 1);
    (a, if b >= a { b + 1 } else { b })
}

/// One of the candidates `0..n` that `up` holds up, uniformly (one draw), or `None` if
/// none is: a count, one draw among the up ones, and a walk to it. `random` reads of a
/// shard's replicas use it with the pool's stream, as brink always has.
#[inline]
pub fn uniform_up(rng: &mut Rng, n: u32, up: impl Fn(u32) -> bool) -> Option<u32> {
    uniform_up_of(rng, n, count_up(n, &up), up)
}

/// How many of candidates `0..n` are up.
#[inline]
pub fn count_up(n: u32, up: impl Fn(u32) -> bool) -> u32 {
    (0..n).filter(|&i| up(i)).count() as u32
}

/// [`uniform_up`] with the number of up candidates (`n_up`) already counted.
#[inline]
pub fn uniform_up_of(rng: &mut Rng, n: u32, n_up: u32, up: impl Fn(u32) -> bool) -> Option<u32> {
    if n_up == 0 {
        return None;
    }
    let k = rng.random_range(0..n_up);
    if n_up == n {
        // Every candidate is up (the usual case): the k-th up one is candidate k.
        return Some(k);
    }
    (0..n).filter(|&i| up(i)).nth(k as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn balancer() -> Balancer {
        Balancer::new(Rng::seed_from_u64(11))
    }

    /// Candidates with these outstanding counts; `None` is held down.
    fn cands(v: &[Option<u32>]) -> impl Fn(u32) -> Candidate + '_ {
        |i| match v[i as usize] {
            Some(o) => Candidate {
                up: true,
                outstanding: o,
            },
            None => Candidate {
                up: false,
                outstanding: 0,
            },
        }
    }

    fn counts(b: &mut Balancer, policy: Balance, v: &[Option<u32>], draws: usize) -> Vec<usize> {
        let mut k = vec![0; v.len()];
        for _ in 0..draws {
            k[b.choose(policy, 0, v.len() as u32, cands(v)).unwrap() as usize] += 1;
        }
        k
    }

    #[test]
    fn round_robin_cycles_and_skips_what_the_view_holds_down() {
        let mut b = balancer();
        let v = [Some(9), None, Some(0), Some(5)];
        let got: Vec<u32> = (0..7)
            .map(|_| b.choose(Balance::RoundRobin, 3, 4, cands(&v)).unwrap())
            .collect();
        assert_eq!(got, [0, 2, 3, 0, 2, 3, 0]);
        // Another slot has its own cursor.
        assert_eq!(b.choose(Balance::RoundRobin, 1, 4, cands(&v)), Some(0));
        assert_eq!(b.choose(Balance::RoundRobin, 3, 4, cands(&v)), Some(2));
        // A smaller set (say, after a scale-in) wraps the cursor.
        assert_eq!(b.choose(Balance::RoundRobin, 3, 2, cands(&v)), Some(0));
    }

    #[test]
    fn least_outstanding_takes_the_shortest_and_breaks_ties_at_random() {
        let mut b = balancer();
        let v = [Some(3), Some(1), None, Some(1), Some(2)];
        let k = counts(&mut b, Balance::LeastOutstanding, &v, 10_000);
        assert_eq!((k[0], k[2], k[4]), (0, 0, 0));
        // Binomial(10 000, 1/2): sd 50, so 4 800 is 4 sd off.
        assert!(k[1] > 4_800 && k[3] > 4_800, "{k:?}");
    }

    #[test]
    fn power_of_two_takes_the_shorter_of_two_distinct() {
        let mut b = balancer();
        // Two up: both are always the candidates, so the shorter always wins.
        let k = counts(
            &mut b,
            Balance::PowerOfTwo,
            &[Some(4), None, Some(2)],
            1_000,
        );
        assert_eq!(k, [0, 0, 1_000]);
        // Four servers with 0, 1, 2, 3 jobs: server i wins when it is drawn and the other
        // is longer: P = (n − 1 − i) / C(n, 2) = 3/6, 2/6, 1/6, 0.
        let k = counts(
            &mut b,
            Balance::PowerOfTwo,
            &[Some(0), Some(1), Some(2), Some(3)],
            60_000,
        );
        let want = [30_000.0, 20_000.0, 10_000.0, 0.0];
        for (got, want) in k.iter().zip(want) {
            // Binomial sd at most ~122: 600 is 5 sd.
            assert!((*got as f64 - want).abs() < 600.0, "{k:?}");
        }
        // Ties go to the first drawn: uniform over the pair.
        let k = counts(
            &mut b,
            Balance::PowerOfTwo,
            &[Some(1), Some(1), None],
            10_000,
        );
        assert!(k[0] > 4_800 && k[1] > 4_800, "{k:?}");
        // One up: that one.
        assert_eq!(
            counts(&mut b, Balance::PowerOfTwo, &[None, Some(7)], 10),
            [0, 10]
        );
    }

    #[test]
    fn none_when_the_view_holds_every_candidate_down() {
        let mut b = balancer();
        let v = [None, None];
        for p in [
            Balance::Random,
            Balance::RoundRobin,
            Balance::LeastOutstanding,
            Balance::PowerOfTwo,
        ] {
            assert_eq!(b.choose(p, 0, 2, cands(&v)), None, "{p:?}");
        }
    }

    #[test]
    fn uniform_up_draws_among_the_up_ones() {
        let mut rng = Rng::seed_from_u64(3);
        let mut k = [0; 4];
        for _ in 0..30_000 {
            k[uniform_up(&mut rng, 4, |i| i != 2).unwrap() as usize] += 1;
        }
        assert_eq!(k[2], 0);
        // Binomial(30 000, 1/3): sd ~82, 500 is 6 sd.
        assert!(
            k.iter()
                .filter(|&&x| x > 0)
                .all(|&x| (x as i64 - 10_000).abs() < 500),
            "{k:?}"
        );
    }
}
