//! `run`: the whole server on a listener until `shutdown` resolves.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bete_api::pb::account_service_server::AccountServiceServer;
use bete_api::pb::admin_service_server::AdminServiceServer;
use bete_api::pb::bot_service_server::BotServiceServer;
use bete_api::pb::ladder_service_server::LadderServiceServer;
use bete_api::pb::replay_service_server::ReplayServiceServer;
use bete_api::pb::table_service_server::TableServiceServer;
use tokio::net::TcpListener;
use tokio_stream::StreamExt as _;
use tokio_util::sync::CancellationToken;
use tonic::codegen::{BoxFuture, Service, http};
use tonic::server::{Grpc, NamedService};
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use tower::Layer as _;

use crate::accounts::AccountApi;
use crate::admin::AdminApi;
use crate::auth::Auth;
use crate::config::ServerConfig;
use crate::conn::{Guarded, Places};
use crate::edge::EdgeLayer;
use crate::limits::Limits;
use crate::replay::ReplayApi;
use crate::service::LadderApi;
use crate::service::{Api, BotApi, TableApi, WatchBotFrames, WatchTableFrames};
use crate::store::{NodeConfig, PgStore, SqliteStore, Store};
use bete_base::coalesce::Coalesced;
use bete_base::metrics::{self, Metrics};
use bete_base::progress::Progress;
use bete_base::shutdown::Shutdown;
use bete_table::ActorDeps;
use bete_table::registry::Tables;
use bete_table::stream::{BotShape, FrameCodec, TableShape};

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("metrics listener: {0}")]
    Metrics(std::io::Error),
    #[error("web listener: {0}")]
    Web(std::io::Error),
    #[error("recovery: {0}")]
    Recovery(#[from] bete_base::status::ServerError),
    #[error("ladders: {0}")]
    Ladders(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
    /// The store stopped writing (a fail-stop after a failed write): the server drained and
    /// stopped instead of refusing every move while its health said SERVING. A restart reopens
    /// the database.
    #[error("the store stopped writing; restart the server")]
    StoreStopped,
}

/// Hard cap of a decoded request (tonic's `max_decoding_message_size`): tonic refuses a request
/// above it before reading it, so no handler sees it. Anything above the (smaller) configured
/// limit but below this is refused by the request-size gate; above it, [`WithErrorInfo`] turns
/// tonic's bare refusal into the gate's, so both carry the same ErrorInfo.
const TRANSPORT_MAX_MESSAGE: usize = 1024 * 1024;

/// Concurrent HTTP/2 streams one connection may open (tonic's default is unlimited). Above
/// what a busy bot process needs (the load harness opens ≈ 3,500 SubmitActions streams plus
/// its WatchBot streams over 8 connections at 1,000 tables, ≈ 450 per connection) while
/// bounding what one client can hold open; docs/protocol.md states it.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 2048;

/// HTTP/2 PING interval on an otherwise quiet connection: an idle SubmitActions stream never
/// writes, so without it a vanished client would hold its stream (and task) forever.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(30);

/// A PING unanswered this long closes the connection (and ends its streams).
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serve the bete API on `listener` until `shutdown` resolves, then drain: health turns
/// NOT_SERVING at once; after `config.drain_grace` new calls get UNAVAILABLE, open streams end
/// with UNAVAILABLE, and pending writes reach the store; connections still open
/// `config.drain_timeout` later are abandoned.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RunError> {
    // A certificate that cannot be read stops the start before anything else is done.
    let tls = match &config.tls {
        Some(settings) => {
            let certs = Arc::new(crate::tls::CertStore::open(settings)?);
            let grpc = crate::tls::server_config(certs.clone(), &[b"h2"])?;
            let web = crate::tls::server_config(certs.clone(), &[b"h2", b"http/1.1"])?;
            Some((settings.reload_every, certs, grpc, web))
        }
        None => None,
    };
    let opened = open_store(&config, &listener).await?;
    let (store, _lock, cluster_store) = (opened.store, opened.lock, opened.cluster);
    let metrics = Arc::new(Metrics::new());
    if cluster_store.is_none() {
        // One node on SQLite: the whole cluster, and the ladders' scheduler.
        metrics.nodes_live.set(1);
        metrics.ladder_leader.set(1);
    }
    let token = Shutdown::new();
    // Finished ladder tables, from their actors to the ladders' schedulers.
    let (finished_tx, finished_rx) = tokio::sync::mpsc::unbounded_channel();
    let (decisions_tx, decisions_rx) = tokio::sync::mpsc::unbounded_channel();
    let background = CancellationToken::new();
    let _background = background.clone().drop_guard();
    let progress = Arc::new(Progress::default());
    tokio::spawn(progress.clone().run(background.clone().cancelled_owned()));
    let limits = Arc::new(Limits::new(config.limits.clone()));
    {
        // Limiter state of callers gone quiet is dropped, so it stays bounded.
        let (limits, stop) = (limits.clone(), background.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = every.tick() => limits.shrink(),
                }
            }
        });
    }
    let deps = Arc::new(ActorDeps {
        store: store.clone(),
        metrics: metrics.clone(),
        shutdown: token.clone(),
        house_delay: config.house_delay,
        idle_unload: config.idle_unload,
        watch_buffer: config.watch_buffer,
        ladder_finished: Some(finished_tx),
        ladder_decisions: Some(decisions_tx),
        limits: limits.clone(),
        progress,
        waiting_ttl: config.waiting_ttl,
        loaded: bete_table::Loaded::new(metrics.table_handles.clone()),
    });
    let tables = Arc::new(Tables::new(deps));
    let recovered = tables.recover().await?;
    tokio::spawn(bete_table::waiting::sweep(
        tables.clone(),
        background.clone(),
    ));
    match &cluster_store {
        Some(pg) => tracing::info!(recovered, node = %pg.node().id, "tables recovered"),
        None => {
            tracing::info!(recovered, data_dir = %config.data_dir.display(), "tables recovered")
        }
    }
    // Scale-out: the lease, tables lost to peers, tables of lapsed peers. Ends with the drain.
    let cluster_stop = CancellationToken::new();
    let registration_lost = Arc::new(tokio::sync::Notify::new());
    let leadership = Arc::new(if cluster_store.is_some() {
        bete_ladder_runtime::Leadership::cluster()
    } else {
        bete_ladder_runtime::Leadership::single()
    });
    let cluster = cluster_store.clone().map(|pg| {
        let (tables, stop, lost, leadership) = (
            tables.clone(),
            cluster_stop.clone(),
            registration_lost.clone(),
            leadership.clone(),
        );
        tokio::spawn(async move {
            if let Err(e) = bete_cluster::run(pg, tables, leadership, stop).await {
                tracing::error!(error = %e, "stopping");
                lost.notify_one();
            }
        })
    });
    let specs = match &config.ladders {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| RunError::Ladders(format!("cannot read {}: {e}", path.display())))?;
            bete_ladder::parse_ladders(&text).map_err(|e| RunError::Ladders(e.to_string()))?
        }
        None => bete_ladder::default_ladders(),
    };
    let ladders = bete_ladder_runtime::Ladders::start(
        specs,
        store.clone(),
        tables.clone(),
        token.clone(),
        bete_ladder_runtime::TableReports {
            finished: finished_rx,
            decisions: decisions_rx,
        },
        config.ladder_seed,
        leadership,
    )
    .await?;
    tracing::info!(ladders = ladders.specs().len(), "ladders started");

    let metrics_stop = CancellationToken::new();
    let _metrics_stop = metrics_stop.clone().drop_guard();
    if let Some(addr) = config.metrics_addr {
        let l = TcpListener::bind(addr).await.map_err(RunError::Metrics)?;
        tracing::info!(addr = %l.local_addr().map_err(RunError::Metrics)?, "metrics on /metrics");
        // Scrapable until run() returns, so a drain can be watched (streams still open).
        tokio::spawn(metrics::serve(l, metrics.clone(), metrics_stop.clone()));
    }

    if let Some((every, certs, ..)) = &tls {
        tokio::spawn(
            certs
                .clone()
                .watch(*every, metrics.clone(), background.clone()),
        );
    }
    let forward = match (&cluster_store, &config.cluster_secret) {
        (Some(pg), Some(secret)) => {
            // A node serving TLS dials its peers over TLS too, or does not start (tls.rs).
            let peer_tls = config.tls.as_ref().map(|t| t.peer_tls()).transpose()?;
            Some(Arc::new(
                crate::forward::Forwarder::new(pg.clone(), secret, peer_tls).ok_or_else(|| {
                    RunError::Config("--cluster-secret must be visible ASCII".into())
                })?,
            ))
        }
        (Some(_), None) => {
            tracing::warn!(
                "no --cluster-secret: a call for a table a peer plays gets TABLE_ELSEWHERE"
            );
            None
        }
        (None, _) => None,
    };
    let api = Arc::new(Api {
        tables: tables.clone(),
        auth: Arc::new(Auth::with_failure_budget(
            store.clone(),
            config.admin_token.clone(),
            config.limits.auth_failures_per_address,
        )),
        store: store.clone(),
        metrics,
        config: Arc::new(config),
        ladders,
        forward,
        limits,
    });
    {
        // The failure budgets of addresses gone quiet are dropped, so they stay bounded.
        let (api, stop) = (api.clone(), background.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = every.tick() => api.auth.shrink(),
                }
            }
        });
    }
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<TableServiceServer<TableApi>>().await;
    health.set_serving::<BotServiceServer<BotApi>>().await;
    health
        .set_serving::<AccountServiceServer<AccountApi>>()
        .await;
    health.set_service_status("", ServingStatus::Serving).await;
    api.metrics
        .serving
        .store(true, std::sync::atomic::Ordering::Release);

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(bete_api::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        // google.rpc.ErrorInfo / BadRequest, so reflection clients can decode error details.
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(bete_api::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    let request_limit = api.config.max_request_bytes;
    let table_service = WithErrorInfo {
        inner: TableRoutes {
            inner: TableServiceServer::new(TableApi(api.clone()))
                .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
            api: api.clone(),
        },
        request_limit,
    };
    let bot_service = WithErrorInfo {
        inner: BotServiceServer::new(BotApi(api.clone()))
            .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
        request_limit,
    };
    let account_service = WithErrorInfo {
        inner: AccountServiceServer::new(AccountApi(api.clone()))
            .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
        request_limit,
    };
    let ladder_service = WithErrorInfo {
        inner: LadderServiceServer::new(LadderApi(api.clone()))
            .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
        request_limit,
    };
    let replay_service = WithErrorInfo {
        inner: ReplayServiceServer::new(ReplayApi::new(api.clone()))
            .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
        request_limit,
    };
    health.set_serving::<ReplayServiceServer<ReplayApi>>().await;

    // The web listener: the page, and the same services over gRPC-Web. It stops accepting when
    // the drain ends the streams (its calls meet the same SHUTTING_DOWN gate before that).
    // A web address already in use (a second server on one machine, a test run beside a
    // running server) costs the page, not the game service: logged, and gRPC goes on.
    let web_listener = match api.config.web_addr {
        Some(addr) => match TcpListener::bind(addr).await {
            Ok(l) => Some(l),
            Err(e) => {
                tracing::error!(%addr, error = %e, "web page not served: cannot listen");
                None
            }
        },
        None => None,
    };
    // A connection cap and a share per address for each listener, so neither can lock the
    // other out; one bound on calls in progress for both: they share the process's CPU.
    // Verified client certificates may hold a larger share only where a client CA is set.
    let verified_share = match &api.config.tls {
        Some(t) if t.client_ca.is_some() => api.config.max_connections_per_verified_address,
        _ => 0,
    };
    let places = Places::new(
        "grpc",
        crate::conn::PlacesConfig {
            max: api.config.max_connections,
            per_address: api.config.max_connections_per_address,
            per_verified_address: verified_share,
        },
        api.metrics.clone(),
    );
    let preface_timeout = api.config.preface_timeout;
    let edge = EdgeLayer::new(api.config.max_in_flight)
        .with_tarpit(api.config.limits.refusals_per_address, api.metrics.clone());
    let web = match web_listener {
        Some(l) => {
            let addr = l.local_addr().map_err(RunError::Web)?;
            let scheme = if tls.is_some() { "https" } else { "http" };
            tracing::info!(%addr, "web page: {scheme}://{addr}/");
            let service = crate::web::routes(
                tonic::service::Routes::new(table_service.clone())
                    .add_service(bot_service.clone())
                    .add_service(account_service.clone())
                    .add_service(ladder_service.clone())
                    .add_service(replay_service.clone()),
                edge.clone(),
                token.clone(),
                api.config.web_max_subscriptions,
            );
            let stopped = token.stopped();
            let settings = serve_settings(&api.config, "web", true);
            let web_places = Places::new(
                "web",
                crate::conn::PlacesConfig {
                    max: api.config.web_max_connections,
                    per_address: api.config.web_max_connections_per_address,
                    per_verified_address: verified_share,
                },
                api.metrics.clone(),
            );
            let metrics = api.metrics.clone();
            let serve: Serving = match &tls {
                None => Box::pin(crate::serve::serve(
                    guarded(TcpIncoming::from(l), web_places, preface_timeout, false),
                    service,
                    settings,
                    metrics,
                    stopped,
                )),
                // Over TLS with the client API's certificate, under the web listener's cap.
                Some((_, _, _, web)) => Box::pin(crate::serve::serve(
                    crate::tls::incoming(
                        l,
                        tokio_rustls::TlsAcceptor::from(web.clone()),
                        web_places,
                        preface_timeout,
                        api.metrics.clone(),
                        |conn| conn,
                        background.clone(),
                    ),
                    service,
                    settings,
                    metrics,
                    stopped,
                )),
            };
            Some(tokio::spawn(serve))
        }
        None => None,
    };
    let _web = web.map(AbortOnDrop);
    let _showcase = (api.config.house_tables > 0).then(|| {
        AbortOnDrop(tokio::spawn(crate::showcase::keep(
            api.clone(),
            api.config.house_tables,
        )))
    });
    let admin_service = WithErrorInfo {
        inner: AdminServiceServer::new(AdminApi(api.clone()))
            .max_decoding_message_size(TRANSPORT_MAX_MESSAGE),
        request_limit,
    };
    // The address as a person reads it (`127.0.0.1:50051`, not `Some(127.0.0.1:50051)`).
    match listener.local_addr() {
        Ok(addr) => tracing::info!(%addr, "bete-server listening"),
        Err(e) => tracing::info!(error = %e, "bete-server listening (address unknown)"),
    }
    let (grace, force_after) = (api.config.drain_grace, api.config.drain_timeout);
    // Told when streams have been ended, to bound the wait for connections to close.
    let drained = Arc::new(tokio::sync::Notify::new());
    // Set when the drain began because the store stopped writing, not because it was asked.
    let store_stopped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let drain = {
        let token = token.clone();
        let health = health.clone();
        let tables = tables.clone();
        let drained = drained.clone();
        let store = store.clone();
        let store_stopped = store_stopped.clone();
        let metrics = api.metrics.clone();
        async move {
            let shutdown = async {
                tokio::select! {
                    () = shutdown => {}
                    () = registration_lost.notified() => {}
                }
            };
            if shutdown_or_store_stopped(shutdown, store.as_ref()).await {
                tracing::error!("the store stopped writing: draining, then stopping");
                store_stopped.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            tracing::info!(
                grace_ms = grace.as_millis() as u64,
                "shutting down: health NOT_SERVING"
            );
            health
                .set_service_status("", ServingStatus::NotServing)
                .await;
            metrics
                .serving
                .store(false, std::sync::atomic::Ordering::Release);
            health
                .set_not_serving::<TableServiceServer<TableApi>>()
                .await;
            health.set_not_serving::<BotServiceServer<BotApi>>().await;
            health
                .set_not_serving::<AccountServiceServer<AccountApi>>()
                .await;
            // Still serving (listener open, streams flowing) while probes notice.
            tokio::time::sleep(grace).await;
            tracing::info!("draining: ending streams");
            // Actors finish the request in hand, then stop; streams end with UNAVAILABLE.
            token.cancel();
            tables.clear_bot_streams();
            drained.notify_one();
        }
    };
    let coalesce = tokio::runtime::Handle::current().metrics().num_workers() == 1;
    let routes = tonic::service::Routes::new(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(table_service)
        .add_service(bot_service)
        .add_service(account_service)
        .add_service(ladder_service)
        .add_service(replay_service)
        .add_service(admin_service)
        .prepare();
    // The caller's deadline inside the edge: a shed call is answered at once anyway.
    let svc = edge.layer(crate::deadline::DeadlineLayer.layer(routes));
    let settings = serve_settings(&api.config, "grpc", false);
    let metrics = api.metrics.clone();
    // Accepted sockets get TCP_NODELAY: without it every unary reply waits ~40 ms (Nagle
    // against delayed ACK). On a one-worker runtime each connection's writes yield once to the
    // tasks already runnable (`coalesce`).
    let serve: Serving = match &tls {
        // Over TLS: the same cap and share (a place is taken before the handshake) and one
        // deadline for the handshake and the preface together (tls.rs).
        Some((_, _, grpc, _)) => Box::pin(crate::serve::serve(
            crate::tls::incoming(
                listener,
                tokio_rustls::TlsAcceptor::from(grpc.clone()),
                places,
                preface_timeout,
                api.metrics.clone(),
                move |conn| Coalesced::new(conn, coalesce),
                background.clone(),
            ),
            svc,
            settings,
            metrics,
            drain,
        )),
        None => Box::pin(crate::serve::serve(
            guarded(
                TcpIncoming::from(listener),
                places,
                preface_timeout,
                coalesce,
            ),
            svc,
            settings,
            metrics,
            drain,
        )),
    };
    tokio::pin!(serve);
    let forced = async {
        drained.notified().await;
        tokio::time::sleep(force_after).await;
    };
    tokio::select! {
        () = &mut serve => {}
        () = forced => tracing::warn!(
            timeout_ms = force_after.as_millis() as u64,
            "connections still open after the drain timeout; stopping anyway"
        ),
    }
    if let Some(c) = cluster {
        cluster_stop.cancel();
        let _ = c.await;
    }
    if let Some(pg) = &cluster_store {
        // Actors have stopped (a write still queued is fenced by the release): peers take the
        // tables at once rather than after the lease.
        tokio::time::sleep(Duration::from_millis(100)).await;
        match pg.release().await {
            Ok(n) => {
                tables.deps.metrics.tables_released.inc_by(n);
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not release this node's tables; peers take them when its lease lapses")
            }
        };
    }
    tracing::info!("stopped");
    if store_stopped.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(RunError::StoreStopped);
    }
    Ok(())
}

/// A listener's connections under guard: at the listener's cap or the address's share a new
/// connection is closed at once (its descriptor freed); every connection must send its first bytes (the HTTP/2 preface,
/// or an HTTP/1.1 request on the web listener) within `preface_timeout`. On a one-worker runtime
/// each connection's writes yield once to the tasks already runnable (`coalesce`).
fn guarded(
    incoming: TcpIncoming,
    places: Places,
    preface_timeout: Duration,
    coalesce: bool,
) -> impl tokio_stream::Stream<Item = std::io::Result<Coalesced<Guarded<tokio::net::TcpStream>>>> {
    incoming
        .with_nodelay(Some(true))
        .filter_map(move |conn| match conn {
            // A refused connection is dropped here: its descriptor is freed at once.
            Ok(io) => match places.take(io.peer_addr().ok()) {
                Ok(place) => Some(Ok(Coalesced::new(
                    Guarded::new(io, place, preface_timeout),
                    coalesce,
                ))),
                Err(_) => None,
            },
            Err(e) => Some(Err(e)),
        })
}

/// The store `run` serves from, with what must live as long as it.
struct Opened {
    store: Arc<dyn Store>,
    /// The data folder's lock (SQLite).
    lock: Option<std::fs::File>,
    /// The PostgreSQL store, for the cluster loop.
    cluster: Option<PgStore>,
}

/// SQLite in the data folder, or PostgreSQL with `database_url`.
async fn open_store(config: &ServerConfig, listener: &TcpListener) -> Result<Opened, RunError> {
    if let Some(url) = &config.database_url {
        let id = match &config.node_id {
            Some(id) if !id.is_empty() => id.clone(),
            _ => default_node_id(),
        };
        let addr = match &config.advertise_addr {
            Some(a) if !a.is_empty() => a.clone(),
            _ => listener
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
        };
        let node = NodeConfig {
            id,
            addr,
            lease_ttl: config.lease_ttl,
        };
        tracing::info!(node = %node.id, addr = %node.addr, "opening the PostgreSQL store");
        let pg = PgStore::open(url, node).await?;
        return Ok(Opened {
            store: Arc::new(pg.clone()),
            lock: None,
            cluster: Some(pg),
        });
    }
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        crate::store::StoreError::Damaged(format!(
            "cannot create {}: {e}",
            config.data_dir.display()
        ))
    })?;
    // Held until run() returns: one server per data folder.
    let lock = crate::store::guard::lock(&config.data_dir)?;
    Ok(Opened {
        store: Arc::new(SqliteStore::open(&config.data_dir).await?),
        lock: Some(lock),
        cluster: None,
    })
}

/// The host name (a pod's name under Kubernetes), else a fixed name.
fn default_node_id() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "bete-node".into())
}
/// A listener's serving future, plaintext or TLS.
type Serving = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// How a listener serves its connections (serve.rs).
fn serve_settings(
    config: &ServerConfig,
    listener: &'static str,
    http1: bool,
) -> crate::serve::ServeSettings {
    crate::serve::ServeSettings {
        listener,
        http1,
        idle: config.idle_connection,
        http1_idle: config.http1_idle,
        http1_requests: config.http1_max_requests,
        max_streams: MAX_STREAMS_PER_CONNECTION,
        keepalive_interval: KEEPALIVE_INTERVAL,
        keepalive_timeout: KEEPALIVE_TIMEOUT,
        // Fixed, large HTTP/2 windows for the client API: one WatchBot stream carries up to 64
        // tables, and the adaptive window's BDP pings and small default windows cost
        // WINDOW_UPDATE round trips. The web listener keeps hyper's defaults.
        windows: (!http1).then_some((4 * 1024 * 1024, 16 * 1024 * 1024)),
    }
}

/// Stops the web listener's task when `run` returns (its open connections with it).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Waits for the asked shutdown or for the store to stop writing, whichever comes first; true
/// for the store.
async fn shutdown_or_store_stopped(shutdown: impl Future<Output = ()>, store: &dyn Store) -> bool {
    tokio::select! {
        () = shutdown => false,
        _ = store.writer_stopped() => true,
    }
}

/// TableService with its two watch streams served through [`FrameCodec`] (an event's shared
/// encoding goes out without being rebuilt per recipient); every other method goes to the
/// generated server. The wire format is the schema's either way.
#[derive(Clone, Debug)]
struct TableRoutes {
    inner: TableServiceServer<TableApi>,
    api: Arc<Api>,
}

impl NamedService for TableRoutes {
    const NAME: &'static str = <TableServiceServer<TableApi> as NamedService>::NAME;
}

impl Service<http::Request<tonic::body::Body>> for TableRoutes {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let api = self.api.clone();
        match req.uri().path() {
            "/bete.v1.TableService/WatchBot" => Box::pin(async move {
                let mut grpc = Grpc::new(FrameCodec::<BotShape>::default())
                    .apply_max_message_size_config(Some(TRANSPORT_MAX_MESSAGE), None);
                Ok(grpc.server_streaming(WatchBotFrames(api), req).await)
            }),
            "/bete.v1.TableService/WatchTable" => Box::pin(async move {
                let mut grpc = Grpc::new(FrameCodec::<TableShape>::default())
                    .apply_max_message_size_config(Some(TRANSPORT_MAX_MESSAGE), None);
                Ok(grpc.server_streaming(WatchTableFrames(api), req).await)
            }),
            _ => self.inner.call(req),
        }
    }
}

/// A service whose refusals of over-size requests carry an ErrorInfo: tonic answers a request
/// over [`TRANSPORT_MAX_MESSAGE`] with a bare `OUT_OF_RANGE` before any handler runs (a
/// trailers-only response of a unary or server-streaming call); this rewrites that response into
/// the request-size gate's `INVALID_ARGUMENT` (status.rs). A client-streaming call
/// (SubmitActions) meets the limit inside its handler, which does the same (submits.rs).
#[derive(Clone, Debug)]
struct WithErrorInfo<S> {
    inner: S,
    /// The configured request limit, named in the refusal.
    request_limit: usize,
}

impl<S: NamedService> NamedService for WithErrorInfo<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> Service<http::Request<tonic::body::Body>> for WithErrorInfo<S>
where
    S: Service<
            http::Request<tonic::body::Body>,
            Response = http::Response<tonic::body::Body>,
            Error = Infallible,
        >,
    S::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let call = self.inner.call(req);
        let limit = self.request_limit;
        Box::pin(async move {
            let response = call.await?;
            let refusal = tonic::Status::from_header_map(response.headers())
                .and_then(|s| bete_base::status::over_transport_limit(&s, limit));
            Ok(match refusal {
                Some(e) => e.to_status().into_http(),
                None => response,
            })
        })
    }
}

/// Compile-time check: `run`'s future is `Send`, so callers can `tokio::spawn` it on their own
/// runtime (sqlx executors and guards held across awaits easily make it non-`Send`).
#[allow(dead_code)]
fn assert_run_is_send(listener: TcpListener, config: ServerConfig) {
    fn is_send<T: Send + 'static>(_: T) {}
    is_send(run(listener, config, std::future::ready(())));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The drain starts on the asked shutdown, or when the store's writer stops (a fail-stop):
    /// then `run` ends with `StoreStopped` and the process exits non-zero for its supervisor.
    #[tokio::test]
    async fn the_drain_starts_when_the_store_stops_writing() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path()).await.unwrap();
        let never = std::future::pending::<()>();
        let waiting = tokio::time::timeout(
            Duration::from_millis(100),
            shutdown_or_store_stopped(never, &store),
        )
        .await;
        assert!(waiting.is_err(), "neither asked nor stopped: keep serving");
        assert!(!shutdown_or_store_stopped(std::future::ready(()), &store).await);
        let stopped = store.with_stopped_writer();
        let never = std::future::pending::<()>();
        assert!(shutdown_or_store_stopped(never, &stopped).await);
    }
}
