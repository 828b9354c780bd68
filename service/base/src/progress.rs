//! How long the server itself was not making progress, so that a pause of the server is never
//! charged to a bot as a missed deadline.
//!
//! A ticker task wakes every [`TICK`] on the monotonic clock. When it wakes much later than it
//! asked (the process was stopped, e.g. SIGSTOP or a frozen VM, or the runtime stalled), the
//! excess is time the server did not run: it is added to [`Progress::paused`]. Deadlines count
//! that time out: a decision's deadline is its start plus the table's deadline plus the pause
//! that accrued since it began. A stall still in progress when a deadline timer fires (the timer
//! can run before the ticker after a resume) is counted too: the gap since the ticker's last
//! wake, beyond its period and slack, is pause as well.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The ticker's period.
pub const TICK: Duration = Duration::from_millis(100);
/// Lateness of a wake that still counts as progress (scheduling noise on a busy machine).
pub const SLACK: Duration = Duration::from_millis(200);

#[derive(Debug)]
struct State {
    /// Pause counted so far.
    paused: Duration,
    /// The ticker's last wake.
    last_tick: Instant,
}

/// The server's own progress clock.
#[derive(Debug)]
pub struct Progress {
    state: Mutex<State>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            state: Mutex::new(State {
                paused: Duration::ZERO,
                last_tick: Instant::now(),
            }),
        }
    }
}

impl Progress {
    /// Total pause so far, including a stall that is still going on (or just ended and the
    /// ticker has not run since).
    pub fn paused(&self) -> Duration {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.paused + Self::excess(s.last_tick.elapsed())
    }

    /// Total pause in whole milliseconds (deadlines are kept in milliseconds).
    pub fn paused_ms(&self) -> i64 {
        self.paused().as_millis() as i64
    }

    fn excess(since_tick: Duration) -> Duration {
        since_tick.saturating_sub(TICK + SLACK)
    }

    fn tick(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let gap = now.saturating_duration_since(s.last_tick);
        let excess = Self::excess(gap);
        if !excess.is_zero() {
            tracing::warn!(
                paused_ms = excess.as_millis() as u64,
                "the server made no progress for a while; deadlines are extended by that time"
            );
        }
        s.paused += excess;
        s.last_tick = now;
    }

    /// Runs the ticker until `stop` resolves.
    pub async fn run(self: std::sync::Arc<Self>, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        let mut every = tokio::time::interval(TICK);
        // After a pause, one wake (not a burst of catch-up ticks).
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = &mut stop => return,
                _ = every.tick() => self.tick(),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A gap beyond the period and slack is pause, before and after the ticker notices it, and
    /// counted once.
    #[test]
    fn a_late_wake_is_a_pause() {
        let p = Progress::default();
        assert!(p.paused() < Duration::from_millis(50));
        p.state.lock().unwrap().last_tick = Instant::now() - Duration::from_secs(5);
        let during = p.paused();
        let want = Duration::from_secs(5) - TICK - SLACK;
        assert!(
            during >= want && during < want + Duration::from_secs(1),
            "{during:?}"
        );
        p.tick();
        let after = p.paused();
        assert!(
            after >= during && after < during + Duration::from_secs(1),
            "{after:?}"
        );
        p.tick();
        assert!(p.paused() < after + Duration::from_secs(1));
    }
}
