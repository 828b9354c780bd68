//! Any node serves any call: a call for a table a live peer plays is forwarded to that peer
//! (one hop), with the caller's metadata and remaining deadline, and its answer passed back.
//!
//! Peer traffic goes to the peer's advertised address, inside the cluster's network (the
//! Kubernetes NetworkPolicy admits only the nodes and the Service): plain h2c, or TLS when the
//! node serves TLS, the peer's certificate checked against `--peer-tls-name` and `--peer-ca`
//! (a peer that fails the check is unreachable, never trusted). A node trusts the mark
//! `x-bete-forwarded-by` only with the cluster's secret (`--cluster-secret`) beside it: the
//! mark means "already counted at the edge, do not forward again", so a public client must not
//! be able to set it. Without a secret a node forwards nothing and answers TABLE_ELSEWHERE.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bete_api::pb;
use bete_api::pb::table_service_client::TableServiceClient;
use prost::Message;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::metadata::{KeyRef, MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};
use tonic_types::StatusExt;

use crate::limits::StreamPermit;
use crate::service::Api;
use crate::status::{DOMAIN, ServerError};
use crate::store::BotRow;
use crate::store::PgStore;
use crate::stream::{BotShape, Frame, Frames, Shape, TableShape, WatchStream};
use crate::table::Command;

/// Names the node that forwarded a call; trusted only with [`SECRET`].
pub const FORWARDED_BY: &str = "x-bete-forwarded-by";
/// The cluster's shared secret, on every call between nodes.
pub const SECRET: &str = "x-bete-cluster-secret";

/// A peer that does not accept a connection in this time is taken as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// HTTP/2 pings on peer connections: a peer lost without a reset (a dead machine) is noticed
/// within these two, not after the kernel's TCP timeout.
const KEEPALIVE: Duration = Duration::from_secs(2);
/// Connections per peer: each carries at most the server's streams per connection
/// (`MAX_STREAMS_PER_CONNECTION`), and every bot's WatchBot holds one stream on each peer.
const CHANNELS_PER_PEER: usize = 8;
/// Over TLS, a peer's channels are made again after this long, reading the certificate files
/// again: a channel reconnects with the settings it was made with, so without it a node would
/// present its first certificate to a long-lived peer (under required client certificates)
/// until it expired. cert-manager renews 30 days before expiry; an hour is plenty. Calls and
/// streams under way keep their old channel until they end.
const TLS_POOL_AGE: Duration = Duration::from_secs(3600);
/// How often a caller waiting for a silent owner's table to move looks in the store again.
const LOOK_AGAIN: Duration = Duration::from_millis(200);

/// Live peers as (node id, address).
type Peers = Vec<(String, String)>;

/// The node's peers, as a client of them.
#[derive(Debug)]
pub struct Forwarder {
    node: String,
    secret: MetadataValue<tonic::metadata::Ascii>,
    secret_sha256: [u8; 32],
    store: PgStore,
    /// TLS to peers; `None`: h2c.
    tls: Option<crate::tls::PeerTls>,
    /// Lazily connected channels per peer address (each reconnects by itself), taken in turn,
    /// with when the pool was made (over TLS a pool is made again after [`TLS_POOL_AGE`]).
    channels: Mutex<HashMap<String, (Instant, Vec<Channel>)>>,
    turn: std::sync::atomic::AtomicUsize,
    /// The live peers as last read, and when: read at most once a pass for all the node's
    /// WatchBot streams.
    peers: tokio::sync::Mutex<Option<(Instant, Peers)>>,
}

/// Why a forwarded call did not come back with the owner's answer.
#[derive(Debug)]
pub(crate) enum Relay {
    /// The owner answered (its status, built by its status.rs).
    Answer(Status),
    /// No answer from the owner: it is gone or cannot be reached.
    Unreachable(Status),
}

/// The `Counted` mark of a request: its per-bot call rate was counted already (on a retry inside
/// this node, or at the edge node that forwarded it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counted;

impl Forwarder {
    /// `None` when the secret is not valid metadata (not visible ASCII).
    pub fn new(
        store: PgStore,
        secret: &str,
        tls: Option<crate::tls::PeerTls>,
    ) -> Option<Forwarder> {
        Some(Forwarder {
            node: store.node().id.clone(),
            secret: MetadataValue::try_from(secret).ok()?,
            secret_sha256: Sha256::digest(secret.as_bytes()).into(),
            store,
            tls,
            channels: Mutex::new(HashMap::new()),
            turn: std::sync::atomic::AtomicUsize::new(0),
            peers: tokio::sync::Mutex::new(None),
        })
    }

    pub fn node(&self) -> &str {
        &self.node
    }

    /// This node's own advertised address (a merged WatchBot fetches from it too).
    pub fn addr(&self) -> &str {
        &self.store.node().addr
    }

    /// The peer node that forwarded this call, if the mark is genuine (carries the secret).
    /// Hashes are compared, so the comparison's time tells nothing about the secret.
    pub fn forwarded_by<'a>(&self, md: &'a MetadataMap) -> Option<&'a str> {
        let by = md.get(FORWARDED_BY)?.to_str().ok()?;
        let secret = md.get(SECRET)?;
        let sha: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
        (sha == self.secret_sha256).then_some(by)
    }

    /// How long a call waits for a silent owner's table to move to a live node: a lease, the
    /// pass that claims it, and its replay.
    pub fn patience(&self) -> Duration {
        let ttl = self.store.node().lease_ttl;
        ttl + crate::cluster::pass_interval(ttl) + Duration::from_secs(2)
    }

    pub fn lease_ttl(&self) -> Duration {
        self.store.node().lease_ttl
    }

    /// The other live nodes, as (id, address), at most a pass old. Channels to addresses no
    /// live node has any more are dropped.
    pub async fn live_peers(&self) -> Result<Peers, ServerError> {
        let mut cached = self.peers.lock().await;
        let fresh = crate::cluster::pass_interval(self.lease_ttl());
        if let Some((at, peers)) = &*cached
            && at.elapsed() < fresh
        {
            return Ok(peers.clone());
        }
        let peers = self.store.live_peers().await?;
        if let Ok(mut channels) = self.channels.lock() {
            let own = &self.store.node().addr;
            channels.retain(|addr, _| addr == own || peers.iter().any(|(_, a)| a == addr));
        }
        *cached = Some((Instant::now(), peers.clone()));
        Ok(peers)
    }

    pub fn client(&self, addr: &str) -> Result<TableServiceClient<Channel>, ServerError> {
        let mut channels = self
            .channels
            .lock()
            .map_err(|_| ServerError::Internal("peer channels poisoned".into()))?;
        let turn = self.turn.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some((made, pool)) = channels.get(addr)
            && (self.tls.is_none() || made.elapsed() < TLS_POOL_AGE)
        {
            return Ok(TableServiceClient::new(pool[turn % pool.len()].clone()));
        }
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))
            .map_err(|e| ServerError::Internal(format!("peer address {addr:?}: {e}")))?;
        let endpoint = match &self.tls {
            None => endpoint,
            // Files read again for each new pool: a renewed certificate is presented.
            Some(tls) => tls
                .client_config()
                .map_err(|e| e.to_string())
                .and_then(|c| endpoint.tls_config(c).map_err(|e| e.to_string()))
                .map_err(|e| ServerError::Internal(format!("peer TLS: {e}")))?,
        };
        let endpoint = endpoint
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(KEEPALIVE)
            .keep_alive_timeout(KEEPALIVE)
            .keep_alive_while_idle(true);
        let pool: Vec<Channel> = (0..CHANNELS_PER_PEER)
            .map(|_| endpoint.connect_lazy())
            .collect();
        let channel = pool[turn % pool.len()].clone();
        channels.insert(addr.to_string(), (Instant::now(), pool));
        Ok(TableServiceClient::new(channel))
    }

    /// The caller's request as this node sends it on: the caller's metadata (token, trace
    /// context, request ids) without transport headers or any `x-bete-` mark it sent, this
    /// node's mark and the secret, and the caller's remaining deadline.
    pub fn request<M>(&self, md: &MetadataMap, msg: M, remaining: Option<Duration>) -> Request<M> {
        let mut out = md.clone();
        let drop: Vec<String> = out
            .keys()
            .map(|k| match k {
                KeyRef::Ascii(k) => k.as_str().to_string(),
                KeyRef::Binary(k) => k.as_str().to_string(),
            })
            .filter(|k| {
                k.starts_with("grpc-")
                    || k.starts_with("x-bete-")
                    || matches!(k.as_str(), "te" | "content-type" | "user-agent")
            })
            .collect();
        for k in drop {
            if k.ends_with("-bin") {
                out.remove_bin(k.as_str());
            } else {
                out.remove(k.as_str());
            }
        }
        if let Ok(v) = MetadataValue::try_from(self.node.as_str()) {
            out.insert(FORWARDED_BY, v);
        }
        out.insert(SECRET, self.secret.clone());
        let mut req = Request::from_parts(out, tonic::Extensions::default(), msg);
        if let Some(t) = remaining {
            req.set_timeout(t);
        }
        req
    }

    /// Sends the call to the owner at `addr` and waits for its answer.
    pub(crate) async fn relay<M, R, F>(
        &self,
        addr: &str,
        md: &MetadataMap,
        msg: M,
        remaining: Option<Duration>,
        send: &F,
    ) -> Result<Response<R>, Relay>
    where
        F: Fn(TableServiceClient<Channel>, Request<M>) -> Sent<R>,
    {
        let client = self
            .client(addr)
            .map_err(|e| Relay::Unreachable(Status::unavailable(e.to_string())))?;
        send(client, self.request(md, msg, remaining))
            .await
            .map_err(|s| {
                if from_a_node(&s) {
                    Relay::Answer(s)
                } else {
                    Relay::Unreachable(s)
                }
            })
    }
}

/// The call a relay sends (a method of the generated client, in a closure).
pub(crate) type Sent<R> =
    std::pin::Pin<Box<dyn Future<Output = Result<Response<R>, Status>> + Send>>;

/// Whether a status came from a node's handler (every one carries bete's ErrorInfo) rather
/// than from the transport (a refused connection, a reset, a timeout).
pub(crate) fn from_a_node(s: &Status) -> bool {
    s.get_error_details()
        .error_info()
        .is_some_and(|i| i.domain == DOMAIN)
}

/// The reason of a node's status.
pub(crate) fn reason(s: &Status) -> Option<String> {
    s.get_error_details()
        .error_info()
        .filter(|i| i.domain == DOMAIN)
        .map(|i| i.reason.clone())
}

/// The deadline a caller gave (`grpc-timeout`: digits and a unit), if any.
pub(crate) fn grpc_timeout(md: &MetadataMap) -> Option<Duration> {
    let v = md.get("grpc-timeout")?.to_str().ok()?;
    let (digits, unit) = v.split_at(v.len().checked_sub(1)?);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.saturating_mul(3600)),
        "M" => Duration::from_secs(n.saturating_mul(60)),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

impl Api {
    /// The forwarding node, if this call came from a live peer with the cluster's mark.
    pub(crate) fn forwarded_by<'a>(&self, md: &'a MetadataMap) -> Option<&'a str> {
        self.forward.as_ref()?.forwarded_by(md)
    }

    /// A unary call that names a table: served here (`local`), or, when a live peer plays the
    /// table, forwarded to it (`send`) — by the node the caller reached only, never again by
    /// the peer. `idempotent`: whether the request may be sent again after the owner went
    /// silent mid-call (a read, or a submit with a request_id, which the owner recognises):
    /// such a call waits for the table to move and goes on there; any other gets
    /// OWNER_UNREACHABLE, as nothing tells whether it was applied.
    pub(crate) async fn forwardable<Req, Resp, L, LF, F>(
        &self,
        method: &'static str,
        request: Request<Req>,
        idempotent: bool,
        local: L,
        send: F,
    ) -> Result<Response<Resp>, Status>
    where
        Req: prost::Message + Clone + Send + 'static,
        L: Fn(Request<Req>) -> LF,
        LF: Future<Output = Result<Resp, ServerError>>,
        F: Fn(TableServiceClient<Channel>, Request<Req>) -> Sent<Resp>,
    {
        self.call(method, self.here_or_owner(request, idempotent, local, send))
            .await
    }

    /// [`Api::forwardable`] without the RPC wrapper (a SubmitActions stream answers each of its
    /// requests with it).
    pub(crate) async fn here_or_owner<Req, Resp, L, LF, F>(
        &self,
        request: Request<Req>,
        idempotent: bool,
        local: L,
        send: F,
    ) -> Result<Resp, ServerError>
    where
        Req: prost::Message + Clone + Send + 'static,
        L: Fn(Request<Req>) -> LF,
        LF: Future<Output = Result<Resp, ServerError>>,
        F: Fn(TableServiceClient<Channel>, Request<Req>) -> Sent<Resp>,
    {
        let started = Instant::now();
        let deadline = grpc_timeout(request.metadata()).map(|t| started + t);
        let Some(fw) = self
            .forward
            .as_ref()
            .filter(|fw| fw.forwarded_by(request.metadata()).is_none())
        else {
            return local(request).await;
        };
        let (md, ext, msg) = request.into_parts();
        let mut r = local(Request::from_parts(md.clone(), ext, msg.clone())).await;
        let give_up = deadline.unwrap_or(started + fw.patience());
        loop {
            let (table, node, addr) = match &r {
                Err(ServerError::TableElsewhere { table, node, addr }) if !addr.is_empty() => {
                    (table.clone(), node.clone(), addr.clone())
                }
                _ => return r,
            };
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            match fw.relay(&addr, &md, msg.clone(), remaining, &send).await {
                Ok(resp) => return Ok(resp.into_inner()),
                // The table moved on from that node too: look it up again.
                Err(Relay::Answer(s)) if reason(&s).as_deref() == Some("TABLE_ELSEWHERE") => {}
                Err(Relay::Answer(s)) => {
                    return Err(ServerError::Relayed {
                        code: s.code() as i32,
                        message: s.message().to_string(),
                        details: s.details().to_vec(),
                    });
                }
                Err(Relay::Unreachable(s)) => {
                    tracing::debug!(table = %table, node = %node, code = ?s.code(), "owner unreachable");
                    if !idempotent || Instant::now() + LOOK_AGAIN >= give_up {
                        return Err(ServerError::OwnerUnreachable {
                            table,
                            node,
                            addr,
                            retry_after: fw.lease_ttl(),
                        });
                    }
                }
            }
            if Instant::now() + LOOK_AGAIN >= give_up {
                return r;
            }
            tokio::time::sleep(LOOK_AGAIN).await;
            // Where is it played now? (Claimed here, if its owner's lease lapsed.)
            let mut again =
                Request::from_parts(md.clone(), tonic::Extensions::default(), msg.clone());
            again.extensions_mut().insert(Counted);
            r = local(again).await;
        }
    }
}

/// What a merged WatchBot stream has sent per table, so a table heard from two nodes (while it
/// moves) reaches the bot once: events and snapshots by seq, decisions by seq, `Seated` once
/// per seat taken.
#[derive(Debug, Default)]
struct Seen {
    /// Per table, the seq of the last event or snapshot sent.
    last: HashMap<String, u64>,
    /// Per table, the seq of the last decision sent.
    decided: HashMap<String, u64>,
    /// The seats announced and not left since: the node a table moves to announces them
    /// again, which is no news; a seat left (its SeatLeft sent) and taken again is.
    seated: HashSet<(String, u32)>,
    /// Tables whose `Seated` was just sent as news (a join, or the stream's first word of the
    /// table): the snapshot that follows starts the bot's picture of the table, and goes out
    /// as it is rather than being caught up.
    fresh: HashSet<String>,
}

impl Seen {
    fn admit(&mut self, table: &str, kind: &pb::watch_bot_response::Kind) -> bool {
        use pb::watch_bot_response::Kind;
        let last = self.last.get(table).copied();
        let seq = match kind {
            Kind::Event(e) => e.seq,
            Kind::Snapshot(v) => v.seq,
            Kind::Decision(d) => {
                let stale = last.is_some_and(|l| d.seq < l)
                    || self.decided.get(table).is_some_and(|s| d.seq <= *s);
                if !stale {
                    self.decided.insert(table.to_string(), d.seq);
                }
                return !stale;
            }
            Kind::Seated(s) => {
                let news = self.seated.insert((table.to_string(), s.seat));
                if news {
                    self.fresh.insert(table.to_string());
                }
                return news;
            }
            Kind::Heartbeat(_) => return true,
            // A peer stream that was cut is opened again by the merge, from the seqs sent.
            Kind::Resync(_) => return false,
        };
        if last.is_some_and(|l| seq <= l) {
            return false;
        }
        self.last.insert(table.to_string(), seq);
        self.fresh.remove(table);
        if let Kind::Event(pb::Event {
            body: Some(pb::event::Body::SeatLeft(left)),
            ..
        }) = kind
        {
            self.seated.remove(&(table.to_string(), left.seat));
        }
        true
    }

    /// For a snapshot of `table` at `seq`: the events to fetch in its place, as (the last seq
    /// sent, the snapshot's), when the bot already follows the table (no `Seated` news just
    /// before it) and it skips events that fit a resume.
    fn behind(&self, table: &str, seq: u64) -> Option<(u64, u64)> {
        if self.fresh.contains(table) {
            return None;
        }
        let last = *self.last.get(table)?;
        (seq > last && seq - last <= CATCH_UP_MAX).then_some((last, seq))
    }
}

/// A frame as a message, to look at: a frame of this node's own stream may be shared or
/// pre-encoded bytes. `None`: not decodable (sent on as it is).
fn decoded(frame: &Frame<pb::WatchBotResponse>) -> Option<Cow<'_, pb::WatchBotResponse>> {
    match frame {
        Frame::Msg(m) => Some(Cow::Borrowed(m)),
        Frame::Shared { table, event } => pb::Event::decode(event.clone()).ok().map(|e| {
            Cow::Owned(BotShape::event_msg(
                table.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
                e,
            ))
        }),
        Frame::Encoded(bytes) => pb::WatchBotResponse::decode(&bytes[..])
            .ok()
            .map(Cow::Owned),
    }
}

/// A bot's WatchBot stream on the node it reached: this node's tables (`here`) and, through an
/// internal WatchBot on every live peer (with the bot's token and this node's mark, so the peer
/// sends only the tables it plays), the tables peers play. The peer set follows the cluster's
/// live nodes (every pass); a peer stream that ends is opened again with `from_seq` = the last
/// seq sent per table, and whatever two nodes both send while a table moves is sent once.
///
/// A node that takes a table over attaches the streams it already holds to it afresh, with a
/// snapshot: it cannot know which events the bot has. When such a snapshot is past the last
/// seq the bot was sent, the events in between (committed by the old owner but not yet
/// relayed when it died) are fetched from the new owner with WatchTable `from_seq` and sent
/// instead, and the table's other messages wait for them: the bot's stream resumes without a
/// gap or a duplicate.
pub(crate) fn watch_bot_everywhere(
    fw: Arc<Forwarder>,
    md: MetadataMap,
    here: WatchStream<BotShape>,
    from_seq: HashMap<String, u64>,
) -> Frames<BotShape> {
    let (tx, rx) = mpsc::channel(PEER_BUFFER);
    tokio::spawn(merge(fw, md, here, from_seq, tx));
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// Items buffered between a peer's stream and the merge, and out of the merge.
const PEER_BUFFER: usize = 1024;
/// The most events a merge fetches in place of a snapshot; beyond, the snapshot stands, as on
/// a single node, which resumes a WatchBot stream with events only when they fit its buffer.
const CATCH_UP_MAX: u64 = (crate::service::BOT_STREAM_BUFFER / 2) as u64;
/// How long fetching them may take before the snapshot is sent after all. The table's
/// messages wait meanwhile (a decision among them eats into the bot's deadline), and the node
/// asked has just sent the snapshot, so it answers at once or not at all.
const CATCH_UP_WAIT: Duration = Duration::from_secs(2);

type Out = mpsc::Sender<Result<Frame<pb::WatchBotResponse>, Status>>;

/// The events fetched for a table in place of its snapshot (`None`: they could not be had).
type Caught = (String, Option<Vec<pb::Event>>);

/// A table catching up: the snapshot it replaces, and the table's messages that came
/// meanwhile, in order, each with the node that sent it.
type CatchingUp = (BotFrame, Vec<(BotFrame, String)>);
type BotFrame = Frame<pb::WatchBotResponse>;

/// The merge's state: what was sent, and the tables catching up.
struct Merge {
    fw: Arc<Forwarder>,
    md: MetadataMap,
    seen: Seen,
    /// Per table catching up (see [`CatchingUp`]).
    catching: HashMap<String, CatchingUp>,
    caught: mpsc::Sender<Caught>,
    tx: Out,
}

/// The bot went away.
struct Gone;

impl Merge {
    async fn send(&self, frame: Frame<pb::WatchBotResponse>) -> Result<(), Gone> {
        self.tx.send(Ok(frame)).await.map_err(|_| Gone)
    }

    /// Sends a frame that node `from` sent on to the bot, once, in its table's order.
    async fn offer(&mut self, frame: Frame<pb::WatchBotResponse>, from: &str) -> Result<(), Gone> {
        use pb::watch_bot_response::Kind;
        let Some(msg) = decoded(&frame) else {
            return self.send(frame).await;
        };
        let table = msg.table_id.clone();
        let Some(kind) = &msg.kind else {
            return self.send(frame).await;
        };
        if matches!(kind, Kind::Heartbeat(_)) {
            return self.send(frame).await;
        }
        let behind = match kind {
            Kind::Snapshot(v) => self.seen.behind(&table, v.seq),
            _ => None,
        };
        let holding = self.catching.contains_key(&table);
        let admit = !holding && behind.is_none() && self.seen.admit(&table, kind);
        drop(msg);
        if let Some((_, held)) = self.catching.get_mut(&table) {
            held.push((frame, from.to_string()));
            return Ok(());
        }
        if let Some((last, to)) = behind {
            tokio::spawn(catch_up(
                self.fw.clone(),
                from.to_string(),
                self.md.clone(),
                table.clone(),
                (last, to),
                self.caught.clone(),
            ));
            self.catching.insert(table, (frame, Vec::new()));
            return Ok(());
        }
        if admit {
            self.send(frame).await?;
        }
        Ok(())
    }

    /// A table's catch-up is over: its events (or, failing them, its snapshot), then what
    /// waited for them.
    async fn caught_up(&mut self, (table, events): Caught) -> Result<(), Gone> {
        use pb::watch_bot_response::Kind;
        let Some((snapshot, held)) = self.catching.remove(&table) else {
            return Ok(());
        };
        match events {
            Some(events) => {
                tracing::debug!(table = %table, events = events.len(), "WatchBot caught up");
                for e in events {
                    let kind = Kind::Event(e);
                    if self.seen.admit(&table, &kind) {
                        let msg = pb::WatchBotResponse {
                            table_id: table.clone(),
                            kind: Some(kind),
                        };
                        self.send(Frame::Msg(msg)).await?;
                    }
                }
            }
            None => {
                tracing::info!(table = %table, "WatchBot could not fetch the events a moved table's snapshot skips; the snapshot is sent");
                let admit = decoded(&snapshot)
                    .and_then(|m| m.kind.as_ref().map(|k| self.seen.admit(&table, k)))
                    .unwrap_or(true);
                if admit {
                    self.send(snapshot).await?;
                }
            }
        }
        for (frame, from) in held {
            self.offer(frame, &from).await?;
        }
        Ok(())
    }
}

/// WatchTable of `table` on the node at `addr` (the bot's own view there) from seq `last`:
/// the events up to `to`, contiguous, within [`CATCH_UP_WAIT`].
async fn catch_up(
    fw: Arc<Forwarder>,
    addr: String,
    md: MetadataMap,
    table: String,
    (last, to): (u64, u64),
    out: mpsc::Sender<Caught>,
) {
    use pb::watch_table_response::Kind;
    let fetch = async {
        let mut client = fw.client(&addr).ok()?;
        let req = pb::WatchTableRequest {
            table_id: table.clone(),
            from_seq: Some(last),
        };
        let mut stream = client
            .watch_table(fw.request(&md, req, None))
            .await
            .ok()?
            .into_inner();
        let mut events: Vec<pb::Event> = Vec::new();
        while let Some(m) = stream.message().await.ok()? {
            match m.kind {
                Some(Kind::Event(e)) if e.seq == last + 1 + events.len() as u64 => {
                    let done = e.seq >= to;
                    events.push(e);
                    if done {
                        return Some(events);
                    }
                }
                Some(Kind::Heartbeat(_)) => {}
                // A snapshot, or an event out of order: the gap cannot be filled exactly.
                _ => return None,
            }
        }
        None
    };
    let events = tokio::time::timeout(CATCH_UP_WAIT, fetch)
        .await
        .ok()
        .flatten();
    let _ = out.send((table, events)).await;
}

async fn merge(
    fw: Arc<Forwarder>,
    md: MetadataMap,
    mut here: WatchStream<BotShape>,
    from_seq: HashMap<String, u64>,
    tx: Out,
) {
    let (peer_tx, mut peer_rx) = mpsc::channel::<(pb::WatchBotResponse, Arc<str>)>(PEER_BUFFER);
    let (caught_tx, mut caught_rx) = mpsc::channel::<Caught>(16);
    let own: String = fw.addr().to_string();
    let mut m = Merge {
        fw: fw.clone(),
        md: md.clone(),
        seen: Seen {
            last: from_seq,
            ..Seen::default()
        },
        catching: HashMap::new(),
        caught: caught_tx,
        tx,
    };
    let stop = CancellationToken::new();
    let _stop = stop.clone().drop_guard();
    let mut pipes: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut tick = tokio::time::interval(crate::cluster::pass_interval(fw.lease_ttl()));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let sent = tokio::select! {
            () = m.tx.closed() => return,
            item = here.next() => match item {
                None => return,
                Some(Err(s)) => {
                    let _ = m.tx.send(Err(s)).await;
                    return;
                }
                Some(Ok(frame)) => m.offer(frame, &own).await,
            },
            Some((msg, from)) = peer_rx.recv() => {
                // This node's own stream keeps the heartbeat.
                if matches!(msg.kind, Some(pb::watch_bot_response::Kind::Heartbeat(_)) | None) {
                    continue;
                }
                m.offer(Frame::Msg(msg), &from).await
            }
            Some(caught) = caught_rx.recv() => m.caught_up(caught).await,
            _ = tick.tick() => {
                let peers = match fw.live_peers().await {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot list live peers");
                        continue;
                    }
                };
                pipes.retain(|node, pipe| {
                    let keep = !pipe.is_finished() && peers.iter().any(|(n, _)| n == node);
                    if !keep {
                        pipe.abort();
                    }
                    keep
                });
                for (node, addr) in peers {
                    if pipes.contains_key(&node) {
                        continue;
                    }
                    let from_seq = m.seen.last.clone();
                    let pipe = pipe_bot(fw.clone(), addr, md.clone(), from_seq, peer_tx.clone(), stop.clone());
                    pipes.insert(node, tokio::spawn(pipe));
                }
                Ok(())
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

/// One internal WatchBot on a peer, until it ends (the merge opens it again while the peer is
/// live).
async fn pipe_bot(
    fw: Arc<Forwarder>,
    addr: String,
    md: MetadataMap,
    from_seq: HashMap<String, u64>,
    out: mpsc::Sender<(pb::WatchBotResponse, Arc<str>)>,
    stop: CancellationToken,
) {
    let from: Arc<str> = Arc::from(addr.as_str());
    let Ok(mut client) = fw.client(&addr) else {
        return;
    };
    let req = fw.request(
        &md,
        pb::WatchBotRequest {
            from_seq,
            ..Default::default()
        },
        None,
    );
    let mut stream = match client.watch_bot(req).await {
        Ok(r) => r.into_inner(),
        Err(s) => {
            tracing::debug!(peer = %addr, code = ?s.code(), "peer WatchBot refused");
            return;
        }
    };
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            m = stream.message() => match m {
                Ok(Some(m)) => {
                    if out.send((m, from.clone())).await.is_err() {
                        return;
                    }
                }
                _ => return,
            },
        }
    }
}

/// WatchTable of a table a peer plays: the owner's stream, opened with the caller's token (the
/// owner builds the caller's view: a seat sees its own cards only), piped to the caller. When
/// the owner's stream ends because the table moved or the owner died, the table is looked up
/// again (claimed here if its owner's lease lapsed) and the stream resumes there from the last
/// seq sent: no gap, no duplicate, and the caller's stream goes on.
pub(crate) fn watch_table_elsewhere(
    api: Arc<Api>,
    md: MetadataMap,
    bot: Arc<BotRow>,
    table: String,
    from_seq: Option<u64>,
    addr: String,
    permit: Option<StreamPermit>,
) -> Frames<TableShape> {
    let (tx, rx) = mpsc::channel(PEER_BUFFER);
    tokio::spawn(async move {
        let _permit = permit;
        let stopped = api.tables.deps.shutdown.stopped();
        tokio::select! {
            () = proxy_table(&api, &md, &bot, &table, from_seq, addr, &tx) => {}
            () = stopped => {
                let _ = tx.send(Err(ServerError::ShuttingDown.to_status())).await;
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

type TableOut = mpsc::Sender<Result<Frame<pb::WatchTableResponse>, Status>>;

/// How a peer's WatchTable stream ended.
enum Piped {
    /// The caller went away.
    CallerGone,
    /// For good: the owner's end (OK, or an error of the caller's own) is the caller's.
    Ended(Option<Status>),
    /// The table moved on or its owner is gone: look it up again.
    Lost,
}

async fn proxy_table(
    api: &Arc<Api>,
    md: &MetadataMap,
    bot: &BotRow,
    table: &str,
    mut last: Option<u64>,
    mut addr: String,
    tx: &TableOut,
) {
    let Some(fw) = api.forward.clone() else {
        return;
    };
    let mut lost_since: Option<Instant> = None;
    loop {
        match pipe_table(&fw, &addr, md, table, &mut last, &mut lost_since, tx).await {
            Piped::CallerGone => return,
            Piped::Ended(end) => {
                if let Some(s) = end {
                    let _ = tx.send(Err(s)).await;
                }
                return;
            }
            Piped::Lost => {}
        }
        let since = *lost_since.get_or_insert_with(Instant::now);
        if since.elapsed() > fw.patience() {
            let _ = tx
                .send(Err(ServerError::OwnerUnreachable {
                    table: table.to_string(),
                    node: String::new(),
                    addr,
                    retry_after: fw.lease_ttl(),
                }
                .to_status()))
                .await;
            return;
        }
        tokio::time::sleep(LOOK_AGAIN).await;
        if tx.is_closed() {
            return;
        }
        let watched = api
            .tables
            .call(table, |reply| Command::Watch {
                bot: bot.id.clone(),
                from_seq: last,
                listed: false,
                reply,
            })
            .await
            .and_then(|r| r);
        match watched {
            // The table is played here now: this node's stream, from the last seq sent.
            Ok((rx, shared)) => {
                let mut here = api.table_stream(bot, rx, shared, last, None);
                while let Some(item) = here.next().await {
                    if tx.send(item).await.is_err() {
                        return;
                    }
                }
                return;
            }
            Err(ServerError::TableElsewhere { addr: a, .. }) if !a.is_empty() => addr = a,
            Err(e) => {
                let _ = tx.send(Err(e.to_status())).await;
                return;
            }
        }
    }
}

async fn pipe_table(
    fw: &Forwarder,
    addr: &str,
    md: &MetadataMap,
    table: &str,
    last: &mut Option<u64>,
    lost_since: &mut Option<Instant>,
    tx: &TableOut,
) -> Piped {
    use pb::watch_table_response::Kind;
    let Ok(mut client) = fw.client(addr) else {
        return Piped::Lost;
    };
    let req = pb::WatchTableRequest {
        table_id: table.to_string(),
        from_seq: *last,
    };
    let opened = tokio::select! {
        r = client.watch_table(fw.request(md, req, None)) => r,
        () = tx.closed() => return Piped::CallerGone,
    };
    let mut stream = match opened {
        Ok(r) => r.into_inner(),
        Err(s) => return lost_or_ended(s),
    };
    loop {
        let m = tokio::select! {
            m = stream.message() => m,
            () = tx.closed() => return Piped::CallerGone,
        };
        let msg = match m {
            Ok(Some(msg)) => msg,
            Ok(None) => return Piped::Ended(None),
            Err(s) => return lost_or_ended(s),
        };
        *lost_since = None;
        let seq = match &msg.kind {
            Some(Kind::Event(e)) => Some(e.seq),
            Some(Kind::Snapshot(v)) => Some(v.seq),
            _ => None,
        };
        if let Some(seq) = seq {
            // Sent already (by the previous owner).
            if last.is_some_and(|l| seq <= l) {
                continue;
            }
            *last = Some(seq);
        }
        if tx.send(Ok(Frame::Msg(msg))).await.is_err() {
            return Piped::CallerGone;
        }
    }
}

/// A peer stream's failure: the table moving on (or its owner draining or gone) is looked up
/// again; any other failure is the caller's (a revoked token, a bad from_seq, too slow).
fn lost_or_ended(s: Status) -> Piped {
    match reason(&s).as_deref() {
        None | Some("TABLE_ELSEWHERE" | "SHUTTING_DOWN" | "STORE_UNAVAILABLE") => Piped::Lost,
        Some(_) => Piped::Ended(Some(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::watch_bot_response::Kind;

    fn seated(seat: u32) -> Kind {
        Kind::Seated(pb::Seated {
            table_id: "t".into(),
            seat,
            table: None,
        })
    }

    fn snapshot(seq: u64) -> Kind {
        Kind::Snapshot(pb::SeatView {
            seq,
            ..Default::default()
        })
    }

    fn event(seq: u64, body: Option<pb::event::Body>) -> Kind {
        Kind::Event(pb::Event {
            seq,
            body,
            ..Default::default()
        })
    }

    /// A table's first words pass; the same seat announced again by a new owner does not, and
    /// its snapshot past what was sent is caught up; a seat left and taken again is news, and
    /// its snapshot goes out as it is.
    #[test]
    fn a_moved_table_is_caught_up_and_a_rejoined_one_starts_afresh() {
        let mut seen = Seen::default();
        assert!(seen.admit("t", &seated(0)));
        assert_eq!(seen.behind("t", 5), None, "the first snapshot");
        assert!(seen.admit("t", &snapshot(5)));
        assert!(seen.admit("t", &event(6, None)));
        assert!(seen.admit("t", &event(7, None)));
        // The table moves: the new owner announces the seat again, with a snapshot at 9.
        assert!(!seen.admit("t", &seated(0)), "no news");
        assert_eq!(seen.behind("t", 9), Some((7, 9)));
        assert_eq!(seen.behind("t", 7), None, "nothing skipped");
        assert_eq!(
            seen.behind("t", 7 + CATCH_UP_MAX + 1),
            None,
            "too many to resume"
        );
        // The bot leaves its seat and takes it again later.
        let left = pb::event::Body::SeatLeft(pb::SeatLeft {
            seat: 0,
            bot_id: "b".into(),
        });
        assert!(seen.admit("t", &event(8, Some(left))));
        assert!(seen.admit("t", &seated(0)), "a seat taken again is news");
        assert_eq!(seen.behind("t", 12), None, "its snapshot starts afresh");
        assert!(seen.admit("t", &snapshot(12)));
        assert_eq!(
            seen.behind("t", 14),
            Some((12, 14)),
            "and later moves catch up again"
        );
    }
}
