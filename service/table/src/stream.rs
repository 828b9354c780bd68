//! The server side of WatchTable and WatchBot: turns a watcher's channel into a gRPC stream,
//! projecting each item for its recipient in the stream's own task, with heartbeats while
//! idle and a clean end on shutdown.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bete_api::pb;
use bete_rules::Viewer;
use prost::Message;
use prost::bytes::{BufMut, Bytes};
use prost::encoding::WireType;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::project;
use crate::{Outbound, TableEvent, TableMeta, WatchItem};
use bete_base::shutdown::Stopped;
use bete_base::status::ServerError;

/// One message of a watch stream, as [`FrameCodec`] writes it.
#[derive(Debug)]
pub enum Frame<M> {
    /// Built for this recipient: snapshots, decisions, heartbeats, private projections.
    Msg(M),
    /// An event in its shared public encoding (`project::public_event_bytes`): the response
    /// is written around those bytes, exactly as prost would write `Msg` with that event.
    Shared {
        /// WatchBot: its `table_id`.
        table: Option<Arc<TableMeta>>,
        event: Bytes,
    },
    /// The whole response, already encoded for this recipient (`project::decision_bytes`).
    Encoded(Vec<u8>),
}

/// Which stream this is: how items and heartbeats are wrapped.
pub trait Shape: Send + 'static {
    type Request: Message + Default + Send + 'static;
    type Msg: Message + Default + Send + 'static;
    /// The field number of `event` in `Msg`'s oneof.
    const EVENT_FIELD: u32;
    /// `None` for items this stream does not carry.
    fn item(o: Outbound, last_seq: &mut u64) -> Option<Frame<Self::Msg>>;
    fn heartbeat(last_seq: u64) -> Self::Msg;
    /// `Msg` carrying `event` (what a [`Frame::Shared`] decodes to).
    fn event_msg(table_id: String, event: pb::Event) -> Self::Msg;
}

fn heartbeat(last_seq: u64) -> pb::Heartbeat {
    pb::Heartbeat {
        time: Some(project::timestamp(bete_store::clock::now_ms())),
        last_seq,
    }
}

/// An event for its recipient: the shared bytes when it sees only those, else its own projection.
fn event_frame<S: Shape>(
    meta: Arc<TableMeta>,
    event: &TableEvent,
    viewer: Viewer,
    shared: Option<Bytes>,
    table_id: bool,
) -> Frame<S::Msg> {
    match shared {
        Some(event) => Frame::Shared {
            table: table_id.then_some(meta),
            event,
        },
        None => {
            let ev = project::event_to_pb(&meta, event, viewer);
            let id = if table_id {
                meta.id.clone()
            } else {
                String::new()
            };
            Frame::Msg(S::event_msg(id, ev))
        }
    }
}

/// WatchTable.
#[derive(Debug)]
pub struct TableShape;

impl Shape for TableShape {
    type Request = pb::WatchTableRequest;
    type Msg = pb::WatchTableResponse;
    const EVENT_FIELD: u32 = 2;
    fn item(o: Outbound, last_seq: &mut u64) -> Option<Frame<Self::Msg>> {
        use pb::watch_table_response::Kind;
        let kind = match o.item {
            WatchItem::Snapshot(s) => {
                *last_seq = s.seq;
                Kind::Snapshot(project::snapshot_to_pb(&o.meta, &s))
            }
            WatchItem::Event {
                event,
                viewer,
                shared,
            } => {
                *last_seq = event.seq;
                return Some(event_frame::<Self>(o.meta, &event, viewer, shared, false));
            }
            WatchItem::Decision(_) | WatchItem::Seated(..) | WatchItem::End(_) => return None,
        };
        Some(Frame::Msg(pb::WatchTableResponse { kind: Some(kind) }))
    }
    fn heartbeat(last_seq: u64) -> Self::Msg {
        pb::WatchTableResponse {
            kind: Some(pb::watch_table_response::Kind::Heartbeat(heartbeat(
                last_seq,
            ))),
        }
    }
    fn event_msg(_table_id: String, event: pb::Event) -> Self::Msg {
        pb::WatchTableResponse {
            kind: Some(pb::watch_table_response::Kind::Event(event)),
        }
    }
}

/// WatchBot.
#[derive(Debug)]
pub struct BotShape;

impl Shape for BotShape {
    type Request = pb::WatchBotRequest;
    type Msg = pb::WatchBotResponse;
    const EVENT_FIELD: u32 = 4;
    fn item(o: Outbound, _last_seq: &mut u64) -> Option<Frame<Self::Msg>> {
        use pb::watch_bot_response::Kind;
        let kind = match o.item {
            WatchItem::Snapshot(s) => Kind::Snapshot(project::snapshot_to_pb(&o.meta, &s)),
            WatchItem::Event {
                event,
                viewer,
                shared,
            } => return Some(event_frame::<Self>(o.meta, &event, viewer, shared, true)),
            WatchItem::Decision(s) => {
                if let Some(bytes) = project::decision_bytes(&o.meta, &s) {
                    return Some(Frame::Encoded(bytes));
                }
                Kind::Decision(pb::DecisionRequest {
                    table_id: o.meta.id.clone(),
                    seq: s.seq,
                    view: Some(project::snapshot_to_pb(&o.meta, &s)),
                })
            }
            WatchItem::Seated(seat, status) => Kind::Seated(pb::Seated {
                table_id: o.meta.id.clone(),
                seat: u32::from(seat),
                table: Some(project::table_to_pb(&status)),
            }),
            WatchItem::End(_) => return None,
        };
        Some(Frame::Msg(pb::WatchBotResponse {
            table_id: o.meta.id.clone(),
            kind: Some(kind),
        }))
    }
    fn heartbeat(_: u64) -> Self::Msg {
        pb::WatchBotResponse {
            table_id: String::new(),
            kind: Some(pb::watch_bot_response::Kind::Heartbeat(heartbeat(0))),
        }
    }
    fn event_msg(table_id: String, event: pb::Event) -> Self::Msg {
        pb::WatchBotResponse {
            table_id,
            kind: Some(pb::watch_bot_response::Kind::Event(event)),
        }
    }
}

/// The codec of WatchTable and WatchBot on the server: prost for requests and for [`Frame::Msg`],
/// and for [`Frame::Shared`] the same bytes prost would write (`table_id` = 1 first, then the
/// event as a length-delimited field), so the wire format is the schema's.
#[derive(Debug)]
pub struct FrameCodec<S>(std::marker::PhantomData<fn() -> S>);

impl<S> Default for FrameCodec<S> {
    fn default() -> Self {
        FrameCodec(std::marker::PhantomData)
    }
}

impl<S: Shape> Codec for FrameCodec<S> {
    type Encode = Frame<S::Msg>;
    type Decode = S::Request;
    type Encoder = FrameEncoder<S>;
    type Decoder = RequestDecoder<S>;
    fn encoder(&mut self) -> Self::Encoder {
        FrameEncoder(std::marker::PhantomData)
    }
    fn decoder(&mut self) -> Self::Decoder {
        RequestDecoder(std::marker::PhantomData)
    }
}

/// The request, decoded by prost as the generated service would.
#[derive(Debug)]
pub struct RequestDecoder<S>(std::marker::PhantomData<fn() -> S>);

impl<S: Shape> Decoder for RequestDecoder<S> {
    type Item = S::Request;
    type Error = Status;
    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<S::Request>, Status> {
        S::Request::decode(buf)
            .map(Some)
            .map_err(|e| Status::internal(e.to_string()))
    }
}

/// See [`FrameCodec`].
#[derive(Debug)]
pub struct FrameEncoder<S>(std::marker::PhantomData<fn() -> S>);

impl<S: Shape> Encoder for FrameEncoder<S> {
    type Item = Frame<S::Msg>;
    type Error = Status;
    fn encode(&mut self, item: Self::Item, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        encode_frame::<S>(item, buf).map_err(|e| Status::internal(format!("encoding: {e}")))
    }
}

/// Writes `frame` as its response message (see [`FrameCodec`]).
fn encode_frame<S: Shape>(
    frame: Frame<S::Msg>,
    buf: &mut impl BufMut,
) -> Result<(), prost::EncodeError> {
    match frame {
        Frame::Msg(m) => m.encode(buf),
        Frame::Shared { table, event } => {
            if let Some(meta) = table.filter(|m| !m.id.is_empty()) {
                prost::encoding::string::encode(1, &meta.id, buf);
            }
            prost::encoding::encode_key(S::EVENT_FIELD, WireType::LengthDelimited, buf);
            prost::encoding::encode_varint(event.len() as u64, buf);
            buf.put_slice(&event);
            Ok(())
        }
        Frame::Encoded(bytes) => {
            buf.put_slice(&bytes);
            Ok(())
        }
    }
}

impl<M: Message + Default> Frame<M> {
    /// The message this frame stands for (decoding shared bytes: for callers of the generated
    /// service trait, which expects messages, not for the serving path).
    pub fn into_msg<S: Shape<Msg = M>>(self) -> Result<M, Status> {
        match self {
            Frame::Msg(m) => Ok(m),
            Frame::Shared { table, event } => {
                let ev = pb::Event::decode(event)
                    .map_err(|e| Status::internal(format!("shared event: {e}")))?;
                Ok(S::event_msg(
                    table.map(|m| m.id.clone()).unwrap_or_default(),
                    ev,
                ))
            }
            Frame::Encoded(bytes) => M::decode(&bytes[..])
                .map_err(|e| Status::internal(format!("encoded response: {e}"))),
        }
    }
}

/// A watch stream as served: this node's [`WatchStream`], or one that also carries (or only
/// relays) what peers of a cluster send (forward.rs).
pub type Frames<S> =
    Pin<Box<dyn Stream<Item = Result<Frame<<S as Shape>::Msg>, Status>> + Send + 'static>>;

/// A watch stream as the generated service trait wants it: messages rather than frames.
pub struct MsgStream<S: Shape>(pub Frames<S>);

impl<S: Shape> std::fmt::Debug for MsgStream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MsgStream")
    }
}

impl<S: Shape> Stream for MsgStream<S> {
    type Item = Result<S::Msg, Status>;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.get_mut().0)
            .poll_next(cx)
            .map(|o| o.map(|r| r.and_then(Frame::into_msg::<S>)))
    }
}

/// A watcher's stream.
pub struct WatchStream<S: Shape> {
    rx: mpsc::Receiver<Outbound>,
    every: Duration,
    /// Fires at the latest `every` after the last item; see `poll_next`.
    idle: Pin<Box<Sleep>>,
    /// When the last item went out: the heartbeat waits for `every` of quiet after it.
    last_item: Instant,
    shutdown: Stopped,
    /// Fires when the token the stream was opened with is revoked (none for the anonymous).
    revoked: Option<Stopped>,
    /// WatchBot: fires when a newer stream of the bot asked to be its only one.
    replaced: Option<Stopped>,
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
        shutdown: Stopped,
        last_seq: u64,
        cut: Option<Arc<AtomicBool>>,
        on_drop: Option<Box<dyn FnOnce() + Send>>,
    ) -> Self {
        WatchStream {
            rx,
            every,
            idle: Box::pin(tokio::time::sleep(every)),
            last_item: Instant::now(),
            shutdown,
            revoked: None,
            replaced: None,
            last_seq,
            cut,
            on_drop,
            done: false,
            _shape: std::marker::PhantomData,
        }
    }
}

impl<S: Shape> WatchStream<S> {
    /// Ends the stream with TOKEN_REVOKED when `revoked` fires (see `Auth::revocation`).
    pub fn revocable(mut self, revoked: Stopped) -> Self {
        self.revoked = Some(revoked);
        self
    }

    /// Ends the stream with STREAM_REPLACED when `replaced` fires (WatchBot's `exclusive`).
    pub fn replaceable(mut self, replaced: Stopped) -> Self {
        self.replaced = Some(replaced);
        self
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
    type Item = Result<Frame<S::Msg>, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if Pin::new(&mut this.shutdown).poll(cx).is_ready() {
            this.done = true;
            return Poll::Ready(Some(Err(ServerError::ShuttingDown.to_status())));
        }
        if let Some(revoked) = &mut this.revoked
            && Pin::new(revoked).poll(cx).is_ready()
        {
            this.done = true;
            return Poll::Ready(Some(Err(ServerError::TokenRevoked.to_status())));
        }
        // Before `cut`: a replaced stream is cut too, but the caller must hear why.
        if let Some(replaced) = &mut this.replaced
            && Pin::new(replaced).poll(cx).is_ready()
        {
            this.done = true;
            return Poll::Ready(Some(Err(ServerError::StreamReplaced.to_status())));
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
                    // Only noted: resetting the timer for every item moved it in the timer wheel
                    // each time; it is set again only when it fires (below).
                    this.last_item = Instant::now();
                    if let WatchItem::End(err) = &o.item {
                        this.done = true;
                        return Poll::Ready(Some(Err(err.to_status())));
                    }
                    match S::item(o, &mut this.last_seq) {
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
        while this.idle.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            let quiet_until = this.last_item + this.every;
            if quiet_until > now {
                // Items went out since the timer was set: wait for the rest of the quiet time
                // (polled again at once, so that the timer holds this task's waker).
                this.idle.as_mut().reset(quiet_until);
                continue;
            }
            this.idle.as_mut().reset(now + this.every);
            return Poll::Ready(Some(Ok(Frame::Msg(S::heartbeat(this.last_seq)))));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Arc<TableMeta> {
        let ruleset = bete_rules::RulesetId::Bete;
        Arc::new(TableMeta {
            id: "t_0123456789abcdef".into(),
            ruleset,
            seats: 5,
            config: bete_rules::Config::from_json(ruleset, 5, &Default::default()).unwrap(),
            seed: bete_rules::Seed([7; 32]),
            first_dealer: 0,
            deadline_ms: 30_000,
            visibility: bete_store::Visibility::Listed,
            created_by: "b_1".into(),
            created_at_ms: 1,
            seed_chosen: false,
            ladder: None,
        })
    }

    fn event() -> pb::Event {
        pb::Event {
            seq: 300,
            table_id: "t_0123456789abcdef".into(),
            time: Some(project::timestamp(1_700_000_000_123)),
            auto: false,
            body: Some(pb::event::Body::CardPlayed(pb::CardPlayed {
                seat: 3,
                card: "TH".into(),
            })),
        }
    }

    fn written<S: Shape>(frame: Frame<S::Msg>) -> Vec<u8> {
        let mut buf = Vec::new();
        encode_frame::<S>(frame, &mut buf).unwrap();
        buf
    }

    /// A decision goes out as the bytes prost writes for the `DecisionRequest` the message path
    /// builds (the view of a seat to act, with its deadline); a snapshot without a game still
    /// takes the message path.
    #[test]
    fn a_decision_is_written_as_prost_writes_the_response() {
        let m = meta();
        let setup = bete_rules::Setup {
            ruleset: m.ruleset,
            config: m.config.clone(),
            seats: m.seats,
            first_dealer: bete_rules::Seat(0),
            decks: bete_rules::Decks::Seed(m.seed),
        };
        let (game, _) = bete_rules::Game::new(setup).unwrap();
        let seat = game.to_act().unwrap();
        let snap = crate::Snapshot {
            seq: 41,
            viewer: Viewer::Seat(seat),
            view: Some(game.view(Viewer::Seat(seat))),
            deadline_ms: Some(1_700_000_000_123),
        };
        let want = pb::WatchBotResponse {
            table_id: m.id.clone(),
            kind: Some(pb::watch_bot_response::Kind::Decision(
                pb::DecisionRequest {
                    table_id: m.id.clone(),
                    seq: 41,
                    view: Some(project::snapshot_to_pb(&m, &snap)),
                },
            )),
        };
        assert!(!want.encode_to_vec().is_empty());
        let item = |snap| Outbound {
            meta: m.clone(),
            item: WatchItem::Decision(Box::new(snap)),
        };
        let frame = BotShape::item(item(snap), &mut 0).unwrap();
        assert!(matches!(frame, Frame::Encoded(_)));
        assert_eq!(written::<BotShape>(frame), want.encode_to_vec());
        let waiting = crate::Snapshot {
            seq: 0,
            viewer: Viewer::Seat(bete_rules::Seat(1)),
            view: None,
            deadline_ms: None,
        };
        assert!(matches!(
            BotShape::item(item(waiting), &mut 0),
            Some(Frame::Msg(_))
        ));
    }

    /// The shared encoding goes out byte for byte as prost writes the same response, so clients
    /// see the schema's wire format.
    #[test]
    fn a_shared_event_is_written_as_prost_writes_the_response() {
        let bytes = Bytes::from(event().encode_to_vec());
        let bot = written::<BotShape>(Frame::Shared {
            table: Some(meta()),
            event: bytes.clone(),
        });
        let want = BotShape::event_msg(meta().id.clone(), event());
        assert_eq!(bot, want.encode_to_vec());
        assert_eq!(pb::WatchBotResponse::decode(&bot[..]).unwrap(), want);

        let table = written::<TableShape>(Frame::Shared {
            table: None,
            event: bytes.clone(),
        });
        let want = TableShape::event_msg(String::new(), event());
        assert_eq!(table, want.encode_to_vec());

        let back = Frame::<pb::WatchBotResponse>::Shared {
            table: Some(meta()),
            event: bytes,
        }
        .into_msg::<BotShape>()
        .unwrap();
        assert_eq!(back, BotShape::event_msg(meta().id.clone(), event()));
    }
}
