//! What every call meets around its service: load shedding (a bound on the calls in progress),
//! the caller's trace context (`traceparent`, see trace.rs), and the status of an undecodable
//! request rewritten to INVALID_ARGUMENT, and the tarpit: an address refused
//! (RESOURCE_EXHAUSTED) faster than its rate gets its refusals a while later, so a client that
//! ignores RetryInfo spins at the pace of its own concurrency, not at the server's expense.
//!
//! tonic reports a request that does not decode as INTERNAL ("failed to decode Protobuf
//! message"), which docs/operations.md says to alert on as store trouble, and without an
//! ErrorInfo. It is the client's fault, so it becomes INVALID_ARGUMENT with the usual ErrorInfo.

use std::net::IpAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use opentelemetry::context::FutureExt as _;
use tokio::sync::Semaphore;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service, http};
use tower::Layer;

use crate::limits::Rate;
use bete_base::metrics::Metrics;
use bete_base::status::ServerError;

/// How long a shed call is told to wait.
pub const SHED_RETRY_AFTER: Duration = Duration::from_millis(100);
/// How long a refusal past its address's rate is held before it is sent. Held after the
/// in-flight permit is given back: a held refusal costs a timer, not a place; the address's
/// held refusals are bounded by its connections and their streams.
pub const TARPIT_DELAY: Duration = Duration::from_secs(1);

/// Refusals per address: the GCRA budget past which they are held back.
#[derive(Debug)]
struct Tarpit {
    refusals: governor::DefaultKeyedRateLimiter<IpAddr>,
    metrics: Arc<Metrics>,
}

/// Wraps the whole router.
#[derive(Clone, Debug)]
pub struct EdgeLayer {
    /// `None`: no bound.
    in_flight: Option<Arc<Semaphore>>,
    /// `None`: refusals are sent at once.
    tarpit: Option<Arc<Tarpit>>,
}

impl EdgeLayer {
    /// At most `max_in_flight` calls in progress (0: no bound).
    pub fn new(max_in_flight: usize) -> EdgeLayer {
        EdgeLayer {
            in_flight: (max_in_flight > 0)
                .then(|| Arc::new(Semaphore::new(max_in_flight.min(Semaphore::MAX_PERMITS)))),
            tarpit: None,
        }
    }

    /// Refusals past `rate` per address (IPv6: per /64) are held [`TARPIT_DELAY`] first.
    pub fn with_tarpit(mut self, rate: Rate, metrics: Arc<Metrics>) -> EdgeLayer {
        self.tarpit = rate.quota().map(|q| {
            Arc::new(Tarpit {
                refusals: governor::RateLimiter::keyed(q),
                metrics,
            })
        });
        self
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;
    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            in_flight: self.in_flight.clone(),
            tarpit: self.tarpit.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Edge<S> {
    inner: S,
    in_flight: Option<Arc<Semaphore>>,
    tarpit: Option<Arc<Tarpit>>,
}

impl<S, B> Service<http::Request<B>> for Edge<S>
where
    S: Service<http::Request<B>, Response = http::Response<Body>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<http::Response<Body>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // Health answers even under load: shedding it would have the orchestrator restart a
        // server that is merely busy.
        let exempt = req.uri().path().starts_with("/grpc.health.");
        let permit = match &self.in_flight {
            Some(sem) if !exempt => match sem.clone().try_acquire_owned() {
                Ok(p) => Some(p),
                Err(_) => {
                    let shed = if is_grpc(req.headers()) {
                        ServerError::Overloaded {
                            retry_after: SHED_RETRY_AFTER,
                        }
                        .to_status()
                        .into_http()
                    } else {
                        // The web page's files (the web listener): plain HTTP.
                        unavailable()
                    };
                    return Box::pin(async move { Ok(shed) });
                }
            },
            _ => None,
        };
        // A call with a `traceparent`: its handler runs with the caller's context current, so
        // the call's span (service.rs, `Api::call`) is a child of the caller's span.
        let parent = bete_base::trace::remote_parent(req.headers());
        let tarpit = self.tarpit.clone().zip(peer(&req));
        let fut = self.inner.call(req);
        Box::pin(async move {
            // Held until the response's head is ready: a whole unary call, a stream's setup.
            let (res, trace_id) = match parent {
                Some(cx) => {
                    let trace_id = bete_base::trace::trace_id(&cx);
                    (fut.with_context(cx).await, Some(trace_id))
                }
                None => (fut.await, None),
            };
            drop(permit);
            // A refusal is a trailers-only answer: its status is in the head.
            let refused = res
                .as_ref()
                .is_ok_and(|r| r.headers().get("grpc-status").is_some_and(|v| v == "8"));
            if refused
                && let Some((pit, ip)) = tarpit
                && pit.refusals.check_key(&ip).is_err()
            {
                pit.metrics.refusals_delayed.inc();
                tokio::time::sleep(TARPIT_DELAY).await;
            }
            res.map(|r| {
                let mut r = undecodable_is_invalid(r);
                if let Some(v) = trace_id.and_then(|t| http::HeaderValue::from_str(&t).ok()) {
                    r.headers_mut().insert(bete_base::trace::TRACE_ID_HEADER, v);
                }
                r
            })
        })
    }
}

/// The caller's address share (conn.rs), from the connection's info (plain or TLS).
fn peer<B>(req: &http::Request<B>) -> Option<IpAddr> {
    use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
    let ext = req.extensions();
    ext.get::<TcpConnectInfo>()
        .and_then(|i| i.remote_addr())
        .or_else(|| {
            ext.get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|i| i.get_ref().remote_addr())
        })
        .map(|a| crate::conn::share_key(a.ip()))
}

/// A gRPC or gRPC-Web call (by its content type), as opposed to a request for a page file.
fn is_grpc(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// 503 with a Retry-After of one second, for a shed request that is not a call.
fn unavailable() -> http::Response<Body> {
    let mut r = http::Response::new(Body::empty());
    *r.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    r.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    r
}

/// A trailers-only INTERNAL answer for a request that did not decode, as INVALID_ARGUMENT.
fn undecodable_is_invalid(res: http::Response<Body>) -> http::Response<Body> {
    let h = res.headers();
    let internal = h.get("grpc-status").is_some_and(|v| v == "13");
    let undecodable = h
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|m| {
            // Percent-encoded as tonic writes it (spaces as %20), or plain.
            m.starts_with("failed%20to%20decode%20Protobuf%20message")
                || m.starts_with("failed to decode Protobuf message")
        });
    if internal && undecodable {
        ServerError::field(
            "(request)",
            "is not a valid protobuf message of this method",
        )
        .to_status()
        .into_http()
    } else {
        res
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::convert::Infallible;

    use tonic_types::StatusExt;

    use super::*;

    /// A call over the bound is shed at once with OVERLOADED and a RetryInfo; health is not;
    /// once a call ends its place is free again.
    #[tokio::test]
    async fn calls_over_the_bound_are_shed() {
        // Calls to /block wait until the gate opens; every other call answers at once.
        let gate = Arc::new(Semaphore::new(0));
        let inner = {
            let gate = gate.clone();
            tower::service_fn(move |req: http::Request<()>| {
                let gate = gate.clone();
                async move {
                    if req.uri().path() == "/block" {
                        let _ = gate.acquire().await;
                    }
                    Ok::<_, Infallible>(http::Response::new(Body::empty()))
                }
            })
        };
        let mut svc = EdgeLayer::new(1).layer(inner);
        let req = |path: &str| {
            http::Request::builder()
                .uri(path)
                .header("content-type", "application/grpc")
                .body(())
                .unwrap()
        };
        let first = tokio::spawn(svc.call(req("/block")));
        let shed = svc
            .call(req("/bete.v1.TableService/GetTable"))
            .await
            .unwrap();
        let status = tonic::Status::from_header_map(shed.headers()).unwrap();
        assert_eq!(status.code(), tonic::Code::Unavailable);
        let d = status.get_error_details();
        assert_eq!(d.error_info().unwrap().reason, "OVERLOADED");
        assert_eq!(d.retry_info().unwrap().retry_delay, Some(SHED_RETRY_AFTER));
        let health = svc.call(req("/grpc.health.v1.Health/Check")).await.unwrap();
        assert!(health.headers().get("grpc-status").is_none());
        gate.add_permits(1);
        first.await.unwrap().unwrap();
        let after = svc
            .call(req("/bete.v1.TableService/GetTable"))
            .await
            .unwrap();
        assert!(after.headers().get("grpc-status").is_none());
    }
}
