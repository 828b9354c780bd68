//! Finding table actors. The map is locked only to look a handle up or insert one, never while
//! a request is handled: the move path holds no global lock.

use foldhash::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::waiting::{self, Kept, Waiting};
use crate::{
    ActorDeps, BotStream, Command, Handle, Seating, TableMeta, TableStatus, create, spawn,
};
use bete_base::status::ServerError;
use bete_store::{Claim, LogEntry, Occupant, SeatRow, StoredTable, TableRow, TableState};

/// Locks that keep a table from being spawned twice. Sharded by table id: a load waits only
/// for loads of tables in its shard, not for every load in the server (a ladder starting a
/// generation of tables loads hundreds at once, and each load reads the store).
const LOAD_SHARDS: usize = 64;

/// Live table actors, loaded on demand from the store.
#[derive(Debug)]
pub struct Tables {
    pub deps: Arc<ActorDeps>,
    /// Serialises the loads (and creations) of one shard's tables, so a table is never
    /// spawned twice.
    loading: Box<[tokio::sync::Mutex<()>]>,
    generation: AtomicU64,
    /// Open WatchBot streams per bot, so a later JoinTable attaches them to the new table.
    bot_streams: Mutex<HashMap<String, Vec<BotStream>>>,
    stream_ids: AtomicU64,
    /// Waiting tables at most one bot sits at, kept as store rows without an actor
    /// (waiting.rs).
    pub waiting: Waiting,
}

impl Tables {
    pub fn new(deps: Arc<ActorDeps>) -> Tables {
        let waiting = Waiting::new(deps.metrics.tables_waiting_stored.clone());
        Tables {
            deps,
            loading: (0..LOAD_SHARDS)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            generation: AtomicU64::new(1),
            bot_streams: Mutex::new(HashMap::default()),
            stream_ids: AtomicU64::new(1),
            waiting,
        }
    }

    fn lookup(&self, id: &str) -> Option<Handle> {
        self.deps.loaded.get(id)
    }

    /// The live handle of a loaded table, if any (no load).
    pub fn loaded(&self, id: &str) -> Option<Handle> {
        self.lookup(id)
    }

    /// The table's actor, loading (and replaying) it from the store if needed; a load attaches
    /// this node's WatchBot streams of the bots seated there.
    pub async fn get(&self, id: &str) -> Result<Handle, ServerError> {
        self.load(id, true).await
    }

    /// [`Tables::get`] for a WatchBot stream opening, which attaches itself with its own resume
    /// point (a fresh snapshot first would make the resume a no-op).
    pub async fn get_unattached(&self, id: &str) -> Result<Handle, ServerError> {
        self.load(id, false).await
    }

    async fn load(&self, id: &str, attach: bool) -> Result<Handle, ServerError> {
        if let Some(h) = self.lookup(id) {
            return Ok(h);
        }
        if self.deps.shutdown.is_cancelled() {
            return Err(ServerError::ShuttingDown);
        }
        let _guard = self.load_lock(id).lock().await;
        if let Some(h) = self.lookup(id) {
            return Ok(h);
        }
        let stored = self
            .deps
            .store
            .table(id.to_string())
            .await?
            .ok_or_else(|| ServerError::TableNotFound(id.to_string()))?;
        // Scale-out: an unfinished table is played by one node at a time; take it (or learn
        // where it is played) before replaying it. A finished one is only read.
        let claiming = (stored.table.state != TableState::Finished).then(std::time::Instant::now);
        if claiming.is_some()
            && let Claim::Elsewhere { node, addr } = self.deps.store.claim(id.to_string()).await?
        {
            return Err(ServerError::TableElsewhere {
                table: id.to_string(),
                node,
                addr,
            });
        }
        // The bots seated here whose WatchBot streams this node holds: the table was just
        // claimed (moved here from a lost node) or loaded again, whichever call loaded it.
        let seated: Vec<String> = if !attach || stored.table.state == TableState::Finished {
            Vec::new()
        } else {
            stored
                .seats
                .iter()
                .filter_map(|s| match &s.occupant {
                    Occupant::Bot(b) => Some(b.clone()),
                    _ => None,
                })
                .collect()
        };
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        let handle = spawn(self.deps.clone(), stored, generation).await?;
        // Its actor owns its expiry now.
        self.waiting.remove(id);
        if let Some(started) = claiming {
            let m = &self.deps.metrics;
            m.tables_claimed.inc();
            m.claim_to_playing.observe(started.elapsed().as_secs_f64());
        }
        self.deps.loaded.insert(id.to_string(), handle.clone());
        for bot in seated {
            for stream in self.bot_streams(&bot) {
                handle
                    .tell(Command::WatchBot {
                        bot: bot.clone(),
                        stream,
                        from_seq: None,
                    })
                    .await;
            }
        }
        Ok(handle)
    }

    fn load_lock(&self, id: &str) -> &tokio::sync::Mutex<()> {
        use std::hash::BuildHasher;
        let h = foldhash::fast::FixedState::with_seed(0).hash_one(id);
        &self.loading[(h as usize) % self.loading.len()]
    }

    /// Create a table the server seats itself (see [`create`]) and hold its actor, in one
    /// store transaction and without reading it back.
    pub async fn create_seated(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        bots: Vec<Seating>,
    ) -> Result<Handle, ServerError> {
        if self.deps.shutdown.is_cancelled() {
            return Err(ServerError::ShuttingDown);
        }
        let id = table.id.clone();
        // Held across the commit: a load of the same id (a guessed id, a caller racing the
        // creation) waits and then finds the actor rather than spawning a second one.
        let _guard = self.load_lock(&id).lock().await;
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        let handle = create(self.deps.clone(), table, seats, bots, generation).await?;
        self.deps.loaded.insert(id, handle.clone());
        Ok(handle)
    }

    /// Send a request to a table and wait for the reply, reloading the actor once if it had
    /// just unloaded itself.
    pub async fn call<T>(
        &self,
        id: &str,
        make: impl Fn(oneshot::Sender<T>) -> Command,
    ) -> Result<T, ServerError> {
        for _ in 0..2 {
            let handle = self.get(id).await?;
            match handle.call(&make).await {
                Ok(t) => return Ok(t),
                Err(Some(e)) => return Err(e),
                Err(None) => self.forget(id, handle.generation),
            }
        }
        Err(if self.deps.shutdown.is_cancelled() {
            ServerError::ShuttingDown
        } else {
            ServerError::Internal(format!("table {id} is unavailable"))
        })
    }

    fn forget(&self, id: &str, generation: u64) {
        self.deps.loaded.forget(id, generation);
    }

    /// Another node has claimed the table: stop its actor here (it writes nothing more).
    pub async fn moved(&self, id: &str, owner: &str) {
        self.waiting.remove(id);
        let handle = self.deps.loaded.remove(id);
        if let Some(handle) = handle {
            handle
                .tell(Command::Moved {
                    owner: owner.to_string(),
                })
                .await;
        }
    }

    /// Load every unfinished table (crash recovery): each is rebuilt by replaying its log and
    /// its deadline resumes from the stored time of its last entry.
    pub async fn recover(&self) -> Result<usize, ServerError> {
        let ids = self.deps.store.unfinished_tables().await?;
        let mut n = 0;
        for id in ids {
            match self.recover_waiting(&id).await {
                Ok(true) => {
                    n += 1;
                    continue;
                }
                Ok(false) => {}
                Err(e) => tracing::error!(table = %id, error = %e, "cannot recover table"),
            }
            match self.get(&id).await {
                Ok(_) => n += 1,
                Err(e) => tracing::error!(table = %id, error = %e, "cannot recover table"),
            }
        }
        Ok(n)
    }

    /// A waiting table at most one bot sits at, found at the start: kept as its row (claimed
    /// first, as a load would), counted against its creator's limits. False: it needs its actor.
    async fn recover_waiting(&self, id: &str) -> Result<bool, ServerError> {
        let Some(stored) = self.deps.store.table(id.to_string()).await? else {
            return Ok(false);
        };
        if stored.table.state != TableState::Waiting || stored.table.ladder.is_some() {
            return Ok(false);
        }
        let log = self.deps.store.log(id.to_string()).await?;
        if !waiting::may_stay_stored(&stored, &log)
            || self.peek(&stored, &log).map(|s| s.state) != Some(TableState::Waiting)
        {
            return Ok(false);
        }
        if let Claim::Elsewhere { .. } = self.deps.store.claim(id.to_string()).await? {
            return Ok(false);
        }
        self.deps
            .limits
            .table_open(&stored.table.created_by, &stored.table.id);
        self.keep_waiting(&stored, log.into_iter().next());
        Ok(true)
    }

    /// A stored table's status computed from its row and log, as its actor would give it.
    fn peek(&self, stored: &StoredTable, log: &[LogEntry]) -> Option<TableStatus> {
        crate::peek(self.deps.clone(), stored, log).ok()
    }

    fn keep_waiting(&self, stored: &StoredTable, join: Option<LogEntry>) {
        let ttl = i64::try_from(self.deps.waiting_ttl.as_millis()).unwrap_or(i64::MAX);
        let kept = Kept {
            expires_at_ms: stored.table.created_at_ms.saturating_add(ttl),
            join,
        };
        self.waiting.add(&stored.table.id, kept);
    }

    /// The status of a table CreateTable just stored. A table still waiting for its seats
    /// (nobody is seated at creation) is kept as its row, without an actor, until a call needs
    /// one; one that starts at once (every seat a house bot's) is loaded.
    pub async fn created(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
    ) -> Result<TableStatus, ServerError> {
        let stored = StoredTable {
            cursor: 0,
            table,
            seats,
        };
        // The id is first told by this call's answer; a load racing the entry (a guessed id)
        // only makes the table an actor, as before, and the entry is then ignored.
        if waiting::may_stay_stored(&stored, &[])
            && !self.deps.shutdown.is_cancelled()
            && let Some(status) = self.peek(&stored, &[])
            && status.state == TableState::Waiting
        {
            self.keep_waiting(&stored, None);
            return Ok(status);
        }
        self.status(&stored.table.id).await
    }

    /// A table's status: from its actor, or computed from its row for a waiting table kept
    /// without one.
    pub async fn status(&self, id: &str) -> Result<TableStatus, ServerError> {
        if self.lookup(id).is_none()
            && self.waiting.contains(id)
            && let Some(stored) = self.deps.store.table(id.to_string()).await?
            && let Some(status) = self.stored_status(&stored)
        {
            return Ok(status);
        }
        self.call(id, |reply| Command::Status { reply }).await
    }

    /// The status of a listed row when it is a waiting table kept without an actor (ListTables).
    pub fn stored_status(&self, stored: &StoredTable) -> Option<TableStatus> {
        if self.lookup(&stored.table.id).is_some() {
            return None;
        }
        let kept = self.waiting.get(&stored.table.id)?;
        if !waiting::may_stay_stored(stored, kept.log()) {
            return None;
        }
        self.peek(stored, kept.log())
    }

    /// JoinTable's seat: the first join of a waiting table kept as its row is checked and
    /// stored as its actor would, without loading it (unless it fills the table, which starts
    /// the match); every other join is the actor's. `admit` checks the caller against the
    /// table's facts (its invitation) first, from the row the join reads or from the actor: a
    /// look of the caller's own beforehand read a kept table's row twice a join.
    pub async fn join(
        &self,
        id: &str,
        bot: &str,
        name: &str,
        seat: Option<u8>,
        admit: &(dyn Fn(&TableMeta) -> Result<(), ServerError> + Send + Sync),
    ) -> Result<(u8, TableStatus), ServerError> {
        if self.lookup(id).is_none() && self.waiting.contains(id) {
            // As a load does: a concurrent join or load of this table waits for this one.
            let _guard = self.load_lock(id).lock().await;
            if self.lookup(id).is_none()
                && let Some(kept) = self.waiting.get(id)
                && kept.join.is_none()
                && bete_store::clock::now_ms() < kept.expires_at_ms
                && let Some(stored) = self.deps.store.table(id.to_string()).await?
                && waiting::may_stay_stored(&stored, &[])
                && let Some(status) = self.peek(&stored, &[])
            {
                admit(&status.meta)?;
                if let Some((seat, status, entry)) = crate::join_stored(
                    self.deps.clone(),
                    &stored,
                    bot.to_string(),
                    name.to_string(),
                    seat,
                )
                .await?
                {
                    self.waiting.joined(id, entry);
                    return Ok((seat, status));
                }
            }
        }
        // The actor's facts (loading it if need be), then its join.
        let status = self.call(id, |reply| Command::Status { reply }).await?;
        admit(&status.meta)?;
        self.call(id, |reply| Command::Join {
            bot: bot.to_string(),
            name: name.to_string(),
            seat,
            by_ladder: false,
            reply,
        })
        .await?
    }

    pub fn new_stream_id(&self) -> u64 {
        self.stream_ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Register a WatchBot stream (before listing the bot's tables, so no join is missed).
    pub fn add_bot_stream(&self, bot: &str, stream: BotStream) {
        if let Ok(mut m) = self.bot_streams.lock() {
            let v = m.entry(bot.to_string()).or_default();
            v.retain(|s| !s.is_cut());
            v.push(stream);
        }
    }

    /// Takes every WatchBot stream of `bot` but `keep` out of the registry (WatchBot's
    /// `exclusive`), for the caller to end.
    pub fn take_other_bot_streams(&self, bot: &str, keep: u64) -> Vec<BotStream> {
        let Ok(mut m) = self.bot_streams.lock() else {
            return Vec::new();
        };
        let Some(v) = m.get_mut(bot) else {
            return Vec::new();
        };
        let (others, kept): (Vec<BotStream>, Vec<BotStream>) =
            std::mem::take(v).into_iter().partition(|s| s.id != keep);
        *v = kept;
        if v.is_empty() {
            m.remove(bot);
        }
        others
    }

    pub fn remove_bot_stream(&self, bot: &str, id: u64) {
        if let Ok(mut m) = self.bot_streams.lock()
            && let Some(v) = m.get_mut(bot)
        {
            v.retain(|s| s.id != id && !s.is_cut());
            if v.is_empty() {
                m.remove(bot);
            }
        }
    }

    /// Whether the bot holds an open WatchBot stream (a ladder's "online"), without copying
    /// its streams: the scheduler asks this of every entrant on every pass.
    pub fn has_bot_stream(&self, bot: &str) -> bool {
        self.bot_streams
            .lock()
            .ok()
            .is_some_and(|m| m.get(bot).is_some_and(|v| v.iter().any(|s| !s.is_cut())))
    }

    /// Every bot with an open WatchBot stream here (a cluster publishes them for its ladder
    /// leader).
    pub fn online_bots(&self) -> Vec<String> {
        self.bot_streams
            .lock()
            .ok()
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| v.iter().any(|s| !s.is_cut()))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn bot_streams(&self, bot: &str) -> Vec<BotStream> {
        self.bot_streams
            .lock()
            .ok()
            .and_then(|m| {
                m.get(bot)
                    .map(|v| v.iter().filter(|s| !s.is_cut()).cloned().collect())
            })
            .unwrap_or_default()
    }

    /// Attach the bot's open WatchBot streams to a table it now sits at (tables ignore a stream
    /// they already have).
    pub async fn attach_bot_streams(&self, bot: &str, table: &str) {
        let streams = self.bot_streams(bot);
        if streams.is_empty() {
            return;
        }
        if let Ok(handle) = self.get(table).await {
            for stream in streams {
                handle
                    .tell(Command::WatchBot {
                        bot: bot.to_string(),
                        stream,
                        from_seq: None,
                    })
                    .await;
            }
        }
    }

    /// Drop every WatchBot registration (shutdown).
    pub fn clear_bot_streams(&self) {
        if let Ok(mut m) = self.bot_streams.lock() {
            m.clear();
        }
    }
}
