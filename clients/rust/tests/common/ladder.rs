//! A real server hosting the ladders of a file (or the default ones), LadderService clients
//! with or without a token, and bots playing on their WatchBot streams: what the ladder tests
//! share.

use std::time::Duration;

use bete_client::{Client, Runner, Strategy, pb};
use pb::ladder_service_client::LadderServiceClient;
use tokio_util::sync::CancellationToken;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// Sends `authorization: Bearer <token>` when there is one (public reads go without).
#[derive(Clone)]
pub struct Bearer(pub Option<String>);

impl Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(t) = &self.0 {
            let v: MetadataValue<_> = format!("Bearer {t}").parse().expect("a token is ASCII");
            req.metadata_mut().insert("authorization", v);
        }
        Ok(req)
    }
}

pub type Ladders = LadderServiceClient<InterceptedService<Channel, Bearer>>;

pub struct LadderServer {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    dir: tempfile::TempDir,
}

impl LadderServer {
    /// A server hosting exactly the ladders of `toml`, with reproducible ladder seeds.
    pub async fn start(toml: &str, seed: u64) -> LadderServer {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("ladders.toml"), toml).expect("ladders file");
        LadderServer::launch(dir, Some(seed))
    }

    /// A server with the default ladders (no ladders file), as command 1 of the README runs it.
    pub async fn start_default() -> LadderServer {
        LadderServer::launch(tempfile::tempdir().expect("temp dir"), None)
    }

    /// A handle on a server another handle runs (it stops nothing).
    pub fn at(url: String) -> LadderServer {
        LadderServer {
            url,
            stop: None,
            task: None,
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A server on `dir`'s data folder, with its ladders file when `seed` is given.
    fn launch(dir: tempfile::TempDir, seed: Option<u64>) -> LadderServer {
        let config = bete_server::ServerConfig {
            data_dir: dir.path().join("data"),
            heartbeat_interval: Duration::from_millis(500),
            ladders: seed.map(|_| dir.path().join("ladders.toml")),
            ladder_seed: seed,
            ..Default::default()
        };
        let (addr, stop, task) = super::spawn_server(config);
        LadderServer {
            url: format!("http://{addr}"),
            stop: Some(stop),
            task: Some(task),
            dir,
        }
    }

    pub async fn ladders(&self, token: Option<String>) -> Ladders {
        let ch = Channel::from_shared(self.url.clone())
            .expect("a valid URL")
            .connect()
            .await
            .expect("the server answers");
        LadderServiceClient::with_interceptor(ch, Bearer(token))
    }

    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
    }

    /// Stops the server and starts a new one on the same data folder (at a new address).
    pub async fn restart(mut self, seed: u64) -> LadderServer {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), t)
                .await
                .expect("the server did not stop")
                .expect("the server's thread");
        }
        // The stopped server's SQLite connections close as its runtime winds down, the last one
        // checkpointing the WAL into the database. A real restart is a new process after the
        // old one exited; here, let the old one finish with the file first.
        let wal = self.dir.path().join("data").join("bete.sqlite3-wal");
        for _ in 0..200 {
            if !wal.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"));
        LadderServer::launch(dir, Some(seed))
    }
}

/// A registered bot playing `strategy` on its WatchBot stream until `cancel`.
pub async fn online_bot(
    server: &LadderServer,
    name: &str,
    strategy: Strategy,
    cancel: &CancellationToken,
) -> Client {
    let client = super::bot_at(&server.url, name).await;
    let runner = Runner::new(client.clone(), move |_: &pb::Seated| strategy.bot())
        .with_cancel(cancel.clone());
    tokio::spawn(runner.run());
    client
}

/// The bot's entry, as GetLadder shows it to the bot.
pub async fn entry(ladders: &mut Ladders, ladder: &str) -> pb::LadderEntry {
    ladders
        .get_ladder(pb::GetLadderRequest {
            ladder_id: ladder.into(),
        })
        .await
        .expect("GetLadder")
        .into_inner()
        .entry
        .expect("the bot's entry")
}

/// The bot's entry once it is taken off `ladder` (polled; fails after `secs`).
pub async fn taken_off(ladders: &mut Ladders, ladder: &str, secs: u64) -> pb::LadderEntry {
    tokio::time::timeout(Duration::from_secs(secs), async {
        loop {
            let e = entry(ladders, ladder).await;
            if !e.active {
                return e;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never taken off {ladder} within {secs} s"))
}

/// A status's `ErrorInfo` reason (empty without one), its RetryInfo delay and its metadata.
pub fn reason_and_retry(
    status: &tonic::Status,
) -> (
    String,
    Option<Duration>,
    std::collections::HashMap<String, String>,
) {
    use tonic_types::StatusExt;
    let d = status.get_error_details();
    let info = d.error_info().cloned();
    let retry = d.retry_info().and_then(|r| r.retry_delay);
    (
        info.as_ref().map(|i| i.reason.clone()).unwrap_or_default(),
        retry,
        info.map(|i| i.metadata).unwrap_or_default(),
    )
}
