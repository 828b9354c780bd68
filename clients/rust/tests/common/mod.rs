//! A real bete server in the test process on 127.0.0.1:0 with a temporary data folder, and a
//! TCP proxy in front of it that a test can cut.
#![allow(dead_code)]

pub mod ladder;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bete_client::{Client, pb};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub struct TestServer {
    pub addr: SocketAddr,
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = bete_server::ServerConfig {
            data_dir: dir.path().to_path_buf(),
            heartbeat_interval: Duration::from_millis(500),
            ..Default::default()
        };
        let (addr, stop, task) = spawn_server(config);
        TestServer {
            addr,
            url: format!("http://{addr}"),
            stop: Some(stop),
            task: Some(task),
            _dir: dir,
        }
    }

    /// A client registered as a fresh bot named `name`.
    pub async fn bot(&self, name: &str) -> Client {
        bot_at(&self.url, name).await
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Runs `bete_server::run` on its own thread and runtime (its future is not `Send`, so it
/// cannot be spawned on the test's runtime).
pub fn spawn_server(
    config: bete_server::ServerConfig,
) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<()>) {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    std_listener.set_nonblocking(true).expect("nonblocking");
    let addr = std_listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("server runtime");
        runtime.block_on(async move {
            let listener = TcpListener::from_std(std_listener).expect("listener");
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(e) = bete_server::run(listener, config, shutdown).await {
                eprintln!("test server failed: {e}");
            }
        });
        let _ = done_tx.send(());
    });
    let task = tokio::spawn(async move {
        let _ = done_rx.await;
    });
    (addr, stop, task)
}

pub async fn bot_at(url: &str, name: &str) -> Client {
    let client = Client::connect(url).await.expect("connect");
    client.register(name, "tests").await.expect("register");
    client
}

/// A table whose seats 1.. are house bots of `policy`.
pub fn house_table(ruleset: pb::Ruleset, seats: u32, deadline_ms: u32) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: ruleset as i32,
        seats,
        decision_deadline_ms: deadline_ms,
        house_bots: (1..seats)
            .map(|seat| pb::HouseBotSeat {
                seat,
                policy: pb::HouseBotPolicy::Heuristic as i32,
                search_budget_ms: 0,
            })
            .collect(),
        ..Default::default()
    }
}

pub const RULESETS: [pb::Ruleset; 10] = [
    pb::Ruleset::Bete,
    pb::Ruleset::BeteAceHigh,
    pb::Ruleset::Beast,
    pb::Ruleset::BesteBoer,
    pb::Ruleset::Lanterlui,
    pb::Ruleset::BesterBube,
    pb::Ruleset::Mouche,
    pb::Ruleset::Mistigri,
    pb::Ruleset::Loo,
    pb::Ruleset::Rams,
];

/// A TCP proxy to `target` whose live connections can be cut, and which can refuse new ones
/// for a while, to simulate a dropped network.
pub struct Proxy {
    pub url: String,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
    refuse_until: Arc<Mutex<Option<tokio::time::Instant>>>,
    /// While set, bytes from the client (up) or the server (down) are held, not forwarded.
    held: Arc<[AtomicBool; 2]>,
    accept: JoinHandle<()>,
}

/// Which way bytes go through the proxy.
#[derive(Clone, Copy, Debug)]
pub enum Way {
    /// Client to server.
    Up = 0,
    /// Server to client.
    Down = 1,
}

/// Copies `from` to `to`, holding each chunk while `held` is set.
async fn forward(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    held: Arc<[AtomicBool; 2]>,
    way: Way,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while held[way as usize].load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let refuse_until: Arc<Mutex<Option<tokio::time::Instant>>> = Arc::default();
        let held: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let (c, r, h) = (conns.clone(), refuse_until.clone(), held.clone());
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                let refusing = r
                    .lock()
                    .expect("lock")
                    .is_some_and(|t| tokio::time::Instant::now() < t);
                if refusing {
                    drop(inbound);
                    continue;
                }
                let h = h.clone();
                let handle = tokio::spawn(async move {
                    let Ok(outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (in_read, in_write) = inbound.split();
                    let (out_read, out_write) = outbound.into_split();
                    tokio::select! {
                        () = forward(in_read, out_write, h.clone(), Way::Up) => {}
                        () = forward(out_read, in_write, h, Way::Down) => {}
                    }
                });
                c.lock().expect("lock").push(handle);
            }
        });
        Proxy {
            url,
            conns,
            refuse_until,
            held,
            accept,
        }
    }

    /// Holds the bytes going `way` (until [`Proxy::release`] or a cut drops them).
    pub fn hold(&self, way: Way) {
        self.held[way as usize].store(true, Ordering::SeqCst);
    }

    pub fn release(&self, way: Way) {
        self.held[way as usize].store(false, Ordering::SeqCst);
    }

    /// Drops every live connection and refuses new ones for `pause`.
    /// Held bytes are dropped with their connections; later ones flow again.
    pub fn cut(&self, pause: Duration) {
        *self.refuse_until.lock().expect("lock") = Some(tokio::time::Instant::now() + pause);
        for handle in self.conns.lock().expect("lock").drain(..) {
            handle.abort();
        }
        self.release(Way::Up);
        self.release(Way::Down);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        for handle in self.conns.lock().expect("lock").drain(..) {
            handle.abort();
        }
    }
}

/// A spawned `Runner::run`'s report, within 120 s (the runner must end by itself and well).
pub async fn finished(
    running: JoinHandle<bete_client::Result<bete_client::RunReport>>,
) -> bete_client::RunReport {
    tokio::time::timeout(Duration::from_secs(120), running)
        .await
        .expect("finishes")
        .expect("task")
        .expect("runner ok")
}
