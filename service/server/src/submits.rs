//! The server side of SubmitActions: many submits on one stream, each answered in order with
//! what SubmitAction would have answered.
//!
//! The stream is authenticated once, when it opens. Then one task per stream takes the requests
//! one at a time: the same gate and submit path as the unary call ([`Api::submit`]), the answer
//! sent before the next request is read. A refused request is answered with the rejection
//! `status.rs` builds from the unary call's status, and the stream goes on.
//!
//! What a stream may buffer is bounded: requests not yet read wait in HTTP/2 flow control (the
//! client cannot send past the stream's window), one request is in hand, and at most
//! [`ANSWERS_BUFFERED`] answers wait for the client to read them before the task stops reading.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use bete_api::pb;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status, Streaming};
use tracing::Instrument;

use prometheus_client::metrics::gauge::Gauge;

use crate::service::{Api, MAX_REQUEST_ID_CHARS};
use crate::store::BotRow;
use bete_base::metrics::Metrics;
use bete_base::status::ServerError;

/// Answers waiting for a slow client before the stream stops reading requests.
const ANSWERS_BUFFERED: usize = 8;

/// The answers of one SubmitActions stream: what its task sent, then the status it ended with
/// (none: OK). The status is read only once every answer before it has gone out.
#[derive(Debug)]
pub struct SubmitAnswers {
    answers: mpsc::Receiver<pb::SubmitActionsResponse>,
    end: Arc<Mutex<Option<Status>>>,
    done: bool,
}

impl Stream for SubmitAnswers {
    type Item = Result<pb::SubmitActionsResponse, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        match this.answers.poll_recv(cx) {
            Poll::Ready(Some(answer)) => Poll::Ready(Some(Ok(answer))),
            // Every sender is gone, so the task's `Answers` has written its status.
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(lock(&this.end).take().map(Err))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The task's end of the stream. However the task ends (a return, a panic, its future
/// dropped), dropping this writes the final status before the sender goes (fields drop after
/// `drop`), so a failed task never ends its stream with OK and requests unanswered.
struct Answers {
    tx: mpsc::Sender<pb::SubmitActionsResponse>,
    end: Arc<Mutex<Option<Status>>>,
    /// INTERNAL until [`serve`] ends and says how.
    status: Option<Status>,
}

impl Answers {
    /// How [`serve`] ended: the stream ends with this status (none: OK).
    fn end_with(&mut self, status: Option<Status>) {
        self.status = status;
    }
}

impl Drop for Answers {
    fn drop(&mut self) {
        *lock(&self.end) = self.status.take();
    }
}

/// The final-status slot; a panic while holding it cannot leave it half-written (it is one
/// `Option` swap), so a poisoned lock is still good.
fn lock(end: &Mutex<Option<Status>>) -> std::sync::MutexGuard<'_, Option<Status>> {
    end.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A stream task and its answers, joined by the channel and the final-status slot.
fn channel() -> (Answers, SubmitAnswers) {
    let (tx, rx) = mpsc::channel(ANSWERS_BUFFERED);
    let end = Arc::new(Mutex::new(None));
    let unexpected = ServerError::Internal("the SubmitActions stream failed".into()).to_status();
    (
        Answers {
            tx,
            end: end.clone(),
            status: Some(unexpected),
        },
        SubmitAnswers {
            answers: rx,
            end,
            done: false,
        },
    )
}

/// Opens a SubmitActions stream: refuses it while draining or without a known token (as a
/// unary call would be refused), else starts its task.
pub async fn open(
    api: Arc<Api>,
    request: Request<Streaming<pb::SubmitActionsRequest>>,
) -> Result<Response<SubmitAnswers>, Status> {
    api.call("SubmitActions", async {
        if api.tables.deps.shutdown.is_cancelled() {
            return Err(ServerError::ShuttingDown);
        }
        let bot = api
            .auth
            .authenticate(request.metadata(), crate::service::peer(&request))
            .await?;
        // A stream opened by a peer (see forward.rs) was counted at its edge.
        let edge = api.forwarded_by(request.metadata()).is_none();
        if edge {
            api.limits().check_call(&bot)?;
        }
        let permit = edge
            .then(|| api.limits().open_stream(&bot.id))
            .transpose()?;
        let (mut answers, stream) = channel();
        let api = api.clone();
        // Each request of the stream gets a trace of its own that links to the stream's call
        // (a stream lives for hours: one trace of all its moves would be unreadable).
        let opened = bete_base::trace::caller();
        tokio::spawn(async move {
            let _open = Open::count(&api.metrics);
            let _permit = permit;
            let (mut md, _, requests) = request.into_parts();
            // The stream's deadline is not a request's.
            md.remove("grpc-timeout");
            let status = serve(&api, &bot, &md, requests, &answers.tx, &opened).await;
            answers.end_with(status);
        });
        Ok(stream)
    })
    .await
}

/// The stream's task: until the client closes its side, goes away or the server drains.
/// Returns the status the stream ends with (none: OK).
async fn serve(
    api: &Api,
    bot: &BotRow,
    md: &tonic::metadata::MetadataMap,
    mut requests: Streaming<pb::SubmitActionsRequest>,
    answers: &mpsc::Sender<pb::SubmitActionsResponse>,
    opened: &tracing::Span,
) -> Option<Status> {
    // Made once, not per request (see `Shutdown::stopped`).
    let shutdown = api.tables.deps.shutdown.stopped();
    let revoked = api.auth.revocation(&bot.token_hash);
    let gone = answers.closed();
    tokio::pin!(shutdown, revoked, gone);
    let draining = || Some(ServerError::ShuttingDown.to_status());
    let mut index = 0u64;
    loop {
        let next = tokio::select! {
            biased;
            // Between requests: end the stream as the watch streams end (UNAVAILABLE).
            () = &mut shutdown => return draining(),
            // The token was rotated away: the stream ends as a new call with it would.
            () = &mut revoked => return Some(ServerError::TokenRevoked.to_status()),
            () = &mut gone => return None,
            m = requests.message() => m,
        };
        let req = match next {
            Ok(Some(req)) => req,
            // The client closed its side: every request is answered, end with OK.
            Ok(None) => return None,
            Err(status) => {
                // Over the transport's message limit: tonic refuses it before decoding, with a
                // bare OUT_OF_RANGE. The stream cannot go on past bytes it did not read, so it
                // ends, with what the unary call gets for the same bytes: the request-size
                // refusal and its ErrorInfo.
                let limit = api.config.max_request_bytes;
                if let Some(e) = bete_base::status::over_transport_limit(&status, limit) {
                    tracing::debug!(index, "SubmitActions request over the transport limit");
                    return Some(e.to_status());
                }
                // A protocol failure (an undecodable message, a broken body): the stream's
                // framing cannot be trusted any more. Logged by code only (no payload).
                tracing::debug!(code = ?status.code(), index, "SubmitActions stream failed");
                return Some(
                    ServerError::field(
                        "(request)",
                        format!("request {index} of the stream is not a SubmitActionsRequest"),
                    )
                    .to_status(),
                );
            }
        };
        let started = Instant::now();
        // Echoed only if it passes the unary check (≤ 64 characters): an answer waiting for a
        // slow reader must not hold a copy of whatever the client sent.
        let request_id = if req.request_id.chars().count() <= MAX_REQUEST_ID_CHARS {
            req.request_id.clone()
        } else {
            String::new()
        };
        let r = match api
            .gate_message(&req)
            .and_then(|()| api.limits().check_call(bot))
        {
            Ok(()) => {
                let span = tracing::debug_span!(
                    parent: None,
                    "submit",
                    otel.name = "SubmitActions.request",
                    index
                );
                span.follows_from(opened);
                // A table a peer plays: this request goes to it as a SubmitAction.
                let unary = unary(req);
                let idempotent = !unary.request_id.is_empty();
                let mut request = Request::from_parts(md.clone(), Default::default(), unary);
                request.extensions_mut().insert(crate::forward::Counted);
                api.here_or_owner(
                    request,
                    idempotent,
                    |r: Request<pb::SubmitActionRequest>| api.submit(bot, r.into_inner()),
                    |mut c, r| Box::pin(async move { c.submit_action(r).await }),
                )
                .instrument(span)
                .await
            }
            Err(e) => Err(e),
        };
        let result = match r {
            Ok(accepted) => {
                api.metrics
                    .observe_rpc("SubmitAction", tonic::Code::Ok, started);
                pb::submit_actions_response::Result::Accepted(accepted)
            }
            Err(e) => {
                tracing::debug!(code = ?e.code(), reason = e.reason(), index, "stream submit refused");
                api.metrics.observe_rpc("SubmitAction", e.code(), started);
                pb::submit_actions_response::Result::Rejected(e.to_rejection())
            }
        };
        let answer = pb::SubmitActionsResponse {
            index,
            request_id,
            result: Some(result),
        };
        // A client that stops reading must not hold the drain: the send gives way to shutdown
        // (the answer is lost then, but an accepted move is durable and its request_id replays).
        let sent = tokio::select! {
            biased;
            r = answers.send(answer) => r.is_ok(),
            () = &mut shutdown => return draining(),
        };
        if !sent {
            return None;
        }
        index += 1;
    }
}

/// Counts the stream in `bete_submit_streams_open` while its task lives, however it ends.
struct Open(Gauge);

impl Open {
    fn count(metrics: &Metrics) -> Open {
        metrics.submit_streams_open.inc();
        Open(metrics.submit_streams_open.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A stream request as the unary request it mirrors (the same fields, numbers and meaning).
fn unary(req: pb::SubmitActionsRequest) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        table_id: req.table_id,
        action: req.action,
        expected_seq: req.expected_seq,
        request_id: req.request_id,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use tokio_stream::StreamExt;

    use super::*;

    fn answer(index: u64) -> pb::SubmitActionsResponse {
        pb::SubmitActionsResponse {
            index,
            ..Default::default()
        }
    }

    /// A task that panics after answering once: the client gets that answer, then INTERNAL,
    /// never a clean end.
    #[tokio::test]
    async fn a_panicking_task_ends_the_stream_with_internal() {
        let (answers, mut stream) = channel();
        let task = tokio::spawn(async move {
            answers.tx.send(answer(0)).await.unwrap();
            panic!("the task fails");
        });
        assert!(task.await.unwrap_err().is_panic());
        assert_eq!(stream.next().await.unwrap().unwrap().index, 0);
        let end = stream.next().await.unwrap().unwrap_err();
        assert_eq!(end.code(), tonic::Code::Internal, "{end:?}");
        assert!(stream.next().await.is_none());
    }

    /// A task dropped before it says how it ended (e.g. the runtime going away): INTERNAL.
    #[tokio::test]
    async fn a_dropped_task_ends_the_stream_with_internal() {
        let (answers, mut stream) = channel();
        drop(answers);
        let end = stream.next().await.unwrap().unwrap_err();
        assert_eq!(end.code(), tonic::Code::Internal, "{end:?}");
    }

    /// The status the task ends with goes out after every answer it sent; a clean end is OK.
    #[tokio::test]
    async fn the_final_status_follows_the_answers() {
        let (mut answers, mut stream) = channel();
        answers.tx.send(answer(0)).await.unwrap();
        answers.tx.send(answer(1)).await.unwrap();
        answers.end_with(Some(ServerError::ShuttingDown.to_status()));
        drop(answers);
        assert_eq!(stream.next().await.unwrap().unwrap().index, 0);
        assert_eq!(stream.next().await.unwrap().unwrap().index, 1);
        let end = stream.next().await.unwrap().unwrap_err();
        assert_eq!(end.code(), tonic::Code::Unavailable);
        assert!(stream.next().await.is_none());

        let (mut answers, mut stream) = channel();
        answers.end_with(None);
        drop(answers);
        assert!(stream.next().await.is_none(), "a clean end is OK");
    }
}
