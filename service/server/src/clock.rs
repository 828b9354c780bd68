//! The node's wall clock, corrected to the cluster's.
//!
//! Wall-clock instants leave a node: each log entry's time, the deadlines bots are shown, the
//! ladders' times. Nodes take tables over from one another, so they must agree on those
//! instants whatever their own clocks say. On PostgreSQL a node reads the database's clock at
//! start and at every lease renewal and corrects its own by the difference: the cluster's clock
//! is PostgreSQL's. A node whose clock is a minute off still shows bots true deadlines, and a
//! table it hands over keeps them. Time spans (timers, deadlines armed, leases) never need it:
//! they are the monotonic clock's, or PostgreSQL's own `now()`.
//!
//! One value for the process, since one process is one node; no correction on SQLite.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// The correction in force, in milliseconds (cluster time minus this node's clock).
static CORRECTION_MS: AtomicI64 = AtomicI64::new(0);

/// Differences smaller than this are the round trip's noise, not skew: the correction is left
/// as it is, so times do not jitter from one renewal to the next.
const DEADBAND_MS: i64 = 250;

/// A reading whose round trip took longer than this says too little: it is skipped.
const MAX_ROUND_TRIP: Duration = Duration::from_secs(1);

/// This node's own wall clock, in Unix milliseconds.
pub fn system_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The cluster's wall-clock time, in Unix milliseconds.
pub fn now_ms() -> i64 {
    system_ms() + correction_ms()
}

/// The correction in force (0 until a reading differs by more than the noise).
pub fn correction_ms() -> i64 {
    CORRECTION_MS.load(Ordering::Relaxed)
}

/// A reading of the cluster's clock, `cluster_ms`, taken between this node's `before_ms` and
/// `after_ms`, updates the correction (see [`corrected`]). Returns the correction in force.
pub fn observe(before_ms: i64, cluster_ms: i64, after_ms: i64) -> i64 {
    let current = correction_ms();
    let next = corrected(current, before_ms, cluster_ms, after_ms);
    if next != current {
        if next.abs() >= 1_000 {
            tracing::warn!(
                correction_ms = next,
                "this node's clock differs from PostgreSQL's; bete uses PostgreSQL's (fix the node's time sync)"
            );
        }
        CORRECTION_MS.store(next, Ordering::Relaxed);
    }
    next
}

/// The correction after a reading: the difference between the cluster's time and the round
/// trip's midpoint, when it differs from the `current` one by more than the noise and the
/// round trip was short enough to say anything.
fn corrected(current: i64, before_ms: i64, cluster_ms: i64, after_ms: i64) -> i64 {
    if after_ms < before_ms || after_ms - before_ms > MAX_ROUND_TRIP.as_millis() as i64 {
        return current;
    }
    let measured = cluster_ms - (before_ms + (after_ms - before_ms) / 2);
    if (measured - current).abs() < DEADBAND_MS {
        current
    } else {
        measured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skew_is_corrected_and_noise_is_not() {
        let t = 1_800_000_000_000;
        // Noise around no skew: nothing changes.
        assert_eq!(corrected(0, t, t + 140, t + 200), 0);
        // A minute behind the cluster: corrected from the round trip's midpoint.
        assert_eq!(corrected(0, t, t + 60_050, t + 100), 60_000);
        // A slow reading says nothing.
        assert_eq!(corrected(60_000, t, t, t + 5_000), 60_000);
        // A reading across a clock step backwards says nothing either.
        assert_eq!(corrected(60_000, t, t, t - 10), 60_000);
        // Within the noise of the correction in force: kept.
        assert_eq!(corrected(60_000, t, t + 60_100, t), 60_000);
        // The clock fixed: back to none.
        assert_eq!(corrected(60_000, t, t + 10, t + 20), 0);
        // A clock a minute fast.
        assert_eq!(corrected(0, t, t - 60_000, t + 2), -60_001);
    }
}
