//! The server side of WatchTable and WatchBot: turns a watcher's channel into a gRPC stream,
//! projecting each item for its recipient in the stream's own task, with heartbeats while
//! idle and a clean end on shutdown.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bete_api::pb;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tokio_util::sync::WaitForCancellationFutureOwned;
use tonic::Status;

use crate::project;
use crate::status::ServerError;
use crate::table::{Outbound, WatchItem};

/// Which stream this is: how items and heartbeats are wrapped.
pub trait Shape: Send + 'static {
    type Msg: Send + 'static;
    /// `None` for items this stream does not carry.
    fn item(o: &Outbound, last_seq: &mut u64) -> Option<Self::Msg>;
    fn heartbeat(last_seq: u64) -> Self::Msg;
}

fn heartbeat(last_seq: u64) -> pb::Heartbeat {
    pb::Heartbeat {
        time: Some(project::timestamp(crate::now_ms())),
        last_seq,
    }
}

/// WatchTable.
#[derive(Debug)]
pub struct TableShape;

impl Shape for TableShape {
    type Msg = pb::WatchTableResponse;
    fn item(o: &Outbound, last_seq: &mut u64) -> Option<Self::Msg> {
        use pb::watch_table_response::Kind;
        let kind = match &o.item {
            WatchItem::Snapshot(s) => {
                *last_seq = s.seq;
                Kind::Snapshot(project::snapshot_to_pb(&o.meta, s))
            }
            WatchItem::Event(e, viewer) => {
                *last_seq = e.seq;
                Kind::Event(project::event_to_pb(&o.meta, e, *viewer))
            }
            WatchItem::Decision(_) | WatchItem::Seated(..) | WatchItem::End(_) => return None,
        };
        Some(pb::WatchTableResponse { kind: Some(kind) })
    }
    fn heartbeat(last_seq: u64) -> Self::Msg {
        pb::WatchTableResponse {
            kind: Some(pb::watch_table_response::Kind::Heartbeat(heartbeat(
                last_seq,
            ))),
        }
    }
}

/// WatchBot.
#[derive(Debug)]
pub struct BotShape;

impl Shape for BotShape {
    type Msg = pb::WatchBotResponse;
    fn item(o: &Outbound, _last_seq: &mut u64) -> Option<Self::Msg> {
        use pb::watch_bot_response::Kind;
        let kind = match &o.item {
            WatchItem::Snapshot(s) => Kind::Snapshot(project::snapshot_to_pb(&o.meta, s)),
            WatchItem::Event(e, viewer) => Kind::Event(project::event_to_pb(&o.meta, e, *viewer)),
            WatchItem::Decision(s) => Kind::Decision(pb::DecisionRequest {
                table_id: o.meta.id.clone(),
                seq: s.seq,
                view: Some(project::snapshot_to_pb(&o.meta, s)),
            }),
            WatchItem::Seated(seat, status) => Kind::Seated(pb::Seated {
                table_id: o.meta.id.clone(),
                seat: u32::from(*seat),
                table: Some(project::table_to_pb(status)),
            }),
            WatchItem::End(_) => return None,
        };
        Some(pb::WatchBotResponse {
            table_id: o.meta.id.clone(),
            kind: Some(kind),
        })
    }
    fn heartbeat(_: u64) -> Self::Msg {
        pb::WatchBotResponse {
            table_id: String::new(),
            kind: Some(pb::watch_bot_response::Kind::Heartbeat(heartbeat(0))),
        }
    }
}

/// A watcher's stream.
pub struct WatchStream<S: Shape> {
    rx: mpsc::Receiver<Outbound>,
    every: Duration,
    idle: Pin<Box<Sleep>>,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
    last_seq: u64,
    /// WatchBot: set by any table that found the stream too slow.
    cut: Option<Arc<AtomicBool>>,
    /// Runs when the stream is dropped (unregisters a WatchBot stream).
    on_drop: Option<Box<dyn FnOnce() + Send>>,
    done: bool,
    _shape: std::marker::PhantomData<fn() -> S>,
}

impl<S: Shape> std::fmt::Debug for WatchStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchStream")
            .field("last_seq", &self.last_seq)
            .finish_non_exhaustive()
    }
}

impl<S: Shape> WatchStream<S> {
    pub fn new(
        rx: mpsc::Receiver<Outbound>,
        every: Duration,
        shutdown: tokio_util::sync::CancellationToken,
        last_seq: u64,
        cut: Option<Arc<AtomicBool>>,
        on_drop: Option<Box<dyn FnOnce() + Send>>,
    ) -> Self {
        WatchStream {
            rx,
            every,
            idle: Box::pin(tokio::time::sleep(every)),
            shutdown: Box::pin(shutdown.cancelled_owned()),
            last_seq,
            cut,
            on_drop,
            done: false,
            _shape: std::marker::PhantomData,
        }
    }
}

impl<S: Shape> Drop for WatchStream<S> {
    fn drop(&mut self) {
        // Closed first, so whoever `on_drop` tells already sees the channel closed.
        self.rx.close();
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl<S: Shape> Stream for WatchStream<S> {
    type Item = Result<S::Msg, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if this.shutdown.as_mut().poll(cx).is_ready() {
            this.done = true;
            return Poll::Ready(Some(Err(ServerError::ShuttingDown.to_status())));
        }
        if let Some(cut) = &this.cut
            && cut.load(Ordering::Acquire)
        {
            // A table cut this shared stream: end now; the client resumes per table.
            this.done = true;
            let err = ServerError::WatcherTooSlow {
                table_id: String::new(),
                from_seq: 0,
            };
            return Poll::Ready(Some(Err(err.to_status())));
        }
        loop {
            match this.rx.poll_recv(cx) {
                Poll::Ready(Some(o)) => {
                    this.idle.as_mut().reset(Instant::now() + this.every);
                    if let WatchItem::End(err) = &o.item {
                        this.done = true;
                        return Poll::Ready(Some(Err(err.to_status())));
                    }
                    match S::item(&o, &mut this.last_seq) {
                        Some(msg) => return Poll::Ready(Some(Ok(msg))),
                        None => continue,
                    }
                }
                Poll::Ready(None) => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => break,
            }
        }
        if this.idle.as_mut().poll(cx).is_ready() {
            this.idle.as_mut().reset(Instant::now() + this.every);
            return Poll::Ready(Some(Ok(S::heartbeat(this.last_seq))));
        }
        Poll::Pending
    }
}
