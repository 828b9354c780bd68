//! The page's calls multiplexed on one WebSocket per tab.
//!
//! Over plain HTTP/1.1 a browser opens at most six connections to a server, and every live
//! table or ladder a tab follows holds one for its stream: a seventh tab waited forever. A
//! WebSocket does not count against that limit, so the page (clients/web/src/mux.ts) sends
//! each gRPC-Web call as frames on its tab's socket, and this module makes each one a request
//! to the very same gRPC-Web routes (auth, limits and load shedding included), streaming the
//! response back. Over TLS the page uses HTTP/2 instead, which multiplexes by itself.
//!
//! Frames, binary, every one starting with a kind byte and a call id (u32, big-endian):
//! - page → server `1 open`: a u32 length, that many bytes of JSON `{path, headers: [[k, v]]}`,
//!   then the request body (a gRPC-Web request is whole: no client streaming).
//! - page → server `2 cancel`.
//! - server → page `1 head`: JSON `{status, headers: [[k, v]]}`; `2 data`: response body bytes;
//!   `3 end`; `4 fail`: a UTF-8 reason (the call could not be made).
//!
//! Subscriptions (server-streaming calls) open on one socket are limited
//! (`--web-max-subscriptions`): one over the limit is answered as gRPC-Web answers a refused
//! call, a `head` whose headers hold the status (`RESOURCE_EXHAUSTED`, reason `TOO_MANY_STREAMS`,
//! metadata `limit`, a message naming the limit) and then `end`; the page shows it like any
//! other refusal.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use axum::body::{Body, Bytes};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderName, HeaderValue, Method, Request};
use axum::response::Response;
use http_body_util::BodyExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tower::{Service, ServiceExt as _};

use bete_base::shutdown::Shutdown;
use bete_base::status::ServerError;

/// Calls open on one socket at most (subscriptions and unary calls together): a tab follows a
/// table or a ladder, with a few unary calls.
const MAX_CALLS: usize = 64;
/// The largest frame a page may send: the server's transport limit for a message, plus room.
const MAX_FRAME: usize = (1 << 20) + 4096;
/// Frames waiting for a page that reads slowly; then the calls wait (backpressure).
const OUTBOX: usize = 64;

const OPEN: u8 = 1;
const CANCEL: u8 = 2;
const HEAD: u8 = 1;
const DATA: u8 = 2;
const END: u8 = 3;
const FAIL: u8 = 4;

/// The paths (`/bete.v1.Service/Method`) of the server-streaming methods: the subscriptions.
/// Read from the schema's descriptors: a new streaming method is counted without a change here.
static SUBSCRIPTIONS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    use prost::Message as _;
    // The set is generated at build time from proto/ (bete-api's tests decode it); an empty
    // set, were it ever unreadable, would leave only MAX_CALLS as a bound.
    let set =
        prost_types::FileDescriptorSet::decode(bete_api::FILE_DESCRIPTOR_SET).unwrap_or_default();
    set.file
        .iter()
        .flat_map(|f| {
            f.service.iter().flat_map(move |s| {
                s.method
                    .iter()
                    .filter(|m| m.server_streaming())
                    .map(move |m| format!("/{}.{}/{}", f.package(), s.name(), m.name()))
            })
        })
        .collect()
});

#[derive(Deserialize)]
struct Open {
    path: String,
    headers: Vec<(String, String)>,
}

#[derive(Serialize)]
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

/// Answers the upgrade; the socket then carries calls to `calls`, at most `max_subscriptions`
/// of them subscriptions, until either side closes it or the server drains.
pub fn upgrade<S>(
    ws: WebSocketUpgrade,
    calls: S,
    stop: Shutdown,
    max_subscriptions: usize,
) -> Response
where
    S: Service<Request<Body>, Response = axum::http::Response<tonic::body::Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    S::Error: std::fmt::Display + Send,
{
    ws.max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| run(socket, calls, stop, max_subscriptions))
}

fn frame(kind: u8, id: u32, rest: &[u8]) -> Message {
    let mut b = Vec::with_capacity(5 + rest.len());
    b.push(kind);
    b.extend_from_slice(&id.to_be_bytes());
    b.extend_from_slice(rest);
    Message::Binary(Bytes::from(b))
}

/// The answer to a call refused on the socket itself: gRPC-Web's "trailers-only" response, the
/// status in the head's headers (built where every status is, status.rs).
fn refusal(id: u32, e: &ServerError) -> Message {
    let res = e.to_status().into_http::<tonic::body::Body>();
    let head = Head {
        status: 200,
        headers: res
            .headers()
            .iter()
            .filter(|(k, _)| *k != axum::http::header::CONTENT_TYPE)
            .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
            .chain([(
                "content-type".to_string(),
                "application/grpc-web+proto".to_string(),
            )])
            .collect(),
    };
    // Serialising a struct of strings and a number cannot fail.
    frame(HEAD, id, &serde_json::to_vec(&head).unwrap_or_default())
}

async fn run<S>(mut socket: WebSocket, calls: S, stop: Shutdown, max_subscriptions: usize)
where
    S: Service<Request<Body>, Response = axum::http::Response<tonic::body::Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    S::Error: std::fmt::Display + Send,
{
    let (out, mut outbox) = mpsc::channel::<Message>(OUTBOX);
    let mut running: HashMap<u32, tokio::task::AbortHandle> = HashMap::new();
    // The calls of `running` that are subscriptions.
    let mut subscribed: HashSet<u32> = HashSet::new();
    let mut tasks: JoinSet<u32> = JoinSet::new();
    let mut stopped = std::pin::pin!(stop.stopped());
    loop {
        tokio::select! {
            () = &mut stopped => break,
            Some(m) = outbox.recv() => {
                if socket.send(m).await.is_err() {
                    break;
                }
            }
            Some(Ok(id)) = tasks.join_next() => {
                running.remove(&id);
                subscribed.remove(&id);
            }
            m = socket.recv() => {
                let bytes = match m {
                    Some(Ok(Message::Binary(b))) => b,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    // Text, close, an error or the end: the page is gone or speaks no mux.
                    _ => break,
                };
                let Some((&kind, rest)) = bytes.split_first() else { break };
                let Some(id) = rest.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])) else { break };
                let rest = bytes.slice(5..);
                match kind {
                    OPEN => {
                        if running.contains_key(&id) {
                            break;
                        }
                        // Refusals go on the socket from here: this loop is the outbox's only
                        // reader, so waiting for room in a full outbox would wait for ever.
                        let req = match request(&rest) {
                            Ok(r) => r,
                            Err(why) => {
                                if socket.send(frame(FAIL, id, why.as_bytes())).await.is_err() {
                                    break;
                                }
                                continue;
                            }
                        };
                        if running.len() >= MAX_CALLS {
                            let full = frame(FAIL, id, b"too many calls on one socket");
                            if socket.send(full).await.is_err() {
                                break;
                            }
                            continue;
                        }
                        let subscription = SUBSCRIPTIONS.contains(req.uri().path());
                        if subscription && subscribed.len() >= max_subscriptions {
                            let limit = max_subscriptions;
                            let refused = ServerError::TooManySubscriptions { limit };
                            if socket.send(refusal(id, &refused)).await.is_err()
                                || socket.send(frame(END, id, &[])).await.is_err()
                            {
                                break;
                            }
                            continue;
                        }
                        let handle = tasks.spawn(call(id, req, calls.clone(), out.clone()));
                        running.insert(id, handle);
                        if subscription {
                            subscribed.insert(id);
                        }
                    }
                    CANCEL => {
                        if let Some(h) = running.remove(&id) {
                            h.abort();
                        }
                        subscribed.remove(&id);
                    }
                    _ => break,
                }
            }
        }
    }
    tasks.abort_all();
    let _ = socket.send(Message::Close(None)).await;
}

/// The HTTP request an `open` frame asks for: a POST to one of the gRPC-Web routes.
fn request(rest: &Bytes) -> Result<Request<Body>, String> {
    let len = rest
        .get(..4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("open frame too short")?;
    let json = rest.get(4..4 + len).ok_or("open frame too short")?;
    let open: Open = serde_json::from_slice(json).map_err(|e| format!("bad open frame: {e}"))?;
    if !open.path.starts_with('/') || open.path.contains("://") {
        return Err("bad path".into());
    }
    let mut req = Request::builder().method(Method::POST).uri(&open.path);
    for (k, v) in &open.headers {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| format!("bad header {k}"))?;
        let value = HeaderValue::from_str(v).map_err(|_| format!("bad value of header {k}"))?;
        req = req.header(name, value);
    }
    req.body(Body::from(rest.slice(4 + len..)))
        .map_err(|e| format!("bad request: {e}"))
}

async fn call<S>(id: u32, req: Request<Body>, calls: S, out: mpsc::Sender<Message>) -> u32
where
    S: Service<Request<Body>, Response = axum::http::Response<tonic::body::Body>> + Send,
    S::Future: Send,
    S::Error: std::fmt::Display,
{
    let res = match calls.oneshot(req).await {
        Ok(r) => r,
        Err(e) => {
            let _ = out.send(frame(FAIL, id, e.to_string().as_bytes())).await;
            return id;
        }
    };
    let head = Head {
        status: res.status().as_u16(),
        headers: res
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
            .collect(),
    };
    // Serialising a struct of strings and a number cannot fail.
    let head = serde_json::to_vec(&head).unwrap_or_default();
    if out.send(frame(HEAD, id, &head)).await.is_err() {
        return id;
    }
    let mut body = res.into_body();
    while let Some(f) = body.frame().await {
        match f {
            // gRPC-Web carries its trailers in the body: only data frames come here.
            Ok(f) => {
                if let Ok(data) = f.into_data()
                    && out.send(frame(DATA, id, &data)).await.is_err()
                {
                    return id;
                }
            }
            Err(e) => {
                let _ = out.send(frame(FAIL, id, e.to_string().as_bytes())).await;
                return id;
            }
        }
    }
    let _ = out.send(frame(END, id, &[])).await;
    id
}

#[cfg(test)]
mod tests {
    use super::SUBSCRIPTIONS;

    #[test]
    fn the_subscriptions_are_the_server_streaming_methods() {
        for path in [
            "/bete.v1.TableService/WatchTable",
            "/bete.v1.TableService/WatchBot",
            "/bete.v1.TableService/SubmitActions",
            "/bete.v1.LadderService/WatchLadderResults",
        ] {
            assert!(
                SUBSCRIPTIONS.contains(path),
                "{path} in {:?}",
                *SUBSCRIPTIONS
            );
        }
        for path in [
            "/bete.v1.TableService/ListTables",
            "/bete.v1.LadderService/GetCrosstable",
        ] {
            assert!(!SUBSCRIPTIONS.contains(path), "{path}");
        }
    }
}
