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

mod watch_bot;
mod watch_table;

pub(crate) use watch_bot::watch_bot_everywhere;
pub(crate) use watch_table::watch_table_elsewhere;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use bete_api::pb::table_service_client::TableServiceClient;
use sha2::{Digest, Sha256};
use tokio::time::Instant;
use tonic::metadata::{KeyRef, MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Response, Status};
use tonic_types::StatusExt;

use crate::service::Api;
use crate::store::PgStore;
use bete_base::status::{DOMAIN, ServerError};

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
        ttl + bete_cluster::pass_interval(ttl) + Duration::from_secs(2)
    }

    pub fn lease_ttl(&self) -> Duration {
        self.store.node().lease_ttl
    }

    /// The other live nodes, as (id, address), at most a pass old. Channels to addresses no
    /// live node has any more are dropped.
    pub async fn live_peers(&self) -> Result<Peers, ServerError> {
        let mut cached = self.peers.lock().await;
        let fresh = bete_cluster::pass_interval(self.lease_ttl());
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

/// Items buffered between a peer's stream and the merge, and out of the merge.
const PEER_BUFFER: usize = 1024;
