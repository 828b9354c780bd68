//! A table's event stream that resumes by itself after a dropped link: [`TableWatch`].

use super::Client;
use crate::error::{Error, Result};
use bete_api::pb;
use std::time::Duration;

impl Client {
    /// Follows a table from a fresh snapshot (`from_seq` None) or after event `from_seq`,
    /// reconnecting with backoff whenever the link drops.
    pub fn watch_table(&self, table_id: &str, from_seq: Option<u64>) -> TableWatch {
        TableWatch {
            client: self.clone(),
            table_id: table_id.into(),
            last_seq: from_seq,
            stream: None,
            failed: 0,
            ended: false,
            idle_timeout: Duration::from_secs(45),
        }
    }
}

/// One item of a [`TableWatch`].
#[derive(Clone, Debug)]
pub enum WatchItem {
    /// The viewer's whole view; the first item unless the watch started from a sequence number,
    /// and again after a resume that could not continue from the last event.
    Snapshot(pb::SeatView),
    /// The next event, in sequence order, never repeated.
    Event(pb::Event),
    /// The table is quiet; `last_seq` is the table's latest sequence number.
    Heartbeat(pb::Heartbeat),
    /// The link dropped and the watch continues after event `from_seq` (for status lines).
    Resumed { from_seq: Option<u64> },
}

/// A WatchTable stream that resumes from the last sequence number after a dropped link, so
/// the caller sees every event exactly once. Ends after MatchEnded.
#[derive(Debug)]
pub struct TableWatch {
    client: Client,
    table_id: String,
    last_seq: Option<u64>,
    stream: Option<tonic::Streaming<pb::WatchTableResponse>>,
    failed: u32,
    ended: bool,
    idle_timeout: Duration,
}

impl TableWatch {
    /// The sequence number of the last event or snapshot delivered.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// Treat the link as dead after this long without any message (heartbeats included).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// The next item, or `None` after the match ended. Errors only for failures a retry cannot
    /// fix (unknown table, private table, bad token) or after the backoff's attempts are spent.
    pub async fn next(&mut self) -> Result<Option<WatchItem>> {
        loop {
            if self.ended {
                return Ok(None);
            }
            let Some(stream) = self.stream.as_mut() else {
                match self
                    .client
                    .open_watch_table(&self.table_id, self.last_seq)
                    .await
                {
                    Ok(stream) => {
                        self.stream = Some(stream);
                        if self.failed > 0 {
                            self.failed = 0;
                            return Ok(Some(WatchItem::Resumed {
                                from_seq: self.last_seq,
                            }));
                        }
                    }
                    Err(error) => self.recover(error).await?,
                }
                continue;
            };
            let message = match tokio::time::timeout(self.idle_timeout, stream.message()).await {
                Ok(message) => message,
                Err(_) => Err(tonic::Status::unavailable(
                    "no message within the idle timeout",
                )),
            };
            match message {
                Ok(Some(pb::WatchTableResponse { kind: Some(kind) })) => {
                    use pb::watch_table_response::Kind;
                    match kind {
                        Kind::Snapshot(view) => {
                            self.last_seq = Some(view.seq);
                            self.ended = view.match_over;
                            return Ok(Some(WatchItem::Snapshot(view)));
                        }
                        Kind::Event(event) => {
                            // A resumed stream starts after last_seq; anything older is a duplicate.
                            if self.last_seq.is_some_and(|last| event.seq <= last) {
                                continue;
                            }
                            self.last_seq = Some(event.seq);
                            if matches!(event.body, Some(pb::event::Body::MatchEnded(_))) {
                                self.ended = true;
                            }
                            return Ok(Some(WatchItem::Event(event)));
                        }
                        Kind::Heartbeat(beat) => return Ok(Some(WatchItem::Heartbeat(beat))),
                        Kind::Resync(resync) => {
                            tracing::debug!(from_seq = resync.from_seq, reason = %resync.reason, "resync");
                            self.last_seq = Some(resync.from_seq);
                            self.stream = None;
                            self.failed = 1;
                        }
                    }
                }
                Ok(Some(pb::WatchTableResponse { kind: None })) => continue,
                Ok(None) => {
                    // The server ends a stream only after MatchEnded or when it shuts down.
                    self.stream = None;
                    self.recover(Error::from(tonic::Status::unavailable(
                        "stream ended before the match did",
                    )))
                    .await?;
                }
                Err(status) => {
                    self.stream = None;
                    self.recover(status.into()).await?;
                }
            }
        }
    }

    /// Decides whether a failure is worth a reconnect, and waits the backoff if so.
    async fn recover(&mut self, error: Error) -> Result<()> {
        use pb::ErrorReason as R;
        match error.reason() {
            Some(R::FromSeqOutOfRange) => {
                // The server no longer keeps those events: start over from a snapshot.
                self.last_seq = None;
            }
            Some(R::WatcherTooSlow) => {
                if let Error::Rpc(e) = &error
                    && let Some(from) = e.seq_metadata("from_seq")
                {
                    self.last_seq = Some(from);
                }
            }
            _ if error.is_transient() => {}
            _ => return Err(error),
        }
        self.failed += 1;
        if self.failed >= self.client.backoff.attempts.max(1) {
            return Err(error);
        }
        tracing::debug!(%error, failed = self.failed, "watch dropped; resuming");
        tokio::time::sleep(self.client.backoff.delay(self.failed)).await;
        Ok(())
    }
}
