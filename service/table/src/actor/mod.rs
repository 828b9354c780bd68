//! The table actor: the only owner of a table's `Game`, deadline, log and watchers.
//!
//! Every change to a table is a [`LogEntry`]. `step` applies one to the in-memory state and
//! derives its events; the live path steps, appends the entry to the store and waits for it to
//! be durable, and only then replies and fans out. Recovery steps through the stored log, so a
//! rebuilt table has exactly the events (and sequence numbers) it had before.

mod commit;
mod seats;
mod step;
mod timer;
mod watch;

use foldhash::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bete_rules::{Action, Game, Seat};
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use super::sink::Sink;
use super::{
    Command, Envelope, Handle, SeatInfo, Shared, TableEvent, TableMeta, TableStatus, house,
};
use bete_base::metrics::Metrics;
use bete_base::shutdown::Shutdown;
use bete_base::status::ServerError;
use bete_store::clock::now_ms;
use bete_store::{
    LogEntry, Occupant, SeatRow, Store, StoredTable, TableRow, TableState, Visibility,
};

/// What every table actor needs from the server.
#[derive(Debug)]
pub struct ActorDeps {
    pub store: Arc<dyn Store>,
    pub metrics: Arc<Metrics>,
    pub shutdown: Shutdown,
    /// Pause before a house bot acts (0 in tests: house bots answer at once).
    pub house_delay: Duration,
    /// A finished table's actor leaves memory after this long without requests.
    pub idle_unload: Duration,
    /// Items a WatchTable stream may have waiting before it is cut as too slow.
    pub watch_buffer: usize,
    /// Told the id of every ladder table whose finished record is stored, so its ladder's
    /// scheduler rates the match or starts the set's next table.
    pub ladder_finished: Option<tokio::sync::mpsc::UnboundedSender<crate::report::FinishedTable>>,
    /// Told every decision of a bot at a ladder table (answered or timed out), so its
    /// ladder judges the bot's strikes over its recent decisions as they happen.
    pub ladder_decisions: Option<tokio::sync::mpsc::UnboundedSender<crate::report::Decision>>,
    /// Unfinished tables per creator (the edge's limits, seen through the table's own trait).
    pub limits: Arc<dyn crate::OpenTables>,
    /// The server's own progress: deadlines are extended by the time it was paused.
    pub progress: Arc<bete_base::progress::Progress>,
    /// A table still waiting for its seats this long after its creation is closed.
    pub waiting_ttl: Duration,
    /// The loaded actors' handles (the registry's map): each actor leaves it as it stops.
    pub loaded: super::Loaded,
}

/// Load a table from the store, rebuild it by replaying its log, and start its actor.
pub async fn spawn(
    deps: Arc<ActorDeps>,
    stored: StoredTable,
    generation: u64,
) -> Result<Handle, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&stored.table)?);
    let log = deps.store.log(meta.id.clone()).await?;
    let shared = Arc::new(Shared::new(meta.clone()));
    let mut actor = Actor::new(deps, meta, shared.clone(), &stored.seats);
    actor.replay(&log)?;
    // The decision in progress gets its full deadline from now: the replay dated it from the
    // stored time of the last entry, and the time the server was down (a crash, a restart) is
    // no bot's fault. Unfinished tables are loaded only when the server starts (they are never
    // unloaded), so this is the restart's re-arm.
    if actor.state() == TableState::Playing {
        let since = now_ms().max(actor.decision_since_ms);
        actor.begin_decision(since);
    }
    actor.enter_metrics();
    if actor.state() != TableState::Finished && stored.table.state != TableState::Finished {
        actor
            .deps
            .limits
            .table_open(&actor.meta.created_by, &actor.meta.id);
    }
    if actor.game.as_ref().is_some_and(Game::is_over) && stored.table.state != TableState::Finished
    {
        // The process died between the last append and storing the record.
        actor.finish().await;
    }
    actor.finished_stored = actor.game.as_ref().is_some_and(Game::is_over);
    Ok(actor.start(generation))
}

/// A stored table's status as its actor would give it, without starting one (a waiting table
/// kept as a row: waiting.rs).
pub fn peek(
    deps: Arc<ActorDeps>,
    stored: &StoredTable,
    log: &[LogEntry],
) -> Result<TableStatus, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&stored.table)?);
    let shared = Arc::new(Shared::new(meta.clone()));
    let mut actor = Actor::new(deps, meta, shared, &stored.seats);
    actor.replay(log)?;
    Ok(actor.status())
}

/// The first join of a waiting table kept as a row (waiting.rs), checked and stored as
/// its actor would, without starting one. `Ok(None)`: the join would start the match (one empty
/// seat left), so the table needs its actor. Returns the seat, the status after the join and
/// the entry stored (the row's whole log).
pub async fn join_stored(
    deps: Arc<ActorDeps>,
    stored: &StoredTable,
    bot: String,
    name: String,
    seat: Option<u8>,
) -> Result<Option<(u8, TableStatus, LogEntry)>, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&stored.table)?);
    let shared = Arc::new(Shared::new(meta.clone()));
    let mut actor = Actor::new(deps, meta, shared, &stored.seats);
    actor.replay(&[])?;
    let empty = actor
        .seats
        .iter()
        .filter(|s| s.occupant == Occupant::Empty)
        .count();
    if empty < 2 {
        return Ok(None);
    }
    let joined = actor.join(bot.clone(), name.clone(), seat).await;
    // The seats gauge counts the seats of loaded tables: the actor that loads it counts this one.
    actor.leave_metrics();
    let (seat, status) = joined?;
    let time_ms = actor.events.last().map_or_else(now_ms, |e| e.time_ms);
    Ok(Some((
        seat,
        status,
        LogEntry::Join {
            seat,
            bot,
            name,
            time_ms,
        },
    )))
}

/// A bot the server seats itself at a table it creates: (seat, bot id, name).
pub type Seating = (u8, String, String);

/// The longest a ladder match's last table waits for the match's ratings to be stored before
/// it announces its end anyway.
const RATING_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Create a table the server seats itself (a ladder's): the bots' joins are stepped here and
/// written with the table in one store transaction, and the actor starts from memory, with no
/// read back. A table whose seats are all filled starts its match at once.
pub async fn create(
    deps: Arc<ActorDeps>,
    mut table: TableRow,
    mut seats: Vec<SeatRow>,
    bots: Vec<Seating>,
    generation: u64,
) -> Result<Handle, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&table)?);
    let shared = Arc::new(Shared::new(meta.clone()));
    let mut actor = Actor::new(deps, meta, shared.clone(), &seats);
    actor.replay(&[])?;
    let now = now_ms();
    let mut log = Vec::with_capacity(bots.len());
    for (seat, bot, name) in bots {
        let entry = LogEntry::Join {
            seat,
            bot: bot.clone(),
            name,
            time_ms: now,
        };
        actor.step(&entry)?;
        log.push((entry, actor.last_seq()));
        if let Some(row) = seats.iter_mut().find(|s| s.seat == seat) {
            row.occupant = Occupant::Bot(bot);
        }
    }
    actor.log_len = log.len() as u64;
    table.state = actor.state();
    actor
        .deps
        .store
        .create_seated_table(table, seats, log)
        .await?;
    actor.enter_metrics();
    actor
        .deps
        .limits
        .table_open(&actor.meta.created_by, &actor.meta.id);
    Ok(actor.start(generation))
}

struct Actor {
    deps: Arc<ActorDeps>,
    meta: Arc<TableMeta>,
    /// Listed or private now: as created, until the store says a ladder set's table was listed
    /// at its rating (`watch::readable`). The store is the truth; this follows it.
    visibility: Visibility,
    shared: Arc<Shared>,
    /// House seats as created: the starting point of every replay.
    initial: Vec<SeatInfo>,
    seats: Vec<SeatInfo>,
    game: Option<Game>,
    /// Entries in the stored log (the seq of the next one).
    log_len: u64,
    /// `events[i].seq == i + 1`.
    events: Vec<Arc<TableEvent>>,
    /// Applied request ids per (bot id, request id): the action and the seq it produced. Keyed
    /// by the bot that submitted, not the seat, so a bot taking over a freed seat never meets
    /// its predecessor's ids. The log names only the seat of an action; on replay the bot is
    /// the seat's occupant at that point, as the log's Join and Leave entries made it.
    requests: HashMap<(String, String), (Action, u64)>,
    /// When the current decision began (Unix ms): its deadline counts from here.
    decision_since_ms: i64,
    sinks: Vec<Sink>,
    /// The finished record is stored.
    finished_stored: bool,
    rng: ChaCha8Rng,
    last_request: Instant,
    /// Counted in the active-tables gauge.
    counted_playing: bool,
    /// Bot seats counted in the seats gauge.
    counted_seats: i64,
    broken: bool,
    /// Why the table was closed without a finished match (operator, expiry), if it was.
    closed: Option<String>,
    /// Bots that left a seat during a deal: the deal's index and the seat. Such a bot saw that
    /// seat's hand, so until the deal ends it may come back to that seat only.
    left_in_deal: HashMap<String, (u32, u8)>,
    /// The server's pause total (ms) when the current decision began: the pause since then
    /// extends its deadline.
    paused_at_decision_ms: i64,
    /// A search house bot is thinking about the decision at this seq (the table's last seq
    /// when it began); its answer counts only if the table is still there.
    searching: Option<u64>,
    /// Where finished searches report; `run` owns the receiving end.
    search_tx: mpsc::UnboundedSender<SearchDone>,
    search_rx: Option<mpsc::UnboundedReceiver<SearchDone>>,
    /// Bots taken off this table's ladder: their seats are auto-moved at once (not logged:
    /// after a restart the ladder's scheduler says so again).
    forfeited: Vec<String>,
}

/// A search house bot's answer, for the decision at `seq`.
struct SearchDone {
    seq: u64,
    seat: Seat,
    action: Action,
}

impl Actor {
    /// Publish the table's state and run the actor in a task of its own.
    fn start(self, generation: u64) -> Handle {
        self.publish();
        let shared = self.shared.clone();
        let (tx, rx) = mpsc::channel(super::COMMAND_QUEUE);
        self.deps.metrics.tables_loaded.inc();
        tokio::spawn(self.run(rx, generation));
        Handle {
            tx,
            shared,
            generation,
        }
    }

    fn new(
        deps: Arc<ActorDeps>,
        meta: Arc<TableMeta>,
        shared: Arc<Shared>,
        seats: &[SeatRow],
    ) -> Actor {
        let initial: Vec<SeatInfo> = (0..meta.seats)
            .map(
                |i| match seats.iter().find(|s| s.seat == i).map(|s| &s.occupant) {
                    Some(Occupant::House(p)) => SeatInfo {
                        occupant: Occupant::House(p.clone()),
                        name: format!("house:{p}"),
                        strikes: 0,
                    },
                    _ => SeatInfo {
                        occupant: Occupant::Empty,
                        name: String::new(),
                        strikes: 0,
                    },
                },
            )
            .collect();
        let (search_tx, search_rx) = mpsc::unbounded_channel();
        Actor {
            deps,
            visibility: meta.visibility,
            meta,
            shared,
            seats: initial.clone(),
            initial,
            game: None,
            log_len: 0,
            events: Vec::new(),
            requests: HashMap::default(),
            decision_since_ms: 0,
            sinks: Vec::new(),
            finished_stored: false,
            rng: house::rng(),
            last_request: Instant::now(),
            counted_playing: false,
            counted_seats: 0,
            broken: false,
            closed: None,
            left_in_deal: HashMap::default(),
            paused_at_decision_ms: 0,
            searching: None,
            search_tx,
            search_rx: Some(search_rx),
            forfeited: Vec::new(),
        }
    }

    // The state transitions are in `step`, the commit path in `commit`, requests in `seats`,
    // watchers in `watch`, deadlines and the house in `timer`.

    fn state(&self) -> TableState {
        if self.closed.is_some() {
            return TableState::Finished;
        }
        match &self.game {
            None => TableState::Waiting,
            Some(g) if g.is_over() => TableState::Finished,
            Some(_) => TableState::Playing,
        }
    }

    fn publish(&self) {
        self.shared.publish(self.last_seq(), self.state());
    }

    async fn handle(&mut self, cmd: Command) {
        self.last_request = Instant::now();
        match cmd {
            Command::Status { reply } => {
                let _ = reply.send(self.status());
            }
            Command::LadderResult { reply } => {
                let _ = reply.send(self.ladder_result());
            }
            Command::Join {
                bot,
                name,
                seat,
                by_ladder,
                reply,
            } => {
                let r = if self.meta.ladder.is_some() && !by_ladder {
                    Err(ServerError::LadderTable(self.meta.id.clone()))
                } else {
                    self.join(bot, name, seat).await
                };
                let _ = reply.send(r);
            }
            Command::Leave { bot, reply } => {
                let r = self.leave(bot).await;
                let _ = reply.send(r);
            }
            Command::Submit {
                bot,
                action,
                expected_seq,
                request_id,
                reply,
            } => {
                let r = self.submit(&bot, action, expected_seq, request_id).await;
                let _ = reply.send(r);
            }
            Command::View { bot, reply } => {
                let r = match self.readable(&bot).await {
                    Ok(viewer) => Ok(self.snapshot(viewer)),
                    Err(e) => Err(e),
                };
                let _ = reply.send(r);
            }
            Command::Readable { bot, reply } => {
                let r = self.readable(&bot).await.map(|_| self.status());
                let _ = reply.send(r);
            }
            Command::Watch {
                bot,
                from_seq,
                reply,
            } => {
                let r = match self.readable(&bot).await {
                    Ok(_) => self
                        .watch(bot, from_seq)
                        .map(|rx| (rx, self.shared.clone())),
                    Err(e) => Err(e),
                };
                let _ = reply.send(r);
            }
            Command::WatchBot {
                bot,
                stream,
                from_seq,
            } => self.watch_bot(bot, stream, from_seq),
            Command::Close { reason, reply } => {
                let r = self.close(reason).await;
                let _ = reply.send(r);
            }
            Command::Moved { owner } => self.moved(owner),
            Command::Forfeit { bot, reply } => {
                let seated = self.meta.ladder.is_some() && self.seat_of(&bot).is_some();
                if seated && !self.forfeited.contains(&bot) {
                    tracing::info!(table = %self.meta.id, %bot, "seat auto-played from now on: its bot was taken off the ladder");
                    self.forfeited.push(bot);
                }
                let _ = reply.send(seated);
            }
        }
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Envelope>, generation: u64) {
        // A table whose seats were all filled at creation (house bots) started without a join,
        // so `append` never stored it as playing, and ListTables' state filter missed it.
        if self.state() == TableState::Playing
            && !self.initial.iter().any(|s| s.occupant == Occupant::Empty)
            && let Err(e) = self
                .deps
                .store
                .set_state(self.meta.id.clone(), TableState::Playing)
                .await
        {
            tracing::warn!(table = %self.meta.id, error = %e, "could not store the table state");
        }
        let shared = self.shared.clone();
        // Made once, not per command: each fresh future registers (and on drop unregisters)
        // itself under a lock, and a fresh `Sleep` enters and leaves the timer wheel, which
        // showed in the profile of every move.
        let cancelled = self.deps.shutdown.stopped();
        tokio::pin!(cancelled);
        let mut left = std::pin::pin!(shared.watcher_left.notified());
        let sleep = tokio::time::sleep(Duration::from_secs(86_400));
        tokio::pin!(sleep);
        // The instant the timer is set for. A later wake (a bot moved, so its deadline moved
        // on) leaves it as it is: when it fires early, the wake is computed again below.
        let mut armed: Option<Instant> = None;
        let mut searches = match self.search_rx.take() {
            Some(rx) => rx,
            // `new` made it and only `run` takes it: a fresh channel that never reports.
            None => mpsc::unbounded_channel().1,
        };
        loop {
            match (self.next_wake(), armed) {
                (Some(wake), Some(at)) if wake >= at => {}
                (Some(wake), _) => {
                    sleep.as_mut().reset(wake);
                    armed = Some(wake);
                }
                (None, _) => armed = None,
            }
            tokio::select! {
                biased;
                _ = &mut cancelled => {
                    for s in &self.sinks {
                        s.end(&self.meta, Some(ServerError::ShuttingDown));
                    }
                    break;
                }
                cmd = rx.recv() => match cmd {
                    Some(Envelope { cmd, caller }) => {
                        let closing = matches!(cmd, Command::Close { .. });
                        let span = tracing::debug_span!(
                            parent: &caller,
                            "table",
                            otel.name = cmd.span_name(),
                            table = %self.meta.id
                        );
                        self.handle(cmd).instrument(span).await;
                        if closing && self.closed.is_some() {
                            break;
                        }
                    }
                    None => break,
                },
                Some(done) = searches.recv() => {
                    let span = tracing::debug_span!(parent: None, "table.search", table = %self.meta.id);
                    self.on_search_done(done).instrument(span).await;
                }
                () = &mut left => {
                    left.set(shared.watcher_left.notified());
                    self.prune_watchers();
                }
                _ = &mut sleep, if armed.is_some() => {
                    armed = None;
                    let due = self.next_wake().is_some_and(|w| w <= Instant::now());
                    // A house bot's move, an auto-move, an expiry: a trace of its own.
                    let span = if due {
                        tracing::debug_span!(parent: None, "table.timer", table = %self.meta.id)
                    } else {
                        tracing::Span::none()
                    };
                    if due && !self.on_timer().instrument(span).await {
                        break;
                    }
                }
            }
            if self.broken {
                break;
            }
        }
        self.leave_metrics();
        self.deps.metrics.tables_loaded.dec();
        // Closed first, so a registry entering this handle only now sees it closed and takes
        // it out again (`Loaded::insert`).
        drop(rx);
        self.deps.loaded.forget(&self.meta.id, generation);
    }
}
