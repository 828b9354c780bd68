//! The page's WebSocket (`/bete.web/mux`, service/server/src/web_mux.rs) spoken by a native
//! client over loopback, as clients/web/src/mux.ts speaks it: gRPC-Web calls as frames on one
//! socket. A subscription streams a live table's events; a unary call answers beside it; one
//! subscription over the socket's limit is refused with a gRPC status naming the limit (reason
//! TOO_MANY_STREAMS), unary calls still pass, and cancelling a subscription frees its place.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::time::Duration;

use bete_api::pb;
use common::*;
use futures_util::{SinkExt as _, StreamExt as _};
use prost::Message as _;
use tokio_tungstenite::tungstenite::Message as Ws;
use tonic::Code;
use tonic_types::StatusExt as _;

const OPEN: u8 = 1;
const CANCEL: u8 = 2;
const HEAD: u8 = 1;
const DATA: u8 = 2;
const END: u8 = 3;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One socket, with the frames read so far for calls not yet asked about.
struct Mux {
    ws: Socket,
    stash: HashMap<u32, Vec<(u8, Vec<u8>)>>,
}

impl Mux {
    async fn connect(web: std::net::SocketAddr) -> Mux {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{web}/bete.web/mux"))
            .await
            .unwrap();
        Mux {
            ws,
            stash: HashMap::new(),
        }
    }

    /// Sends an `open` frame: a gRPC-Web request to `path` with `msg`, as the page sends it.
    async fn open(&mut self, id: u32, path: &str, msg: &impl prost::Message) {
        let head = serde_json::json!({
            "path": path,
            "headers": [["content-type", "application/grpc-web+proto"], ["x-grpc-web", "1"]],
        })
        .to_string();
        let body = msg.encode_to_vec();
        let mut f = vec![OPEN];
        f.extend_from_slice(&id.to_be_bytes());
        f.extend_from_slice(&(head.len() as u32).to_be_bytes());
        f.extend_from_slice(head.as_bytes());
        f.push(0);
        f.extend_from_slice(&(body.len() as u32).to_be_bytes());
        f.extend_from_slice(&body);
        self.ws.send(Ws::Binary(f.into())).await.unwrap();
    }

    async fn cancel(&mut self, id: u32) {
        let mut f = vec![CANCEL];
        f.extend_from_slice(&id.to_be_bytes());
        self.ws.send(Ws::Binary(f.into())).await.unwrap();
    }

    /// The next frame of call `id` (kind, rest), within 20 s.
    async fn next(&mut self, id: u32) -> (u8, Vec<u8>) {
        if let Some(q) = self.stash.get_mut(&id)
            && !q.is_empty()
        {
            return q.remove(0);
        }
        loop {
            let m = timeout(20, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no frame for call {id} within 20 s"))
                .expect("the socket ended")
                .unwrap();
            let Ws::Binary(b) = m else { continue };
            let got = u32::from_be_bytes([b[1], b[2], b[3], b[4]]);
            let frame = (b[0], b[5..].to_vec());
            if got == id {
                return frame;
            }
            self.stash.entry(got).or_default().push(frame);
        }
    }

    /// The `head` of call `id`: its HTTP status and headers.
    async fn head(&mut self, id: u32) -> (u16, axum::http::HeaderMap) {
        let (kind, rest) = self.next(id).await;
        assert_eq!(
            kind,
            HEAD,
            "call {id}: a head first, got kind {kind}: {}",
            String::from_utf8_lossy(&rest)
        );
        let v: serde_json::Value = serde_json::from_slice(&rest).unwrap();
        let mut headers = axum::http::HeaderMap::new();
        for h in v["headers"].as_array().unwrap() {
            headers.append(
                axum::http::HeaderName::from_bytes(h[0].as_str().unwrap().as_bytes()).unwrap(),
                h[1].as_str().unwrap().parse().unwrap(),
            );
        }
        (v["status"].as_u64().unwrap() as u16, headers)
    }
}

/// A call's gRPC-Web body, read frame by frame: its messages as they complete.
#[derive(Default)]
struct Body {
    buf: Vec<u8>,
    trailers: Option<String>,
}

impl Body {
    /// Takes one `data` frame's bytes; returns the messages it completed.
    fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while self.buf.len() >= 5 {
            let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]);
            let end = 5 + len as usize;
            if self.buf.len() < end {
                break;
            }
            let payload = self.buf[5..end].to_vec();
            if self.buf[0] & 0x80 != 0 {
                self.trailers = Some(String::from_utf8(payload).unwrap());
            } else {
                out.push(payload);
            }
            self.buf.drain(..end);
        }
        out
    }
}

/// A long all-house-bot table: its events keep coming while the test runs.
async fn live_table(bot: &mut Client) -> String {
    bot.create_table(pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats: 3,
        house_bots: (0..3)
            .map(|s| house(s, pb::HouseBotPolicy::Random))
            .collect(),
        config: [("rounds".to_string(), "20".to_string())].into(),
        visibility: pb::Visibility::Listed.into(),
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .table
    .unwrap()
    .table_id
}

/// Reads call `id`'s WatchTable stream until it has a snapshot and `events` events after it.
async fn watch_until_events(mux: &mut Mux, id: u32, events: usize) -> Vec<pb::WatchTableResponse> {
    let (status, headers) = mux.head(id).await;
    assert_eq!(status, 200);
    assert!(
        headers.get("grpc-status").is_none(),
        "call {id} is not refused: {headers:?}"
    );
    let mut body = Body::default();
    let mut got = Vec::new();
    while got
        .iter()
        .filter(|m: &&pb::WatchTableResponse| {
            matches!(m.kind, Some(pb::watch_table_response::Kind::Event(_)))
        })
        .count()
        < events
    {
        let (kind, rest) = mux.next(id).await;
        assert_eq!(kind, DATA, "call {id}: {}", String::from_utf8_lossy(&rest));
        for m in body.push(&rest) {
            got.push(pb::WatchTableResponse::decode(m.as_slice()).unwrap());
        }
    }
    got
}

const WATCH: &str = "/bete.v1.TableService/WatchTable";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_socket_streams_calls_and_refuses_a_subscription_over_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let limit = 3;
    let server = TestServer::start(dir.path().to_path_buf(), |c| {
        c.web_addr = Some(web);
        c.web_max_subscriptions = limit;
        c.house_delay = Duration::from_millis(20);
    })
    .await;
    let ch = server.channel().await;
    let mut owner = register(&ch, "mux-owner").await.client;
    let table = live_table(&mut owner).await;
    let watch = pb::WatchTableRequest {
        table_id: table.clone(),
        ..Default::default()
    };

    let mut mux = Mux::connect(web).await;
    // A subscription: the table's snapshot, then its events in order, as they happen.
    mux.open(1, WATCH, &watch).await;
    let first = watch_until_events(&mut mux, 1, 3).await;
    assert!(
        matches!(
            first[0].kind,
            Some(pb::watch_table_response::Kind::Snapshot(_))
        ),
        "a snapshot first: {:?}",
        first[0]
    );
    let seqs: Vec<u64> = first
        .iter()
        .filter_map(|m| match &m.kind {
            Some(pb::watch_table_response::Kind::Event(e)) => Some(e.seq),
            _ => None,
        })
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "events in order, none missing: {seqs:?}"
    );

    // Up to the limit, on the same socket.
    for id in 2..=limit as u32 {
        mux.open(id, WATCH, &watch).await;
        watch_until_events(&mut mux, id, 1).await;
    }

    // One over it: refused as gRPC-Web refuses a call, the status in the head, then the end.
    let over = limit as u32 + 1;
    mux.open(over, WATCH, &watch).await;
    let (status, headers) = mux.head(over).await;
    assert_eq!(status, 200, "gRPC-Web carries the status in its headers");
    assert_eq!(
        headers.get("content-type").unwrap(),
        "application/grpc-web+proto"
    );
    let refused = tonic::Status::from_header_map(&headers).expect("a gRPC status in the head");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(reason(&refused), "TOO_MANY_STREAMS");
    assert!(
        refused
            .message()
            .contains(&format!("at most {limit} live streams")),
        "the message names the limit: {}",
        refused.message()
    );
    let info = refused.get_error_details().error_info().cloned().unwrap();
    assert_eq!(info.metadata.get("limit"), Some(&limit.to_string()));
    assert_eq!(mux.next(over).await.0, END, "the refused call ends");

    // A unary call is not a subscription: it is answered at the limit.
    mux.open(
        50,
        "/bete.v1.TableService/ListTables",
        &pb::ListTablesRequest::default(),
    )
    .await;
    let (status, headers) = mux.head(50).await;
    assert_eq!(status, 200);
    assert!(headers.get("grpc-status").is_none(), "{headers:?}");
    let mut body = Body::default();
    let mut listed = None;
    loop {
        let (kind, rest) = mux.next(50).await;
        if kind == END {
            break;
        }
        assert_eq!(kind, DATA);
        for m in body.push(&rest) {
            listed = Some(pb::ListTablesResponse::decode(m.as_slice()).unwrap());
        }
    }
    assert!(
        listed.unwrap().tables.iter().any(|t| t.table_id == table),
        "ListTables on the socket lists the table"
    );
    assert!(
        body.trailers.unwrap().contains("grpc-status:0"),
        "the unary call ends with an OK status"
    );

    // The subscriptions still stream; cancelling one frees its place for a new one.
    mux.cancel(2).await;
    // The socket handles frames in order: the cancel is done before the next open is read.
    mux.open(60, WATCH, &watch).await;
    watch_until_events(&mut mux, 60, 1).await;
    // (Frames of call 2 sent before the cancel may still be in the stash: none comes after.)
    let mut sub1 = Body::default();
    let mut more = 0;
    while more < 2 {
        let (kind, rest) = mux.next(1).await;
        assert_eq!(kind, DATA);
        more += sub1.push(&rest).len();
    }
    // And the limit holds again.
    mux.open(61, WATCH, &watch).await;
    let (_, headers) = mux.head(61).await;
    let refused = tonic::Status::from_header_map(&headers).expect("refused again");
    assert_eq!(reason(&refused), "TOO_MANY_STREAMS");

    // A second socket (another tab) has its own limit.
    let mut tab2 = Mux::connect(web).await;
    for id in 1..=limit as u32 {
        tab2.open(id, WATCH, &watch).await;
        watch_until_events(&mut tab2, id, 1).await;
    }
    drop(tab2);
    server.stop().await;
}
