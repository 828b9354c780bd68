//! The server under test: a child `bete-server` process, the library on its own runtime in this
//! process, or a remote address. Either embedded kind gets a fresh temporary data folder.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use tokio::sync::oneshot;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::LoadError;
use crate::cli::{Embed, Options};
use crate::procfs::ServerProc;
use crate::transport::Transport;

/// Thread-name prefixes of an in-process server: its runtime's threads and SQLite's workers.
const INPROC_THREADS: &[&str] = &["bete-srv", "sqlx-sqlite"];
/// How long a starting server may take to answer health checks.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a stopping server may take to drain before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Describes the server in the report.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServerInfo {
    /// `child`, `inproc` or `remote`.
    pub mode: String,
    /// The gRPC address.
    pub address: String,
    /// `bete-server --version` (child), the library version (inproc), or unknown.
    pub version: Option<String>,
    /// The binary that ran (child).
    pub bin: Option<String>,
}

enum Kind {
    Child(tokio::process::Child),
    Inproc {
        shutdown: Option<oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
    Remote,
}

/// A running server and how to measure and stop it.
pub struct Server {
    /// `http://host:port`.
    pub uri: String,
    /// Where its CPU time and memory are read.
    pub proc: ServerProc,
    /// For the report.
    pub info: ServerInfo,
    /// Its Prometheus endpoint, when the harness chose one.
    pub metrics_addr: Option<SocketAddr>,
    /// Plaintext, or TLS to a remote server (`--ca-cert`, `https://`).
    pub transport: Transport,
    kind: Kind,
    /// Kept until the server is stopped: dropping it deletes the data folder.
    data: Option<TempDir>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("uri", &self.uri)
            .field("info", &self.info)
            .finish()
    }
}

/// A loopback port that was free a moment ago (the server binds it right after).
///
/// Taken below the kernel's usual ephemeral range (32768 and up): a port handed out for
/// `bind(:0)` and dropped may be taken at once by any outgoing connection of the machine as
/// its own port, and the server would then fail to bind it. A port is handed out once in this
/// process, so the nodes of one cluster never share one.
fn free_port() -> Result<u16, LoadError> {
    use rand::Rng;
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut rng = rand::rng();
    // A poisoned list is still a list of ports given out.
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for _ in 0..1_000 {
        let port = rng.random_range(10_000..30_000);
        if given.contains(&port) {
            continue;
        }
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            given.push(port);
            return Ok(l.local_addr()?.port());
        }
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// `bete-server` next to this executable (or one level up, for test binaries in `deps/`).
fn default_bin() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join("bete-server"), dir.parent()?.join("bete-server")]
        .into_iter()
        .find(|p| p.is_file())
}

/// An error and its causes (a transport error says only "transport error" itself; the cause
/// says which, e.g. a certificate that does not name the server).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Writes the ladders file into the server's temporary folder.
fn write_ladders(dir: &Path, text: Option<&str>) -> Result<Option<PathBuf>, LoadError> {
    let Some(text) = text else { return Ok(None) };
    let file = dir.join("ladders.toml");
    std::fs::write(&file, text)?;
    Ok(Some(file))
}

impl Server {
    /// Starts (or finds) the server the options ask for and waits until it answers health checks.
    /// `ladders` is the text of a ladders file for a server the harness starts (`--ladders`).
    pub async fn start(opts: &Options, ladders: Option<&str>) -> Result<Server, LoadError> {
        if let Some(addr) = &opts.server {
            let transport = Transport::from_options(opts)?;
            let uri = transport.uri(addr);
            let info = ServerInfo {
                mode: "remote".into(),
                address: uri.clone(),
                version: None,
                bin: None,
            };
            let s = Server {
                uri,
                proc: ServerProc::Remote,
                info,
                metrics_addr: None,
                transport,
                kind: Kind::Remote,
                data: None,
            };
            s.wait_healthy().await?;
            return Ok(s);
        }
        let bin = opts.server_bin.clone().or_else(default_bin);
        let server = match (opts.embed, bin) {
            (Embed::Child, None) => {
                return Err(LoadError::Server(
                    "no bete-server binary next to bete-load; build it (cargo build -p bete-server) or pass --server-bin".into(),
                ));
            }
            (Embed::Child | Embed::Auto, Some(bin)) => Server::child(&bin, ladders).await?,
            (Embed::Inproc | Embed::Auto, _) => Server::inproc(ladders)?,
        };
        server.wait_healthy().await?;
        Ok(server)
    }

    async fn child(bin: &Path, ladders: Option<&str>) -> Result<Server, LoadError> {
        let data = tempfile::Builder::new().prefix("bete-load-").tempdir()?;
        let ladders = write_ladders(data.path(), ladders)?;
        let port = free_port()?;
        let metrics_port = free_port()?;
        let log = std::fs::File::create(data.path().join("server.log"))?;
        let version = std::process::Command::new(bin)
            .arg("--version")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let mut command = tokio::process::Command::new(bin);
        if let Some(file) = &ladders {
            command.arg("--ladders").arg(file);
        }
        let child = command
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data-dir")
            .arg(data.path().join("data"))
            .arg("--metrics-listen")
            .arg(format!("127.0.0.1:{metrics_port}"))
            .env(
                "RUST_LOG",
                std::env::var("BETE_LOAD_SERVER_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            // If the harness dies, the server dies with it: the run stays bounded.
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| LoadError::Server(format!("cannot start {}: {e}", bin.display())))?;
        let pid = child
            .id()
            .ok_or_else(|| LoadError::Server("the server exited at once".into()))?;
        let uri = format!("http://127.0.0.1:{port}");
        Ok(Server {
            info: ServerInfo {
                mode: "child".into(),
                address: uri.clone(),
                version,
                bin: Some(bin.display().to_string()),
            },
            uri,
            proc: ServerProc::Child(pid),
            metrics_addr: Some(SocketAddr::from(([127, 0, 0, 1], metrics_port))),
            transport: Transport::default(),
            kind: Kind::Child(child),
            data: Some(data),
        })
    }

    fn inproc(ladders: Option<&str>) -> Result<Server, LoadError> {
        let data = tempfile::Builder::new().prefix("bete-load-").tempdir()?;
        let ladders = write_ladders(data.path(), ladders)?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let config = bete_server::ServerConfig {
            data_dir: data.path().join("data"),
            ladders,
            ..bete_server::ServerConfig::default()
        };
        let (tx, rx) = oneshot::channel::<()>();
        // As the bete-server binary sizes its runtime.
        let workers = bete_server::config::default_worker_threads();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("bete-srv")
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("bete-srv-main".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            eprintln!("bete-load: in-process server: {e}");
                            return;
                        }
                    };
                    let shutdown = async move {
                        let _ = rx.await;
                    };
                    if let Err(e) = bete_server::run(listener, config, shutdown).await {
                        eprintln!("bete-load: in-process server stopped: {e}");
                    }
                });
                // Tasks still parked (e.g. idle actors) must not keep this thread alive.
                runtime.shutdown_timeout(Duration::from_secs(2));
            })?;
        let uri = format!("http://{addr}");
        Ok(Server {
            info: ServerInfo {
                mode: "inproc".into(),
                address: uri.clone(),
                version: Some(format!(
                    "bete-server {} (library)",
                    env!("CARGO_PKG_VERSION")
                )),
                bin: None,
            },
            uri,
            proc: ServerProc::Threads(INPROC_THREADS.to_vec()),
            metrics_addr: None,
            transport: Transport::default(),
            kind: Kind::Inproc {
                shutdown: Some(tx),
                thread: Some(thread),
            },
            data: Some(data),
        })
    }

    /// Polls grpc.health.v1 until the server reports SERVING.
    async fn wait_healthy(&self) -> Result<(), LoadError> {
        let started = Instant::now();
        let mut last = String::new();
        while started.elapsed() < START_TIMEOUT {
            if let Kind::Child(c) = &self.kind
                && c.id().is_none()
            {
                break;
            }
            match self.check_once().await {
                Ok(()) => return Ok(()),
                // A certificate the server's is checked against does not change by waiting.
                Err(e) if e.contains("invalid peer certificate") => {
                    last = e;
                    break;
                }
                Err(e) => last = e,
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(LoadError::Server(format!(
            "the server at {} did not become healthy: {last}{}",
            self.uri,
            self.log_tail()
        )))
    }

    async fn check_once(&self) -> Result<(), String> {
        let channel: Channel = self
            .transport
            .endpoint(&self.uri)
            .map_err(|e| e.to_string())?
            .connect_timeout(Duration::from_secs(1))
            .connect()
            .await
            .map_err(|e| with_causes(&e))?;
        let r = HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map_err(|e| e.to_string())?;
        if r.get_ref().status == ServingStatus::Serving as i32 {
            Ok(())
        } else {
            Err(format!("health status {}", r.get_ref().status))
        }
    }

    /// The last lines of a child server's log, for error messages.
    pub fn log_tail(&self) -> String {
        let Some(d) = &self.data else {
            return String::new();
        };
        let Ok(text) = std::fs::read_to_string(d.path().join("server.log")) else {
            return String::new();
        };
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        if tail.is_empty() {
            String::new()
        } else {
            format!("\nserver log (last lines):\n{tail}")
        }
    }

    /// `GET /metrics` of a child server: the `bete_*` samples, by name with labels.
    pub async fn scrape_metrics(&self) -> Option<std::collections::BTreeMap<String, f64>> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.metrics_addr?;
        let fetch = async {
            let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .await
                .ok()?;
            let mut buf = Vec::new();
            s.read_to_end(&mut buf).await.ok()?;
            Some(String::from_utf8_lossy(&buf).to_string())
        };
        let text = tokio::time::timeout(Duration::from_secs(3), fetch)
            .await
            .ok()??;
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        let mut out = std::collections::BTreeMap::new();
        for line in body.lines() {
            if line.starts_with('#')
                || !line.starts_with("bete_")
                || line.starts_with("bete_rpc_duration")
            {
                continue;
            }
            if let Some((name, value)) = line.rsplit_once(' ')
                && let Ok(v) = value.parse::<f64>()
            {
                out.insert(name.to_string(), v);
            }
        }
        Some(out)
    }

    /// Stops the server: SIGTERM and a bounded drain for a child, the shutdown signal for the
    /// library. Returns whether it stopped within the timeout (else it was killed / abandoned).
    pub async fn stop(mut self) -> bool {
        let clean = match &mut self.kind {
            Kind::Remote => true,
            Kind::Child(child) => {
                if let Some(pid) = child.id() {
                    // SIGTERM lets the server drain; `kill` avoids unsafe libc calls.
                    let _ = tokio::process::Command::new("kill")
                        .arg("-TERM")
                        .arg(pid.to_string())
                        .status()
                        .await;
                }
                match tokio::time::timeout(STOP_TIMEOUT, child.wait()).await {
                    Ok(_) => true,
                    Err(_) => {
                        let _ = child.kill().await;
                        false
                    }
                }
            }
            Kind::Inproc { shutdown, thread } => {
                if let Some(tx) = shutdown.take() {
                    let _ = tx.send(());
                }
                match thread.take() {
                    Some(t) => {
                        let joined = tokio::task::spawn_blocking(move || t.join());
                        matches!(
                            tokio::time::timeout(STOP_TIMEOUT, joined).await,
                            Ok(Ok(Ok(())))
                        )
                    }
                    None => true,
                }
            }
        };
        drop(self.data.take());
        clean
    }
}
