//! The bot runner: plays every table the bot sits at on one WatchBot stream.
//!
//! It keeps, per table, the last sequence number seen and the sequence number it last decided
//! at. After a dropped link it reopens WatchBot with those sequence numbers (no gap, no
//! duplicate) and asks GetSeatView for each table, so a decision that fell into the gap is
//! still made; deciding at most once per sequence number keeps that from doubling up. Actions
//! are submitted on their own tasks, so one slow submit never holds up another table.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::ErrorReason;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::action_stream::ActionStream;
use crate::bot::Bot;
use crate::client::{Client, Submitted};
use crate::error::{Error, Result};

/// How the runner submits its actions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SubmitVia {
    /// One unary SubmitAction call per action.
    Unary,
    /// SubmitActions streams ([`ActionStream`]): the same results, cheaper per move for the
    /// server. A broken stream's action is resent with its request_id on a new stream. Against
    /// a server without SubmitActions (UNIMPLEMENTED) the runner uses unary calls for good.
    #[default]
    Stream,
}

/// Makes the bot for a newly seated table.
pub type BotFactory = Box<dyn FnMut(&pb::Seated) -> Box<dyn Bot> + Send>;

/// What the runner tells its owner as it goes (see [`Runner::notifications`]).
#[derive(Clone, Debug)]
pub enum Notice {
    /// The bot holds a seat at a table (of the ladder `ladder_id`, when not empty).
    Seated {
        table_id: String,
        seat: u32,
        ladder_id: String,
    },
    /// An action was acknowledged.
    Acted {
        table_id: String,
        seq: u64,
        action: String,
    },
    /// A match is over.
    MatchOver(MatchResult),
    /// The stream dropped and was reopened.
    Reconnected { attempt: u32 },
}

/// The end of one match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchResult {
    /// The table.
    pub table_id: String,
    /// This bot's seat.
    pub seat: u32,
    /// The ladder the table belongs to; empty for a table that is not a ladder's.
    pub ladder_id: String,
    /// Every seat's final balance, in seat order.
    pub balances: Vec<i64>,
}

/// What a finished [`Runner::run`] did.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Matches played to the end, in the order they ended.
    pub matches: Vec<MatchResult>,
    /// Decisions made (one per sequence number at which this bot had to act).
    pub decisions: u64,
    /// Times the stream was reopened after a drop.
    pub reconnects: u32,
    /// Submits refused because the table had moved on (STALE_SEQ), after which the runner
    /// refreshed the view and decided again.
    pub stale: u32,
    /// Submits that needed more than one attempt (an answer lost to a broken link).
    pub retried_submits: u32,
}

/// Per-table state of the runner.
struct Slot {
    seat: u32,
    /// The table's ladder, when it is a ladder table.
    ladder_id: String,
    bot: Box<dyn Bot>,
    /// The last sequence number seen (event or snapshot); resume point of the stream.
    last_seq: u64,
    /// The view sequence number of the last decision made, so a decision is made once.
    decided_seq: Option<u64>,
    /// The last decision was refused as illegal: play the first legal action next time.
    fallback: bool,
}

/// Results of background work, fed back into the loop.
enum Feedback {
    Submitted {
        table_id: String,
        action: String,
        result: Result<Submitted>,
    },
    Refreshed {
        table_id: String,
        result: Box<Result<pb::SeatView>>,
    },
}

/// Plays tables until cancelled or until enough matches are over.
pub struct Runner {
    client: Client,
    factory: BotFactory,
    cancel: CancellationToken,
    stop_after: Option<usize>,
    idle_timeout: Duration,
    notices: Option<mpsc::UnboundedSender<Notice>>,
    /// Set when actions go on SubmitActions streams.
    actions: Option<ActionStream>,
    /// Tables whose match is over, so a late Seated or snapshot does not count them twice.
    finished: HashSet<String>,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("stop_after", &self.stop_after)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner for the bot `client` is authenticated as; `factory` makes one bot per table.
    pub fn new<F, B>(client: Client, mut factory: F) -> Self
    where
        F: FnMut(&pb::Seated) -> B + Send + 'static,
        B: Bot + 'static,
    {
        Runner {
            factory: Box::new(move |seated| Box::new(factory(seated)) as Box<dyn Bot>),
            cancel: CancellationToken::new(),
            stop_after: None,
            idle_timeout: Duration::from_secs(45),
            notices: None,
            actions: Some(client.action_stream()),
            client,
            finished: HashSet::new(),
        }
    }

    /// Submits with unary SubmitAction calls or on SubmitActions streams (the default).
    pub fn submit_via(mut self, via: SubmitVia) -> Self {
        self.actions = match via {
            SubmitVia::Unary => None,
            SubmitVia::Stream => Some(self.client.action_stream()),
        };
        self
    }

    /// Stops cleanly when `cancel` fires: no new decisions, the stream closed, `run` returns.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Returns after `matches` matches are over.
    pub fn stop_after(mut self, matches: usize) -> Self {
        self.stop_after = Some(matches);
        self
    }

    /// Treats the stream as dead after this long without a message (heartbeats included).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// A channel of [`Notice`]s for progress output.
    pub fn notifications(&mut self) -> mpsc::UnboundedReceiver<Notice> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.notices = Some(tx);
        rx
    }

    fn notify(&self, notice: Notice) {
        if let Some(tx) = &self.notices {
            // The owner may have stopped listening; the runner plays on regardless.
            let _ = tx.send(notice);
        }
    }

    /// Plays until cancelled, until `stop_after` matches are over, or until a failure that no
    /// reconnect can fix (e.g. a bad token).
    pub async fn run(mut self) -> Result<RunReport> {
        let mut report = RunReport::default();
        let mut slots: HashMap<String, Slot> = HashMap::new();
        let (feedback_tx, mut feedback_rx) = mpsc::unbounded_channel::<Feedback>();
        let mut stream: Option<tonic::Streaming<pb::WatchBotResponse>> = None;
        let mut failed: u32 = 0;
        let mut connected_once = false;

        loop {
            if self.stop_after.is_some_and(|n| report.matches.len() >= n) {
                break;
            }
            let Some(open) = stream.as_mut() else {
                let from_seq: HashMap<String, u64> = slots
                    .iter()
                    .map(|(id, slot)| (id.clone(), slot.last_seq))
                    .collect();
                let opened = tokio::select! {
                    _ = self.cancel.cancelled() => break,
                    opened = self.client.open_watch_bot(from_seq) => opened,
                };
                match opened {
                    Ok(s) => {
                        stream = Some(s);
                        if connected_once {
                            report.reconnects += 1;
                            self.notify(Notice::Reconnected { attempt: failed });
                            // Decisions requested while the link was down may not be sent again:
                            // ask for each table's view and decide where it is our turn.
                            for table_id in slots.keys() {
                                spawn_refresh(&self.client, table_id, &feedback_tx);
                            }
                        }
                        connected_once = true;
                        failed = 0;
                    }
                    Err(error) => {
                        failed += 1;
                        if !error.is_transient() || failed >= self.client.backoff().attempts {
                            return Err(error);
                        }
                        tracing::warn!(%error, failed, "cannot open WatchBot; retrying");
                        tokio::select! {
                            _ = self.cancel.cancelled() => break,
                            _ = tokio::time::sleep(self.client.backoff().delay(failed)) => {}
                        }
                    }
                }
                continue;
            };

            tokio::select! {
                _ = self.cancel.cancelled() => break,
                Some(feedback) = feedback_rx.recv() => {
                    self.on_feedback(feedback, &mut slots, &mut report, &feedback_tx);
                }
                message = tokio::time::timeout(self.idle_timeout, open.message()) => {
                    match message {
                        Ok(Ok(Some(response))) => {
                            if let Some(from) = self.on_message(response, &mut slots, &mut report, &feedback_tx) {
                                // The server cut us for being slow: reopen at once from `from`.
                                tracing::info!(from_seq = from.1, table = %from.0, "resync");
                                stream = None;
                            }
                        }
                        Ok(Ok(None)) => {
                            tracing::info!("WatchBot stream ended; reopening");
                            stream = None;
                            failed += 1;
                        }
                        Ok(Err(status)) => {
                            let error = Error::from(status);
                            if !error.is_transient()
                                && error.reason() != Some(ErrorReason::WatcherTooSlow)
                            {
                                return Err(error);
                            }
                            tracing::warn!(%error, "WatchBot stream dropped; resuming");
                            stream = None;
                            failed += 1;
                        }
                        Err(_) => {
                            tracing::warn!("WatchBot stream silent too long; resuming");
                            stream = None;
                            failed += 1;
                        }
                    }
                    if stream.is_none() && failed > 0 {
                        tokio::select! {
                            _ = self.cancel.cancelled() => break,
                            _ = tokio::time::sleep(self.client.backoff().delay(failed)) => {}
                        }
                    }
                }
            }
        }
        Ok(report)
    }

    /// Handles one stream message. Returns `Some((table, from_seq))` when the stream must be
    /// reopened (a Resync).
    fn on_message(
        &mut self,
        response: pb::WatchBotResponse,
        slots: &mut HashMap<String, Slot>,
        report: &mut RunReport,
        feedback: &mpsc::UnboundedSender<Feedback>,
    ) -> Option<(String, u64)> {
        use pb::watch_bot_response::Kind;
        let table_id = response.table_id;
        match response.kind? {
            Kind::Seated(seated) => {
                let over = seated
                    .table
                    .as_ref()
                    .is_some_and(|t| t.state == pb::TableState::Finished as i32);
                if over {
                    self.finished.insert(seated.table_id.clone());
                }
                if !slots.contains_key(&seated.table_id)
                    && !self.finished.contains(&seated.table_id)
                {
                    let bot = (self.factory)(&seated);
                    let seq = seated.table.as_ref().map_or(0, |t| t.last_seq);
                    let ladder_id = seated
                        .table
                        .as_ref()
                        .map(|t| t.ladder_id.clone())
                        .unwrap_or_default();
                    // A freshly seated table starts with a snapshot, so last_seq only matters if
                    // the stream drops before it; the table's seq is a safe resume point then.
                    slots.insert(
                        seated.table_id.clone(),
                        Slot {
                            seat: seated.seat,
                            ladder_id: ladder_id.clone(),
                            bot,
                            last_seq: seq,
                            decided_seq: None,
                            fallback: false,
                        },
                    );
                    self.notify(Notice::Seated {
                        table_id: seated.table_id,
                        seat: seated.seat,
                        ladder_id,
                    });
                }
            }
            Kind::Snapshot(view) => {
                let over = view.match_over;
                self.on_view(&table_id, view, slots, report, feedback);
                if over {
                    self.finish(&table_id, None, slots, report);
                }
            }
            Kind::Decision(decision) => {
                if let Some(mut view) = decision.view {
                    // The decision's seq is the one to pass as expected_seq.
                    view.seq = view.seq.max(decision.seq);
                    self.on_view(&table_id, view, slots, report, feedback);
                }
            }
            Kind::Event(event) => self.on_event(&table_id, event, slots, report),
            Kind::Heartbeat(_) => {}
            Kind::Resync(resync) => {
                if let Some(slot) = slots.get_mut(&table_id) {
                    slot.last_seq = resync.from_seq;
                }
                return Some((table_id, resync.from_seq));
            }
        }
        None
    }

    fn on_event(
        &mut self,
        table_id: &str,
        event: pb::Event,
        slots: &mut HashMap<String, Slot>,
        report: &mut RunReport,
    ) {
        use pb::event::Body;
        let Some(slot) = slots.get_mut(table_id) else {
            return;
        };
        if event.seq <= slot.last_seq {
            return; // already seen before a resume
        }
        slot.last_seq = event.seq;
        match event.body {
            Some(Body::DealStarted(deal)) => slot.bot.on_deal_start(&deal),
            Some(Body::DealSettled(settled)) => slot.bot.on_deal_end(&settled),
            Some(Body::MatchEnded(ended)) => {
                slot.bot.on_match_end(&ended);
                self.finish(table_id, Some(ended.balances), slots, report);
            }
            _ => {}
        }
    }

    /// Decides if `view` asks this seat to act and it has not decided at this seq yet.
    fn on_view(
        &mut self,
        table_id: &str,
        view: pb::SeatView,
        slots: &mut HashMap<String, Slot>,
        report: &mut RunReport,
        feedback: &mpsc::UnboundedSender<Feedback>,
    ) {
        if !slots.contains_key(table_id)
            && !self.finished.contains(table_id)
            && let Some(seat) = view.viewer_seat
        {
            // A view of a table we were never told we sit at (a Seated lost to a drop): adopt
            // it rather than miss its decisions.
            let seated = pb::Seated {
                table_id: table_id.to_string(),
                seat,
                table: None,
            };
            let bot = (self.factory)(&seated);
            slots.insert(
                table_id.to_string(),
                Slot {
                    seat,
                    // Unknown without the table; the view alone does not say.
                    ladder_id: String::new(),
                    bot,
                    last_seq: view.seq,
                    decided_seq: None,
                    fallback: false,
                },
            );
        }
        let Some(slot) = slots.get_mut(table_id) else {
            return;
        };
        slot.last_seq = slot.last_seq.max(view.seq);
        let ours = view.to_act.is_some() && view.to_act == view.viewer_seat;
        if !ours || view.legal_actions.is_empty() || slot.decided_seq >= Some(view.seq) {
            return;
        }
        let action = if std::mem::take(&mut slot.fallback) {
            view.legal_actions[0].clone()
        } else {
            slot.bot.decide(&view)
        };
        slot.decided_seq = Some(view.seq);
        report.decisions += 1;
        let client = self.client.clone();
        let actions = self.actions.clone();
        let table = table_id.to_string();
        let tx = feedback.clone();
        let seq = view.seq;
        tokio::spawn(async move {
            let result = match actions {
                Some(streams) => streams.submit(&table, &action, seq).await,
                None => client.submit_action(&table, &action, seq).await,
            };
            let text = if action.text.is_empty() {
                format!("{:?}", action.kind)
            } else {
                action.text
            };
            let _ = tx.send(Feedback::Submitted {
                table_id: table,
                action: text,
                result,
            });
        });
    }

    fn on_feedback(
        &mut self,
        feedback: Feedback,
        slots: &mut HashMap<String, Slot>,
        report: &mut RunReport,
        tx: &mpsc::UnboundedSender<Feedback>,
    ) {
        match feedback {
            Feedback::Submitted {
                table_id,
                action,
                result,
            } => match result {
                Ok(done) => {
                    if done.attempts > 1 {
                        report.retried_submits += 1;
                    }
                    self.notify(Notice::Acted {
                        table_id,
                        seq: done.seq,
                        action,
                    });
                }
                Err(error) => {
                    use ErrorReason as R;
                    let Some(slot) = slots.get_mut(&table_id) else {
                        return;
                    };
                    match error.reason() {
                        Some(R::TableFinished) => {
                            self.finish(&table_id, None, slots, report);
                            return;
                        }
                        Some(R::StaleSeq) => report.stale += 1,
                        Some(R::IllegalAction | R::InvalidArgument) => {
                            tracing::warn!(table = %table_id, %error, "the bot chose an illegal action; playing the first legal one");
                            slot.fallback = true;
                            slot.decided_seq = None;
                        }
                        Some(R::NotYourSeat) => {}
                        _ => {
                            // The submit gave up after its own retries (same request_id), so
                            // the action may have been applied. Deciding again from a fresh
                            // view under a new id is safe: every submit carries the view's
                            // seq, so a second action for the same turn is refused as stale.
                            tracing::warn!(table = %table_id, %error, "submit failed; refreshing the view");
                            slot.decided_seq = None;
                        }
                    }
                    spawn_refresh(&self.client, &table_id, tx);
                }
            },
            Feedback::Refreshed { table_id, result } => match *result {
                Ok(view) => {
                    let over = view.match_over;
                    self.on_view(&table_id, view, slots, report, tx);
                    if over {
                        self.finish(&table_id, None, slots, report);
                    }
                }
                Err(error) => tracing::warn!(table = %table_id, %error, "cannot refresh the view"),
            },
        }
    }

    /// Records the end of a match once.
    fn finish(
        &mut self,
        table_id: &str,
        balances: Option<Vec<i64>>,
        slots: &mut HashMap<String, Slot>,
        report: &mut RunReport,
    ) {
        let Some(slot) = slots.remove(table_id) else {
            return;
        };
        self.finished.insert(table_id.to_string());
        let result = MatchResult {
            table_id: table_id.to_string(),
            seat: slot.seat,
            ladder_id: slot.ladder_id,
            balances: balances.unwrap_or_default(),
        };
        report.matches.push(result.clone());
        self.notify(Notice::MatchOver(result));
    }
}

fn spawn_refresh(client: &Client, table_id: &str, tx: &mpsc::UnboundedSender<Feedback>) {
    let client = client.clone();
    let table_id = table_id.to_string();
    let tx = tx.clone();
    tokio::spawn(async move {
        let result = client.get_seat_view(&table_id).await;
        let _ = tx.send(Feedback::Refreshed {
            table_id,
            result: Box::new(result),
        });
    });
}
