//! Closed-loop client populations: a class of N users, each of whom sends one request,
//! waits for its end (a success, or a failure once the retries give up), thinks for a
//! time drawn from the class's `think` law, and sends the next. After `give_up.after`
//! failures in a row a user stays away for `give_up.for` instead of thinking, then starts
//! afresh. So the load such a class offers falls as its responses slow down: the
//! interactive response-time law R = N/X - Z holds.
//!
//! A user's request carries the user (`Request::parent`, 1-based; a pool call's request
//! has a calls token as well, a user's has none), so its end reaches the user in
//! `Simulation::user_done`. A request of the class that no user sent (a burst's) has
//! `parent` 0 and ends on its own.
//!
//! The number of users can change in `[[at]]` entries: users above the new number leave
//! at their next turn (after their request, or when their think time is up); users below
//! it who had left come back, thinking first.
//!
//! **One clock for exponential thinkers.** With an exponential think law, the users
//! thinking share one pending event instead of one each: k users thinking with mean Z
//! end their thinking at rate k/Z, and by memorylessness the one who ends is any of them
//! with equal chance. A user who starts thinking draws its own time; only if that comes
//! before the shared clock does the clock move (a chance of 1 in k + 1). So a population of
//! 100,000 users keeps one event pending, not 100,000, and runs nearly as fast as an open
//! class (`scripts/bench-closed`). Other laws, and users staying away after giving up,
//! keep an event each.

use super::admission::Gate;
use super::event::Event;
use super::simulation::Simulation;
use crate::engine::Rng;
use crate::engine::time::{SimTime, ns_from_f64};
use crate::scenario::{Law, UsersCfg};
use rand::RngExt;
use rand_distr::Exp1;

/// Bytes a user of a population holds.
pub const USER_BYTES: usize = std::mem::size_of::<User>();

/// One user's state.
#[derive(Debug, Clone, Copy, Default)]
struct User {
    /// Failures in a row.
    fails: u32,
    /// Has a pending turn or a request in flight (a user who left has neither).
    alive: bool,
    /// Its pending turn ends a give-up pause, not a think time.
    away: bool,
}

/// A class's population: its users and the law of their pauses.
#[derive(Clone)]
pub struct Population {
    pub rng: Rng,
    users: Vec<User>,
    /// Users wanted now; those with a higher index leave at their next turn.
    target: u32,
    /// Users with a pending turn (thinking, or away), and those of them away.
    pub thinking: u64,
    pub away: u64,
    /// Users alive (kept with the flags, so that a window can read it at once).
    alive: u64,
    /// Users thinking on the shared exponential clock, and the clock: when the next of
    /// them ends, and its event's epoch (an event of an older epoch is stale).
    pooled: Vec<u32>,
    next: SimTime,
    epoch: u32,
}

impl Population {
    pub fn new(cfg: &UsersCfg, rng: Rng) -> Self {
        Self {
            rng,
            users: vec![User::default(); cfg.users as usize],
            target: cfg.users,
            thinking: 0,
            away: 0,
            alive: 0,
            pooled: Vec::new(),
            next: SimTime::MAX,
            epoch: 0,
        }
    }

    /// Users wanted now.
    pub fn target(&self) -> u32 {
        self.target
    }

    /// Users with a pending turn or a request in flight.
    pub fn alive(&self) -> u64 {
        self.alive
    }

    /// Users whose request is in flight.
    pub fn waiting(&self) -> u64 {
        self.alive - self.thinking
    }

    /// Whether the running count of users alive matches their flags (the accounting
    /// check at the end of a run).
    pub fn alive_consistent(&self) -> bool {
        self.users.iter().filter(|u| u.alive).count() as u64 == self.alive
    }

    /// User `u` comes to life or leaves.
    fn set_alive(&mut self, u: u32, alive: bool) {
        let user = &mut self.users[u as usize];
        if user.alive != alive {
            user.alive = alive;
            if alive {
                self.alive += 1;
            } else {
                self.alive -= 1;
            }
        }
    }
}

impl Simulation<'_> {
    /// Starts every user of every population, each thinking first (so they do not all
    /// send at time 0).
    pub(super) fn start_populations(&mut self) {
        for c in 0..self.classes.len() {
            self.resize_population(c);
        }
    }

    /// The population of closed class `c`.
    #[inline(always)]
    fn pop(&mut self, c: usize) -> &mut Population {
        self.classes[c]
            .users
            .as_mut()
            .expect("a closed class has users")
    }

    /// User `u` of class `c` pauses (thinks, or stays away if `away`), then takes its
    /// next turn.
    fn schedule_turn(&mut self, c: usize, u: u32, away: bool) {
        let Some(cfg) = self.cfg.classes[c].users.as_ref() else {
            return;
        };
        let pop = self.classes[c]
            .users
            .as_mut()
            .expect("a closed class has users");
        pop.thinking += 1;
        if away {
            // Set here and cleared at the turn only: a thinking user's record stays
            // untouched (out of the processor's cache with many users).
            pop.away += 1;
            pop.users[u as usize].away = true;
        }
        let delay = match (away, cfg.give_up) {
            (true, Some((_, for_ns))) => for_ns,
            _ if cfg.think.law == Law::Exp => {
                let mean = cfg.think.mean_ns as f64;
                return self.pool_thinker(c, u, mean);
            }
            _ => ns_from_f64(cfg.think.draw(&mut pop.rng)),
        };
        self.queue.schedule(
            self.now.saturating_add(delay),
            Event::UserTurn {
                class: c as u16,
                user: u,
            },
        );
    }

    /// User `u` thinks on the shared clock of exponential thinkers (mean `mean` ns): its
    /// own time, if earlier than the clock's, becomes the clock's.
    fn pool_thinker(&mut self, c: usize, u: u32, mean: f64) {
        let pop = self.classes[c]
            .users
            .as_mut()
            .expect("a closed class has users");
        pop.pooled.push(u);
        let e: f64 = pop.rng.sample(Exp1);
        let t = self.now.saturating_add(ns_from_f64(e * mean));
        if pop.pooled.len() == 1 || t < pop.next {
            self.set_clock(c, t);
        }
    }

    /// The shared clock of class `c` rings at `t` (an earlier pending ring becomes stale).
    fn set_clock(&mut self, c: usize, t: SimTime) {
        let pop = self.pop(c);
        pop.next = t;
        pop.epoch = pop.epoch.wrapping_add(1);
        let epoch = pop.epoch;
        self.queue.schedule(
            t,
            Event::ThinkEnd {
                class: c as u16,
                epoch,
            },
        );
    }

    /// Draws the shared clock afresh from now, for the users thinking on it (exact, by
    /// memorylessness): after one of them ended, after a change of the think law, and when
    /// a split run is reseeded.
    pub(super) fn redraw_clock(&mut self, c: usize) {
        let Some(cfg) = self.cfg.classes[c].users.as_ref() else {
            return;
        };
        let (law, mean) = (cfg.think.law, cfg.think.mean_ns as f64);
        let pop = self.pop(c);
        let k = pop.pooled.len();
        if k == 0 {
            pop.epoch = pop.epoch.wrapping_add(1);
            pop.next = SimTime::MAX;
            return;
        }
        if law != Law::Exp {
            // The law is no longer exponential: each user draws its own time from it.
            let users = std::mem::take(&mut pop.pooled);
            pop.epoch = pop.epoch.wrapping_add(1);
            pop.next = SimTime::MAX;
            pop.thinking -= users.len() as u64;
            for u in users {
                self.schedule_turn(c, u, false);
            }
            return;
        }
        let e: f64 = pop.rng.sample(Exp1);
        let t = self.now.saturating_add(ns_from_f64(e * mean / k as f64));
        self.set_clock(c, t);
    }

    /// The shared clock of class `c` rings: one of its thinkers, any with equal chance,
    /// takes its turn.
    #[inline(never)]
    pub(super) fn think_end<const P: bool>(&mut self, c: usize, epoch: u32) {
        let pop = self.pop(c);
        if pop.epoch != epoch {
            return;
        }
        let i = pop.rng.random_range(0..pop.pooled.len());
        let u = pop.pooled.swap_remove(i);
        self.redraw_clock(c);
        self.turn::<P>(c, u, false);
    }

    /// User `u`'s own pause (a think time of a law other than exp, or a stay away after
    /// giving up) is over.
    #[inline(never)]
    pub(super) fn user_turn<const P: bool>(&mut self, c: usize, u: u32) {
        let pop = self.pop(c);
        let away = pop.users[u as usize].away;
        self.turn::<P>(c, u, away);
    }

    /// User `u`, back from thinking or from being `away`, sends its next request, or
    /// leaves if the population has shrunk below it.
    #[inline(always)]
    fn turn<const P: bool>(&mut self, c: usize, u: u32, away: bool) {
        let pop = self.pop(c);
        pop.thinking -= 1;
        if away {
            pop.away -= 1;
            pop.users[u as usize].away = false;
        }
        if u >= pop.target {
            pop.set_alive(u, false);
            return;
        }
        if self.admit_request(c, Gate::RateLimit) {
            self.start_request::<P>(c, u + 1, 0);
        } else {
            self.user_done(c, u, false);
        }
    }

    /// User `u`'s request is over (`ok`: it succeeded): the user thinks, or stays away
    /// after too many failures in a row, or leaves.
    #[inline(never)]
    pub(super) fn user_done(&mut self, c: usize, u: u32, ok: bool) {
        let give_up = self.cfg.classes[c].users.as_ref().and_then(|p| p.give_up);
        let pop = self.pop(c);
        if u >= pop.target {
            pop.set_alive(u, false);
            return;
        }
        // Failures in a row are counted only where they matter (`give_up`), so the record
        // of a user who just thinks again stays untouched.
        let mut away = false;
        if let Some((after, _)) = give_up {
            let user = &mut pop.users[u as usize];
            user.fails = if ok { 0 } else { user.fails + 1 };
            away = user.fails >= after;
            if away {
                user.fails = 0;
            }
        }
        self.schedule_turn(c, u, away);
    }

    /// Puts the number of users of class `c` in force (at the start, and when an
    /// intervention changed it): users below it who are not alive (all of them at the
    /// start) come to life, thinking first; those above it leave at their next turn.
    pub(super) fn resize_population(&mut self, c: usize) {
        let Some(n) = self.cfg.classes[c].users.as_ref().map(|p| p.users) else {
            return;
        };
        let pop = self.pop(c);
        if pop.users.len() < n as usize {
            pop.users.resize(n as usize, User::default());
        }
        pop.target = n;
        let back: Vec<u32> = (0..n).filter(|&u| !pop.users[u as usize].alive).collect();
        for u in back {
            self.pop(c).set_alive(u, true);
            self.schedule_turn(c, u, false);
        }
    }
}
