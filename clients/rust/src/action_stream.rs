//! Submitting actions on SubmitActions streams instead of one unary call each.
//!
//! An [`ActionStream`] gives the same results and errors as [`Client::submit_action`], at a
//! lower cost per move on the server (no per-call headers, trailers or routing). The server
//! answers one request at a time per stream, so the handle keeps a small set of open streams:
//! a submit takes a free one (opening another when all are busy, e.g. a bot acting at several
//! tables at once) and puts it back once answered. A stream that breaks is dropped and the
//! request is sent again with the same `request_id` on a new one, with backoff while the server
//! is unreachable: the action is applied at most once however often the link drops.
//!
//! After a cut link or a server restart every idle stream is dead. A stream whose answer side
//! already ended is dropped before it is used; one that fails on use takes the whole idle set
//! with it and the request goes at once on a fresh stream, without spending an attempt or a
//! backoff pause, so a bot with many idle streams is not held up once the server is back.
//!
//! A server older than SubmitActions answers UNIMPLEMENTED when a stream opens; the handle
//! (and its clones) then submit with unary SubmitAction calls for good, logging it once.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

use bete_api::pb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::client::{Client, Submitted, new_request_id};
use crate::error::{Error, Result, RpcError};

/// One open SubmitActions stream with no request in flight.
#[derive(Debug)]
struct Lane {
    requests: mpsc::Sender<pb::SubmitActionsRequest>,
    answers: tonic::Streaming<pb::SubmitActionsResponse>,
    /// Requests sent on this stream so far: the index its next answer must carry.
    sent: u64,
}

/// Why an attempt failed on its stream (not an answer's refusal).
struct LaneFailed {
    error: Error,
    /// The stream was an idle one from an earlier request, not opened for this attempt.
    reused: bool,
}

impl Lane {
    /// The server never answers unprompted, so an idle stream whose answer side is already
    /// ready has ended or failed (or misbehaves): either way it is unusable.
    fn ended(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        // `Streaming::message` is cancel-safe: dropping the pending poll loses nothing.
        std::pin::pin!(self.answers.message())
            .poll(&mut cx)
            .is_ready()
    }
}

/// Idle streams kept by default. A bot acting at many tables at once has about that many moves
/// in flight again and again; keeping fewer idle streams than that opens (and closes) a stream
/// for most moves, which costs the server about what a unary call does (the load harness
/// measured 84 µs of server CPU a move with 4 kept, 51–62 µs with its streams reused). The
/// bound still stops a burst from leaving more streams open for good.
pub const DEFAULT_IDLE_STREAMS: usize = 64;

/// Submits actions on SubmitActions streams of one client (see the module docs). Cloning shares
/// the streams.
#[derive(Clone, Debug)]
pub struct ActionStream {
    client: Client,
    free: Arc<Mutex<Vec<Lane>>>,
    /// Idle streams kept open; a stream answered beyond this many idle ones is closed.
    keep_idle: usize,
    /// Set once the server turned a stream down as UNIMPLEMENTED: submit with unary calls.
    unary: Arc<AtomicBool>,
}

/// Whether `error`, from opening or first using a new stream, means the server has no
/// SubmitActions method (older than it) rather than a passing failure.
pub(crate) fn lacks_submit_actions(error: &Error) -> bool {
    error.code() == Some(tonic::Code::Unimplemented)
}

impl ActionStream {
    pub(crate) fn new(client: Client) -> ActionStream {
        ActionStream {
            client,
            free: Arc::new(Mutex::new(Vec::new())),
            keep_idle: DEFAULT_IDLE_STREAMS,
            unary: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Keeps at most `n` idle streams open (default [`DEFAULT_IDLE_STREAMS`]); more streams
    /// still open while more moves are in flight, and close once answered.
    pub fn keep_idle(mut self, n: usize) -> ActionStream {
        self.keep_idle = n;
        self
    }

    /// [`Client::submit_action`] on a stream: a fresh `request_id`, the same result, the same
    /// [`Error`] for a refusal (the stream's rejection carries the unary call's status).
    ///
    /// Broken streams are retried inside this call with one `request_id`. A caller that gives
    /// up on it (a timeout, a dropped future) or gets a transient error must retry with
    /// [`ActionStream::submit_with_id`] and the SAME `request_id`, as for
    /// [`Client::submit_action`]: a fresh id can apply the action twice.
    pub async fn submit(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
    ) -> Result<Submitted> {
        self.submit_with_id(table_id, action, expected_seq, &new_request_id())
            .await
    }

    /// [`ActionStream::submit`] with a caller-chosen `request_id`.
    pub async fn submit_with_id(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
        request_id: &str,
    ) -> Result<Submitted> {
        if self.on_unary_calls() {
            return self
                .client
                .submit_action_with_id(table_id, action, expected_seq, request_id)
                .await;
        }
        let request = pb::SubmitActionsRequest {
            table_id: table_id.into(),
            // As in submit_action: the verb and cards only; the server fills `text`.
            action: Some(pb::Action {
                kind: action.kind,
                cards: action.cards.clone(),
                text: String::new(),
            }),
            expected_seq,
            request_id: request_id.into(),
        };
        let backoff = self.client.backoff();
        // Attempts counted against the backoff budget, and every send (reported).
        let (mut failed, mut sent) = (0, 0);
        // After any failure, never trust an idle stream again for this request.
        let mut fresh = false;
        loop {
            sent += 1;
            match self.once(request.clone(), fresh).await {
                Ok(answer) => {
                    let done = answer?;
                    return Ok(Submitted {
                        seq: done.seq,
                        replayed: done.replayed,
                        attempts: sent,
                    });
                }
                Err(LaneFailed { error, reused }) => {
                    if !reused && lacks_submit_actions(&error) {
                        self.fall_back(&error);
                        // Nothing reached the server on the stream: the unary call is the
                        // first delivery of this request_id.
                        return self
                            .client
                            .submit_action_with_id(table_id, action, expected_seq, request_id)
                            .await;
                    }
                    fresh = true;
                    if reused && error.is_transient() && error.retry_after().is_none() {
                        // The idle streams likely died together (a cut link, a restarted
                        // server): drop them all and go again now on a new stream.
                        if let Ok(mut l) = self.free.lock() {
                            l.clear();
                        }
                        tracing::debug!(%error, "an idle stream was dead; resending on a new one");
                        continue;
                    }
                    failed += 1;
                    if !error.is_transient() || failed >= backoff.attempts.max(1) {
                        return Err(error);
                    }
                    tracing::debug!(%error, failed, "resending on a new stream");
                    // Never sooner than the server asked (RetryInfo of RATE_LIMITED, OVERLOADED).
                    let delay = backoff
                        .delay(failed)
                        .max(error.retry_after().unwrap_or_default());
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// True once the server turned SubmitActions down as UNIMPLEMENTED: this handle and its
    /// clones submit with unary SubmitAction calls from then on.
    pub fn on_unary_calls(&self) -> bool {
        self.unary.load(Ordering::Relaxed)
    }

    fn fall_back(&self, error: &Error) {
        if !self.unary.swap(true, Ordering::Relaxed) {
            tracing::warn!(%error, "the server has no SubmitActions; submitting with unary calls");
        }
    }

    /// Streams open with no request in flight (for tests and diagnostics).
    pub fn idle_streams(&self) -> usize {
        self.free.lock().map_or(0, |l| l.len())
    }

    /// One attempt on one stream: an idle one unless `fresh`. The stream goes back to the free
    /// set only after a whole answer; on any failure it is dropped, which closes it. The outer
    /// error is the stream's failure, the inner one the server's refusal of the request.
    async fn once(
        &self,
        request: pb::SubmitActionsRequest,
        fresh: bool,
    ) -> std::result::Result<Result<pb::SubmitActionResponse>, LaneFailed> {
        let idle = if fresh { None } else { self.take_idle() };
        let reused = idle.is_some();
        let failed = |error: Error| LaneFailed { error, reused };
        let mut lane = match idle {
            Some(lane) => lane,
            None => self.open().await.map_err(failed)?,
        };
        let request_id = request.request_id.clone();
        if lane.requests.send(request).await.is_err() {
            return Err(failed(Error::from(tonic::Status::unavailable(
                "the SubmitActions stream closed",
            ))));
        }
        let answer = lane
            .answers
            .message()
            .await
            .map_err(|status| failed(status.into()))?
            .ok_or_else(|| {
                failed(Error::from(tonic::Status::unavailable(
                    "the SubmitActions stream ended",
                )))
            })?;
        // The server may echo an empty id when it refuses one it will not echo (over-long).
        let echoed = answer.request_id == request_id
            || (answer.request_id.is_empty()
                && matches!(
                    answer.result,
                    Some(pb::submit_actions_response::Result::Rejected(_))
                ));
        if answer.index != lane.sent || !echoed {
            // Not the answer to this request: the stream cannot be trusted; drop it.
            return Err(failed(Error::MissingField(
                "SubmitActions",
                "an answer in request order",
            )));
        }
        lane.sent += 1;
        self.put_back(lane);
        Ok(match answer.result {
            Some(pb::submit_actions_response::Result::Accepted(done)) => Ok(done),
            Some(pb::submit_actions_response::Result::Rejected(r)) => {
                Err(RpcError::from_rejection(r).into())
            }
            None => Err(Error::MissingField("SubmitActions", "result")),
        })
    }

    /// An idle stream that has not visibly ended; ended ones are dropped on the way.
    fn take_idle(&self) -> Option<Lane> {
        let mut free = self.free.lock().ok()?;
        while let Some(mut lane) = free.pop() {
            if !lane.ended() {
                return Some(lane);
            }
        }
        None
    }

    /// Keeps `lane` for the next request, or closes it (by dropping it) when enough are idle.
    fn put_back(&self, lane: Lane) {
        if let Ok(mut l) = self.free.lock()
            && l.len() < self.keep_idle
        {
            l.push(lane);
        }
    }

    async fn open(&self) -> Result<Lane> {
        // One request in flight per stream, so the client never buffers more than one.
        let (tx, rx) = mpsc::channel(1);
        let answers = self
            .client
            .open_submit_actions(ReceiverStream::new(rx))
            .await?;
        Ok(Lane {
            requests: tx,
            answers,
            sent: 0,
        })
    }
}
