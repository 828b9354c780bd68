//! The caller's deadline, honoured by the server: a call whose `grpc-timeout` header passes
//! before the server is done ends with DEADLINE_EXCEEDED (reason DEADLINE_EXCEEDED), and the
//! handler's work for it is dropped.
//!
//! tonic's own accept loop applied the header; the hyper loop of serve.rs does not, so this
//! layer does, on both listeners (inside tonic-web on the web listener, so a gRPC-Web call gets
//! its trailers encoded as any other). It bounds the whole call: a unary call's handler, and a
//! stream until it ends (the stream is cut with DEADLINE_EXCEEDED trailers), as gRPC defines a
//! deadline and as TableService's documentation promises for SubmitActions.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Bytes, Service, http};
use tower::Layer;

use bete_base::status::ServerError;

/// The header a gRPC client sends its deadline in.
const GRPC_TIMEOUT: &str = "grpc-timeout";

/// The longest deadline taken as one: `grpc-timeout` allows 99,999,999 hours, which would
/// overflow the clock; longer ones are no deadline at all in practice.
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// Wraps the gRPC routes.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeadlineLayer;

impl<S> Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;
    fn layer(&self, inner: S) -> Deadline<S> {
        Deadline { inner }
    }
}

#[derive(Clone, Debug)]
pub struct Deadline<S> {
    inner: S,
}

/// `grpc-timeout`'s value (gRPC over HTTP/2: 1-8 ASCII digits and a unit of H, M, S, m, u
/// or n); `Err` with what is wrong when it is malformed.
pub fn parse(value: &[u8]) -> Result<Duration, &'static str> {
    let (digits, unit) = match value.split_last() {
        Some((u, d)) if !d.is_empty() => (d, *u),
        _ => return Err("is not 1-8 digits and a unit (H, M, S, m, u, n)"),
    };
    if digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return Err("is not 1-8 digits and a unit (H, M, S, m, u, n)");
    }
    // At most 8 ASCII digits: the value fits a u64 (checked above).
    let n: u64 = digits
        .iter()
        .fold(0, |acc, d| acc * 10 + u64::from(d - b'0'));
    let d = match unit {
        b'H' => Duration::from_secs(n.saturating_mul(3600)),
        b'M' => Duration::from_secs(n.saturating_mul(60)),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return Err("has a unit other than H, M, S, m, u or n"),
    };
    Ok(d.min(MAX_TIMEOUT))
}

fn exceeded(timeout: Duration) -> ServerError {
    ServerError::DeadlineExceeded {
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    }
}

impl<S, B, RB> Service<http::Request<B>> for Deadline<S>
where
    S: Service<http::Request<B>, Response = http::Response<RB>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    RB: http_body::Body<Data = Bytes> + Send + Unpin + 'static,
    RB::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<http::Response<Body>, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let timeout = match req.headers().get(GRPC_TIMEOUT).map(|v| parse(v.as_bytes())) {
            None => None,
            Some(Ok(t)) => Some(t),
            Some(Err(what)) => {
                let refused = ServerError::field(GRPC_TIMEOUT, what)
                    .to_status()
                    .into_http();
                return Box::pin(async move { Ok(refused) });
            }
        };
        let fut = self.inner.call(req);
        Box::pin(async move {
            let Some(timeout) = timeout else {
                return Ok(fut.await?.map(Body::new));
            };
            let at = Instant::now() + timeout;
            match tokio::time::timeout_at(at, fut).await {
                // The handler did not answer in time: it is dropped, the caller told why.
                Err(_) => Ok(exceeded(timeout).to_status().into_http()),
                Ok(res) => Ok(res?.map(|inner| {
                    Body::new(DeadlineBody {
                        inner: Some(inner),
                        sleep: Box::pin(tokio::time::sleep_until(at)),
                        timeout,
                    })
                })),
            }
        })
    }
}

/// An answer's body cut at the deadline: what it sends before passes unchanged; if it has not
/// ended by then, it is dropped (ending the handler's stream) and trailers with
/// DEADLINE_EXCEEDED end the call.
struct DeadlineBody<B> {
    /// `None` once ended (by itself or by the deadline).
    inner: Option<B>,
    sleep: Pin<Box<Sleep>>,
    timeout: Duration,
}

impl<B> http_body::Body for DeadlineBody<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, B::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        // What the handler has ready goes first, even at the deadline.
        match Pin::new(inner).poll_frame(cx) {
            Poll::Ready(None) => {
                self.inner = None;
                return Poll::Ready(None);
            }
            Poll::Ready(Some(frame)) => return Poll::Ready(Some(frame)),
            Poll::Pending => {}
        }
        if self.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.inner = None;
        let mut trailers = http::HeaderMap::new();
        // `add_header` fails only on a message that is not a valid header value; ours is ASCII.
        let _ = exceeded(self.timeout).to_status().add_header(&mut trailers);
        Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::convert::Infallible;

    use http_body_util::BodyExt as _;
    use tonic_types::StatusExt as _;

    use super::*;

    #[test]
    fn parses_every_unit_and_refuses_malformed_values() {
        assert_eq!(parse(b"2H"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse(b"3M"), Ok(Duration::from_secs(180)));
        assert_eq!(parse(b"4S"), Ok(Duration::from_secs(4)));
        assert_eq!(parse(b"250m"), Ok(Duration::from_millis(250)));
        assert_eq!(parse(b"7u"), Ok(Duration::from_micros(7)));
        assert_eq!(parse(b"99999999n"), Ok(Duration::from_nanos(99_999_999)));
        assert_eq!(parse(b"99999999H"), Ok(MAX_TIMEOUT));
        for bad in [
            &b""[..],
            b"m",
            b"100",
            b"123456789m",
            b"1x",
            b"-1S",
            b"1.5S",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    /// A handler slower than the deadline is answered DEADLINE_EXCEEDED when the deadline
    /// passes; a fast one is answered as usual; a stream still open at the deadline ends with
    /// DEADLINE_EXCEEDED trailers after what it sent before.
    #[tokio::test]
    async fn a_slow_handler_or_stream_ends_at_the_deadline() {
        let inner = tower::service_fn(|req: http::Request<()>| async move {
            match req.uri().path() {
                "/slow" => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    Ok::<_, Infallible>(http::Response::new(Body::empty()))
                }
                "/stream" => {
                    let (tx, rx) = tokio::sync::mpsc::channel::<
                        Result<http_body::Frame<Bytes>, Infallible>,
                    >(4);
                    tx.send(Ok(http_body::Frame::data(Bytes::from_static(b"first"))))
                        .await
                        .unwrap();
                    // Kept open: the stream would go on for good.
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        drop(tx);
                    });
                    let body = http_body_util::StreamBody::new(
                        tokio_stream::wrappers::ReceiverStream::new(rx),
                    );
                    Ok(http::Response::new(Body::new(body)))
                }
                _ => Ok(http::Response::new(Body::empty())),
            }
        });
        let mut svc = DeadlineLayer.layer(inner);
        let req = |path: &str, timeout: &str| {
            http::Request::builder()
                .uri(path)
                .header(GRPC_TIMEOUT, timeout)
                .body(())
                .unwrap()
        };
        let started = Instant::now();
        let res = svc.call(req("/slow", "200m")).await.unwrap();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(60), "{waited:?}");
        let status = tonic::Status::from_header_map(res.headers()).unwrap();
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
        assert_eq!(
            status.get_error_details().error_info().unwrap().reason,
            "DEADLINE_EXCEEDED"
        );

        let fast = svc.call(req("/fast", "200m")).await.unwrap();
        assert!(fast.headers().get("grpc-status").is_none());

        let refused = svc.call(req("/fast", "soon")).await.unwrap();
        let status = tonic::Status::from_header_map(refused.headers()).unwrap();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);

        let started = Instant::now();
        let mut body = svc.call(req("/stream", "300m")).await.unwrap().into_body();
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), Bytes::from_static(b"first"));
        let last = body.frame().await.unwrap().unwrap();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert!(waited < Duration::from_secs(3600), "{waited:?}");
        let trailers = last.into_trailers().unwrap();
        let status = tonic::Status::from_header_map(&trailers).unwrap();
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
        assert!(body.frame().await.is_none());
        assert!(http_body::Body::is_end_stream(&body));
    }
}
