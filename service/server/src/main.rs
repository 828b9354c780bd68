//! `bete-server`: flags and environment, logging and tracing, signals; the rest is
//! `bete_server::run`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// mimalloc instead of glibc malloc, for this binary only (the library leaves the choice to its
/// embedder). At saturation glibc's `malloc`/`free` were ≈ 19 % of the server's own CPU, about
/// half of it in the slow path (`malloc_consolidate`, `unlink_chunk`): the move path allocates and
/// frees many small blocks on one thread (encoders, h2 frames, boxed per-call futures) and frees
/// them on another, which mimalloc's per-thread pages with deferred cross-thread frees handle
/// without locks or consolidation. See docs/benchmarks.md, "Move path, third round". The
/// `mimalloc` feature is on by default; without it (`--no-default-features`) the system allocator
/// serves, which heap profilers that hook malloc see (docs/security.md, issue 26's heap profile).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum ClientAuth {
    Optional,
    Required,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// The bete game server: bots play the five-trick games of the Bête family over gRPC.
#[derive(Debug, Parser)]
#[command(name = "bete-server", version)]
struct Args {
    /// Address of the gRPC API.
    #[arg(long, env = "BETE_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Folder of the SQLite database (`bete.sqlite3`); created if missing.
    #[arg(long, env = "BETE_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// A PostgreSQL database (`postgres://user:password@host:port/db`) shared by the nodes of a
    /// cluster, instead of SQLite in --data-dir.
    #[arg(long, env = "BETE_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// This node's id among the nodes on one database (default: the host name). Unique: a
    /// second node started with a live node's id is refused.
    #[arg(long, env = "BETE_NODE_ID")]
    node_id: Option<String>,
    /// The address (host:port) other nodes use to reach this node's gRPC API (default: the
    /// --listen address).
    #[arg(long, env = "BETE_ADVERTISE_ADDR")]
    advertise_addr: Option<String>,
    /// Seconds a node's lease lasts (with --database-url): a node silent this long loses its
    /// tables to its peers.
    #[arg(long, env = "BETE_LEASE_TTL_SECS", default_value_t = 10.0)]
    lease_ttl_secs: f64,
    /// A secret shared by the nodes of a cluster (with --database-url): a node then forwards a
    /// call for a table a peer plays to that peer, instead of answering TABLE_ELSEWHERE, and
    /// trusts a call forwarded to it only if it carries this secret.
    #[arg(long, env = "BETE_CLUSTER_SECRET", hide_env_values = true)]
    cluster_secret: Option<String>,
    /// Address of the Prometheus endpoint (`GET /metrics`).
    #[arg(long, env = "BETE_METRICS_LISTEN", default_value = "127.0.0.1:9464")]
    metrics_listen: SocketAddr,
    /// Address of the web page and of gRPC-Web (the same services as --listen, for browsers).
    #[arg(long, env = "BETE_WEB_LISTEN", default_value = "127.0.0.1:8080")]
    web_listen: SocketAddr,
    /// Serve no web page and no gRPC-Web.
    #[arg(long, env = "BETE_NO_WEB")]
    no_web: bool,
    /// Listed tables of house bots to keep playing at a watchable pace (a new one replaces each
    /// that finishes), so the web page has live tables to show; 0 for none.
    #[arg(long, env = "BETE_HOUSE_TABLES", default_value_t = 2)]
    house_tables: u32,
    /// Log format on standard error.
    #[arg(long, env = "BETE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Decision deadline of tables created without one, in milliseconds.
    #[arg(long, env = "BETE_DEFAULT_DEADLINE_MS", default_value_t = 10_000)]
    default_deadline_ms: u64,
    /// Idle seconds after which a stream gets a heartbeat.
    #[arg(long, env = "BETE_HEARTBEAT_SECS", default_value_t = 15)]
    heartbeat_secs: u64,
    /// Milliseconds a house bot waits before acting.
    #[arg(long, env = "BETE_HOUSE_DELAY_MS", default_value_t = 0)]
    house_delay_ms: u64,
    /// Seconds a finished table stays in memory without requests.
    #[arg(long, env = "BETE_IDLE_UNLOAD_SECS", default_value_t = 30)]
    idle_unload_secs: u64,
    /// Largest request in bytes; larger ones are refused with INVALID_ARGUMENT.
    #[arg(long, env = "BETE_MAX_REQUEST_BYTES", default_value_t = 64 * 1024)]
    max_request_bytes: usize,
    /// Items a WatchTable stream may have waiting before it is cut as too slow.
    #[arg(long, env = "BETE_WATCH_BUFFER", default_value_t = 256)]
    watch_buffer: usize,
    /// On SIGTERM: seconds health reports NOT_SERVING while the server keeps serving.
    #[arg(long, env = "BETE_DRAIN_GRACE_SECS", default_value_t = 0)]
    drain_grace_secs: u64,
    /// On SIGTERM: seconds to wait for clients to close their connections once streams ended.
    #[arg(long, env = "BETE_DRAIN_TIMEOUT_SECS", default_value_t = 10)]
    drain_timeout_secs: u64,
    /// Threads of the async runtime (gRPC, table actors, streams). Default: one per core but
    /// one, at least 1: the SQLite writer has a thread of its own (see docs/operations.md).
    #[arg(long, env = "BETE_WORKER_THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    worker_threads: Option<u16>,
    /// The operator's secret for administrative calls (`authorization: Bearer <token>`):
    /// creating accounts when signup is closed, stopping tables. Unset: none are reachable.
    #[arg(long, env = "BETE_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: Option<String>,
    /// Whether anyone may create an account or register a bot without one. Turn it off on a
    /// hosted ladder and create accounts with the admin token.
    #[arg(long, env = "BETE_OPEN_SIGNUP", default_value_t = true, action = clap::ArgAction::Set)]
    open_signup: bool,
    /// A TOML file declaring the ladders; without one the server offers one ladder per
    /// ruleset (`bete-4`, `beast-4`, ...). See docs/ladders.md.
    #[arg(long, env = "BETE_LADDERS")]
    ladders: Option<PathBuf>,
    /// Derive ladder seeds from this number instead of the OS's CSPRNG (reproducible
    /// experiments only: whoever knows it knows every ladder deck).
    #[arg(long, env = "BETE_LADDER_SEED", hide = true)]
    ladder_seed: Option<u64>,
    /// Seconds a table may wait for its seats after its creation before it is closed.
    #[arg(long, env = "BETE_WAITING_TTL_SECS", default_value_t = 300)]
    waiting_ttl_secs: u64,
    /// Seconds a new connection has to send the HTTP/2 preface before it is closed.
    #[arg(long, env = "BETE_PREFACE_TIMEOUT_SECS", default_value_t = 10)]
    preface_timeout_secs: u64,
    /// Unfinished tables created through calls from one client address; 0: no limit.
    #[arg(long, env = "BETE_MAX_OPEN_TABLES_PER_ADDRESS", default_value_t = 2000)]
    max_open_tables_per_address: usize,
    /// Unfinished tables created by all of an account's bots together; 0: no limit.
    #[arg(long, env = "BETE_MAX_OPEN_TABLES_PER_ACCOUNT", default_value_t = 5000)]
    max_open_tables_per_account: usize,
    /// Unfinished tables on this server, ladder tables included; past it CreateTable is
    /// refused (BUDGET_EXHAUSTED); 0: no limit.
    #[arg(long, env = "BETE_MAX_OPEN_TABLES", default_value_t = 20000)]
    max_open_tables: usize,
    /// Bots registered through calls from one client address in a day, with or without an
    /// account's token (BUDGET_EXHAUSTED past it); 0: no limit.
    #[arg(long, env = "BETE_MAX_BOTS_PER_ADDRESS", default_value_t = 2000)]
    max_bots_per_address: usize,
    /// Accounts created through calls from one client address in a day (open signup); 0: no
    /// limit.
    #[arg(long, env = "BETE_MAX_ACCOUNTS_PER_ADDRESS", default_value_t = 100)]
    max_accounts_per_address: usize,
    /// Failed authentications per client address and second, as RATE or RATE/BURST; past it
    /// the address's calls with a token not already known are refused (BUDGET_EXHAUSTED); 0: off.
    #[arg(
        long,
        env = "BETE_RATE_AUTH_FAILURES_PER_ADDRESS",
        default_value = "5/50"
    )]
    rate_auth_failures_per_address: bete_server::limits::Rate,
    /// RESOURCE_EXHAUSTED answers per client address and second sent at once, as RATE or
    /// RATE/BURST; past it each is held back a second first (a client ignoring RetryInfo); 0: off.
    #[arg(long, env = "BETE_RATE_REFUSALS_PER_ADDRESS", default_value = "20/200")]
    rate_refusals_per_address: bete_server::limits::Rate,
    /// Open connections to the client API at most (with --web-max-connections, keep below the
    /// file limit, `ulimit -n`).
    #[arg(long, env = "BETE_MAX_CONNECTIONS", default_value_t = 1000)]
    max_connections: usize,
    /// Open connections to the client API from one address (IPv6: one /64), TLS handshakes
    /// included; 0: no share.
    #[arg(long, env = "BETE_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = 100)]
    max_connections_per_address: usize,
    /// Open connections to the web listener at most.
    #[arg(long, env = "BETE_WEB_MAX_CONNECTIONS", default_value_t = 500)]
    web_max_connections: usize,
    /// Open connections to the web listener from one address; 0: no share.
    #[arg(
        long,
        env = "BETE_WEB_MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = 50
    )]
    web_max_connections_per_address: usize,
    /// Live streams (WatchTable, WatchBot, WatchLadderResults) one page connection (a browser
    /// tab's WebSocket) may hold open at once; the next is refused with TOO_MANY_STREAMS.
    #[arg(long, env = "BETE_WEB_MAX_SUBSCRIPTIONS", default_value_t = 16)]
    web_max_subscriptions: usize,
    /// With --tls-client-ca: connections from one address with a verified client certificate
    /// (on each listener; those without one still hold at most the ordinary share).
    #[arg(
        long,
        env = "BETE_MAX_CONNECTIONS_PER_VERIFIED_ADDRESS",
        default_value_t = 1000
    )]
    max_connections_per_verified_address: usize,
    /// Seconds an HTTP/2 connection may stay without a call in progress before a GOAWAY.
    #[arg(long, env = "BETE_IDLE_CONNECTION_SECS", default_value_t = 60)]
    idle_connection_secs: u64,
    /// Seconds an HTTP/1.1 keep-alive connection (web listener) may wait for its next request.
    #[arg(long, env = "BETE_HTTP1_IDLE_SECS", default_value_t = 10)]
    http1_idle_secs: u64,
    /// HTTP/1.1 requests one keep-alive connection may make before it is closed; 0: no limit.
    #[arg(long, env = "BETE_HTTP1_MAX_REQUESTS", default_value_t = 1000)]
    http1_max_requests: u64,
    /// Calls in progress at most before new ones are shed (UNAVAILABLE, OVERLOADED); 0: none.
    #[arg(long, env = "BETE_MAX_IN_FLIGHT", default_value_t = 4096)]
    max_in_flight: usize,
    /// Calls per bot and second, as RATE or RATE/BURST; 0 switches the limit off.
    #[arg(long, env = "BETE_RATE_CALLS_PER_BOT", default_value = "1000/2000")]
    rate_calls_per_bot: bete_server::limits::Rate,
    /// RegisterBot calls per client address and second, as RATE or RATE/BURST; 0: off.
    #[arg(
        long,
        env = "BETE_RATE_REGISTRATIONS_PER_ADDRESS",
        default_value = "20/1000"
    )]
    rate_registrations_per_address: bete_server::limits::Rate,
    /// CreateTable calls per bot and second, as RATE or RATE/BURST; 0: off.
    #[arg(long, env = "BETE_RATE_CREATIONS_PER_BOT", default_value = "20/200")]
    rate_creations_per_bot: bete_server::limits::Rate,
    /// EnterLadder and LeaveLadder calls per bot and second, as RATE or RATE/BURST; 0: off.
    #[arg(long, env = "BETE_RATE_LADDER_ENTRIES_PER_BOT", default_value = "1/20")]
    rate_ladder_entries_per_bot: bete_server::limits::Rate,
    /// Calls of all of an account's bots together per second, as RATE or RATE/BURST; 0: off.
    #[arg(
        long,
        env = "BETE_RATE_CALLS_PER_ACCOUNT",
        default_value = "5000/10000"
    )]
    rate_calls_per_account: bete_server::limits::Rate,
    /// CreateTable calls of all of an account's bots together per second; 0: off.
    #[arg(
        long,
        env = "BETE_RATE_CREATIONS_PER_ACCOUNT",
        default_value = "50/500"
    )]
    rate_creations_per_account: bete_server::limits::Rate,
    /// RegisterBot calls with an account's token, per account and second; 0: off.
    #[arg(
        long,
        env = "BETE_RATE_REGISTRATIONS_PER_ACCOUNT",
        default_value = "2/100"
    )]
    rate_registrations_per_account: bete_server::limits::Rate,
    /// CreateAccount calls per client address and second (open signup); 0: off.
    #[arg(long, env = "BETE_RATE_ACCOUNTS_PER_ADDRESS", default_value = "1/20")]
    rate_accounts_per_address: bete_server::limits::Rate,
    /// Open streams per bot (WatchBot, WatchTable, SubmitActions); 0: no limit.
    #[arg(long, env = "BETE_MAX_STREAMS_PER_BOT", default_value_t = 512)]
    max_streams_per_bot: usize,
    /// Unfinished tables a bot may have created; 0: no limit.
    #[arg(long, env = "BETE_MAX_OPEN_TABLES_PER_BOT", default_value_t = 256)]
    max_open_tables_per_bot: usize,
    /// Unfinished tables a bot may sit at; 0: no limit.
    #[arg(long, env = "BETE_MAX_SEATS_PER_BOT", default_value_t = 256)]
    max_seats_per_bot: usize,
    /// Serve the gRPC API (and the web page) over TLS with this PEM certificate chain; needs
    /// --tls-key. Re-read when it changes, without a restart. Unset: plaintext.
    #[arg(long, env = "BETE_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "BETE_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// PEM certificates of a CA whose client certificates are accepted (trusted bot farms).
    #[arg(long, env = "BETE_TLS_CLIENT_CA", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// With --tls-client-ca: `optional` (a client may present a certificate, which exempts it
    /// from the per-address limits) or `required` (every client must).
    #[arg(long, env = "BETE_TLS_CLIENT_AUTH", value_enum, default_value_t = ClientAuth::Optional, requires = "tls_client_ca")]
    tls_client_auth: ClientAuth,
    /// With TLS and --cluster-secret: the DNS name in every node's certificate, which a node
    /// checks when it forwards to a peer (peers are dialled by address). Required then.
    #[arg(long, env = "BETE_PEER_TLS_NAME", requires = "tls_cert")]
    peer_tls_name: Option<String>,
    /// With TLS and --cluster-secret: PEM certificates of the CA that signs the nodes'
    /// certificates, the only roots trusted for peers. Required then.
    #[arg(long, env = "BETE_PEER_CA", requires = "tls_cert")]
    peer_ca: Option<PathBuf>,
    /// Seconds between checks of the certificate and key files for a change.
    #[arg(long, env = "BETE_TLS_RELOAD_SECS", default_value_t = 60)]
    tls_reload_secs: u64,
}

/// The spans exported by default: INFO and the DEBUG spans of every crate of the service (a
/// filter's target matches the crate's name, so each is named: the actor's spans are
/// bete_table's, the commit's bete_store's).
const TRACE_FILTER: &str = "info,bete_server=debug,bete_base=debug,bete_table=debug,bete_cluster=debug,bete_ladder_runtime=debug,bete_store=debug";

/// Install logging; with `OTEL_EXPORTER_OTLP_ENDPOINT` set, also export spans over OTLP/gRPC.
///
/// Each output has its own filter: logs follow `RUST_LOG` (default `info`); exported spans
/// follow `BETE_TRACE_FILTER` (default [`TRACE_FILTER`]: the call, and inside the server the
/// table actor, the store commit and the fan-out, which are DEBUG spans so that a server
/// without traces never builds them). See docs/operations.md, "Traces".
fn init_tracing(
    format: LogFormat,
) -> anyhow::Result<Option<opentelemetry_sdk::trace::SdkTracerProvider>> {
    let log_filter =
        || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let (json, text) = match format {
        LogFormat::Json => (
            Some(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(std::io::stderr)
                    .with_filter(log_filter()),
            ),
            None,
        ),
        LogFormat::Text => (
            None,
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    // Colour codes only for a person's terminal, not in a file or a pipe.
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                    .with_filter(log_filter()),
            ),
        ),
    };
    let provider = match std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Ok(endpoint) if !endpoint.is_empty() => {
            // The exporter reads the endpoint (and the other OTEL_* variables) itself; the
            // batch processor reads OTEL_BSP_SCHEDULE_DELAY and the other OTEL_BSP_* ones.
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .build()
                .context("building the OTLP span exporter")?;
            let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(
                    opentelemetry_sdk::Resource::builder()
                        .with_service_name("bete-server")
                        .build(),
                )
                .build();
            Some(provider)
        }
        _ => None,
    };
    let otel = match &provider {
        Some(p) => {
            use opentelemetry::trace::TracerProvider as _;
            let filter = match std::env::var("BETE_TRACE_FILTER") {
                Ok(f) if !f.is_empty() => {
                    EnvFilter::try_new(&f).context("BETE_TRACE_FILTER is not a filter")?
                }
                _ => EnvFilter::new(TRACE_FILTER),
            };
            Some(
                tracing_opentelemetry::layer()
                    .with_tracer(p.tracer("bete-server"))
                    .with_filter(filter),
            )
        }
        None => None,
    };
    tracing_subscriber::registry()
        .with(json)
        .with(text)
        .with(otel)
        .init();
    Ok(provider)
}

async fn signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("SIGINT"),
        _ = term => tracing::info!("SIGTERM"),
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let workers = args
        .worker_threads
        .map_or_else(bete_server::config::default_worker_threads, usize::from);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(serve(args, workers))
}

async fn serve(args: Args, workers: usize) -> anyhow::Result<()> {
    let provider = init_tracing(args.log_format)?;
    tracing::info!(workers, "runtime started");
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let config = bete_server::ServerConfig {
        data_dir: args.data_dir,
        database_url: args.database_url.filter(|u| !u.is_empty()),
        node_id: args.node_id,
        advertise_addr: args.advertise_addr,
        lease_ttl: Duration::try_from_secs_f64(args.lease_ttl_secs)
            .ok()
            .filter(|d| *d >= Duration::from_millis(300))
            .context("--lease-ttl-secs must be at least 0.3")?,
        cluster_secret: args.cluster_secret.filter(|s| !s.is_empty()),
        metrics_addr: Some(args.metrics_listen),
        web_addr: (!args.no_web).then_some(args.web_listen),
        house_tables: args.house_tables,
        default_deadline_ms: args.default_deadline_ms,
        heartbeat_interval: Duration::from_secs(args.heartbeat_secs.max(1)),
        house_delay: Duration::from_millis(args.house_delay_ms),
        idle_unload: Duration::from_secs(args.idle_unload_secs),
        max_request_bytes: args.max_request_bytes,
        watch_buffer: args.watch_buffer,
        drain_grace: Duration::from_secs(args.drain_grace_secs),
        drain_timeout: Duration::from_secs(args.drain_timeout_secs),
        admin_token: args.admin_token.filter(|t| !t.is_empty()),
        open_signup: args.open_signup,
        ladders: args.ladders,
        ladder_seed: args.ladder_seed,
        limits: bete_server::limits::LimitsConfig {
            calls_per_bot: args.rate_calls_per_bot,
            registrations_per_address: args.rate_registrations_per_address,
            creations_per_bot: args.rate_creations_per_bot,
            calls_per_account: args.rate_calls_per_account,
            creations_per_account: args.rate_creations_per_account,
            registrations_per_account: args.rate_registrations_per_account,
            accounts_per_address: args.rate_accounts_per_address,
            ladder_entries_per_bot: args.rate_ladder_entries_per_bot,
            streams_per_bot: args.max_streams_per_bot,
            open_tables_per_bot: args.max_open_tables_per_bot,
            seats_per_bot: args.max_seats_per_bot,
            auth_failures_per_address: args.rate_auth_failures_per_address,
            refusals_per_address: args.rate_refusals_per_address,
            open_tables_per_address: args.max_open_tables_per_address,
            open_tables_per_account: args.max_open_tables_per_account,
            max_open_tables: args.max_open_tables,
            bots_per_address: args.max_bots_per_address,
            accounts_per_address_count: args.max_accounts_per_address,
        },
        waiting_ttl: Duration::from_secs(args.waiting_ttl_secs.max(1)),
        preface_timeout: Duration::from_secs(args.preface_timeout_secs.max(1)),
        max_connections: args.max_connections.max(1),
        max_connections_per_address: args.max_connections_per_address,
        web_max_connections: args.web_max_connections.max(1),
        web_max_connections_per_address: args.web_max_connections_per_address,
        web_max_subscriptions: args.web_max_subscriptions.max(1),
        max_connections_per_verified_address: args.max_connections_per_verified_address,
        idle_connection: Duration::from_secs(args.idle_connection_secs.max(1)),
        http1_idle: Duration::from_secs(args.http1_idle_secs.max(1)),
        http1_max_requests: args.http1_max_requests,
        max_in_flight: args.max_in_flight,
        tls: match (args.tls_cert, args.tls_key) {
            (Some(cert), Some(key)) => Some(bete_server::tls::TlsSettings {
                cert,
                key,
                client_ca: args.tls_client_ca,
                client_auth: match args.tls_client_auth {
                    ClientAuth::Optional => bete_server::tls::ClientAuth::Optional,
                    ClientAuth::Required => bete_server::tls::ClientAuth::Required,
                },
                reload_every: Duration::from_secs(args.tls_reload_secs.max(1)),
                peer_name: args.peer_tls_name,
                peer_ca: args.peer_ca,
            }),
            _ => None,
        },
    };
    let result = bete_server::run(listener, config, signal()).await;
    if let Some(p) = provider {
        // Exports what is still queued. Off the runtime's workers: the exporter's gRPC client
        // runs on them (with one worker, blocking it here would wait for itself).
        match tokio::task::spawn_blocking(move || p.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("bete-server: exporting the last spans failed: {e}"),
            Err(e) => eprintln!("bete-server: exporting the last spans failed: {e}"),
        }
    }
    result.context("bete-server failed")
}
