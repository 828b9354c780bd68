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

use std::sync::Arc;
use std::time::Instant;

use bete_api::pb;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use prometheus_client::metrics::gauge::Gauge;

use crate::metrics::Metrics;
use crate::service::Api;
use crate::status::ServerError;
use crate::store::BotRow;

/// Answers waiting for a slow client before the stream stops reading requests.
const ANSWERS_BUFFERED: usize = 8;

/// The longest request_id echoed back (the unary SubmitAction refuses longer ones).
const REQUEST_ID_CHARS: usize = 64;

/// The answers of one SubmitActions stream.
pub type SubmitAnswers = ReceiverStream<Result<pb::SubmitActionsResponse, Status>>;

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
        let bot = api.auth.authenticate(request.metadata()).await?;
        let (tx, rx) = mpsc::channel(ANSWERS_BUFFERED);
        tokio::spawn(serve(api.clone(), bot, request.into_inner(), tx));
        Ok(ReceiverStream::new(rx))
    })
    .await
}

/// The stream's task: until the client closes its side, goes away or the server drains.
async fn serve(
    api: Arc<Api>,
    bot: Arc<BotRow>,
    mut requests: Streaming<pb::SubmitActionsRequest>,
    answers: mpsc::Sender<Result<pb::SubmitActionsResponse, Status>>,
) {
    let _open = Open::count(&api.metrics);
    // Made once, not per request: each registers a waiter (under a lock) when first polled.
    let shutdown = api.tables.deps.shutdown.clone().cancelled_owned();
    let gone = answers.closed();
    tokio::pin!(shutdown, gone);
    let mut index = 0u64;
    loop {
        let next = tokio::select! {
            biased;
            () = &mut shutdown => {
                // Between requests: end the stream as the watch streams end (UNAVAILABLE).
                let _ = answers.send(Err(ServerError::ShuttingDown.to_status())).await;
                return;
            }
            () = &mut gone => return,
            m = requests.message() => m,
        };
        let req = match next {
            Ok(Some(req)) => req,
            // The client closed its side: every request is answered, end with OK.
            Ok(None) => return,
            Err(status) => {
                // A protocol failure (an undecodable message, a broken body): the stream's
                // framing cannot be trusted any more. Logged by code only (no payload).
                tracing::debug!(code = ?status.code(), index, "SubmitActions stream failed");
                let _ = answers
                    .send(Err(ServerError::field(
                        "(request)",
                        format!("request {index} of the stream is not a SubmitActionsRequest"),
                    )
                    .to_status()))
                    .await;
                return;
            }
        };
        let started = Instant::now();
        // Echoed only if it passes the unary check (≤ 64 characters): an answer waiting for a
        // slow reader must not hold a copy of whatever the client sent.
        let request_id = if req.request_id.chars().count() <= REQUEST_ID_CHARS {
            req.request_id.clone()
        } else {
            String::new()
        };
        let r = match api.gate_message(&req) {
            Ok(()) => api.submit(&bot, unary(req)).await,
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
        if answers.send(Ok(answer)).await.is_err() {
            return;
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
