//! A node's lease on PostgreSQL, kept apart from everything else the node does there.
//!
//! The lease is renewed on a connection of its own (not the pool's, which slow statements or a
//! peer's locks may hold up) under a deadline of its own, so that nothing else a node waits for
//! can make it lose its tables. The node also keeps its own, conservative idea of when its
//! lease runs out (by the monotonic clock, from when each renewal was *sent*): a node paused
//! past it (SIGSTOP, a VM frozen, a long GC-like stall) refuses to write when it wakes, before
//! it has even asked PostgreSQL, and PostgreSQL's own check in the append fence
//! (postgres.rs) catches whatever slips between the two.
//!
//! Every session also carries timeouts derived from the lease, so PostgreSQL itself ends what
//! a frozen node left open: a transaction idle for half a lease is rolled back (its row locks
//! freed for the peers claiming its tables), a lock is waited for at most a quarter of one,
//! and no statement runs longer than a lease (and at least 5 s).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, PgConnection};

use super::StoreError;

/// The session settings every connection of a node carries, derived from its lease.
pub(super) fn with_session_timeouts(opts: PgConnectOptions, lease: Duration) -> PgConnectOptions {
    let t = Timeouts::of(lease);
    opts.options([
        (
            "idle_in_transaction_session_timeout",
            t.idle_in_transaction.as_millis().to_string(),
        ),
        ("lock_timeout", t.lock.as_millis().to_string()),
        ("statement_timeout", t.statement.as_millis().to_string()),
    ])
}

/// PostgreSQL's timeouts for a node's sessions.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Timeouts {
    /// A transaction left idle this long (its node frozen mid-commit) is rolled back: well
    /// within the lease, so its locks are gone before peers may claim its tables.
    pub idle_in_transaction: Duration,
    /// Longest wait for a row lock: a write never queues behind a frozen peer for long.
    pub lock: Duration,
    /// Longest statement: a pool held by slow statements frees itself.
    pub statement: Duration,
}

impl Timeouts {
    pub fn of(lease: Duration) -> Timeouts {
        Timeouts {
            idle_in_transaction: (lease / 2)
                .clamp(Duration::from_millis(500), Duration::from_secs(5)),
            lock: (lease / 4).clamp(Duration::from_millis(250), Duration::from_secs(2)),
            statement: lease.clamp(Duration::from_secs(5), Duration::from_secs(30)),
        }
    }
}

/// This node's own view of its lease: until when it surely runs (by the monotonic clock,
/// which goes on while a process is stopped).
#[derive(Debug, Default)]
pub(super) struct LocalLease {
    until: Mutex<Option<Instant>>,
    /// Until when this node takes no table from a peer whose lease lapsed (see
    /// [`LocalLease::renewing`]).
    patient_until: Mutex<Option<Instant>>,
}

impl LocalLease {
    /// A renewal is about to be sent at `sent`. If this node's own lease lapsed (PostgreSQL
    /// away or failing over, or this node cut off or paused), its peers' leases most likely
    /// lapsed for the same reason and they have not renewed yet: for one lease from this
    /// renewal it takes none of their tables, so a database outage longer than the lease does
    /// not shuffle every table to whichever node renewed first. (Set before the renewal is
    /// sent, so no claim can see this node live again before it is patient.)
    pub fn renewing(&self, sent: Instant, ttl: Duration) {
        let lapsed = self
            .until
            .lock()
            .ok()
            .and_then(|u| *u)
            .is_some_and(|u| sent >= u);
        if lapsed && let Ok(mut p) = self.patient_until.lock() {
            *p = Some(sent + ttl);
        }
    }

    /// Whether this node is giving its peers time to renew after a lapse of its own.
    pub fn patient(&self) -> bool {
        self.patient_until
            .lock()
            .ok()
            .and_then(|p| *p)
            .is_some_and(|p| Instant::now() < p)
    }

    /// A renewal sent at `sent` succeeded: PostgreSQL set the lease to its `now()` + `ttl`,
    /// where its `now()` came after `sent`.
    pub fn renewed(&self, sent: Instant, ttl: Duration) {
        if let Ok(mut u) = self.until.lock() {
            let next = sent + ttl;
            if u.is_none_or(|u| u < next) {
                *u = Some(next);
            }
        }
    }

    /// The lease was given up (a drain): no more writes.
    pub fn ended(&self) {
        if let Ok(mut u) = self.until.lock() {
            *u = None;
        }
    }

    /// Whether the lease surely still runs.
    pub fn live(&self) -> bool {
        self.until
            .lock()
            .ok()
            .and_then(|u| *u)
            .is_some_and(|u| Instant::now() < u)
    }

    /// The refusal of a write by a node whose lease lapsed.
    pub fn lapsed() -> StoreError {
        StoreError::Unavailable(
            "this node's lease lapsed (the node was paused or cut off from PostgreSQL); \
             nothing was written, and its tables may have moved to a peer"
                .into(),
        )
    }
}

/// The lease's own connection to PostgreSQL, opened when needed and dropped after any failure
/// (a renewal cut short by its deadline leaves the connection in an unknown state).
pub struct LeaseConn {
    opts: PgConnectOptions,
    conn: Option<PgConnection>,
}

impl std::fmt::Debug for LeaseConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseConn")
            .field("open", &self.conn.is_some())
            .finish_non_exhaustive()
    }
}

impl LeaseConn {
    pub fn new(opts: PgConnectOptions) -> LeaseConn {
        LeaseConn { opts, conn: None }
    }

    /// The connection, opened if it is not.
    pub async fn get(&mut self) -> Result<&mut PgConnection, StoreError> {
        if self.conn.is_none() {
            let conn = self.opts.connect().await.map_err(super::postgres::pg)?;
            self.conn = Some(conn);
        }
        self.conn
            .as_mut()
            .ok_or_else(|| StoreError::Unavailable("no connection for the lease".into()))
    }

    /// Forget the connection after a failure; the next renewal opens another.
    pub fn reset(&mut self) {
        self.conn = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_follow_the_lease() {
        let t = Timeouts::of(Duration::from_secs(10));
        assert_eq!(t.idle_in_transaction, Duration::from_secs(5));
        assert_eq!(
            t.lock,
            Duration::from_millis(2500).min(Duration::from_secs(2))
        );
        assert_eq!(t.statement, Duration::from_secs(10));
        let t = Timeouts::of(Duration::from_millis(1500));
        assert_eq!(t.idle_in_transaction, Duration::from_millis(750));
        assert_eq!(t.lock, Duration::from_millis(375));
        assert_eq!(t.statement, Duration::from_secs(5));
    }

    #[test]
    fn a_lease_is_live_until_its_ttl_from_when_the_renewal_was_sent() {
        let lease = LocalLease::default();
        assert!(!lease.live(), "never renewed");
        lease.renewed(Instant::now(), Duration::from_secs(60));
        assert!(lease.live());
        // An older renewal answered late does not shorten it.
        lease.renewed(
            Instant::now() - Duration::from_secs(120),
            Duration::from_secs(60),
        );
        assert!(lease.live());
        lease.ended();
        assert!(!lease.live());
        lease.renewed(
            Instant::now() - Duration::from_secs(2),
            Duration::from_secs(1),
        );
        assert!(
            !lease.live(),
            "sent two seconds ago with a one-second lease"
        );
    }

    #[test]
    fn a_node_back_from_a_lapse_of_its_own_is_patient_for_a_lease() {
        let ttl = Duration::from_secs(60);
        let lease = LocalLease::default();
        // The first renewal (registration) is no lapse.
        lease.renewing(Instant::now(), ttl);
        assert!(!lease.patient());
        lease.renewed(Instant::now(), ttl);
        // Renewed in time: no lapse, no patience.
        lease.renewing(Instant::now(), ttl);
        assert!(!lease.patient());
        // Lapsed (the last renewal sent two leases ago): patient for a lease from the next.
        let lease = LocalLease::default();
        lease.renewed(Instant::now() - 2 * ttl, ttl);
        lease.renewing(Instant::now(), ttl);
        assert!(lease.patient());
        // A patience already over says nothing.
        let lease = LocalLease::default();
        lease.renewed(Instant::now() - 3 * ttl, ttl);
        lease.renewing(Instant::now() - 2 * ttl, ttl);
        assert!(!lease.patient());
    }
}
