//! Submitting actions on SubmitActions streams instead of one unary call each.
//!
//! An [`ActionStream`] gives the same results and errors as [`Client::submit_action`], at a
//! lower cost per move on the server (no per-call headers, trailers or routing). The server
//! answers one request at a time per stream, so the handle keeps a small set of open streams:
//! a submit takes a free one (opening another when all are busy, e.g. a bot acting at several
//! tables at once) and puts it back once answered. A stream that breaks is dropped and the
//! request is sent again with the same `request_id` on a new one, with backoff while the server
//! is unreachable: the action is applied at most once however often the link drops.

use std::sync::{Arc, Mutex};

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

/// Submits actions on SubmitActions streams of one client (see the module docs). Cloning shares
/// the streams.
#[derive(Clone, Debug)]
pub struct ActionStream {
    client: Client,
    free: Arc<Mutex<Vec<Lane>>>,
}

impl ActionStream {
    pub(crate) fn new(client: Client) -> ActionStream {
        ActionStream {
            client,
            free: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// [`Client::submit_action`] on a stream: a fresh `request_id`, the same result, the same
    /// [`Error`] for a refusal (the stream's rejection carries the unary call's status).
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
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.once(request.clone()).await {
                Ok(done) => {
                    return Ok(Submitted {
                        seq: done.seq,
                        replayed: done.replayed,
                        attempts,
                    });
                }
                Err(error) => {
                    if !error.is_transient() || attempts >= backoff.attempts.max(1) {
                        return Err(error);
                    }
                    tracing::debug!(%error, attempts, "resending on a new stream");
                    tokio::time::sleep(backoff.delay(attempts)).await;
                }
            }
        }
    }

    /// Streams open with no request in flight (for tests and diagnostics).
    pub fn idle_streams(&self) -> usize {
        self.free.lock().map_or(0, |l| l.len())
    }

    /// One attempt on one stream. The stream goes back to the free set only after a whole
    /// answer; on any failure it is dropped, which closes it.
    async fn once(&self, request: pb::SubmitActionsRequest) -> Result<pb::SubmitActionResponse> {
        let free = self.free.lock().ok().and_then(|mut l| l.pop());
        let mut lane = match free {
            Some(lane) => lane,
            None => self.open().await?,
        };
        let request_id = request.request_id.clone();
        if lane.requests.send(request).await.is_err() {
            return Err(Error::from(tonic::Status::unavailable(
                "the SubmitActions stream closed",
            )));
        }
        let answer = lane.answers.message().await?.ok_or_else(|| {
            Error::from(tonic::Status::unavailable("the SubmitActions stream ended"))
        })?;
        if answer.index != lane.sent || answer.request_id != request_id {
            // Not the answer to this request: the stream cannot be trusted; drop it.
            return Err(Error::MissingField(
                "SubmitActions",
                "an answer in request order",
            ));
        }
        lane.sent += 1;
        if let Ok(mut l) = self.free.lock() {
            l.push(lane);
        }
        match answer.result {
            Some(pb::submit_actions_response::Result::Accepted(done)) => Ok(done),
            Some(pb::submit_actions_response::Result::Rejected(r)) => {
                Err(RpcError::from_rejection(r).into())
            }
            None => Err(Error::MissingField("SubmitActions", "result")),
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
