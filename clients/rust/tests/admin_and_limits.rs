//! `bete admin stop-table` through the real binary against a real server, and the client
//! honouring the server's RetryInfo when it is rate limited (issue #14).

mod common;

use std::process::Command;
use std::time::Duration;

use bete_client::{Backoff, Client, pb};
use common::spawn_server;

const BETE: &str = env!("CARGO_BIN_EXE_bete");

fn config(dir: &tempfile::TempDir) -> bete_server::ServerConfig {
    bete_server::ServerConfig {
        data_dir: dir.path().to_path_buf(),
        heartbeat_interval: Duration::from_millis(500),
        ..Default::default()
    }
}

async fn bete(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || Command::new(BETE).args(args).output().expect("run"))
        .await
        .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_stops_a_table_from_the_cli() {
    let dir = tempfile::tempdir().expect("dir");
    let mut cfg = config(&dir);
    cfg.admin_token = Some("op-token".into());
    let (addr, _stop, _task) = spawn_server(cfg);
    let url = format!("http://{addr}");
    let bot = common::bot_at(&url, "creator").await;
    let table = bot
        .create_table(pb::CreateTableRequest {
            ruleset: pb::Ruleset::Bete.into(),
            seats: 3,
            house_bots: (0..3)
                .map(|seat| pb::HouseBotSeat {
                    seat,
                    policy: pb::HouseBotPolicy::Random.into(),
                    search_budget_ms: 0,
                })
                .collect(),
            ..Default::default()
        })
        .await
        .expect("create");
    let id = table.table_id.clone();
    let args = |token: &str| -> Vec<String> {
        [
            "admin",
            "stop-table",
            "--server",
            &url,
            "--admin-token",
            token,
            &id,
        ]
        .map(String::from)
        .to_vec()
    };
    let refused = bete(args("not-the-token")).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("ADMIN_REQUIRED"), "{stderr}");

    let out = bete(args("op-token")).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("stopped {id}")), "{stdout}");
    let t = bot.get_table(&id).await.expect("get");
    assert_eq!(t.state, pb::TableState::Finished as i32);
}

/// Past its burst a bot is RATE_LIMITED with a RetryInfo delay; the client waits that long and
/// its retried calls all succeed (an older client gave up at once: RATE_LIMITED was final).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_waits_as_long_as_the_server_asks() {
    let dir = tempfile::tempdir().expect("dir");
    let mut cfg = config(&dir);
    cfg.limits.calls_per_bot = "4/2".parse().expect("rate");
    let (addr, _stop, _task) = spawn_server(cfg);
    let url = format!("http://{addr}");
    let bot = common::bot_at(&url, "eager").await;
    // A backoff far shorter than the server's delay: only RetryInfo can make the calls pass.
    let bot: Client = bot.with_backoff(Backoff {
        initial: Duration::from_millis(1),
        max: Duration::from_millis(1),
        attempts: 3,
    });
    for _ in 0..8 {
        bot.list_tables(pb::Ruleset::Unspecified, pb::TableState::Unspecified)
            .await
            .expect("a rate-limited call is retried after the server's delay");
    }
}
