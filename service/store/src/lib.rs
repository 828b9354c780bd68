//! # bete-store
//!
//! Durable storage behind one trait, [`Store`], with two back ends (SQLite for one node,
//! PostgreSQL for a cluster), their migrations, and one test suite that both pass (the shape of
//! quickwit's metastore). Beside it, what the store needs and the server uses from here: the
//! cluster's clock (read from PostgreSQL, [`clock`]) and the seeds of record ([`fresh_seed`]).
//!
//! The table log holds the *commands* that changed a table (seat joins and leaves, engine actions),
//! never projected events: events are re-derived by replaying the commands through the engine.
//! That keeps hidden cards out of the log format and makes recovery a replay.

pub mod clock;
pub mod guard;
mod pg_lease;
mod postgres;
#[cfg(test)]
mod probe;
mod reads;
mod rows;
mod seed;
mod sqlite;
mod strikes;
#[cfg(test)]
#[macro_use]
mod suite;
#[cfg(test)]
mod suite_lease;
#[cfg(test)]
mod suite_strikes;
pub mod trace;
mod writes;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use pg_lease::LeaseConn;
pub use postgres::{NodeConfig, PgStore};
pub use seed::fresh_seed;
pub use sqlite::SqliteStore;

/// A boxed future, so `Store` can be used as `Arc<dyn Store>`.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why the store could not do what was asked.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("the store is closed")]
    Closed,
    /// The database or its folder is damaged: the server refuses to serve it.
    #[error("the store is damaged: {0}")]
    Damaged(String),
    /// Another server holds the data folder.
    #[error(
        "the data folder {} is in use by another bete-server (its lock file bete.lock is held); \
         stop that server first, or give this one another --data-dir",
        .0.display()
    )]
    Locked(std::path::PathBuf),
    /// The database cannot be reached (PostgreSQL down or restarting): nothing was written,
    /// or nothing is known to have been; retrying later is safe.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// Another node has claimed the table since this node did: this node must not write it.
    #[error("table {table} is now owned by node {owner:?}")]
    Fenced { table: String, owner: String },
    /// Another node leads the ladders now: this node's scheduler must not write.
    #[error("ladder scheduling has moved to node {leader:?}")]
    LadderFenced { leader: String },
    /// A live node already runs under this node id.
    #[error(
        "node id {id:?} is in use by a live bete-server (at {addr:?}); give this one another \
         --node-id, or stop that one first"
    )]
    NodeIdInUse { id: String, addr: String },
    /// The operating system's random source failed (a seed of record could not be drawn).
    #[error("the OS random source failed: {0}")]
    Random(String),
}

/// A database whose schema is at `version`, against this binary's `known` steps: a newer
/// binary's schema (e.g. after a rollback) may have dropped what this one reads and writes, so
/// the store refuses to open rather than fail on every move.
fn refuse_newer_schema(version: i64, known: usize) -> Result<(), StoreError> {
    if version > known as i64 {
        return Err(StoreError::Corrupt(format!(
            "the database's schema is version {version}, newer than this bete-server's {known}: \
             run the newer bete-server, or restore the backup taken before the upgrade"
        )));
    }
    Ok(())
}

/// The outcome of claiming a table before loading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This node holds the table (always, on a store of one node).
    Held,
    /// A live peer holds it; `addr` is where that peer serves.
    Elsewhere { node: String, addr: String },
}

/// A registered bot. The token itself is never stored, only its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotRow {
    pub id: String,
    pub name: String,
    /// Free text given at registration (who runs it); not the owner that ladders count.
    pub owner: String,
    /// Lower-case hex SHA-256 of the bearer token.
    pub token_hash: String,
    pub created_at_ms: i64,
    /// The owning account; `None` for a bot registered without one (it is its own owner).
    pub account_id: Option<String>,
    /// "1" unless registered as a later version.
    pub version: String,
}

impl BotRow {
    /// The owner ladders count: two bots of one owner never share a ladder table.
    pub fn owner_id(&self) -> &str {
        self.account_id.as_deref().unwrap_or(&self.id)
    }
}

/// An account: the owner of bots. Only its token's hash is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    pub id: String,
    pub name: String,
    pub token_hash: String,
    pub created_at_ms: i64,
}

/// A bot's entry in a ladder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRow {
    pub ladder_id: String,
    pub bot_id: String,
    pub capacity: u32,
    pub active: bool,
    /// Why the scheduler took the bot off, when it did.
    pub removed_reason: String,
    pub entered_at_ms: i64,
}

/// A bot's strike record on a ladder: kept by the ladder's leader so that neither a restart
/// nor another node of a cluster forgets a removal (see `store/strikes.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrikeRecord {
    pub ladder_id: String,
    pub bot_id: String,
    /// Times taken off the ladder for timeouts.
    pub removals: u32,
    /// Until when it may not enter again (ms since the epoch; 0 if never taken off).
    pub cooldown_until_ms: i64,
    /// Its recent decisions on the ladder, as `bete_ladder::StrikeWindow::kept` writes them.
    pub window: String,
}

/// A ladder match: one table or a duplicate set.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRow {
    pub id: String,
    pub ladder_id: String,
    /// The seed of every table of the match (a set deals the same decks at each rotation).
    pub seed: String,
    pub duplicate: bool,
    /// Bot ids (house entrants `house:<policy>`) in rotation-0 seat order.
    pub entrants: Vec<String>,
    pub rated: bool,
    pub started_at_ms: i64,
    pub rated_at_ms: Option<i64>,
    /// Per entrant, once rated.
    pub results: Vec<EntrantResult>,
    /// Insertion order: the page cursor of match lists.
    pub cursor: i64,
}

/// One entrant's result in a rated match, with its rating before and after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntrantResult {
    pub bot_id: String,
    pub net: i64,
    pub place: u32,
    pub mu_before: f64,
    pub sigma_before: f64,
    pub mu_after: f64,
    pub sigma_after: f64,
    pub strikes: u32,
    pub deals: u32,
}

/// A bot's standing in a ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingRow {
    pub ladder_id: String,
    pub bot_id: String,
    pub mu: f64,
    pub sigma: f64,
    pub matches: u32,
    /// Net jetons over every rated match, and the deals they took: the mean per deal.
    pub jetons: i64,
    pub deals: u64,
    pub last_net: i64,
    pub last_place: u32,
}

/// Who may find a table in `ListTables` and watch it as a spectator.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Visibility {
    Listed,
    Private,
}

impl Visibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Listed => "listed",
            Visibility::Private => "private",
        }
    }
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "listed" => Ok(Visibility::Listed),
            "private" => Ok(Visibility::Private),
            other => Err(StoreError::Corrupt(format!("visibility {other:?}"))),
        }
    }
}

/// Where a table is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TableState {
    /// Waiting for seats to fill.
    Waiting,
    /// All seats filled; the match is being played.
    Playing,
    /// The match ended; the record is stored.
    Finished,
}

impl TableState {
    pub fn as_str(self) -> &'static str {
        match self {
            TableState::Waiting => "waiting",
            TableState::Playing => "playing",
            TableState::Finished => "finished",
        }
    }
    pub fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "waiting" => Ok(TableState::Waiting),
            "playing" => Ok(TableState::Playing),
            "finished" => Ok(TableState::Finished),
            other => Err(StoreError::Corrupt(format!("table state {other:?}"))),
        }
    }
}

/// A table as created. Everything needed to rebuild its `Game` except the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableRow {
    pub id: String,
    /// Ruleset id of RULES.md 11.1.
    pub ruleset: String,
    pub seats: u8,
    /// The full effective config as JSON (section 10 keys).
    pub config_json: String,
    /// 64 hex digits; every deck of the match derives from it (11.5).
    pub seed: String,
    pub first_dealer: u8,
    /// Decision deadline per turn.
    pub deadline_ms: u64,
    pub visibility: Visibility,
    pub state: TableState,
    /// The table's latest event seq as of the last append (0 before any entry).
    pub last_seq: u64,
    pub created_by: String,
    pub created_at_ms: i64,
    /// The creator chose the seed: never rated, and shown as such.
    pub seed_chosen: bool,
    /// For a ladder table: the ladder, the match and the rotation.
    pub ladder: Option<LadderTable>,
}

/// Where a ladder table belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LadderTable {
    pub ladder_id: String,
    pub match_id: String,
    pub rotation: u8,
}

/// Who fills a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Occupant {
    Empty,
    /// A registered bot, by id.
    Bot(String),
    /// A house policy run inside the server (`random`, `heuristic`).
    House(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatRow {
    pub seat: u8,
    pub occupant: Occupant,
    /// The bot's registered name, `house:<policy>`, or empty (filled on reads only).
    pub name: String,
    /// Decisions this seat let expire (each answered by an auto action).
    pub strikes: u32,
}

/// One entry of a table's log: a command that changed the table. Stored as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogEntry {
    /// A bot took a seat.
    Join {
        seat: u8,
        bot: String,
        /// The bot's name at the time, for the `SeatTaken` event.
        #[serde(default)]
        name: String,
        time_ms: i64,
    },
    /// A bot left a seat before the match started.
    Leave { seat: u8, bot: String, time_ms: i64 },
    /// An engine action applied for a seat.
    Action {
        seat: u8,
        /// Text form of RULES.md 11.3.
        action: String,
        /// Taken by the server because the seat's deadline expired.
        auto: bool,
        /// The client's idempotency key, when the action came from a client.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        time_ms: i64,
    },
    /// The table was closed without a finished match (an operator stopped it, or it waited for
    /// its seats too long); nothing follows it.
    Close { reason: String, time_ms: i64 },
}

impl LogEntry {
    pub fn time_ms(&self) -> i64 {
        match self {
            LogEntry::Join { time_ms, .. }
            | LogEntry::Leave { time_ms, .. }
            | LogEntry::Action { time_ms, .. }
            | LogEntry::Close { time_ms, .. } => *time_ms,
        }
    }
}

/// Filters of `ListTables`.
#[derive(Clone, Debug, Default)]
pub struct TableFilter {
    pub ruleset: Option<String>,
    pub state: Option<TableState>,
    /// Private tables are listed only to the bot that created them or sits at them.
    pub viewer_bot: Option<String>,
    /// Newest first: only rows older than this cursor (exclusive); 0 means from the newest.
    pub before: i64,
    pub limit: u32,
}

/// A table with its seats, as the store holds them.
#[derive(Clone, Debug)]
pub struct StoredTable {
    /// Insertion order; the page cursor of `ListTables`.
    pub cursor: i64,
    pub table: TableRow,
    pub seats: Vec<SeatRow>,
}

/// A finished match's result for one bot, folded into its rating for the ruleset.
#[derive(Clone, Debug)]
pub struct RatingDelta {
    pub bot: String,
    pub ruleset: String,
    /// Net jetons won or lost in the match.
    pub net: i64,
}

/// The server's storage. Every write is durable when its future resolves.
pub trait Store: Send + Sync + std::fmt::Debug {
    fn create_bot(&self, bot: BotRow) -> StoreFuture<'_, ()>;
    fn bot_by_token_hash(&self, hash: String) -> StoreFuture<'_, Option<BotRow>>;
    fn bot(&self, id: String) -> StoreFuture<'_, Option<BotRow>>;
    /// The bots of these ids that exist, in any order: one read for a page of names.
    fn bots(&self, ids: Vec<String>) -> StoreFuture<'_, Vec<BotRow>>;

    fn create_table(&self, table: TableRow, seats: Vec<SeatRow>) -> StoreFuture<'_, ()>;
    /// Create a table together with the first entries of its log, in one transaction: a table
    /// the server seats itself (a ladder's) is written once, not once plus once per seat.
    /// `seats` already show what the entries did (the bots in their seats); each entry comes
    /// with its `last_seq` as in [`Store::append`], and `log[i]` is entry `i`.
    fn create_seated_table(
        &self,
        table: TableRow,
        seats: Vec<SeatRow>,
        log: Vec<(LogEntry, u64)>,
    ) -> StoreFuture<'_, ()>;
    /// Append entry `seq` (0-based, gap-free) to a table's log, updating the seats table to
    /// match; `last_seq` is the table's event seq after the entry (shown by ListTables).
    fn append(
        &self,
        table: String,
        seq: u64,
        entry: LogEntry,
        last_seq: u64,
    ) -> StoreFuture<'_, ()>;
    fn set_state(&self, table: String, state: TableState) -> StoreFuture<'_, ()>;
    /// Store the finished record, mark the table finished, fold results into ratings, at once.
    fn finish(
        &self,
        table: String,
        record_json: String,
        ratings: Vec<RatingDelta>,
    ) -> StoreFuture<'_, ()>;

    fn table(&self, id: String) -> StoreFuture<'_, Option<StoredTable>>;
    fn list_tables(&self, filter: TableFilter) -> StoreFuture<'_, Vec<StoredTable>>;
    fn log(&self, table: String) -> StoreFuture<'_, Vec<LogEntry>>;
    /// Tables where this bot holds a seat, oldest first: the unfinished ones, plus those of
    /// `resume` even if finished (a resuming bot must still get the events up to `MatchEnded`).
    fn tables_of_bot(&self, bot: String, resume: Vec<String>) -> StoreFuture<'_, Vec<String>>;
    /// Ids of tables not finished, oldest first: the ones to rebuild at startup.
    fn unfinished_tables(&self) -> StoreFuture<'_, Vec<String>>;
    fn record(&self, table: String) -> StoreFuture<'_, Option<String>>;
    /// (rating, games) of a bot in a ruleset.
    fn rating(&self, bot: String, ruleset: String) -> StoreFuture<'_, Option<(i64, u64)>>;
    /// Resolves once the store can no longer write (its writer stopped after a failure it could
    /// not prove harmless): every later write fails with `Closed`, so the server should stop
    /// serving and let its supervisor restart it rather than refuse every move while healthy.
    fn writer_stopped(&self) -> StoreFuture<'_, ()>;
    /// Take ownership of an unfinished table before loading it (scale-out: a table is played
    /// by one node at a time). A store of one node holds every table.
    fn claim(&self, _table: String) -> StoreFuture<'_, Claim> {
        Box::pin(async { Ok(Claim::Held) })
    }
    /// Let go of every table this node holds, so that peers take them at once (after a drain,
    /// when no more writes come).
    fn release_all(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    /// Replaces a bot's token hash and records the old one as revoked, in one transaction.
    fn rotate_bot_token(&self, bot: String, new_hash: String, at_ms: i64) -> StoreFuture<'_, ()>;
    /// Whether `hash` is of a token that was revoked (replaced by a rotation).
    fn token_revoked(&self, hash: String) -> StoreFuture<'_, bool>;

    // ---- accounts ----
    fn create_account(&self, account: AccountRow) -> StoreFuture<'_, ()>;
    fn account_by_token_hash(&self, hash: String) -> StoreFuture<'_, Option<AccountRow>>;
    /// The account's bots, oldest first.
    fn bots_of_account(&self, account: String) -> StoreFuture<'_, Vec<BotRow>>;

    // ---- ladders ----
    /// Enter (or enter again) a ladder: the entry becomes active with this capacity.
    fn put_entry(&self, entry: EntryRow) -> StoreFuture<'_, ()>;
    /// Every entry of a ladder, active or not.
    fn entries(&self, ladder: String) -> StoreFuture<'_, Vec<EntryRow>>;
    /// Store a bot's strike record on a ladder, whole. On PostgreSQL only the ladders' leader
    /// writes it (fenced like a new match), so a paused former leader cannot undo a removal.
    fn put_strikes(&self, record: StrikeRecord) -> StoreFuture<'_, ()>;
    /// Every strike record of a ladder (a leader's load).
    fn strike_records(&self, ladder: String) -> StoreFuture<'_, Vec<StrikeRecord>>;
    /// One bot's strike record on a ladder (any node's EnterLadder).
    fn strike_record(&self, ladder: String, bot: String) -> StoreFuture<'_, Option<StrikeRecord>>;
    fn create_match(&self, m: MatchRow) -> StoreFuture<'_, ()>;
    /// Rate a match: its results and every entrant's new rating, in one transaction, once: a
    /// match already rated is left as it is (the call still succeeds), so a result is applied
    /// exactly once whatever crashes and retries come between.
    fn rate_match(
        &self,
        match_id: String,
        results: Vec<EntrantResult>,
        ratings: Vec<RatingRow>,
        rated_at_ms: i64,
    ) -> StoreFuture<'_, ()>;
    fn ladder_match(&self, id: String) -> StoreFuture<'_, Option<MatchRow>>;
    /// Matches of a ladder (or of one bot in it), newest first, older than `before` (0: all).
    fn ladder_matches(
        &self,
        ladder: String,
        bot: Option<String>,
        before: i64,
        limit: u32,
    ) -> StoreFuture<'_, Vec<MatchRow>>;
    /// Matches not yet rated, oldest first (recovery).
    fn playing_matches(&self) -> StoreFuture<'_, Vec<MatchRow>>;
    /// Rated matches of a ladder in the order they were rated (recomputing ratings).
    fn rated_matches(&self, ladder: String) -> StoreFuture<'_, Vec<MatchRow>>;
    /// How many matches of a ladder are rated (a follower's GetLadder, without reading them).
    fn rated_match_count(&self, ladder: String) -> StoreFuture<'_, u64>;
    /// Matches of a ladder started at or after `since_ms` (the daily limits after a restart).
    fn matches_since(&self, ladder: String, since_ms: i64) -> StoreFuture<'_, Vec<MatchRow>>;
    fn ratings(&self, ladder: String) -> StoreFuture<'_, Vec<RatingRow>>;
    /// The tables of a ladder match, in rotation order.
    fn match_tables(&self, match_id: String) -> StoreFuture<'_, Vec<StoredTable>>;
    /// The finished tables of any of these ladder matches (the leader's sweep for tables that
    /// finished on other nodes: one query for every match in flight).
    fn finished_match_tables(&self, match_ids: Vec<String>) -> StoreFuture<'_, Vec<StoredTable>>;
}
