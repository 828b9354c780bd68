//! The table actor: the only owner of a table's `Game`, deadline, log and watchers.
//!
//! Every change to a table is a [`LogEntry`]. `step` applies one to the in-memory state and
//! derives its events; the live path steps, appends the entry to the store and waits for it to
//! be durable, and only then replies and fans out. Recovery steps through the stored log, so a
//! rebuilt table has exactly the events (and sequence numbers) it had before.

use foldhash::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bete_rules::record::Record;
use bete_rules::{Action, Game, Seat, Viewer};
use prost::bytes::Bytes;
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use super::sink::{Offer, Sink, SinkTx};
use super::{
    Body, Command, Envelope, Handle, SeatInfo, Shared, Snapshot, Submitted, TableEvent, TableMeta,
    TableStatus, WatchItem, house,
};
use crate::metrics::Metrics;
use crate::now_ms;
use crate::project;
use crate::shutdown::Shutdown;
use crate::status::ServerError;
use crate::store::{
    LogEntry, Occupant, RatingDelta, SeatRow, Store, StoreError, StoredTable, TableRow, TableState,
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
    pub ladder_finished: Option<tokio::sync::mpsc::UnboundedSender<crate::ladder::FinishedTable>>,
    /// Told every decision of a bot at a ladder table (answered or timed out), so its
    /// ladder judges the bot's strikes over its recent decisions as they happen.
    pub ladder_decisions: Option<tokio::sync::mpsc::UnboundedSender<crate::ladder::Decision>>,
    /// Unfinished tables per creator, and the other per-caller limits.
    pub limits: Arc<crate::limits::Limits>,
    /// The server's own progress: deadlines are extended by the time it was paused.
    pub progress: Arc<crate::progress::Progress>,
    /// A table still waiting for its seats this long after its creation is closed.
    pub waiting_ttl: Duration,
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
        tokio::spawn(self.run(rx));
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

    // ---- state transitions (shared by replay and the live path) ----

    fn reset(&mut self) {
        self.seats = self.initial.clone();
        self.game = None;
        self.log_len = 0;
        self.events.clear();
        self.requests.clear();
        self.decision_since_ms = 0;
        self.closed = None;
        self.left_in_deal.clear();
        self.searching = None;
    }

    fn replay(&mut self, log: &[LogEntry]) -> Result<(), ServerError> {
        self.reset();
        let created = self.meta.created_at_ms;
        for (i, s) in self.initial.clone().iter().enumerate() {
            if let Occupant::House(_) = s.occupant {
                self.push(
                    created,
                    false,
                    Body::SeatTaken {
                        seat: i as u8,
                        occupant: s.occupant.clone(),
                        name: s.name.clone(),
                    },
                );
            }
        }
        self.maybe_start(created)?;
        for (i, entry) in log.iter().enumerate() {
            // The reason only: the engine's text may name the cards of a stored exchange, and
            // this error reaches logs and whichever caller loaded the table.
            self.step(entry).map_err(|e| {
                ServerError::Internal(format!(
                    "table {} log entry {i} does not replay ({})",
                    self.meta.id,
                    e.reason()
                ))
            })?;
            self.log_len += 1;
        }
        Ok(())
    }

    fn push(&mut self, time_ms: i64, auto: bool, body: Body) {
        let seq = self.events.len() as u64 + 1;
        self.events.push(Arc::new(TableEvent {
            seq,
            time_ms,
            auto,
            body,
        }));
    }

    fn last_seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// Start the match once every seat is filled.
    fn maybe_start(&mut self, time_ms: i64) -> Result<bool, ServerError> {
        if self.game.is_some() || self.seats.iter().any(|s| s.occupant == Occupant::Empty) {
            return Ok(false);
        }
        let (game, events) = Game::new(self.meta.setup())
            .map_err(|e| ServerError::Internal(format!("cannot start the match: {e}")))?;
        self.game = Some(game);
        self.push(time_ms, false, Body::MatchStarted);
        for e in events {
            self.push(time_ms, false, Body::Game(e));
        }
        self.begin_decision(time_ms);
        Ok(true)
    }

    /// A decision began at `time_ms`: its deadline counts from here, plus any pause of the
    /// server from now on.
    fn begin_decision(&mut self, time_ms: i64) {
        self.decision_since_ms = time_ms;
        self.paused_at_decision_ms = self.deps.progress.paused_ms();
    }

    /// Apply one log entry; on error nothing changed.
    fn step(&mut self, entry: &LogEntry) -> Result<(), ServerError> {
        let t = entry.time_ms();
        match entry {
            LogEntry::Join {
                seat, bot, name, ..
            } => {
                let s = self.seat_mut(*seat)?;
                if s.occupant != Occupant::Empty {
                    return Err(ServerError::SeatTaken(*seat));
                }
                s.occupant = Occupant::Bot(bot.clone());
                s.name = name.clone();
                self.push(
                    t,
                    false,
                    Body::SeatTaken {
                        seat: *seat,
                        occupant: Occupant::Bot(bot.clone()),
                        name: name.clone(),
                    },
                );
                self.maybe_start(t)?;
            }
            LogEntry::Leave { seat, bot, .. } => {
                let s = self.seat_mut(*seat)?;
                if s.occupant != Occupant::Bot(bot.clone()) {
                    return Err(ServerError::NotSeated);
                }
                s.occupant = Occupant::Empty;
                s.name.clear();
                if let Some(g) = self.game.as_ref().filter(|g| !g.is_over()) {
                    self.left_in_deal
                        .insert(bot.clone(), (g.deal_index(), *seat));
                }
                self.push(
                    t,
                    false,
                    Body::SeatLeft {
                        seat: *seat,
                        bot: bot.clone(),
                    },
                );
            }
            LogEntry::Action {
                seat,
                action,
                auto,
                request_id,
                ..
            } => {
                // Neither the action nor the parse error is quoted: both may name hidden cards.
                let a: Action = action.parse().map_err(|_| {
                    ServerError::Internal(format!("stored action of seat {seat} does not parse"))
                })?;
                let game = self.game.as_mut().ok_or_else(|| {
                    ServerError::IllegalAction("the match has not started".into())
                })?;
                let events = game
                    .apply_recorded(Seat(*seat), a, *auto)
                    .map_err(|e| ServerError::from_action(&e))?;
                // The strike comes first, so `MatchEnded` is always a table's last event.
                if *auto {
                    let s = self.seat_mut(*seat)?;
                    s.strikes += 1;
                    let strikes = s.strikes;
                    self.push(
                        t,
                        true,
                        Body::StrikeCounted {
                            seat: *seat,
                            strikes,
                        },
                    );
                }
                for e in events {
                    self.push(t, *auto, Body::Game(e));
                }
                if let Some(id) = request_id {
                    // Only a bot's own submits carry a request id, so the seat holds that bot.
                    if let Some(Occupant::Bot(bot)) =
                        self.seats.get(usize::from(*seat)).map(|s| &s.occupant)
                    {
                        let (key, seq) = ((bot.clone(), id.clone()), self.last_seq());
                        self.requests.insert(key, (a, seq));
                    }
                }
                self.begin_decision(t);
            }
            LogEntry::Close { reason, .. } => {
                self.closed = Some(reason.clone());
            }
        }
        Ok(())
    }

    fn seat_mut(&mut self, seat: u8) -> Result<&mut SeatInfo, ServerError> {
        self.seats.get_mut(seat as usize).ok_or_else(|| {
            ServerError::field(
                "seat",
                format!("the table has seats 0-{}", self.meta.seats - 1),
            )
        })
    }

    // ---- the live path ----

    /// Step, make durable, then publish. Returns the index of the first new event.
    async fn commit(&mut self, entry: LogEntry) -> Result<usize, ServerError> {
        let first = self.events.len();
        let was_playing = self.game.is_some();
        self.step(&entry)?;
        self.search_ahead();
        // The wait until the entry is durable; the group commit's span links to it.
        let append =
            tracing::debug_span!("store.append", table = %self.meta.id, seq = self.log_len);
        if let Err(e) = self
            .deps
            .store
            .append(
                self.meta.id.clone(),
                self.log_len,
                entry.clone(),
                self.last_seq(),
            )
            .instrument(append)
            .await
        {
            if let StoreError::Fenced { owner, .. } = &e {
                // Claimed by another node: rebuilding here would only race it.
                self.moved(owner.clone());
                return Err(e.into());
            }
            tracing::error!(table = %self.meta.id, error = %e, "append failed; rebuilding the table from the store");
            self.reload().await;
            return Err(e.into());
        }
        self.log_len += 1;
        let started = !was_playing && self.game.is_some();
        if started
            && let Err(e) = self
                .deps
                .store
                .set_state(self.meta.id.clone(), TableState::Playing)
                .await
        {
            tracing::warn!(table = %self.meta.id, error = %e, "could not store the table state");
        }
        if let LogEntry::Action { auto, seat, .. } = &entry {
            self.deps.metrics.moves.inc();
            if *auto {
                self.deps.metrics.auto_moves.inc();
            }
            self.report_decision(*seat, *auto);
        }
        self.publish();
        self.update_metrics();
        let decide = started || matches!(entry, LogEntry::Action { .. });
        // Store the record before anyone hears MatchEnded, so GetGameRecord answers at once.
        let finished_now = self.game.as_ref().is_some_and(Game::is_over) && !self.finished_stored;
        if finished_now {
            self.finish().await;
            self.finished_stored = true;
            self.deps
                .limits
                .table_done(&self.meta.created_by, &self.meta.id);
        }
        {
            let span = tracing::debug_span!(
                "table.fan_out",
                watchers = self.sinks.len() as i64,
                events = (self.events.len() - first) as i64
            );
            let _in = span.enter();
            self.fan_out(first, decide);
        }
        if finished_now {
            self.update_metrics();
            // WatchTable streams end after MatchEnded; bot streams just let go of this table.
            let before = self.sinks.len();
            self.sinks.clear();
            self.update_watchers(before);
        }
        Ok(first)
    }

    /// A bot's decision at a ladder table, made durable: its ladder hears whether it timed out.
    fn report_decision(&self, seat: u8, timed_out: bool) {
        let (Some(ladder), Some(tx)) = (&self.meta.ladder, &self.deps.ladder_decisions) else {
            return;
        };
        let Some(s) = self.seats.get(usize::from(seat)) else {
            return;
        };
        let Occupant::Bot(bot) = &s.occupant else {
            return;
        };
        if self.forfeited.contains(bot) {
            return;
        }
        let _ = tx.send(crate::ladder::Decision {
            ladder_id: ladder.ladder_id.clone(),
            table: self.meta.id.clone(),
            bot: bot.clone(),
            timed_out,
            table_strikes: s.strikes,
        });
    }

    /// The seat is a bot's that was taken off the table's ladder.
    fn is_forfeited(&self, seat: Seat) -> bool {
        !self.forfeited.is_empty()
            && matches!(
                self.seats.get(seat.index()).map(|s| &s.occupant),
                Some(Occupant::Bot(b)) if self.forfeited.contains(b)
            )
    }

    /// After a failed append: the in-memory state may be ahead of the store, so rebuild it.
    async fn reload(&mut self) {
        let result = match self.deps.store.log(self.meta.id.clone()).await {
            Ok(log) => self.replay(&log),
            Err(e) => Err(e.into()),
        };
        if let Err(e) = result {
            tracing::error!(table = %self.meta.id, error = %e, "cannot rebuild the table; unloading it");
            self.broken = true;
        }
        self.publish();
    }

    async fn finish(&mut self) {
        let Some(game) = &self.game else { return };
        let record = Record::from_game(game).to_json();
        let balances = game.balances();
        // A chosen seed may have let its creator know the decks: never rated. Ladder tables
        // are rated by their ladder.
        let rated = !self.meta.seed_chosen && self.meta.ladder.is_none();
        let ratings = self
            .seats
            .iter()
            .filter(|_| rated)
            .enumerate()
            .filter_map(|(i, s)| match &s.occupant {
                Occupant::Bot(b) => Some(RatingDelta {
                    bot: b.clone(),
                    ruleset: self.meta.ruleset.id().to_string(),
                    net: balances.get(i).copied().unwrap_or(0),
                }),
                _ => None,
            })
            .collect();
        if let Err(e) = self
            .deps
            .store
            .finish(self.meta.id.clone(), record, ratings)
            .await
        {
            tracing::error!(table = %self.meta.id, error = %e, "could not store the finished record");
            return;
        }
        if let Some(ladder) = &self.meta.ladder
            && let Some(tx) = &self.deps.ladder_finished
        {
            let result = crate::ladder::TableResult {
                nets: balances.to_vec(),
                strikes: self.seats.iter().map(|s| s.strikes).collect(),
                deals: game.log().len() as u32,
                luck: None,
            };
            let (announce, announced) = tokio::sync::oneshot::channel();
            let sent = tx.send(crate::ladder::FinishedTable {
                table: self.meta.id.clone(),
                ladder: ladder.clone(),
                result,
                announce: Some(announce),
                deals: std::sync::Arc::new((game.setup().clone(), game.log().to_vec())),
            });
            // A match's last table announces MatchEnded once the match's ratings are stored,
            // so a bot reading its rating then sees the new one; other tables are let go at
            // once. Bounded: a slow rating never holds the table for long.
            if sent.is_ok() {
                let _ = tokio::time::timeout(RATING_WAIT, announced).await;
            }
        }
    }

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

    fn enter_metrics(&mut self) {
        self.update_metrics();
    }

    fn update_metrics(&mut self) {
        let playing = self.state() == TableState::Playing;
        if playing != self.counted_playing {
            if playing {
                self.deps.metrics.tables_active.inc();
            } else {
                self.deps.metrics.tables_active.dec();
            }
            self.counted_playing = playing;
        }
        let seats = if self.state() == TableState::Finished {
            0
        } else {
            self.seats
                .iter()
                .filter(|s| matches!(s.occupant, Occupant::Bot(_)))
                .count() as i64
        };
        self.deps.metrics.seats.inc_by(seats - self.counted_seats);
        self.counted_seats = seats;
    }

    /// Let go of watchers whose streams closed.
    fn prune_watchers(&mut self) {
        let before = self.sinks.len();
        self.sinks.retain(|s| !s.is_gone());
        self.update_watchers(before);
    }

    fn update_watchers(&mut self, before: usize) {
        let now = self.sinks.len() as i64;
        self.deps.metrics.watchers.inc_by(now - before as i64);
    }

    fn leave_metrics(&mut self) {
        if self.counted_playing {
            self.deps.metrics.tables_active.dec();
        }
        self.deps.metrics.seats.dec_by(self.counted_seats);
        self.deps.metrics.watchers.dec_by(self.sinks.len() as i64);
        self.counted_playing = false;
        self.counted_seats = 0;
    }

    fn seat_of(&self, bot: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| matches!(&s.occupant, Occupant::Bot(b) if b == bot))
            .map(|i| i as u8)
    }

    fn viewer_of(&self, bot: &str) -> Viewer {
        match self.seat_of(bot) {
            Some(s) => Viewer::Seat(Seat(s)),
            None => Viewer::Spectator,
        }
    }

    /// A spectator may watch only listed tables (`listed`: the store lists it now); the
    /// operator any, in the spectator's view.
    fn may_watch(&self, bot: &str, listed: bool) -> Result<Viewer, ServerError> {
        let viewer = self.viewer_of(bot);
        if viewer == Viewer::Spectator
            && bot != crate::service::OPERATOR
            && !listed
            && self.meta.visibility == crate::store::Visibility::Private
        {
            return Err(ServerError::TablePrivate);
        }
        Ok(viewer)
    }

    /// The current decision's deadline (Unix ms): its start, plus the table's deadline, plus
    /// the time the server itself was paused since it began (never a bot's fault).
    fn deadline_ms(&self) -> i64 {
        let paused = (self.deps.progress.paused_ms() - self.paused_at_decision_ms).max(0);
        self.decision_since_ms + self.meta.deadline_ms as i64 + paused
    }

    fn snapshot(&self, viewer: Viewer) -> Snapshot {
        let view = self.game.as_ref().map(|g| g.view(viewer));
        let to_act = self.game.as_ref().and_then(Game::to_act);
        let deadline_ms = match (viewer, to_act) {
            (Viewer::Seat(s), Some(t)) if s == t => Some(self.deadline_ms()),
            _ => None,
        };
        Snapshot {
            seq: self.last_seq(),
            viewer,
            view,
            deadline_ms,
        }
    }

    fn status(&self) -> TableStatus {
        TableStatus {
            meta: self.meta.clone(),
            seats: self.seats.clone(),
            state: self.state(),
            last_seq: self.last_seq(),
        }
    }

    /// Offer events `first..` to every watcher (projected later, each for its own viewer), then
    /// a decision to a bot stream whose seat must act.
    fn fan_out(&mut self, first: usize, decide: bool) {
        if self.sinks.is_empty() {
            return;
        }
        let before = self.sinks.len();
        let new = &self.events[first..];
        // Each event's public encoding, made at most once and shared by every watcher who sees
        // no more than that (most events, most watchers).
        let mut public: Vec<Option<Bytes>> = vec![None; new.len()];
        let to_act = self.game.as_ref().and_then(Game::to_act);
        let mut sinks = std::mem::take(&mut self.sinks);
        sinks.retain_mut(|sink| {
            let viewer = self.viewer_of(&sink.bot);
            for (e, bytes) in new.iter().zip(public.iter_mut()) {
                let shared = project::sees_only_public(e, viewer).then(|| {
                    bytes
                        .get_or_insert_with(|| project::public_event_bytes(&self.meta, e))
                        .clone()
                });
                let item = WatchItem::Event {
                    event: e.clone(),
                    viewer,
                    shared,
                };
                if let Offer::Gone { too_slow } = sink.offer(&self.meta, item) {
                    if too_slow {
                        self.deps.metrics.watchers_dropped.inc();
                    }
                    return false;
                }
            }
            if decide
                && matches!(sink.tx, SinkTx::Bot(_))
                && to_act.is_some()
                && viewer == Viewer::Seat(to_act.unwrap_or_default())
                && !self.forfeited.contains(&sink.bot)
            {
                let snap = Box::new(self.snapshot(viewer));
                if let Offer::Gone { too_slow } = sink.offer(&self.meta, WatchItem::Decision(snap))
                {
                    if too_slow {
                        self.deps.metrics.watchers_dropped.inc();
                    }
                    return false;
                }
            }
            true
        });
        self.sinks = sinks;
        self.update_watchers(before);
    }

    // ---- requests ----

    async fn handle(&mut self, cmd: Command) {
        self.last_request = Instant::now();
        match cmd {
            Command::Status { reply } => {
                let _ = reply.send(self.status());
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
            Command::View { bot, listed, reply } => {
                let r = self.may_watch(&bot, listed).map(|v| self.snapshot(v));
                let _ = reply.send(r);
            }
            Command::Watch {
                bot,
                from_seq,
                listed,
                reply,
            } => {
                let r = self
                    .watch(bot, from_seq, listed)
                    .map(|rx| (rx, self.shared.clone()));
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

    /// The table now belongs to another node: this actor stops without another write (its
    /// state may be behind the store's), and its streams end so that clients come back
    /// through the node that plays it.
    fn moved(&mut self, owner: String) {
        tracing::warn!(table = %self.meta.id, %owner, "the table was claimed by another node; dropping it here");
        let before = self.sinks.len();
        for s in &self.sinks {
            s.end(
                &self.meta,
                Some(ServerError::TableElsewhere {
                    table: self.meta.id.clone(),
                    node: owner.clone(),
                    addr: String::new(),
                }),
            );
        }
        self.sinks.clear();
        self.update_watchers(before);
        self.broken = true;
    }

    async fn join(
        &mut self,
        bot: String,
        name: String,
        seat: Option<u8>,
    ) -> Result<(u8, TableStatus), ServerError> {
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        if let Some(s) = self.seat_of(&bot) {
            return Err(ServerError::AlreadySeated(s));
        }
        // A hand seen at a seat stays seen: within the deal, only that seat again.
        let held = match (self.left_in_deal.get(&bot), &self.game) {
            (Some((deal, held)), Some(g)) if *deal == g.deal_index() => Some(*held),
            _ => None,
        };
        let seat = match (seat, held) {
            (Some(s), Some(h)) if s != h => return Err(ServerError::SeatChangeRefused { held: h }),
            (None, Some(h)) if self.seats[h as usize].occupant != Occupant::Empty => {
                return Err(ServerError::SeatChangeRefused { held: h });
            }
            (None, Some(h)) => Some(h),
            (s, _) => s,
        };
        let seat = match seat {
            Some(s) if s >= self.meta.seats => {
                return Err(ServerError::field(
                    "seat",
                    format!(
                        "seat {s} does not exist: the table has seats 0-{}",
                        self.meta.seats - 1
                    ),
                ));
            }
            Some(s) if self.seats[s as usize].occupant != Occupant::Empty => {
                return Err(ServerError::SeatTaken(s));
            }
            Some(s) => s,
            None => self
                .seats
                .iter()
                .position(|s| s.occupant == Occupant::Empty)
                .map(|i| i as u8)
                .ok_or(ServerError::TableFull)?,
        };
        self.commit(LogEntry::Join {
            seat,
            bot,
            name,
            time_ms: now_ms(),
        })
        .await?;
        Ok((seat, self.status()))
    }

    async fn leave(&mut self, bot: String) -> Result<TableStatus, ServerError> {
        let seat = self.seat_of(&bot).ok_or(ServerError::NotSeated)?;
        if self.meta.ladder.is_some() {
            // The result of a ladder match is its entrants'; a freed seat could be taken by
            // another bot (or left to a friend's auto-moves). The match is played out.
            return Err(ServerError::LadderTable(self.meta.id.clone()));
        }
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        self.commit(LogEntry::Leave {
            seat,
            bot: bot.clone(),
            time_ms: now_ms(),
        })
        .await?;
        // A WatchBot stream follows the tables its bot sits at: SeatLeft is the last it hears
        // of this one, listed or private. A WatchTable stream of a listed table goes on in
        // spectator form; of a private table it ends (no longer seated: no longer allowed).
        let private = self.meta.visibility == crate::store::Visibility::Private;
        let before = self.sinks.len();
        let meta = self.meta.clone();
        self.sinks.retain(|s| {
            if s.bot != bot {
                return true;
            }
            match s.tx {
                SinkTx::Bot(_) => false,
                SinkTx::Table(_) if private => {
                    s.end(&meta, Some(ServerError::TablePrivate));
                    false
                }
                SinkTx::Table(_) => true,
            }
        });
        self.update_watchers(before);
        Ok(self.status())
    }

    async fn submit(
        &mut self,
        bot: &str,
        action: Action,
        expected_seq: u64,
        request_id: Option<String>,
    ) -> Result<Submitted, ServerError> {
        let seat = self.seat_of(bot).ok_or(ServerError::SpectatorCannotAct)?;
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.forfeited.iter().any(|b| b == bot) {
            return Err(ServerError::LadderRemoved(self.meta.id.clone()));
        }
        if let Some(id) = &request_id
            && let Some((done, seq)) = self.requests.get(&(bot.to_string(), id.clone()))
        {
            return if *done == action {
                Ok(Submitted {
                    seq: *seq,
                    replayed: true,
                })
            } else {
                Err(ServerError::DuplicateRequestConflict(id.clone()))
            };
        }
        let Some(game) = &self.game else {
            return Err(ServerError::IllegalAction(
                "the match has not started: seats are still free".into(),
            ));
        };
        if game.is_over() {
            return Err(ServerError::TableFinished);
        }
        if expected_seq != 0 && expected_seq != self.last_seq() {
            return Err(ServerError::StaleSeq {
                expected: expected_seq,
                last_seq: self.last_seq(),
            });
        }
        match game.to_act() {
            Some(s) if s.0 == seat => {}
            Some(s) => return Err(ServerError::NotYourSeat { to_act: s.0 }),
            None => return Err(ServerError::NobodyToAct),
        }
        self.commit(LogEntry::Action {
            seat,
            action: action.to_string(),
            auto: false,
            request_id,
            time_ms: now_ms(),
        })
        .await?;
        Ok(Submitted {
            seq: self.last_seq(),
            replayed: false,
        })
    }

    fn watch(
        &mut self,
        bot: String,
        from_seq: Option<u64>,
        listed: bool,
    ) -> Result<mpsc::Receiver<crate::table::Outbound>, ServerError> {
        let viewer = self.may_watch(&bot, listed)?;
        let last = self.last_seq();
        let backlog = match from_seq {
            Some(f) if f > last => {
                return Err(ServerError::FromSeqOutOfRange {
                    from_seq: f,
                    last_seq: last,
                    table_id: None,
                });
            }
            Some(f) => &self.events[f as usize..],
            None => &[],
        };
        let (tx, rx) = mpsc::channel(backlog.len() + self.deps.watch_buffer.max(4));
        let mut sink = Sink {
            bot,
            tx: SinkTx::Table(tx),
            last_seq: from_seq.unwrap_or(0),
        };
        if from_seq.is_none() {
            sink.offer(
                &self.meta,
                WatchItem::Snapshot(Box::new(self.snapshot(viewer))),
            );
        }
        for e in backlog.iter().cloned() {
            sink.offer(
                &self.meta,
                WatchItem::Event {
                    event: e,
                    viewer,
                    shared: None,
                },
            );
        }
        if self.state() != TableState::Finished {
            self.sinks.push(sink);
            self.deps.metrics.watchers.inc();
        }
        Ok(rx)
    }

    fn watch_bot(&mut self, bot: String, stream: super::BotStream, from_seq: Option<u64>) {
        if self
            .sinks
            .iter()
            .any(|s| matches!(&s.tx, SinkTx::Bot(b) if b.id == stream.id))
        {
            return;
        }
        let Some(seat) = self.seat_of(&bot) else {
            return;
        };
        let viewer = Viewer::Seat(Seat(seat));
        let last = self.last_seq();
        let room = stream.tx.capacity() / 2;
        let mut sink = Sink {
            bot,
            tx: SinkTx::Bot(stream),
            last_seq: 0,
        };
        let mut ok =
            sink.offer(&self.meta, WatchItem::Seated(seat, Box::new(self.status()))) == Offer::Sent;
        match from_seq {
            // Resume with the missed events when they fit; otherwise a fresh snapshot.
            Some(f) if f <= last && ((last - f) as usize) < room => {
                for e in self.events[f as usize..].iter().cloned() {
                    let item = WatchItem::Event {
                        event: e,
                        viewer,
                        shared: None,
                    };
                    ok = ok && sink.offer(&self.meta, item) == Offer::Sent;
                }
            }
            _ => {
                // Information only: on WatchBot the DecisionRequest below is the one message
                // to act on, so the snapshot carries no legal actions and no deadline.
                let mut snap = self.snapshot(viewer);
                if let Some(view) = &mut snap.view {
                    view.legal_actions.clear();
                }
                snap.deadline_ms = None;
                ok = ok
                    && sink.offer(&self.meta, WatchItem::Snapshot(Box::new(snap))) == Offer::Sent;
            }
        }
        if self.game.as_ref().and_then(Game::to_act) == Some(Seat(seat)) {
            ok = ok
                && sink.offer(
                    &self.meta,
                    WatchItem::Decision(Box::new(self.snapshot(viewer))),
                ) == Offer::Sent;
        }
        if ok && self.state() != TableState::Finished {
            if let SinkTx::Bot(b) = &sink.tx
                && let Ok(mut tables) = b.tables.lock()
            {
                tables.push(Arc::downgrade(&self.shared));
            }
            self.sinks.push(sink);
            self.deps.metrics.watchers.inc();
        }
    }

    // ---- timers ----

    /// A house bot's pause before acting: the server's, or a showcase table's slower pace.
    fn house_delay(&self) -> Duration {
        if self.meta.created_by == crate::showcase::CREATOR {
            self.deps.house_delay.max(crate::showcase::PACE)
        } else {
            self.deps.house_delay
        }
    }

    /// When the actor must act by itself: a house bot's turn, a deadline, or unloading.
    fn next_wake(&self) -> Option<Instant> {
        let after_ms = |ms: i64| Instant::now() + Duration::from_millis(ms.max(0) as u64);
        if self.closed.is_some() {
            return Some(self.last_request + self.deps.idle_unload);
        }
        let Some(game) = &self.game else {
            // Ladder tables are seated by their scheduler, which owns their fate.
            if self.meta.ladder.is_some() {
                return None;
            }
            return Some(after_ms(self.expires_at_ms() - now_ms()));
        };
        if game.is_over() {
            return Some(self.last_request + self.deps.idle_unload);
        }
        let seat = game.to_act()?;
        let delay = self.house_delay().as_millis() as i64;
        match &self.seats[seat.index()].occupant {
            // A search under way: wake only if its deadline passes first.
            Occupant::House(_) if self.searching == Some(self.last_seq()) => {
                Some(after_ms(self.deadline_ms() + delay - now_ms()))
            }
            Occupant::House(_) => Some(after_ms(self.decision_since_ms + delay - now_ms())),
            // Taken off the ladder: played at once, not after the deadline.
            _ if self.is_forfeited(seat) => Some(Instant::now()),
            _ => Some(after_ms(self.deadline_ms() - now_ms())),
        }
    }

    /// A house bot's move for `seat`, as a log entry; None when there is nothing to store now
    /// (a search has started, and reports through `search_tx`).
    fn house_move(&mut self, policy: &str, seat: Seat) -> Option<LogEntry> {
        let game = self.game.as_ref()?;
        let entry = |action: Action, auto: bool| LogEntry::Action {
            seat: seat.0,
            action: action.to_string(),
            auto,
            request_id: None,
            time_ms: now_ms(),
        };
        let seq = self.last_seq();
        let policy = house::HousePolicy::parse(policy);
        let Some(house::HousePolicy::Search { budget_ms }) = policy else {
            // A stored policy this server does not know (a newer server's) plays safe.
            return match policy {
                Some(p) => house::choose_now(p, game, seat, &mut self.rng).map(|a| entry(a, false)),
                None => game.safe_action(seat).map(|a| entry(a, true)),
            };
        };
        if self.searching == Some(seq) {
            // Its deadline passed before the search answered: the safe action, a strike.
            self.searching = None;
            self.count_search("late");
            return game.safe_action(seat).map(|a| entry(a, true));
        }
        match self.start_search(seat, budget_ms) {
            Ok(()) => None,
            Err(fallback) => fallback.map(|a| entry(a, false)),
        }
    }

    fn count_search(&self, outcome: &'static str) {
        self.deps
            .metrics
            .house_searches
            .get_or_create(&crate::metrics::SearchLabels { outcome })
            .inc();
    }

    /// Starts a search for `seat`'s decision now; Err with the heuristic's action when every
    /// core is searching already (Err(None): nothing to decide).
    fn start_search(&mut self, seat: Seat, budget_ms: u32) -> Result<(), Option<Action>> {
        let seq = self.last_seq();
        let game = self.game.as_ref().ok_or(None)?;
        // The think time counts from when the decision began, like the deadline.
        let began = self.decision_since_ms + self.house_delay().as_millis() as i64;
        let think = house::HousePolicy::think_time(budget_ms, self.meta.deadline_ms)
            .saturating_sub(Duration::from_millis((now_ms() - began).max(0) as u64));
        let job =
            house::SearchJob::new(game, seat, &self.events, think, &mut self.rng).ok_or(None)?;
        let Some(slot) = house::SearchSlot::take() else {
            self.count_search("no_core");
            return Err(Some(job.fallback()));
        };
        self.searching = Some(seq);
        let tx = self.search_tx.clone();
        tokio::task::spawn_blocking(move || {
            let action = job.run();
            drop(slot);
            // The actor may be gone (table unloaded): then nobody needs the answer.
            let _ = tx.send(SearchDone { seq, seat, action });
        });
        Ok(())
    }

    /// A search house bot to act next, with no pause asked for, starts thinking at once,
    /// while the entry that made it its turn is being stored (its answer is stored only
    /// after that entry, by the actor's loop).
    fn search_ahead(&mut self) {
        if !self.house_delay().is_zero() || self.searching == Some(self.last_seq()) {
            return;
        }
        let Some(seat) = self.game.as_ref().and_then(Game::to_act) else {
            return;
        };
        let Occupant::House(policy) = &self.seats[seat.index()].occupant else {
            return;
        };
        if let Some(house::HousePolicy::Search { budget_ms }) = house::HousePolicy::parse(policy) {
            // Every core busy: the timer's turn plays it, as usual.
            let _ = self.start_search(seat, budget_ms);
        }
    }

    /// A search answered: its move is stored if the table still waits for that decision.
    async fn on_search_done(&mut self, done: SearchDone) {
        let current = self.searching == Some(done.seq)
            && self.last_seq() == done.seq
            && self.game.as_ref().and_then(Game::to_act) == Some(done.seat);
        if !current {
            self.count_search("stale");
            return;
        }
        self.searching = None;
        self.count_search("answered");
        let entry = LogEntry::Action {
            seat: done.seat.0,
            action: done.action.to_string(),
            auto: false,
            request_id: None,
            time_ms: now_ms(),
        };
        if let Err(e) = self.commit(entry).await {
            tracing::warn!(table = %self.meta.id, error = %e, "search house move failed");
        }
    }

    /// Returns false when the actor should stop.
    async fn on_timer(&mut self) -> bool {
        if self.closed.is_some() {
            return false;
        }
        let Some(game) = &self.game else {
            if self.meta.ladder.is_some() || now_ms() < self.expires_at_ms() {
                return true;
            }
            let ttl = self.deps.waiting_ttl.as_secs();
            return match self
                .close(format!("no match began within {ttl} s of its creation"))
                .await
            {
                Ok(_) => false,
                Err(e) => {
                    tracing::warn!(table = %self.meta.id, error = %e, "could not close an expired table");
                    // Do not spin on a failing store.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    true
                }
            };
        };
        if game.is_over() {
            return false;
        }
        let Some(seat) = game.to_act() else {
            return true;
        };
        let entry = match &self.seats[seat.index()].occupant {
            Occupant::House(policy) => match self.house_move(&policy.clone(), seat) {
                Some(e) => e,
                None => return true,
            },
            _ => match game.safe_action(seat) {
                Some(a) => LogEntry::Action {
                    seat: seat.0,
                    action: a.to_string(),
                    auto: true,
                    request_id: None,
                    time_ms: now_ms(),
                },
                None => return true,
            },
        };
        if let Err(e) = self.commit(entry).await {
            tracing::warn!(table = %self.meta.id, error = %e, "server-side move failed");
            // Do not spin on a failing store.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        true
    }

    /// When a table still waiting for its seats expires (Unix ms).
    fn expires_at_ms(&self) -> i64 {
        self.meta
            .created_at_ms
            .saturating_add(self.deps.waiting_ttl.as_millis().min(i64::MAX as u128) as i64)
    }

    /// Close the table without a finished match: stored as a log entry (the table's state
    /// becomes finished in the same transaction), streams end with TABLE_CLOSED, and the actor
    /// stops when this returns Ok.
    async fn close(&mut self, reason: String) -> Result<TableStatus, ServerError> {
        if let Some(r) = &self.closed {
            return Err(ServerError::TableClosed(r.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        if self.meta.ladder.is_some() {
            // Its ladder's scheduler waits for the match to be rated; ladder matches are
            // bounded by the ladder's declaration, so there is no runaway to stop.
            return Err(ServerError::LadderTable(self.meta.id.clone()));
        }
        self.commit(LogEntry::Close {
            reason: reason.clone(),
            time_ms: now_ms(),
        })
        .await?;
        tracing::info!(table = %self.meta.id, %reason, "table closed");
        self.deps
            .limits
            .table_done(&self.meta.created_by, &self.meta.id);
        let before = self.sinks.len();
        for s in &self.sinks {
            s.end(&self.meta, Some(ServerError::TableClosed(reason.clone())));
        }
        self.sinks.clear();
        self.update_watchers(before);
        self.update_metrics();
        Ok(self.status())
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Envelope>) {
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
    }
}
