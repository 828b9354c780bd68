//! Prometheus metrics (prometheus-client), served as text on `/metrics` of the metrics port.
//!
//! Labels are bounded sets only (RPC method, status code): never table or bot ids.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RpcLabels {
    pub method: &'static str,
    pub code: &'static str,
}

fn latency_histogram() -> Histogram {
    // 100 µs .. ~3.3 s
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

/// The outcome of a certificate reload (tls.rs): `ok` or `failed`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    pub result: &'static str,
}

/// What became of a search house bot's decision: `answered` (its search's move was stored),
/// `late` (its deadline passed first: the safe action and a strike), `no_core` (every core was
/// searching: the heuristic played it), `stale` (the table had moved on: dropped).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SearchLabels {
    pub outcome: &'static str,
}

/// A listener (`grpc`, `web`) and why a connection was refused (`cap`: the listener's cap;
/// `address`: the address's share of it).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ConnLabels {
    pub listener: &'static str,
    pub reason: &'static str,
}

/// A listener: `grpc` or `web`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ListenerLabels {
    pub listener: &'static str,
}

type LatencyFamily = Family<RpcLabels, Histogram, fn() -> Histogram>;

/// The outcome of a lease renewal (scale-out): `ok` or `failed`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: &'static str,
}

fn claim_histogram() -> Histogram {
    // 1 ms .. ~33 s: a claimed table is replayed from its log before it plays again.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// Every metric of the server.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub rpcs: Family<RpcLabels, Counter>,
    pub rpc_latency: LatencyFamily,
    /// Tables whose match is being played.
    pub tables_active: Gauge,
    /// Seats held by registered bots at unfinished tables.
    pub seats: Gauge,
    /// Table actors in memory (loaded tables, finished ones until they unload).
    pub tables_loaded: Gauge,
    /// Waiting tables nobody joined, kept as store rows without an actor.
    pub tables_waiting_stored: Gauge,
    pub table_handles: Gauge,
    /// Open WatchTable and WatchBot attachments.
    pub watchers: Gauge,
    /// Open SubmitActions streams (each holds a task and up to 8 buffered answers).
    pub submit_streams_open: Gauge,
    pub moves: Counter,
    pub auto_moves: Counter,
    pub watchers_dropped: Counter,
    /// Certificate and key files read again after a change, by outcome (`ok`, `failed`).
    pub tls_reloads: Family<ReloadLabels, Counter>,
    /// TLS handshakes that failed or did not finish before the preface deadline.
    pub tls_handshake_failures: Counter,
    /// Lease renewals of this node (scale-out), by outcome (`ok`, `failed`).
    pub lease_renewals: Family<ResultLabels, Counter>,
    /// Unfinished tables this node claimed and rebuilt from the store: from a lapsed or
    /// released node, or its own after a restart.
    pub tables_claimed: Counter,
    /// Tables another node claimed from this one (it was paused or cut off past its lease).
    pub tables_lost: Counter,
    /// Tables this node released on its way out (SIGTERM).
    pub tables_released: Counter,
    /// From a claim to the table playing here again (replayed from its log).
    pub claim_to_playing: Histogram,
    /// Nodes with a live lease, as this node last saw them (scale-out; 1 on SQLite).
    pub nodes_live: Gauge,
    /// 1 while this node schedules the ladders (always on SQLite).
    pub ladder_leader: Gauge,
    /// How far this node's clock is corrected to PostgreSQL's (0 on SQLite): see `clock.rs`.
    pub clock_correction: Gauge<f64, AtomicU64>,
    /// Search house bots' decisions, by outcome.
    pub house_searches: Family<SearchLabels, Counter>,
    /// What the gRPC health service says of the server as a whole (SERVING until the drain),
    /// for `GET /healthz` on this port: Kubernetes' gRPC probes cannot speak TLS, so a server
    /// whose API is on TLS is probed here.
    pub serving: std::sync::atomic::AtomicBool,
    /// Connections closed at once on arrival, by listener and reason (`cap`, `address`).
    pub connections_refused: Family<ConnLabels, Counter>,
    /// Open connections by listener.
    pub connections_open: Family<ListenerLabels, Gauge>,
    /// Connections closed after a while without a call in progress (HTTP/2: GOAWAY), or after
    /// their HTTP/1.1 request limit, by listener.
    pub connections_retired: Family<ListenerLabels, Counter>,
    /// Refusals held back before they were sent (an address refused faster than
    /// `--rate-refusals-per-address`: edge.rs, `Tarpit`).
    pub refusals_delayed: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("bete");
        let rpcs = Family::<RpcLabels, Counter>::default();
        let rpc_latency: LatencyFamily =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        let tables_active = Gauge::default();
        let seats = Gauge::default();
        let tables_loaded = Gauge::default();
        let tables_waiting_stored = Gauge::default();
        let table_handles = Gauge::default();
        registry.register(
            "table_handles",
            "Table actors the registry holds a handle to (each is dropped as its actor stops: \
             after unloading, a finished table keeps nothing in memory)",
            table_handles.clone(),
        );
        registry.register(
            "tables_loaded",
            "Table actors in memory (unfinished tables a call or a start loaded, finished ones \
             until they unload)",
            tables_loaded.clone(),
        );
        registry.register(
            "tables_waiting_stored",
            "Waiting tables nobody joined, kept as store rows without an actor until a call \
             needs one",
            tables_waiting_stored.clone(),
        );
        let watchers = Gauge::default();
        let submit_streams_open = Gauge::default();
        let moves = Counter::default();
        let auto_moves = Counter::default();
        let watchers_dropped = Counter::default();
        let tls_reloads = Family::<ReloadLabels, Counter>::default();
        let tls_handshake_failures = Counter::default();
        let lease_renewals = Family::<ResultLabels, Counter>::default();
        // Both outcomes from the start, so a rate over them exists before the first failure.
        for result in ["ok", "failed"] {
            let _ = lease_renewals.get_or_create(&ResultLabels { result });
        }
        let tables_claimed = Counter::default();
        let tables_lost = Counter::default();
        let tables_released = Counter::default();
        let claim_to_playing = claim_histogram();
        let nodes_live = Gauge::default();
        let ladder_leader = Gauge::default();
        let clock_correction = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "lease_renewals",
            "Renewals of this node's lease in PostgreSQL, by result (scale-out)",
            lease_renewals.clone(),
        );
        registry.register(
            "tables_claimed",
            "Unfinished tables this node claimed and rebuilt from the store (from a lapsed or \
             released node, or its own after a restart)",
            tables_claimed.clone(),
        );
        registry.register(
            "tables_lost",
            "Tables another node claimed from this one (paused or cut off past its lease)",
            tables_lost.clone(),
        );
        registry.register(
            "tables_released",
            "Tables this node released to its peers when it stopped",
            tables_released.clone(),
        );
        registry.register(
            "claim_to_playing_seconds",
            "From claiming a table to playing it here (its log replayed)",
            claim_to_playing.clone(),
        );
        registry.register(
            "nodes_live",
            "Nodes with a live lease as this node last saw them (1 on SQLite)",
            nodes_live.clone(),
        );
        registry.register(
            "ladder_leader",
            "1 while this node schedules the ladders (the one node on SQLite)",
            ladder_leader.clone(),
        );
        registry.register(
            "clock_correction_seconds",
            "How far this node corrects its wall clock to PostgreSQL's (cluster time minus the \
             node's; 0 on SQLite)",
            clock_correction.clone(),
        );
        let house_searches = Family::<SearchLabels, Counter>::default();
        registry.register(
            "house_searches",
            "Decisions of search house bots by outcome: answered, late (deadline passed: safe \
             action and strike), no_core (every core searching: the heuristic played), stale",
            house_searches.clone(),
        );
        registry.register(
            "tls_certificate_reloads",
            "Reloads of the TLS certificate and key after their files changed, by result \
             (a failed one keeps the certificate in use)",
            tls_reloads.clone(),
        );
        registry.register(
            "tls_handshake_failures",
            "TLS handshakes that failed or missed the preface deadline",
            tls_handshake_failures.clone(),
        );
        registry.register(
            "rpc_requests",
            "gRPC calls by method and status code",
            rpcs.clone(),
        );
        registry.register(
            "rpc_duration_seconds",
            "gRPC call latency (streams: time to the first response) by method and code",
            rpc_latency.clone(),
        );
        registry.register(
            "tables_active",
            "Tables whose match is being played",
            tables_active.clone(),
        );
        registry.register(
            "seats_occupied",
            "Seats held by registered bots at unfinished tables",
            seats.clone(),
        );
        registry.register(
            "watchers",
            "Open event-stream attachments to tables",
            watchers.clone(),
        );
        registry.register(
            "submit_streams_open",
            "Open SubmitActions streams",
            submit_streams_open.clone(),
        );
        registry.register(
            "moves",
            "Actions applied (by bots, house bots and deadlines)",
            moves.clone(),
        );
        registry.register(
            "auto_moves",
            "Actions the server played for seats whose deadline passed",
            auto_moves.clone(),
        );
        registry.register(
            "watchers_dropped_for_lag",
            "Watchers cut with WATCHER_TOO_SLOW because they could not keep up",
            watchers_dropped.clone(),
        );
        let connections_refused = Family::<ConnLabels, Counter>::default();
        let connections_open = Family::<ListenerLabels, Gauge>::default();
        let connections_retired = Family::<ListenerLabels, Counter>::default();
        let refusals_delayed = Counter::default();
        registry.register(
            "refusals_delayed",
            "RESOURCE_EXHAUSTED answers held back a while because their address was refused \
             faster than its rate of refusals (a client that ignores RetryInfo)",
            refusals_delayed.clone(),
        );
        registry.register(
            "connections_refused",
            "Connections closed on arrival, by listener and reason (cap: the listener's cap; \
             address: the client address's share of it)",
            connections_refused.clone(),
        );
        registry.register(
            "connections_open",
            "Open client connections by listener",
            connections_open.clone(),
        );
        registry.register(
            "connections_retired",
            "Connections closed for idleness (no call in progress; HTTP/2 gets a GOAWAY) or at \
             their HTTP/1.1 request limit, by listener",
            connections_retired.clone(),
        );
        Metrics {
            connections_refused,
            connections_open,
            connections_retired,
            refusals_delayed,
            registry,
            rpcs,
            rpc_latency,
            tables_active,
            seats,
            tables_loaded,
            tables_waiting_stored,
            table_handles,
            watchers,
            submit_streams_open,
            moves,
            auto_moves,
            watchers_dropped,
            tls_reloads,
            tls_handshake_failures,
            lease_renewals,
            tables_claimed,
            tables_lost,
            tables_released,
            claim_to_playing,
            nodes_live,
            ladder_leader,
            clock_correction,
            house_searches,
            serving: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Count one finished call.
    pub fn observe_rpc(&self, method: &'static str, code: tonic::Code, started: Instant) {
        let labels = RpcLabels {
            method,
            code: code_name(code),
        };
        self.rpcs.get_or_create(&labels).inc();
        self.rpc_latency
            .get_or_create(&labels)
            .observe(started.elapsed().as_secs_f64());
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// A minimal HTTP/1.1 endpoint: `GET /metrics` returns the metrics, `GET /healthz` 200 while
/// the server is SERVING and 503 once it drains (or before it serves), anything else 404.
/// Small on purpose: one scrape per connection, no keep-alive.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: tokio_util::sync::CancellationToken,
) {
    loop {
        let (mut sock, _) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "metrics accept failed");
                    continue;
                }
            },
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut n = 0;
            // Read until the end of the request head (or the buffer is full).
            while n < buf.len() {
                match tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    sock.read(&mut buf[n..]),
                )
                .await
                {
                    Ok(Ok(0)) | Err(_) | Ok(Err(_)) => break,
                    Ok(Ok(k)) => {
                        n += k;
                        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                }
            }
            let head = String::from_utf8_lossy(&buf[..n]);
            let line = head.lines().next().unwrap_or("");
            let resp = if line.starts_with("GET /metrics ") || line == "GET /metrics" {
                let body = metrics.render();
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else if line.starts_with("GET /healthz ") || line == "GET /healthz" {
                let (status, body) = if metrics.serving.load(std::sync::atomic::Ordering::Acquire) {
                    ("200 OK", "SERVING\n")
                } else {
                    ("503 Service Unavailable", "NOT_SERVING\n")
                };
                format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else {
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .to_string()
            };
            let _ = sock.write_all(resp.as_bytes()).await;
            let _ = sock.shutdown().await;
        });
    }
}
