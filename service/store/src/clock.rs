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
//! One value for the process, since one process is one node; no correction on SQLite. A step
//! of the node's own clock between two readings is noticed against the monotonic clock and does
//! not move cluster time.

use std::sync::RwLock;
use std::time::{Duration, Instant};

/// The last reading taken: the correction it left in force and, to notice this node's clock
/// stepping between readings, the node's own time and the monotonic instant when it was taken.
#[derive(Copy, Clone, Debug)]
struct Reading {
    correction_ms: i64,
    system_ms: i64,
    at: Instant,
}

static READING: RwLock<Option<Reading>> = RwLock::new(None);

/// Differences smaller than this are the round trip's noise, not skew: the correction is left
/// as it is, so times do not jitter from one renewal to the next.
const DEADBAND_MS: i64 = 250;

/// A reading whose round trip took longer than this says too little: it is skipped. Half of
/// it bounds the reading's error (the database's clock was read somewhere within the round
/// trip), which stays below the deadband.
const MAX_ROUND_TRIP: Duration = Duration::from_millis(250);

/// This node's own wall clock, in Unix milliseconds.
pub fn system_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn reading() -> Option<Reading> {
    READING.read().ok().and_then(|r| *r)
}

/// The cluster's wall-clock time, in Unix milliseconds.
pub fn now_ms() -> i64 {
    let r = reading();
    let since = r.map_or(0, |r| r.at.elapsed().as_millis() as i64);
    cluster_time(
        system_ms(),
        r.map(|r| (r.correction_ms, r.system_ms)),
        since,
    )
}

/// Cluster time, given this node's clock `system`, the last reading's correction and the
/// node's time then, and the milliseconds since it by the monotonic clock.
fn cluster_time(system: i64, reading: Option<(i64, i64)>, since: i64) -> i64 {
    let Some((correction, then)) = reading else {
        return system;
    };
    if (system - (then + since)).abs() > DEADBAND_MS {
        // This node's clock stepped since the reading (time sync fixed it, or an operator):
        // until the next reading, cluster time runs on from the reading by the monotonic clock,
        // so a step never adds to the correction (a clock put right would otherwise run a
        // correction's worth ahead and fire deadlines early).
        then + correction + since
    } else {
        system + correction
    }
}

/// The correction in force (0 until a reading differs by more than the noise).
pub fn correction_ms() -> i64 {
    reading().map_or(0, |r| r.correction_ms)
}

/// A reading of the cluster's clock, `cluster_ms`, taken between this node's `before_ms` and
/// `after_ms`, updates the correction (see [`corrected`]). Returns the correction in force.
pub fn observe(before_ms: i64, cluster_ms: i64, after_ms: i64) -> i64 {
    let current = correction_ms();
    if !usable(before_ms, after_ms) {
        return current;
    }
    let next = corrected(current, before_ms, cluster_ms, after_ms);
    if next != current && next.abs() >= 1_000 {
        tracing::warn!(
            correction_ms = next,
            "this node's clock differs from PostgreSQL's; bete uses PostgreSQL's (fix the node's time sync)"
        );
    }
    if let Ok(mut r) = READING.write() {
        *r = Some(Reading {
            correction_ms: next,
            system_ms: system_ms(),
            at: Instant::now(),
        });
    }
    next
}

fn usable(before_ms: i64, after_ms: i64) -> bool {
    after_ms >= before_ms && after_ms - before_ms <= MAX_ROUND_TRIP.as_millis() as i64
}

/// The correction after a reading: the difference between the cluster's time and the round
/// trip's midpoint, when it differs from the `current` one by more than the noise and the
/// round trip was short enough to say anything.
fn corrected(current: i64, before_ms: i64, cluster_ms: i64, after_ms: i64) -> i64 {
    if !usable(before_ms, after_ms) {
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
        assert_eq!(
            corrected(0, t, t + 60_000, t + 300),
            0,
            "too slow a reading"
        );
    }

    /// A node a minute slow, corrected; its clock is then put right (a step of a minute):
    /// cluster time goes on by the monotonic clock, not a minute ahead, until the next reading.
    #[test]
    fn a_step_of_the_nodes_clock_does_not_move_cluster_time() {
        let t = 1_800_000_000_000;
        assert_eq!(cluster_time(t, None, 0), t);
        assert_eq!(
            cluster_time(t + 1_000, Some((60_000, t)), 1_000),
            t + 61_000
        );
        // Stepped forward by the minute it lacked, 2 s after the reading.
        assert_eq!(
            cluster_time(t + 62_000, Some((60_000, t)), 2_000),
            t + 62_000
        );
        // Small drift within the noise: the node's clock, corrected.
        assert_eq!(
            cluster_time(t + 2_100, Some((60_000, t)), 2_000),
            t + 62_100
        );
    }
}
