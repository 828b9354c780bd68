//! # bete-table
//!
//! The table runtime. Tables as actors: one tokio task per table owns its `Game`, its deadline
//! timer, its event log and its watchers. Everything else talks to it through a [`Handle`]
//! (bounded channel, oneshot replies). Beside the actor: the registry of a node's tables
//! (`registry`), the projection of events to each viewer (`project`) and the resumable streams
//! that fan them out (`stream`). It imports bete-base and the store, nothing of the cluster,
//! the ladders or the edge: what it needs of those it asks through traits of its own
//! ([`OpenTables`], `report`).

mod actor;
pub mod event;
mod house;
pub mod project;
pub mod registry;
pub mod report;
mod sink;
pub mod stream;
pub mod waiting;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use bete_rules::{Action, Config, RulesetId, Seed, Setup, View, Viewer};
use tokio::sync::{mpsc, oneshot};

pub use actor::{ActorDeps, Seating, create, join_stored, peek, spawn};
pub use event::{Body, TableEvent};
pub use house::{
    HousePolicy, MAX_SEARCH_BUDGET_MS, MIN_SEARCH_BUDGET_MS, SHOWCASE_CREATOR, SHOWCASE_PACE,
};
pub use sink::{BotStream, Outbound, WatchItem};

use bete_base::status::ServerError;

/// Who counts a creator's unfinished tables (the edge's per-bot limits): told when a table is
/// loaded unfinished and when it finishes or closes. A trait of the table runtime's, so the
/// runtime does not import the edge that implements it.
pub trait OpenTables: Send + Sync + std::fmt::Debug {
    /// A table of `bot`'s is loaded and not finished.
    fn table_open(&self, bot: &str, table: &str);
    /// A table of `bot`'s finished or closed (or was never stored).
    fn table_done(&self, bot: &str, table: &str);
}
use bete_store::{Occupant, StoreError, TableRow, TableState, Visibility};

/// The bot id of the anonymous spectator: empty, which no registered bot has (ids are `b_...`),
/// so it holds no seat and created no table.
pub const SPECTATOR: &str = "";

/// The bot id of the operator reading with the admin token (`--admin-token` as the bearer
/// token of a read): no registered bot has it (ids are `b_...`), so it holds no seat, created
/// no table, and is shown the spectator's view; only the privacy checks let it in.
pub const OPERATOR: &str = "@operator";

/// How many requests may wait for one table.
pub const COMMAND_QUEUE: usize = 256;

/// The fixed facts of a table, parsed once.
#[derive(Debug)]
pub struct TableMeta {
    pub id: String,
    pub ruleset: RulesetId,
    pub seats: u8,
    pub config: Config,
    pub seed: Seed,
    pub first_dealer: u8,
    pub deadline_ms: u64,
    /// As created. A casual table's never changes; a ladder set's tables are created private
    /// and turn listed when the set is rated: what holds now is the actor's
    /// (`TableStatus::visibility`), which follows the store.
    pub visibility: Visibility,
    pub created_by: String,
    pub created_at_ms: i64,
    /// The creator chose the seed (never rated).
    pub seed_chosen: bool,
    /// Set for a ladder table.
    pub ladder: Option<bete_store::LadderTable>,
}

impl TableMeta {
    pub fn from_row(row: &TableRow) -> Result<TableMeta, StoreError> {
        let corrupt = |what: String| StoreError::Corrupt(format!("table {}: {what}", row.id));
        let ruleset: RulesetId = row.ruleset.parse().map_err(|e| corrupt(format!("{e}")))?;
        let json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&row.config_json).map_err(|e| corrupt(format!("config: {e}")))?;
        let config = Config::from_json(ruleset, row.seats, &json)
            .map_err(|e| corrupt(format!("config: {e}")))?;
        let seed: Seed = row.seed.parse().map_err(|_| corrupt("seed".into()))?;
        Ok(TableMeta {
            id: row.id.clone(),
            ruleset,
            seats: row.seats,
            config,
            seed,
            first_dealer: row.first_dealer,
            deadline_ms: row.deadline_ms,
            visibility: row.visibility,
            created_by: row.created_by.clone(),
            created_at_ms: row.created_at_ms,
            seed_chosen: row.seed_chosen,
            ladder: row.ladder.clone(),
        })
    }

    pub fn setup(&self) -> Setup {
        Setup {
            ruleset: self.ruleset,
            config: self.config.clone(),
            seats: self.seats,
            first_dealer: bete_rules::Seat(self.first_dealer),
            decks: bete_rules::Decks::Seed(self.seed),
        }
    }

    /// The full effective config, key by key, values as JSON text.
    pub fn config_pairs(&self) -> Vec<(String, String)> {
        self.config
            .to_json(self.ruleset)
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect()
    }
}

/// One seat as the table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatInfo {
    pub occupant: Occupant,
    /// The bot's name, or `house:<policy>`; empty for an empty seat.
    pub name: String,
    pub strikes: u32,
}

/// A table's public description (GetTable, ListTables, JoinTable, Seated).
#[derive(Clone, Debug)]
pub struct TableStatus {
    pub meta: Arc<TableMeta>,
    /// Now (a rated set's tables are listed though created private).
    pub visibility: Visibility,
    pub seats: Vec<SeatInfo>,
    pub state: TableState,
    pub last_seq: u64,
}

/// A viewer's view of the table at `seq`.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub seq: u64,
    pub viewer: Viewer,
    /// `None` while the table waits for its seats.
    pub view: Option<View>,
    /// Wall-clock deadline (Unix ms) of the viewer's decision, when the viewer is to act.
    pub deadline_ms: Option<i64>,
}

/// The result of an accepted action.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The table's seq after the action's events.
    pub seq: u64,
    /// This request_id had already been applied; this is its stored result.
    pub replayed: bool,
}

/// A request to a table actor.
#[derive(Debug)]
pub enum Command {
    Status {
        reply: oneshot::Sender<TableStatus>,
    },
    /// A finished ladder table's result from the live game, with its setup and deals for the
    /// luck correction (`None`: not a finished ladder table). The ladder's sweep asks the
    /// actor that has the table rather than replay its record.
    LadderResult {
        reply: oneshot::Sender<Option<(report::TableResult, report::Deals)>>,
    },
    Join {
        bot: String,
        name: String,
        seat: Option<u8>,
        /// Sent by a ladder's scheduler: the only way onto a ladder table.
        by_ladder: bool,
        reply: oneshot::Sender<Result<(u8, TableStatus), ServerError>>,
    },
    Leave {
        bot: String,
        reply: oneshot::Sender<Result<TableStatus, ServerError>>,
    },
    Submit {
        bot: String,
        action: Action,
        expected_seq: u64,
        request_id: Option<String>,
        reply: oneshot::Sender<Result<Submitted, ServerError>>,
    },
    View {
        bot: String,
        reply: oneshot::Sender<Result<Snapshot, ServerError>>,
    },
    /// The table's status if `bot` may read a private table's (the spectators' rule of
    /// `View`; a ladder set rated since the table loaded is listed).
    Readable {
        bot: String,
        reply: oneshot::Sender<Result<TableStatus, ServerError>>,
    },
    Watch {
        bot: String,
        from_seq: Option<u64>,
        reply: oneshot::Sender<Result<Watching, ServerError>>,
    },
    WatchBot {
        bot: String,
        stream: BotStream,
        from_seq: Option<u64>,
    },
    /// Close the table without a finished match (AdminService.StopTable).
    Close {
        reason: String,
        reply: oneshot::Sender<Result<TableStatus, ServerError>>,
    },
    /// Another node has claimed the table (scale-out): stop at once, writing nothing more;
    /// streams end with TABLE_ELSEWHERE.
    Moved {
        owner: String,
    },
    /// The bot was taken off this ladder table's ladder: its seat is auto-moved at once until
    /// the table ends (its result still counts). Replies whether the bot sits here.
    Forfeit {
        bot: String,
        reply: oneshot::Sender<bool>,
    },
}

impl Command {
    /// The span name of the actor's handling of it.
    pub fn span_name(&self) -> &'static str {
        match self {
            Command::Status { .. } => "table.status",
            Command::LadderResult { .. } => "table.ladder_result",
            Command::Join { .. } => "table.join",
            Command::Leave { .. } => "table.leave",
            Command::Submit { .. } => "table.submit",
            Command::View { .. } => "table.view",
            Command::Readable { .. } => "table.readable",
            Command::Watch { .. } => "table.watch",
            Command::WatchBot { .. } => "table.watch_bot",
            Command::Close { .. } => "table.close",
            Command::Moved { .. } => "table.moved",
            Command::Forfeit { .. } => "table.forfeit",
        }
    }
}

/// A command on its way to the actor, with the span of its sender (see trace.rs): the actor
/// handles it in a child of that span, so a call's trace goes on across the channel.
#[derive(Debug)]
pub struct Envelope {
    pub cmd: Command,
    pub caller: tracing::Span,
}

/// A new WatchTable stream's items, and its table (to ring `watcher_left` when it closes).
pub type Watching = (mpsc::Receiver<Outbound>, Arc<Shared>);

/// Facts a table publishes without a round trip to its actor.
#[derive(Debug)]
pub struct Shared {
    pub meta: Arc<TableMeta>,
    last_seq: AtomicU64,
    state: AtomicU8,
    /// Rung by a WatchTable stream as it closes, so the actor lets go of it (and the watchers
    /// gauge drops) at once rather than at the table's next event.
    pub watcher_left: tokio::sync::Notify,
}

impl Shared {
    pub fn new(meta: Arc<TableMeta>) -> Shared {
        Shared {
            meta,
            last_seq: AtomicU64::new(0),
            state: AtomicU8::new(0),
            watcher_left: tokio::sync::Notify::new(),
        }
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq.load(Ordering::Acquire)
    }
    pub fn state(&self) -> TableState {
        match self.state.load(Ordering::Acquire) {
            0 => TableState::Waiting,
            1 => TableState::Playing,
            _ => TableState::Finished,
        }
    }
    fn publish(&self, last_seq: u64, state: TableState) {
        self.last_seq.store(last_seq, Ordering::Release);
        let s = match state {
            TableState::Waiting => 0,
            TableState::Playing => 1,
            TableState::Finished => 2,
        };
        self.state.store(s, Ordering::Release);
    }
}

/// The handles of the loaded table actors, by table id. An actor takes its own entry out as it
/// stops (idle unload, a move, a broken table): an entry kept after that held the actor's
/// command channel and table facts for the life of the server, ≈ 8 KiB per finished table
/// (docs/security.md, "What the normal play's memory was").
#[derive(Debug)]
pub struct Loaded {
    map: std::sync::RwLock<foldhash::HashMap<String, Handle>>,
    /// `bete_table_handles`: the map's size.
    gauge: prometheus_client::metrics::gauge::Gauge,
}

impl Loaded {
    pub fn new(gauge: prometheus_client::metrics::gauge::Gauge) -> Loaded {
        Loaded {
            map: std::sync::RwLock::new(foldhash::HashMap::default()),
            gauge,
        }
    }

    /// The live handle of a loaded table.
    pub fn get(&self, id: &str) -> Option<Handle> {
        let map = self.map.read().ok()?;
        map.get(id).filter(|h| !h.is_closed()).cloned()
    }

    /// Enter a just started actor's handle. One that stopped before it was entered (its
    /// `forget` found nothing) is taken out again: it drops its receiver before it forgets.
    pub fn insert(&self, id: String, handle: Handle) {
        let generation = handle.generation;
        let closed = handle.is_closed();
        if let Ok(mut map) = self.map.write() {
            if closed {
                if map.get(&id).is_some_and(|h| h.generation == generation) {
                    map.remove(&id);
                }
            } else {
                map.insert(id, handle);
            }
            self.gauge.set(i64::try_from(map.len()).unwrap_or(i64::MAX));
        }
    }

    /// Take out the entry of the actor of `generation` (not a later one's).
    pub fn forget(&self, id: &str, generation: u64) {
        if let Ok(mut map) = self.map.write() {
            if map.get(id).is_some_and(|h| h.generation == generation) {
                map.remove(id);
            }
            self.gauge.set(i64::try_from(map.len()).unwrap_or(i64::MAX));
        }
    }

    /// Take out the entry of the table's actor, whichever it is.
    pub fn remove(&self, id: &str) -> Option<Handle> {
        let mut map = self.map.write().ok()?;
        let handle = map.remove(id);
        self.gauge.set(i64::try_from(map.len()).unwrap_or(i64::MAX));
        handle
    }
}

/// The way to a table actor.
#[derive(Clone, Debug)]
pub struct Handle {
    tx: mpsc::Sender<Envelope>,
    pub shared: Arc<Shared>,
    /// Distinguishes this actor from a later one for the same table.
    pub generation: u64,
}

impl Handle {
    /// Send a command and wait for its reply. `Err(None)` means the actor is gone (finished
    /// and unloaded, or shutting down): the caller may look the table up again.
    pub async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, Option<ServerError>> {
        let (tx, rx) = oneshot::channel();
        let cmd = make(tx);
        let caller = bete_base::trace::caller();
        self.tx
            .send(Envelope { cmd, caller })
            .await
            .map_err(|_| None)?;
        rx.await.map_err(|_| None)
    }

    /// Send a command that has no reply.
    pub async fn tell(&self, cmd: Command) -> bool {
        let caller = bete_base::trace::caller();
        self.tx.send(Envelope { cmd, caller }).await.is_ok()
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}
