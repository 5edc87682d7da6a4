//! Checks of `[pool.NAME.lease]`: work with its own lease (`crate::model::lease`).

use super::check::{V, bad, nonzero_dur};
use crate::scenario::raw::RawLease;
use crate::scenario::spec::LeaseCfg;

/// Validates `[pool.NAME.lease]` at `path` (the pool's path): a nonzero `timeout` and
/// `requeue_failed`; not on an autoscaled pool (`autoscaled`), whose servers come and go
/// while a re-queued job waits for its own server.
pub fn lease(path: &str, l: &RawLease, autoscaled: bool) -> V<LeaseCfg> {
    let path = format!("{path}.lease");
    if autoscaled {
        return bad(
            path,
            "an autoscaled pool's servers come and go, and a re-queued job waits for its \
             own server; `lease` is not supported with `autoscale`",
        );
    }
    Ok(LeaseCfg {
        timeout_ns: nonzero_dur(&format!("{path}.timeout"), l.timeout)?,
        on_expiry: l.on_expiry,
        requeue_failed_ns: match l.requeue_failed {
            Some(d) => Some(nonzero_dur(&format!("{path}.requeue_failed"), d)?),
            None => None,
        },
    })
}
