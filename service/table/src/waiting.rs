//! Waiting tables kept as store rows (issue 26): a table made by CreateTable has no actor while
//! at most one bot sits at it. Its row (and at most one log entry, that bot's join) is its
//! whole state; its status is computed from them when asked (`actor::peek`); the first join is
//! checked and stored as the actor would (`actor::join_stored`); and its actor is loaded by the
//! first call that needs one: a second join (or a first one that fills the table), a watch, a
//! seat view, a leave, a stop. What stays in memory is one entry here (its id, when it expires,
//! the join), so an address's budget of waiting tables costs about a hundred bytes each rather
//! than a task, its channels and its state.
//!
//! A waiting table nobody joined expires like a loaded one: once `--waiting-ttl-secs` have
//! passed since its creation, [`sweep`] loads it and its actor closes it by its own expiry (the
//! same log entry, status and release of its creator's budgets).
//!
//! Ownership in a cluster is unchanged: the row is created held by this node (owner and epoch
//! in PostgreSQL, kept by the node's lease), so a peer asked about it forwards here, where it
//! is answered from the row or loaded; if this node's lease lapses a peer claims it as an
//! orphan and loads it (and its actor expires it there).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use foldhash::HashMap;
use prometheus_client::metrics::gauge::Gauge;
use tokio_util::sync::CancellationToken;

use crate::registry::Tables;
use bete_store::{LogEntry, Occupant, StoredTable, TableState};

/// A waiting table kept without an actor.
#[derive(Clone, Debug)]
pub struct Kept {
    /// When it expires (Unix ms).
    pub expires_at_ms: i64,
    /// The join of the one bot seated, its log's only entry.
    pub join: Option<LogEntry>,
}

impl Kept {
    /// The table's log.
    pub fn log(&self) -> &[LogEntry] {
        self.join.as_slice()
    }
}

/// The waiting tables of this node that have no actor.
#[derive(Debug)]
pub struct Waiting {
    expires: Mutex<HashMap<String, Kept>>,
    /// `bete_tables_waiting_stored`: how many.
    gauge: Gauge,
}

impl Waiting {
    pub fn new(gauge: Gauge) -> Waiting {
        Waiting {
            expires: Mutex::new(HashMap::default()),
            gauge,
        }
    }

    pub fn add(&self, id: &str, kept: Kept) {
        let mut m = self.lock();
        m.insert(id.to_string(), kept);
        self.gauge.set(m.len() as i64);
    }

    pub fn get(&self, id: &str) -> Option<Kept> {
        self.lock().get(id).cloned()
    }

    /// A bot took a seat (stored): its join is the table's log now.
    pub fn joined(&self, id: &str, entry: LogEntry) {
        if let Some(k) = self.lock().get_mut(id) {
            k.join = Some(entry);
        }
    }

    /// Takes the table out (its actor is loaded, or it moved to a peer).
    pub fn remove(&self, id: &str) -> bool {
        let mut m = self.lock();
        let had = m.remove(id).is_some();
        self.gauge.set(m.len() as i64);
        had
    }

    pub fn contains(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes out the tables whose waiting time has run out by `now_ms`.
    pub fn due(&self, now_ms: i64) -> Vec<String> {
        let mut m = self.lock();
        let due: Vec<String> = m
            .iter()
            .filter(|(_, k)| k.expires_at_ms <= now_ms)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &due {
            m.remove(id);
        }
        self.gauge.set(m.len() as i64);
        due
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Kept>> {
        // Poisoned only by a panic inside one of the short sections above, which leave the
        // map whole.
        self.expires.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether a stored table may be kept without an actor with `log` as its whole log: waiting,
/// not a ladder's (its scheduler seats it), and its seated bot the one of the log's join, if
/// any (so the row and the log are its whole state).
pub fn may_stay_stored(stored: &StoredTable, log: &[LogEntry]) -> bool {
    let joined: Vec<&str> = log
        .iter()
        .filter_map(|e| match e {
            LogEntry::Join { bot, .. } => Some(bot.as_str()),
            _ => None,
        })
        .collect();
    let seated: Vec<&str> = stored
        .seats
        .iter()
        .filter_map(|s| match &s.occupant {
            Occupant::Bot(b) => Some(b.as_str()),
            _ => None,
        })
        .collect();
    stored.table.state == TableState::Waiting
        && stored.table.ladder.is_none()
        && log.len() <= 1
        && joined.len() == log.len()
        && seated == joined
}

/// How often [`sweep`] looks for expired tables: a quarter of the waiting time, between 100 ms
/// and 5 s (a table expires at most that late).
pub fn sweep_interval(ttl: Duration) -> Duration {
    (ttl / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))
}

/// Closes the waiting tables kept as rows once their time is up, until `stop`.
pub async fn sweep(tables: Arc<Tables>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(sweep_interval(tables.deps.waiting_ttl));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = bete_store::clock::now_ms();
        for id in tables.waiting.due(now) {
            if stop.is_cancelled() {
                return;
            }
            // Loaded, its actor closes it at once by its own expiry (actor/mod.rs): the same
            // entry and reason, and a table joined and started in the meantime plays on.
            match tables.get(&id).await {
                Ok(_) => {}
                // A peer took it (and expires it there).
                Err(bete_base::status::ServerError::TableElsewhere { .. }) => {}
                // The store failed: tried again on a later pass.
                Err(e) => {
                    tracing::warn!(table = %id, error = %e, "could not expire a waiting table");
                    if tables.loaded(&id).is_none()
                        && let Ok(Some(stored)) = tables.deps.store.table(id.clone()).await
                        && stored.table.state == TableState::Waiting
                    {
                        // Loaded by the next pass (which reads its log afresh).
                        let kept = Kept {
                            expires_at_ms: now + 1_000,
                            join: None,
                        };
                        tables.waiting.add(&id, kept);
                    }
                }
            }
        }
    }
}
