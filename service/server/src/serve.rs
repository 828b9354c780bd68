//! One listener's accept loop: each connection served by hyper (HTTP/2; HTTP/1.1 too on the web
//! listener) and retired when it has been idle a while: an HTTP/2 connection with no call in
//! progress gets a GOAWAY (hyper's graceful shutdown: the client knows to dial again), an
//! idle HTTP/1.1 keep-alive connection is closed, and one that has made its request limit is
//! closed after its last answer.
//!
//! tonic's own loop (`serve_with_incoming_shutdown`) has none of this: 1,000 HTTP/2
//! connections that answered PINGs and opened no stream were held for good. This loop does
//! what tonic's does besides (the connection's info in each request's extensions, a graceful
//! shutdown of every connection on the signal, then a wait for them to close).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio_stream::{Stream, StreamExt as _};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::body::Body;
use tonic::codegen::{Service, http};
use tonic::transport::server::Connected;
use tower::ServiceExt as _;

use bete_base::metrics::{ListenerLabels, Metrics};

/// How one listener serves its connections.
#[derive(Clone, Debug)]
pub struct ServeSettings {
    /// `grpc` or `web` (metrics).
    pub listener: &'static str,
    /// Whether HTTP/1.1 is spoken (the web listener); else HTTP/2 only.
    pub http1: bool,
    /// An HTTP/2 connection with no call in progress this long gets a GOAWAY.
    pub idle: Duration,
    /// An HTTP/1.1 connection with no request in progress this long is closed.
    pub http1_idle: Duration,
    /// HTTP/1.1 requests one connection may make; after the last answer it is closed (0: no
    /// limit).
    pub http1_requests: u64,
    pub max_streams: u32,
    pub keepalive_interval: Duration,
    pub keepalive_timeout: Duration,
    /// Fixed HTTP/2 windows (stream, connection); `None`: hyper's adaptive defaults.
    pub windows: Option<(u32, u32)>,
}

/// Calls in progress and HTTP/1.1 requests made on one connection.
#[derive(Clone, Copy, Debug, Default)]
struct Activity {
    open: u64,
    http1_requests: u64,
}

/// Serves `svc` on every connection `incoming` yields until `stop` is cancelled; then every
/// connection is shut down gracefully and this returns once all have closed.
pub async fn serve<I, IO, S>(
    incoming: I,
    svc: S,
    settings: ServeSettings,
    metrics: Arc<Metrics>,
    stop: impl Future<Output = ()>,
) where
    I: Stream<Item = std::io::Result<IO>>,
    IO: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static,
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let builder = Arc::new(builder(&settings));
    let settings = Arc::new(settings);
    let tracker = TaskTracker::new();
    let closing = CancellationToken::new();
    {
        // Dropped when the loop ends: the listening socket closes at once.
        let incoming = incoming;
        tokio::pin!(incoming);
        tokio::pin!(stop);
        loop {
            let io = tokio::select! {
                () = &mut stop => break,
                io = incoming.next() => match io {
                    Some(Ok(io)) => io,
                    Some(Err(e)) => {
                        tracing::debug!(error = %e, "accept failed");
                        continue;
                    }
                    None => break,
                },
            };
            tracker.spawn(connection(
                io,
                svc.clone(),
                builder.clone(),
                settings.clone(),
                metrics.clone(),
                closing.clone(),
            ));
        }
    }
    closing.cancel();
    tracker.close();
    tracker.wait().await;
}

fn builder(settings: &ServeSettings) -> Builder<TokioExecutor> {
    let mut b = Builder::new(TokioExecutor::new());
    if !settings.http1 {
        b = b.http2_only();
    }
    {
        let mut h2 = b.http2();
        h2.timer(TokioTimer::new())
            .max_concurrent_streams(settings.max_streams)
            .keep_alive_interval(Some(settings.keepalive_interval))
            .keep_alive_timeout(settings.keepalive_timeout);
        if let Some((stream, conn)) = settings.windows {
            h2.adaptive_window(false)
                .initial_stream_window_size(stream)
                .initial_connection_window_size(conn);
        }
    }
    // hyper enforces its HTTP/1.1 header read timeout only with a timer.
    b.http1().timer(TokioTimer::new());
    b
}

/// One connection, from its first byte to its close.
async fn connection<IO, S>(
    io: IO,
    svc: S,
    builder: Arc<Builder<TokioExecutor>>,
    settings: Arc<ServeSettings>,
    metrics: Arc<Metrics>,
    closing: CancellationToken,
) where
    IO: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static,
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let info = io.connect_info();
    let (activity, watching) = watch::channel(Activity::default());
    let activity = Arc::new(activity);
    let hyper_svc = {
        let activity = activity.clone();
        hyper::service::service_fn(move |req: http::Request<Incoming>| {
            let mut req = req.map(Body::new);
            // What tonic's own loop puts there: `Request::remote_addr`, `peer_certs`.
            req.extensions_mut().insert(info.clone());
            let http1 = req.version() < http::Version::HTTP_2;
            activity.send_modify(|a| {
                a.open += 1;
                if http1 {
                    a.http1_requests += 1;
                }
            });
            let call = CallInProgress(activity.clone());
            let svc = svc.clone();
            async move {
                let res = svc.oneshot(req).await?;
                // The call is in progress until its answer's body is done (a stream's end).
                Ok::<_, Infallible>(res.map(|b| {
                    Body::new(Tracked {
                        inner: b,
                        _call: call,
                    })
                }))
            }
        })
    };
    // With upgrades: the page's WebSocket (web_mux.rs) is an HTTP/1.1 upgrade. An upgraded
    // connection leaves this loop (hyper hands its socket to the upgrade), keeping its place
    // under the listener's cap for as long as the socket lives.
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), hyper_svc);
    tokio::pin!(conn);
    let retire = retire_when_idle(watching, settings.clone());
    tokio::pin!(retire);
    let mut shutting = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "connection ended");
                }
                break;
            }
            () = &mut retire, if !shutting => {
                shutting = true;
                metrics
                    .connections_retired
                    .get_or_create(&ListenerLabels { listener: settings.listener })
                    .inc();
                conn.as_mut().graceful_shutdown();
            }
            () = closing.cancelled(), if !shutting => {
                shutting = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Resolves when the connection should go: idle (no call in progress) for its listener's idle
/// time, or at its HTTP/1.1 request limit with no request in progress.
async fn retire_when_idle(mut watching: watch::Receiver<Activity>, settings: Arc<ServeSettings>) {
    loop {
        let now = *watching.borrow_and_update();
        if now.open == 0 {
            if settings.http1_requests > 0 && now.http1_requests >= settings.http1_requests {
                return;
            }
            // A connection that made HTTP/1.1 requests is an HTTP/1.1 one; on the web
            // listener one that made none yet is held to the shorter time (an HTTP/2 client
            // opens a stream at once).
            let idle = if now.http1_requests > 0 {
                settings.http1_idle
            } else if settings.http1 {
                settings.http1_idle.min(settings.idle)
            } else {
                settings.idle
            };
            tokio::select! {
                () = tokio::time::sleep(idle) => return,
                r = watching.changed() => if r.is_err() { return },
            }
        } else if watching.changed().await.is_err() {
            return;
        }
    }
}

/// Counts a call as in progress until dropped.
struct CallInProgress(Arc<watch::Sender<Activity>>);

impl Drop for CallInProgress {
    fn drop(&mut self) {
        self.0.send_modify(|a| a.open = a.open.saturating_sub(1));
    }
}

/// An answer's body that holds its call in progress until it is dropped.
struct Tracked {
    inner: Body,
    _call: CallInProgress,
}

impl http_body::Body for Tracked {
    type Data = <Body as http_body::Body>::Data;
    type Error = <Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
