//! Watchers as the actor sees them: bounded channels it never waits on.
//!
//! The actor only ever `try_send`s. When a watcher's channel is nearly full the actor puts one
//! last item in the slot it kept free (a `WATCHER_TOO_SLOW` end with the last delivered seq),
//! drops the watcher and counts it. So a slow reader never stalls a table.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bete_rules::Viewer;
use prost::bytes::Bytes;
use tokio::sync::mpsc;

use super::{Shared, Snapshot, TableEvent, TableMeta, TableStatus};
use bete_base::status::ServerError;

/// One item for a watcher, not yet projected (projection happens in the stream's own task).
#[derive(Clone, Debug)]
pub enum WatchItem {
    Snapshot(Box<Snapshot>),
    /// An event for one viewer (the watcher's seat at sending time).
    Event {
        event: Arc<TableEvent>,
        viewer: Viewer,
        /// The event's shared public encoding (`project::public_event_bytes`), set only when
        /// `viewer` sees nothing more than that; otherwise the stream projects it for `viewer`.
        shared: Option<Bytes>,
    },
    /// WatchBot only: the bot must act.
    Decision(Box<Snapshot>),
    /// WatchBot only: the bot holds this seat.
    Seated(u8, Box<TableStatus>),
    /// The stream ends with this status.
    End(ServerError),
}

/// An item with the table it belongs to.
#[derive(Clone, Debug)]
pub struct Outbound {
    pub meta: Arc<TableMeta>,
    pub item: WatchItem,
}

/// One WatchBot stream, shared by every table the bot sits at.
#[derive(Clone, Debug)]
pub struct BotStream {
    /// Unique per stream, so a table attaches it at most once.
    pub id: u64,
    pub tx: mpsc::Sender<Outbound>,
    /// Set when some table found the stream too slow: every table then lets go of it.
    pub cut: Arc<AtomicBool>,
    /// The tables following this stream, rung when it closes so each lets go at once.
    pub tables: Arc<Mutex<Vec<Weak<Shared>>>>,
    /// Set when a newer stream of the bot asked to be its only one (`exclusive`).
    pub replaced: bete_base::shutdown::Shutdown,
}

impl BotStream {
    pub fn new(id: u64, tx: mpsc::Sender<Outbound>) -> BotStream {
        BotStream {
            id,
            tx,
            cut: Arc::new(AtomicBool::new(false)),
            tables: Arc::new(Mutex::new(Vec::new())),
            replaced: bete_base::shutdown::Shutdown::new(),
        }
    }

    /// Ends this stream for a newer one of its bot: it ends with STREAM_REPLACED, and every
    /// table lets go of it as of a cut stream.
    pub fn replace(&self) {
        self.replaced.cancel();
        self.cut.store(true, Ordering::Release);
        BotStream::ring_closed(&self.tables);
    }

    /// Tell every table in `following` (a stream's `tables`) that the stream closed.
    pub fn ring_closed(following: &Mutex<Vec<Weak<Shared>>>) {
        let tables = following
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        for shared in tables.iter().filter_map(Weak::upgrade) {
            shared.watcher_left.notify_one();
        }
    }

    pub fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Acquire) || self.tx.is_closed()
    }
}

/// Where a watcher's items go.
#[derive(Debug)]
pub(super) enum SinkTx {
    /// WatchTable: one table, one channel.
    Table(mpsc::Sender<Outbound>),
    Bot(BotStream),
}

/// A watcher of one table.
#[derive(Debug)]
pub(super) struct Sink {
    pub bot: String,
    pub tx: SinkTx,
    /// The last seq put in the channel (the resume point if it is cut).
    pub last_seq: u64,
}

/// What happened to an offered item.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Offer {
    Sent,
    /// The watcher is gone (closed by its client, or cut now for being too slow).
    Gone {
        too_slow: bool,
    },
}

impl Sink {
    pub fn offer(&mut self, meta: &Arc<TableMeta>, item: WatchItem) -> Offer {
        let seq = match &item {
            WatchItem::Event { event, .. } => Some(event.seq),
            WatchItem::Snapshot(s) => Some(s.seq),
            _ => None,
        };
        let tx = match &self.tx {
            SinkTx::Table(tx) => tx,
            SinkTx::Bot(b) => {
                if b.is_cut() {
                    return Offer::Gone { too_slow: false };
                }
                &b.tx
            }
        };
        if tx.is_closed() {
            return Offer::Gone { too_slow: false };
        }
        // Keep the last slot for the end-of-stream status.
        if tx.capacity() <= 1 {
            let end = ServerError::WatcherTooSlow {
                table_id: meta.id.clone(),
                from_seq: self.last_seq,
            };
            let _ = tx.try_send(Outbound {
                meta: meta.clone(),
                item: WatchItem::End(end),
            });
            if let SinkTx::Bot(b) = &self.tx {
                b.cut.store(true, Ordering::Release);
            }
            return Offer::Gone { too_slow: true };
        }
        match tx.try_send(Outbound {
            meta: meta.clone(),
            item,
        }) {
            Ok(()) => {
                if let Some(s) = seq {
                    self.last_seq = s;
                }
                Offer::Sent
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Offer::Gone { too_slow: false },
            Err(mpsc::error::TrySendError::Full(_)) => {
                // Only a shared bot stream can fill between the check and the send.
                if let SinkTx::Bot(b) = &self.tx {
                    b.cut.store(true, Ordering::Release);
                }
                Offer::Gone { too_slow: true }
            }
        }
    }

    /// The client closed the stream, or a table cut it.
    pub fn is_gone(&self) -> bool {
        match &self.tx {
            SinkTx::Table(tx) => tx.is_closed(),
            SinkTx::Bot(b) => b.is_cut(),
        }
    }

    /// End the stream with a status (shutdown, match over for WatchTable).
    pub fn end(&self, meta: &Arc<TableMeta>, err: Option<ServerError>) {
        if let (SinkTx::Table(tx), Some(err)) = (&self.tx, err) {
            let _ = tx.try_send(Outbound {
                meta: meta.clone(),
                item: WatchItem::End(err),
            });
        }
    }
}
