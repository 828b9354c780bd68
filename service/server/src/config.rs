//! Server settings (the binary fills them from flags and environment variables).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Everything `run` needs besides its listener.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Holds `bete.sqlite3` (unused with `database_url`).
    pub data_dir: PathBuf,
    /// `postgres://...`: the store is this PostgreSQL database, shared with the other nodes of
    /// a cluster, instead of SQLite in `data_dir`.
    pub database_url: Option<String>,
    /// This node's id among the nodes sharing the database (default: the host name).
    pub node_id: Option<String>,
    /// The address peers use to reach this node (default: the gRPC listener's address).
    pub advertise_addr: Option<String>,
    /// How long a node's lease lasts: a node silent this long loses its tables to its peers.
    pub lease_ttl: Duration,
    /// Shared by the nodes of a cluster: with it, a node forwards calls for a table a peer plays
    /// to that peer, and trusts the forwarded mark only of a call that carries it.
    pub cluster_secret: Option<String>,
    /// Where to serve `/metrics`; `None` serves no metrics endpoint.
    pub metrics_addr: Option<SocketAddr>,
    /// Where to serve the web page and gRPC-Web; `None` serves neither.
    pub web_addr: Option<SocketAddr>,
    /// Listed tables of house bots kept playing at a watchable pace (showcase.rs); 0 for none.
    pub house_tables: u32,
    /// Decision deadline of a table created without one.
    pub default_deadline_ms: u64,
    /// Idle time after which a stream gets a heartbeat.
    pub heartbeat_interval: Duration,
    /// Pause before a house bot acts.
    pub house_delay: Duration,
    /// A finished table leaves memory after this long without requests.
    pub idle_unload: Duration,
    /// Requests larger than this are refused with INVALID_ARGUMENT.
    pub max_request_bytes: usize,
    /// Items a WatchTable stream may have waiting before it is cut as too slow.
    pub watch_buffer: usize,
    /// After shutdown is asked: health reports NOT_SERVING while everything else keeps working
    /// this long, so probes and load balancers stop sending new work before streams end.
    pub drain_grace: Duration,
    /// Longest wait, once streams have ended, for clients to close their connections; a
    /// client's `grpc.health.v1.Health/Watch` stream, for one, never ends by itself.
    pub drain_timeout: Duration,
    /// The operator's secret for administrative calls (creating accounts when signup is
    /// closed, operator RPCs), sent as `authorization: Bearer <admin token>`. `None`: no call
    /// can act as the operator, so nothing administrative is reachable over the network.
    pub admin_token: Option<String>,
    /// Whether anyone may create an account (and register a bot without one). On for a local
    /// server, so command 1 of the README needs no setup; a hosted ladder turns it off and
    /// creates accounts with the admin token, so one person cannot mint owners at will to
    /// seat several bots of theirs at one ladder table.
    pub open_signup: bool,
    /// The ladders this server hosts; `None` means the defaults (one per ruleset).
    pub ladders: Option<std::path::PathBuf>,
    /// Derive ladder match seeds (and the pairing's draws) from this number instead of the
    /// OS's CSPRNG: for reproducible experiments and tests only. The seeds are still the
    /// server's, committed before play; no client ever chooses one.
    pub ladder_seed: Option<u64>,
    /// Rates, streams and tables one caller may take (docs/security.md).
    pub limits: crate::limits::LimitsConfig,
    /// A table still waiting for its seats this long after its creation is closed and unloaded
    /// (5 minutes by default): waiting tables otherwise stay in memory for ever.
    pub waiting_ttl: Duration,
    /// A connection that has not sent the HTTP/2 preface this long after it was accepted is
    /// closed (idle sockets would otherwise hold file descriptors for ever).
    pub preface_timeout: Duration,
    /// Open connections to the client API at most; the next one is closed at once. Keep it and
    /// `web_max_connections` together below the process's file limit, with room for the
    /// database and the metrics endpoint.
    pub max_connections: usize,
    /// Open connections to the client API from one address (IPv6: one /64) at most, TLS
    /// handshakes included; 0: no share.
    pub max_connections_per_address: usize,
    /// Open connections to the web listener at most.
    pub web_max_connections: usize,
    /// Open connections to the web listener from one address at most; 0: no share.
    pub web_max_connections_per_address: usize,
    /// Subscriptions (server-streaming calls: WatchTable, WatchBot, WatchLadderResults) one
    /// page connection (a tab's WebSocket, web_mux.rs) may hold open at once.
    pub web_max_subscriptions: usize,
    /// With a client CA: connections from one address whose client certificate was verified
    /// (a bot farm) at most, on each listener.
    pub max_connections_per_verified_address: usize,
    /// An HTTP/2 connection with no call in progress this long gets a GOAWAY.
    pub idle_connection: Duration,
    /// An HTTP/1.1 keep-alive connection (the web listener) with no request in progress this
    /// long is closed.
    pub http1_idle: Duration,
    /// HTTP/1.1 requests one keep-alive connection may make before it is closed (0: no limit).
    pub http1_max_requests: u64,
    /// Calls being handled at once at most (a stream counts until it is set up); above it, new
    /// calls are shed with UNAVAILABLE / OVERLOADED and a RetryInfo delay. 0 is no limit.
    pub max_in_flight: usize,
    /// TLS on the client API (and the web listener) with these files; `None`: plaintext, as
    /// for a server on loopback (the README's first command).
    pub tls: Option<crate::tls::TlsSettings>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            data_dir: PathBuf::from("./data"),
            database_url: None,
            node_id: None,
            advertise_addr: None,
            lease_ttl: Duration::from_secs(10),
            cluster_secret: None,
            metrics_addr: None,
            web_addr: None,
            house_tables: 0,
            default_deadline_ms: 10_000,
            heartbeat_interval: Duration::from_secs(15),
            house_delay: Duration::ZERO,
            idle_unload: Duration::from_secs(30),
            max_request_bytes: 64 * 1024,
            watch_buffer: 256,
            drain_grace: Duration::ZERO,
            drain_timeout: Duration::from_secs(10),
            admin_token: None,
            open_signup: true,
            ladders: None,
            ladder_seed: None,
            limits: crate::limits::LimitsConfig::default(),
            waiting_ttl: Duration::from_secs(5 * 60),
            preface_timeout: Duration::from_secs(10),
            max_connections: 1000,
            max_connections_per_address: 100,
            web_max_connections: 500,
            web_max_connections_per_address: 50,
            web_max_subscriptions: crate::web::DEFAULT_MAX_SUBSCRIPTIONS,
            max_connections_per_verified_address: 1000,
            idle_connection: Duration::from_secs(60),
            http1_idle: Duration::from_secs(10),
            http1_max_requests: 1000,
            max_in_flight: 4096,
            tls: None,
        }
    }
}

/// Most `rounds` a table may ask for. A match is `rounds` × seats deals plus at most
/// `max_extra_deals`: without a bound, `rounds = 4294967295` with house bots in every seat played
/// for ever (≈ 860 moves/s and 93 KiB/s of log per table). 20 rounds of 8 seats is 160 deals,
/// far beyond any session of the sources (RULES.md B36 recommends 2). The engine itself follows
/// section 10 (any value), so records of longer matches still replay.
pub const MAX_ROUNDS: u32 = 20;
/// Most `max_extra_deals` a table may ask for (the default is 2 × seats, at most 14).
pub const MAX_EXTRA_DEALS: u32 = 50;

/// Shortest decision deadline a table may ask for.
pub const MIN_DEADLINE_MS: u64 = 20;
/// Longest decision deadline a table may ask for (one hour).
pub const MAX_DEADLINE_MS: u64 = 3_600_000;
pub use bete_table::{MAX_SEARCH_BUDGET_MS, MIN_SEARCH_BUDGET_MS};

/// The async runtime's threads when the operator sets none: one per core but one, at least 1.
///
/// Why not tokio's one per core: the SQLite writer (every commit of the node) runs on a thread of
/// its own, busy under load, and a worker per core made the workers and the writer take turns
/// on the cores, with wake-ups and work stealing across them. On the 2-core benchmark machine
/// one worker took 10–20 % less CPU per move than two, at the same or a higher rate (see
/// docs/benchmarks.md, "Move path, sixth round"). `available_parallelism` counts the cgroup's
/// CPU quota, so a pod limited to 2 CPUs gets 1 worker.
pub fn default_worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    /// At least one worker, and never more than the cores.
    #[test]
    fn the_default_runtime_leaves_a_core_to_the_writer() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = super::default_worker_threads();
        assert!(workers >= 1);
        assert_eq!(workers, if cores > 1 { cores - 1 } else { 1 });
    }
}
