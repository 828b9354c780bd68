//! Connections from one address cannot lock out the others (issue 26): each listener has its
//! own cap and a share of it per address; an HTTP/2 connection with no call in progress gets a
//! GOAWAY; an HTTP/1.1 keep-alive connection is closed when idle or at its request limit.
//! The real server over loopback; the "attacker" dials from 127.0.0.2.
#![allow(clippy::unwrap_used)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to `to` from `from` (another loopback address).
async fn dial_from(from: &str, to: SocketAddr) -> TcpStream {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(format!("{from}:0").parse().unwrap()).unwrap();
    s.connect(to).await.unwrap()
}

/// Whether the server closes `s` (end of stream or reset) within `secs`, reading and dropping
/// whatever it sends first (its SETTINGS frame).
async fn closed_within(s: &mut TcpStream, secs: u64) -> bool {
    let mut buf = [0u8; 1024];
    timeout(secs, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// One address holds its share of each listener and no more; the others are served; the two
/// listeners' caps are separate (the gRPC listener full does not keep anyone off the web one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_holds_only_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.web_addr = Some(web);
        c.max_connections = 4;
        c.max_connections_per_address = 3;
        c.web_max_connections = 3;
        c.web_max_connections_per_address = 2;
    })
    .await;
    let ch = connect(srv.addr).await;
    // The attacker: 3 idle connections held on the gRPC listener, the 4th closed at once.
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(dial_from("127.0.0.2", srv.addr).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = dial_from("127.0.0.2", srv.addr).await;
    assert!(
        closed_within(&mut over, 2).await,
        "a connection over the address's share was not closed"
    );
    // Another address is served (its channel holds the 4th place).
    register(&ch, "beside-the-flood").await;
    // The web listener is not full because the gRPC one is: 2 from the attacker are held, the
    // 3rd is closed, and another address still gets the page.
    let mut web_held = Vec::new();
    for _ in 0..2 {
        web_held.push(dial_from("127.0.0.2", web).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut web_over = dial_from("127.0.0.2", web).await;
    assert!(
        closed_within(&mut web_over, 2).await,
        "a web connection over the address's share was not closed"
    );
    assert!(http_get(web, "/").await.starts_with("HTTP/1.1 200"));
    // The held ones are still open (their preface deadline is 10 s away).
    let mut probe = [0u8; 1];
    for s in held.iter_mut() {
        let r = tokio::time::timeout(Duration::from_millis(100), s.read(&mut probe)).await;
        assert!(
            r.is_err() || matches!(r, Ok(Ok(n)) if n > 0),
            "a connection within the share was closed"
        );
    }
    srv.stop().await;
}

/// The HTTP/2 client preface and an empty SETTINGS frame.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";

/// Speaks HTTP/2 on `s` without opening a stream: acknowledges SETTINGS, answers every PING,
/// until the server closes. Returns whether a GOAWAY came first.
async fn idle_h2(mut s: TcpStream) -> bool {
    s.write_all(H2_PREFACE).await.unwrap();
    let mut goaway = false;
    loop {
        let mut head = [0u8; 9];
        if s.read_exact(&mut head).await.is_err() {
            return goaway;
        }
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let mut payload = vec![0u8; len];
        if s.read_exact(&mut payload).await.is_err() {
            return goaway;
        }
        match (head[3], head[4] & 1) {
            // SETTINGS (not an ACK): acknowledge.
            (4, 0) => {
                let _ = s.write_all(&[0, 0, 0, 4, 1, 0, 0, 0, 0]).await;
            }
            // PING (not an ACK): answer with the same payload.
            (6, 0) => {
                let mut ack = vec![0, 0, 8, 6, 1, 0, 0, 0, 0];
                ack.extend_from_slice(&payload);
                let _ = s.write_all(&ack).await;
            }
            (7, _) => goaway = true,
            _ => {}
        }
    }
}

/// An HTTP/2 connection that answers PINGs but opens no stream gets a GOAWAY and is closed
/// after the idle time; a connection with a call in progress (a watch stream) is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_http2_connections_get_a_goaway() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.idle_connection = Duration::from_secs(1);
        c.metrics_addr = Some(metrics);
    })
    .await;
    let ch = connect(srv.addr).await;
    let bot = register(&ch, "watcher").await;
    let mut tables = client_with(&ch, Some(&bot.token));
    let mut stream = tables
        .watch_bot(bete_api::pb::WatchBotRequest::default())
        .await
        .unwrap()
        .into_inner();
    let idler = dial_from("127.0.0.2", srv.addr).await;
    let goaway = timeout(10, idle_h2(idler))
        .await
        .expect("an idle HTTP/2 connection was not closed");
    assert!(goaway, "closed without a GOAWAY");
    // The watcher's connection had a stream open the whole time: not retired (the idler's is
    // the one retirement), and its stream still answers.
    let retired = r#"bete_connections_retired_total{listener="grpc"}"#;
    assert_eq!(gauge(metrics, retired).await, 1);
    let still = tokio::time::timeout(Duration::from_millis(300), stream.message()).await;
    assert!(
        still.is_err() || matches!(still, Ok(Ok(Some(_)))),
        "the watch stream ended: {still:?}"
    );
    drop(stream);
    srv.stop().await;
}

/// Sends a keep-alive GET of the page on `s` and reads its whole answer.
async fn keepalive_get(s: &mut TcpStream) -> String {
    s.write_all(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = timeout(5, s.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "closed before the answer ended");
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out);
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .expect("no content-length");
            if out.len() >= end + 4 + len {
                return text[..end].to_string();
            }
        }
    }
}

/// The web listener's HTTP/1.1 keep-alive: a connection is closed after its request limit
/// (after its last answer), and when it waits too long for its next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_keepalive_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let web = free_addr();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.web_addr = Some(web);
        c.http1_idle = Duration::from_secs(1);
        c.http1_max_requests = 3;
    })
    .await;
    for _ in 0..100 {
        if TcpStream::connect(web).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut s = dial_from("127.0.0.2", web).await;
    for _ in 0..3 {
        assert!(keepalive_get(&mut s).await.starts_with("HTTP/1.1 200"));
    }
    assert!(
        closed_within(&mut s, 3).await,
        "not closed after its request limit"
    );
    let mut idle = dial_from("127.0.0.2", web).await;
    assert!(keepalive_get(&mut idle).await.starts_with("HTTP/1.1 200"));
    let started = std::time::Instant::now();
    assert!(
        closed_within(&mut idle, 5).await,
        "an idle keep-alive connection was not closed"
    );
    assert!(started.elapsed() >= Duration::from_millis(500));
    srv.stop().await;
}
