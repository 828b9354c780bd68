//! The load itself: bot identities reading their WatchBot streams, table slots that keep a match
//! running, and submits of random legal actions. The hot path uses the generated tonic client
//! directly, with one cloned `Channel` per connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use bete_api::pb;
use bete_api::pb::table_service_client::TableServiceClient;
use bete_api::pb::watch_bot_response::Kind;
use rand::Rng;
use tokio::sync::{Notify, Semaphore, SemaphorePermit, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::transport::Channel;
use tonic::{Request, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::cli::Submit;
use crate::stats::{Stats, bump};

/// Outstanding first events per table (one seat acts at a time, but the next seat may act
/// before a slow seat has seen the previous event).
const MAX_PENDING_PER_TABLE: usize = 16;
/// Tries of one decision: the first submit plus retries after a refreshed view.
const SUBMIT_TRIES: usize = 3;

/// One registered bot identity: one WatchBot stream, seats at many tables.
#[derive(Debug)]
pub struct Bot {
    pub index: usize,
    pub id: String,
    auth: AsciiMetadataValue,
    channel: Channel,
    /// Makes request ids unique per bot.
    next_request: AtomicU64,
    /// Open SubmitActions streams with no move in flight (`--submit stream`). A stream answers
    /// one move at a time, so a bot acting at several tables at once uses several; they are
    /// opened on demand and reused, and at most [`IDLE_LANES`] are kept once answered.
    lanes: Mutex<Vec<Lane>>,
    /// A permit per move on a stream: bounds the bot's streams (a new one is opened only when
    /// every one it has is busy) to its share of the connection's stream limit.
    busy: Semaphore,
}

/// Whether `answer` is the answer to the request sent `index`-th on its stream with
/// `request_id`. The server may leave the id empty when refusing one it will not echo
/// (over-long), so an empty id passes on a refusal only.
fn answers_request(answer: &pb::SubmitActionsResponse, index: u64, request_id: &str) -> bool {
    let refused = matches!(
        answer.result,
        Some(pb::submit_actions_response::Result::Rejected(_))
    );
    answer.index == index
        && (answer.request_id == request_id || (answer.request_id.is_empty() && refused))
}

/// Idle SubmitActions streams a bot keeps; those beyond are closed. A load bot sits at about
/// 64 tables by default (`--bots-per-seat`), so in a closed loop it has up to that many moves
/// in flight at once, again and again (≈ 45 measured at 1,000 tables): keeping fewer idle
/// streams would open and close a stream for most moves, which costs the server about what a
/// unary call does (4 idle streams gave 84 µs of server CPU a move at 1,000 tables, against
/// 51 µs when the streams were reused). The bound only stops a pathological burst.
const IDLE_LANES: usize = 128;

/// Streams of a connection kept for other calls than the bots' SubmitActions (their WatchBot
/// streams are counted apart): unary creates and joins during the window, the ceiling's calls.
const OTHER_STREAMS: u32 = 64;

/// How many SubmitActions streams each of `bots` bots spread over `connections` connections may
/// hold, so that together they stay under the server's limit of concurrent streams per
/// connection (over it, opening a stream waits for another to end: at 10,000 tables the bots
/// asked for ≈ 16,000 streams over 8 connections and stalled). At most [`IDLE_LANES`]; 0 when
/// not even one each fits (`run` refuses `--submit stream` then).
pub fn lanes_per_bot(bots: usize, connections: usize) -> usize {
    let per_connection = bots.div_ceil(connections.max(1)).max(1) as u32;
    let room = bete_server::server::MAX_STREAMS_PER_CONNECTION
        .saturating_sub(per_connection + OTHER_STREAMS);
    ((room / per_connection) as usize).min(IDLE_LANES)
}

/// One open SubmitActions stream of a bot.
#[derive(Debug)]
struct Lane {
    requests: mpsc::Sender<pb::SubmitActionsRequest>,
    answers: tonic::Streaming<pb::SubmitActionsResponse>,
    /// Requests sent on this stream so far: the index its next answer must carry.
    sent: u64,
}

impl Lane {
    /// The server never answers unprompted, so an idle stream whose answer side is already
    /// ready has ended or failed. `Streaming::message` is cancel-safe: the dropped poll loses
    /// nothing.
    fn ended(&mut self) -> bool {
        use std::future::Future;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        std::pin::pin!(self.answers.message())
            .poll(&mut cx)
            .is_ready()
    }
}

impl Bot {
    /// A bot using `token` on `channel`.
    pub fn new(
        index: usize,
        id: String,
        token: &str,
        channel: Channel,
        lanes: usize,
    ) -> Result<Bot, crate::LoadError> {
        let auth = MetadataValue::try_from(format!("Bearer {token}")).map_err(|_| {
            crate::LoadError::Setup("the server returned a token that is not valid metadata".into())
        })?;
        Ok(Bot {
            index,
            id,
            auth,
            channel,
            next_request: AtomicU64::new(0),
            lanes: Mutex::new(Vec::new()),
            busy: Semaphore::new(lanes.max(1)),
        })
    }

    /// Submits on a free SubmitActions stream of this bot (opening one if none is free): the
    /// same result as SubmitAction, a rejection turned back into the status it mirrors. A
    /// stream that failed is dropped; the caller's retry (a fresh decision) opens another.
    ///
    /// `_turn` (from [`Bot::stream_turn`]) is held until the answer is in: at most `lanes`
    /// streams are ever busy, so no more than that are ever open.
    async fn submit_on_stream(
        &self,
        req: pb::SubmitActionRequest,
        stats: &Stats,
        _turn: &SemaphorePermit<'_>,
    ) -> Result<pb::SubmitActionResponse, Status> {
        let free = self.lanes.lock().ok().and_then(|mut l| {
            // After a cut or a server restart the idle streams are dead: skip those whose
            // answer side already ended rather than spend a try on each.
            std::iter::from_fn(|| l.pop()).find_map(|mut lane| (!lane.ended()).then_some(lane))
        });
        let mut lane = match free {
            Some(lane) => lane,
            None => {
                // Room for the one request in flight; the stream never holds more.
                let (tx, rx) = mpsc::channel(1);
                let answers = self
                    .tables()
                    .submit_actions(self.request(ReceiverStream::new(rx)))
                    .await?
                    .into_inner();
                bump(&stats.submit_streams);
                Lane {
                    requests: tx,
                    answers,
                    sent: 0,
                }
            }
        };
        let request_id = req.request_id.clone();
        let sent = pb::SubmitActionsRequest {
            table_id: req.table_id,
            action: req.action,
            expected_seq: req.expected_seq,
            request_id: req.request_id,
        };
        if lane.requests.send(sent).await.is_err() {
            return Err(Status::unavailable("the SubmitActions stream closed"));
        }
        let answer = lane
            .answers
            .message()
            .await?
            .ok_or_else(|| Status::unavailable("the SubmitActions stream ended"))?;
        // The answer must be this request's: its place on the stream and its id (the server
        // may leave the id empty on refusing one it will not echo). Anything else is counted
        // as an error and the stream, no longer trusted, is dropped.
        if !answers_request(&answer, lane.sent, &request_id) {
            return Err(Status::internal(format!(
                "a SubmitActions answer out of order: index {} (expected {}), request_id {:?} (sent {request_id:?})",
                answer.index, lane.sent, answer.request_id
            )));
        }
        lane.sent += 1;
        if let Ok(mut l) = self.lanes.lock()
            && l.len() < IDLE_LANES
        {
            l.push(lane);
        }
        match answer.result {
            Some(pb::submit_actions_response::Result::Accepted(a)) => Ok(a),
            Some(pb::submit_actions_response::Result::Rejected(r)) => Err(rejection_status(r)),
            None => Err(Status::internal("a SubmitActions answer without a result")),
        }
    }

    /// A turn on one of this bot's SubmitActions streams, waited for before the submit is timed
    /// (latency counts from the send, not from a wait in this process); `None` once the run
    /// stops.
    async fn stream_turn(&self, stop: &CancellationToken) -> Option<SemaphorePermit<'_>> {
        tokio::select! {
            permit = self.busy.acquire() => permit.ok(),
            () = stop.cancelled() => None,
        }
    }

    /// `msg` with this bot's bearer token.
    pub fn request<T>(&self, msg: T) -> Request<T> {
        let mut r = Request::new(msg);
        r.metadata_mut().insert("authorization", self.auth.clone());
        r
    }

    /// This bot's connection (cheap: clones the channel handle).
    pub fn channel(&self) -> Channel {
        self.channel.clone()
    }

    /// A TableService client on this bot's connection (cheap: clones the channel handle).
    pub fn tables(&self) -> TableServiceClient<Channel> {
        TableServiceClient::new(self.channel.clone())
    }
}

/// The status a SubmitActions rejection mirrors (code, message, ErrorInfo), so errors are
/// counted the same way whichever path submitted.
fn rejection_status(r: pb::ActionRejected) -> Status {
    let details = ErrorDetails::with_error_info(r.reason, r.domain, r.metadata);
    Status::with_error_details(tonic::Code::from_i32(r.code), r.message, details)
}

/// A submit whose first event has not yet reached every seat.
#[derive(Debug)]
struct Pending {
    seq: u64,
    sent: Instant,
    remaining: u32,
    /// Sent inside the measured window.
    record: bool,
}

/// What the bots of one table share: outstanding fan-outs and the end of the match.
#[derive(Debug)]
pub struct TableTrack {
    seats: u32,
    pending: Mutex<Vec<Pending>>,
    ended: Notify,
    ended_once: AtomicBool,
}

impl TableTrack {
    fn new(seats: u32) -> TableTrack {
        TableTrack {
            seats,
            pending: Mutex::new(Vec::new()),
            ended: Notify::new(),
            ended_once: AtomicBool::new(false),
        }
    }

    fn expect(&self, seq: u64, record: bool, stats: &Stats) {
        if let Ok(mut p) = self.pending.lock() {
            if p.len() >= MAX_PENDING_PER_TABLE {
                p.remove(0);
                bump(&stats.fanout_incomplete);
            }
            p.push(Pending {
                seq,
                sent: Instant::now(),
                remaining: self.seats,
                record,
            });
        }
    }

    fn forget(&self, seq: u64) {
        if let Ok(mut p) = self.pending.lock() {
            p.retain(|x| x.seq != seq);
        }
    }

    /// One seat received event `seq`.
    fn delivered(&self, seq: u64, stats: &Stats) {
        if let Ok(mut p) = self.pending.lock()
            && let Some(i) = p.iter().position(|x| x.seq == seq)
        {
            p[i].remaining -= 1;
            if p[i].remaining == 0 {
                let done = p.remove(i);
                if done.record {
                    stats.event_all_seats.record(done.sent.elapsed());
                }
            }
        }
    }

    /// The match ended; true for the first seat to say so.
    fn end(&self) -> bool {
        let first = !self.ended_once.swap(true, Ordering::AcqRel);
        if first {
            self.ended.notify_one();
        }
        first
    }
}

/// Paces submits to a fixed rate over all bots (open loop): each submit takes the next slot.
#[derive(Debug)]
pub struct Pacer {
    interval: Duration,
    next: Mutex<Instant>,
}

impl Pacer {
    /// `rate` submits per second.
    pub fn new(rate: f64) -> Pacer {
        Pacer {
            interval: Duration::from_secs_f64(1.0 / rate.max(0.001)),
            next: Mutex::new(Instant::now()),
        }
    }

    async fn wait(&self) {
        let slot = match self.next.lock() {
            Ok(mut n) => {
                // A backlog is not made up in a burst: a late slot starts from now.
                let slot = (*n).max(Instant::now());
                *n = slot + self.interval;
                slot
            }
            Err(_) => Instant::now(),
        };
        tokio::time::sleep_until(slot.into()).await;
    }
}

/// State every task of a run shares.
#[derive(Debug)]
pub struct Shared {
    pub stats: Stats,
    /// Starts every request id of this run: a bot reused from an earlier run (an account's,
    /// see register.rs) may still sit at that run's unfinished tables and plays them on, where
    /// the earlier run's ids must not come again with other moves (DUPLICATE_REQUEST_CONFLICT).
    run: String,
    /// Counters and histograms take samples only while this is set (the measured window).
    pub recording: AtomicBool,
    /// Set when the window opens: decisions that arrive during setup wait for it, so setup is
    /// not slowed by play and every table starts playing at once.
    pub go: CancellationToken,
    /// Set when the window ends: no new submits or tables; in-flight calls may finish.
    pub stop: CancellationToken,
    /// Submits started and not finished (the drain waits for 0).
    pub inflight: AtomicUsize,
    pub tracks: RwLock<HashMap<String, Arc<TableTrack>>>,
    pub pacer: Option<Pacer>,
    pub think: Duration,
    pub seats: u32,
    /// Unary calls or SubmitActions streams.
    pub submit: Submit,
    /// Ladder mode: the scheduler seats the bots; their seatings are tracked here.
    pub ladder: Option<Arc<crate::ladder::LadderTrack>>,
}

impl Shared {
    pub fn new(seats: u32, think: Duration, rate: Option<f64>, submit: Submit) -> Shared {
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        Shared {
            stats: Stats::default(),
            run: format!("{run:x}"),
            recording: AtomicBool::new(false),
            go: CancellationToken::new(),
            stop: CancellationToken::new(),
            inflight: AtomicUsize::new(0),
            tracks: RwLock::new(HashMap::new()),
            pacer: rate.map(Pacer::new),
            think,
            seats,
            submit,
            ladder: None,
        }
    }

    /// Ladder mode: tables come from the server's scheduler.
    pub fn with_ladder(mut self, track: Arc<crate::ladder::LadderTrack>) -> Shared {
        self.ladder = Some(track);
        self
    }

    /// The track of a table a ladder scheduler seated a bot at, made by its first seat.
    fn ladder_track(&self, table: &str) -> Option<Arc<TableTrack>> {
        let mut tracks = self.tracks.write().ok()?;
        let track = tracks.entry(table.to_string()).or_insert_with(|| {
            if self.recording() {
                bump(&self.stats.tables_created);
            }
            Arc::new(TableTrack::new(self.seats))
        });
        Some(track.clone())
    }

    fn recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    fn track(&self, table: &str) -> Option<Arc<TableTrack>> {
        self.tracks.read().ok()?.get(table).cloned()
    }
}

/// Counts a submit in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn new(c: &'a AtomicUsize) -> Self {
        c.fetch_add(1, Ordering::AcqRel);
        InFlight(c)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What one bot remembers about one table it sits at.
#[derive(Debug, Default)]
struct Seen {
    /// Sequence number of the last event or snapshot received (the resume point).
    last_seq: Option<u64>,
    /// The decision already answered, so a repeated request is not submitted twice.
    acted_seq: Option<u64>,
    track: Option<Arc<TableTrack>>,
    /// Ladder mode: the Seated of this table was counted.
    seated: bool,
}

/// Reads one bot's WatchBot stream until the run stops, answering every decision with a random
/// legal action; reopens the stream with `from_seq` after a cut.
pub async fn bot_stream(bot: Arc<Bot>, shared: Arc<Shared>) {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    let mut first = true;
    while !shared.stop.is_cancelled() {
        if !first {
            bump(&shared.stats.reconnects);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        first = false;
        let from_seq = seen
            .iter()
            .filter_map(|(t, s)| s.last_seq.map(|q| (t.clone(), q)))
            .collect();
        let mut client = bot.tables();
        let opened = tokio::select! {
            _ = shared.stop.cancelled() => return,
            r = client.watch_bot(bot.request(pb::WatchBotRequest { from_seq, ..Default::default() })) => r,
        };
        let mut stream = match opened {
            Ok(s) => s.into_inner(),
            Err(status) => {
                shared.stats.errors.record(&status);
                continue;
            }
        };
        if let Some(l) = &shared.ladder {
            l.stream_opened();
        }
        loop {
            let msg = tokio::select! {
                _ = shared.stop.cancelled() => return,
                m = stream.message() => m,
            };
            match msg {
                Ok(Some(m)) => on_message(&bot, &shared, &mut seen, m),
                Ok(None) => break,
                Err(status) => {
                    if !shared.stop.is_cancelled() {
                        shared.stats.errors.record(&status);
                    }
                    break;
                }
            }
        }
    }
}

fn on_message(
    bot: &Arc<Bot>,
    shared: &Arc<Shared>,
    seen: &mut HashMap<String, Seen>,
    m: pb::WatchBotResponse,
) {
    let stats = &shared.stats;
    let Some(kind) = m.kind else { return };
    let table = m.table_id;
    match kind {
        Kind::Seated(seated) => {
            if let Some(l) = &shared.ladder {
                let s = seen.entry(table.clone()).or_default();
                if !s.seated {
                    s.seated = true;
                    s.track = shared.ladder_track(&table);
                    let match_id = seated.table.map(|t| t.ladder_match_id).unwrap_or_default();
                    l.seated(bot.index, &match_id, shared.recording());
                }
            }
        }
        Kind::Heartbeat(_) => {}
        Kind::Snapshot(view) => {
            let s = seen.entry(table.clone()).or_default();
            s.last_seq = Some(view.seq);
            // A resumed stream may bring the pending decision only as a snapshot.
            if !view.legal_actions.is_empty() && !view.match_over {
                decide(bot, shared, s, &table, view.seq, view.legal_actions);
            }
        }
        Kind::Decision(d) => {
            let Some(view) = d.view else { return };
            if shared.recording() {
                bump(&stats.decisions);
            }
            let s = seen.entry(table.clone()).or_default();
            decide(bot, shared, s, &table, d.seq, view.legal_actions);
        }
        Kind::Event(ev) => {
            let recording = shared.recording();
            if recording {
                bump(&stats.events);
            }
            if ev.auto {
                bump(&stats.auto_event_copies);
            }
            let s = seen.entry(table.clone()).or_default();
            match s.last_seq {
                Some(last) if ev.seq <= last => bump(&stats.event_duplicates),
                Some(last) if ev.seq > last + 1 => {
                    stats
                        .event_gaps
                        .fetch_add(ev.seq - last - 1, Ordering::Relaxed);
                }
                _ => {}
            }
            s.last_seq = Some(s.last_seq.map_or(ev.seq, |l| l.max(ev.seq)));
            if s.track.is_none() {
                s.track = shared.track(&table);
            }
            if let Some(t) = &s.track {
                t.delivered(ev.seq, stats);
            }
            if matches!(ev.body, Some(pb::event::Body::MatchEnded(_))) {
                // Counted once per table: by the first seat to see the end.
                if let Some(t) = &s.track
                    && t.end()
                {
                    if recording {
                        bump(&stats.matches_finished);
                    }
                    // A ladder table has no slot to forget it; every seat holds its track.
                    if shared.ladder.is_some()
                        && let Ok(mut t) = shared.tracks.write()
                    {
                        t.remove(&table);
                    }
                }
                if let Some(l) = &shared.ladder {
                    l.freed(bot.index);
                }
                seen.remove(&table);
            }
        }
        Kind::Resync(r) => {
            bump(&stats.resyncs);
            stats.errors.record_named("RESYNC", &r.reason);
        }
    }
}

/// Answers a decision once, in its own task so one bot serves many tables at once.
fn decide(
    bot: &Arc<Bot>,
    shared: &Arc<Shared>,
    s: &mut Seen,
    table: &str,
    seq: u64,
    legal: Vec<pb::Action>,
) {
    if s.acted_seq == Some(seq) || legal.is_empty() || shared.stop.is_cancelled() {
        return;
    }
    s.acted_seq = Some(seq);
    if s.track.is_none() {
        s.track = shared.track(table);
    }
    let (bot, shared, track, table) = (
        bot.clone(),
        shared.clone(),
        s.track.clone(),
        table.to_string(),
    );
    tokio::spawn(async move { act(bot, shared, track, table, seq, legal).await });
}

async fn act(
    bot: Arc<Bot>,
    shared: Arc<Shared>,
    track: Option<Arc<TableTrack>>,
    table: String,
    seq: u64,
    legal: Vec<pb::Action>,
) {
    let _inflight = InFlight::new(&shared.inflight);
    tokio::select! {
        _ = shared.stop.cancelled() => return,
        _ = shared.go.cancelled() => {}
    }
    if !shared.think.is_zero() {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = tokio::time::sleep(shared.think) => {}
        }
    }
    if let Some(p) = &shared.pacer {
        tokio::select! {
            _ = shared.stop.cancelled() => return,
            _ = p.wait() => {}
        }
    }
    if shared.stop.is_cancelled() {
        return;
    }
    let mut client = bot.tables();
    let (mut seq, mut legal) = (seq, legal);
    for _ in 0..SUBMIT_TRIES {
        let action = legal.swap_remove(rand::rng().random_range(0..legal.len()));
        let n = bot.next_request.fetch_add(1, Ordering::Relaxed);
        let req = pb::SubmitActionRequest {
            table_id: table.clone(),
            action: Some(action),
            expected_seq: seq,
            request_id: format!("{}-{}-{n}", shared.run, bot.index),
        };
        let turn = match shared.submit {
            Submit::Unary => None,
            Submit::Stream => match bot.stream_turn(&shared.stop).await {
                Some(turn) => Some(turn),
                None => return,
            },
        };
        let record = shared.recording();
        if let Some(t) = &track {
            t.expect(seq + 1, record, &shared.stats);
        }
        let sent = Instant::now();
        let answer = match &turn {
            None => client
                .submit_action(bot.request(req))
                .await
                .map(|r| r.into_inner()),
            Some(turn) => bot.submit_on_stream(req, &shared.stats, turn).await,
        };
        drop(turn);
        match answer {
            Ok(_) => {
                if record {
                    shared.stats.ack.record(sent.elapsed());
                }
                if shared.recording() {
                    bump(&shared.stats.moves);
                }
                return;
            }
            Err(status) => {
                shared.stats.errors.record(&status);
                if let Some(t) = &track {
                    t.forget(seq + 1);
                }
                if shared.stop.is_cancelled() {
                    return;
                }
                // Decide again from a fresh view if it is still this seat's turn.
                let view = client
                    .get_seat_view(bot.request(pb::GetSeatViewRequest {
                        table_id: table.clone(),
                    }))
                    .await
                    .ok()
                    .and_then(|r| r.into_inner().view);
                match view {
                    Some(v) if !v.legal_actions.is_empty() && !v.match_over => {
                        seq = v.seq;
                        legal = v.legal_actions;
                    }
                    _ => return,
                }
            }
        }
    }
}

/// What every table slot needs.
#[derive(Debug)]
pub struct SlotPlan {
    pub ruleset: i32,
    pub seats: u32,
    pub config: HashMap<String, String>,
    pub deadline_ms: u32,
    pub bots_per_seat: usize,
    pub bots: Vec<Arc<Bot>>,
    pub setup: Semaphore,
    /// Slots that finished their first setup (successfully or not).
    pub ready: AtomicUsize,
    pub ready_notify: Notify,
    /// Slots that could not set up a table at all.
    pub failed: AtomicUsize,
}

impl SlotPlan {
    /// The bot in `seat` of the slot's tables: seat s uses bots s*K .. s*K+K-1, so a table's
    /// seats are always distinct bots.
    fn bot(&self, slot: usize, seat: usize) -> &Arc<Bot> {
        &self.bots[seat * self.bots_per_seat + slot % self.bots_per_seat]
    }

    fn mark_ready(&self) {
        self.ready.fetch_add(1, Ordering::AcqRel);
        self.ready_notify.notify_waiters();
    }
}

/// Creates a table, seats a bot in every seat, waits for the match to end, and again, until stop.
pub async fn table_slot(slot: usize, plan: Arc<SlotPlan>, shared: Arc<Shared>) {
    let mut first = true;
    while !shared.stop.is_cancelled() {
        let permit = tokio::select! {
            _ = shared.stop.cancelled() => break,
            p = plan.setup.acquire() => p,
        };
        let track = match seat_table(slot, &plan, &shared).await {
            Ok(t) => Some(t),
            Err(status) => {
                shared.stats.errors.record(&status);
                None
            }
        };
        drop(permit);
        if first {
            if track.is_none() {
                plan.failed.fetch_add(1, Ordering::AcqRel);
            }
            plan.mark_ready();
            first = false;
        }
        let Some((table, track)) = track else {
            // Back off before trying again, still bounded by the stop signal.
            tokio::select! {
                _ = shared.stop.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(200)) => continue,
            }
        };
        tokio::select! {
            _ = shared.stop.cancelled() => break,
            _ = track.ended.notified() => {}
        }
        if let Ok(mut t) = shared.tracks.write() {
            t.remove(&table);
        }
    }
    if first {
        plan.mark_ready();
    }
}

async fn seat_table(
    slot: usize,
    plan: &SlotPlan,
    shared: &Shared,
) -> Result<(String, Arc<TableTrack>), tonic::Status> {
    let creator = plan.bot(slot, 0);
    let created = creator
        .tables()
        .create_table(creator.request(pb::CreateTableRequest {
            ruleset: plan.ruleset,
            seats: plan.seats,
            config: plan.config.clone(),
            decision_deadline_ms: plan.deadline_ms,
            ..Default::default()
        }))
        .await?
        .into_inner();
    let table = created.table.map(|t| t.table_id).unwrap_or_default();
    bump(&shared.stats.tables_created);
    let track = Arc::new(TableTrack::new(plan.seats));
    if let Ok(mut t) = shared.tracks.write() {
        t.insert(table.clone(), track.clone());
    }
    for seat in 0..plan.seats {
        let bot = plan.bot(slot, seat as usize);
        bot.tables()
            .join_table(bot.request(pb::JoinTableRequest {
                invitation_code: String::new(),
                table_id: table.clone(),
                seat: Some(seat),
            }))
            .await?;
    }
    Ok((table, track))
}

/// A spectator that follows `table` on WatchTable but reads one message per `delay`: it falls
/// behind a busy table, must be cut (Resync / WATCHER_TOO_SLOW) rather than stall it, and then
/// resumes with `from_seq`; every event must still arrive exactly once.
pub async fn slow_watcher(bot: Arc<Bot>, shared: Arc<Shared>, table: String, delay: Duration) {
    let stats = &shared.stats;
    let mut last: Option<u64> = None;
    let mut first = true;
    while !shared.stop.is_cancelled() {
        if !first {
            bump(&stats.slow_reconnects);
        }
        first = false;
        let mut client = bot.tables();
        let req = pb::WatchTableRequest {
            table_id: table.clone(),
            from_seq: last,
        };
        let opened = tokio::select! {
            _ = shared.stop.cancelled() => return,
            r = client.watch_table(bot.request(req)) => r,
        };
        let mut stream = match opened {
            Ok(s) => s.into_inner(),
            Err(_) => {
                bump(&stats.slow_errors);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        loop {
            let msg = tokio::select! {
                _ = shared.stop.cancelled() => return,
                m = stream.message() => m,
            };
            match msg {
                Ok(Some(m)) => match m.kind {
                    Some(pb::watch_table_response::Kind::Snapshot(v)) => last = Some(v.seq),
                    Some(pb::watch_table_response::Kind::Event(ev)) => {
                        bump(&stats.slow_events);
                        match last {
                            Some(l) if ev.seq <= l => bump(&stats.slow_duplicates),
                            Some(l) if ev.seq > l + 1 => {
                                stats.slow_gaps.fetch_add(ev.seq - l - 1, Ordering::Relaxed);
                            }
                            _ => {}
                        }
                        last = Some(last.map_or(ev.seq, |l| l.max(ev.seq)));
                        if matches!(ev.body, Some(pb::event::Body::MatchEnded(_))) {
                            return;
                        }
                    }
                    Some(pb::watch_table_response::Kind::Resync(_)) => bump(&stats.slow_resyncs),
                    _ => {}
                },
                Ok(None) => break,
                Err(status) => {
                    let reason =
                        tonic_types::StatusExt::get_details_error_info(&status).map(|i| i.reason);
                    if reason.as_deref() == Some("WATCHER_TOO_SLOW") {
                        bump(&stats.slow_cut);
                    } else if !shared.stop.is_cancelled() {
                        bump(&stats.slow_errors);
                    }
                    break;
                }
            }
            tokio::select! {
                _ = shared.stop.cancelled() => return,
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }
}

#[cfg(test)]
mod answer_order {
    use super::*;

    fn answer(index: u64, request_id: &str, refused: bool) -> pb::SubmitActionsResponse {
        use pb::submit_actions_response::Result as R;
        pb::SubmitActionsResponse {
            index,
            request_id: request_id.into(),
            result: Some(if refused {
                R::Rejected(Default::default())
            } else {
                R::Accepted(Default::default())
            }),
        }
    }

    #[test]
    fn only_the_answer_to_the_request_sent_passes() {
        assert!(answers_request(&answer(3, "7-1", false), 3, "7-1"));
        assert!(!answers_request(&answer(2, "7-1", false), 3, "7-1"));
        assert!(!answers_request(&answer(3, "7-0", false), 3, "7-1"));
        assert!(!answers_request(&answer(3, "", false), 3, "7-1"));
        // A refusal of an id the server will not echo.
        assert!(answers_request(&answer(3, "", true), 3, "7-1"));
        assert!(!answers_request(&answer(4, "", true), 3, "7-1"));
    }
}

#[cfg(test)]
mod lanes {
    use super::*;

    /// The bots of a connection, their WatchBot streams and the room kept for other calls fit
    /// under the server's stream limit at every size; 1,000 tables keep the full idle pool.
    #[test]
    fn the_bots_streams_fit_under_the_connection_limit() {
        let limit = bete_server::server::MAX_STREAMS_PER_CONNECTION as usize;
        for bots in [1, 5, 80, 785, 1_565, 5_000, 20_000] {
            for connections in [1, 2, 8] {
                let lanes = lanes_per_bot(bots, connections);
                let per_connection = bots.div_ceil(connections);
                assert!(lanes <= IDLE_LANES, "{bots}/{connections}: {lanes}");
                // Each bot's WatchBot stream and its lanes, and the room for other calls.
                assert!(
                    lanes == 0 || per_connection * (lanes + 1) + OTHER_STREAMS as usize <= limit,
                    "{bots} bots over {connections}: {lanes} streams each"
                );
                // No lane only when not even one each would fit.
                assert_eq!(
                    lanes == 0,
                    per_connection * 2 + OTHER_STREAMS as usize > limit,
                    "{bots} bots over {connections}"
                );
            }
        }
        // The matrix's 1,000 tables: 80 bots over 8 connections keep up to 128 each.
        assert_eq!(lanes_per_bot(80, 8), IDLE_LANES);
        // 10,000 tables: 785 bots over 8 connections.
        assert_eq!(lanes_per_bot(785, 8), 19);
    }
}
