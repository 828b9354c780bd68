//! `bete demo`: a whole match between house bots on a server started in this process.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::oneshot;

use super::watch::{Follow, follow};
use crate::{Client, pb, render};

/// Start a server in this process on a free loopback port with a temporary data folder, seat
/// house bots, and show a whole match in the watch view; then print the final balances and
/// where the game record was written. Needs nothing else running.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  bete demo\n  bete demo --ruleset beast --seats 4 --pace 50")]
pub struct Args {
    /// The game (bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams).
    #[arg(long, default_value = "bete", value_parser = super::common::parse_ruleset)]
    ruleset: pb::Ruleset,
    /// Seats at the table, all house bots.
    #[arg(long, default_value_t = 4)]
    seats: u32,
    /// Milliseconds to show each event (default 150 on a terminal, 0 otherwise).
    #[arg(long)]
    pace: Option<u64>,
    /// 64 hexadecimal digits fixing every deal, for a reproducible match.
    #[arg(long)]
    seed: Option<String>,
}

/// A `bete_server::run` on its own thread and runtime, stopped by sending on the channel. Its
/// own runtime keeps the server's work off the demo bots' worker threads, as in a real
/// deployment where they are separate processes.
struct Embedded {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Embedded {
    fn start(data_dir: PathBuf) -> anyhow::Result<Embedded> {
        let std_listener =
            std::net::TcpListener::bind("127.0.0.1:0").context("cannot bind a loopback port")?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let config = bete_server::ServerConfig {
            data_dir,
            ..Default::default()
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("bete-server".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => return eprintln!("embedded server: no runtime: {e}"),
                };
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(std_listener) {
                        Ok(listener) => listener,
                        Err(e) => return eprintln!("embedded server: {e}"),
                    };
                    let shutdown = async move {
                        let _ = stopped.await;
                    };
                    if let Err(e) = bete_server::run(listener, config, shutdown).await {
                        eprintln!("embedded server failed: {e}");
                    }
                });
            })?;
        Ok(Embedded {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // Joining blocks, so wait on a blocking thread; the server drains in well under this.
            let _ = tokio::time::timeout(
                Duration::from_secs(10),
                tokio::task::spawn_blocking(move || thread.join()),
            )
            .await;
        }
    }
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("bete-demo-")
        .tempdir()
        .context("cannot make a temporary folder")?
        .keep();
    let server = Embedded::start(dir.join("data"))?;
    let url = format!("http://{}", server.addr);
    eprintln!("bete demo: server on {url}, data in {}", dir.display());
    let result = demo(&url, &dir, &args).await;
    server.stop().await;
    result
}

async fn demo(url: &str, dir: &std::path::Path, args: &Args) -> anyhow::Result<()> {
    let client = connect(url).await?;
    client.register("demo-watcher", "bete demo").await?;
    let policies = [pb::HouseBotPolicy::Heuristic, pb::HouseBotPolicy::Random];
    let table = client
        .create_table(pb::CreateTableRequest {
            ruleset: args.ruleset as i32,
            seats: args.seats,
            house_bots: (0..args.seats)
                .map(|seat| pb::HouseBotSeat {
                    seat,
                    policy: policies[seat as usize % 2] as i32,
                    search_budget_ms: 0,
                })
                .collect(),
            seed: args.seed.clone().unwrap_or_default(),
            ..Default::default()
        })
        .await
        .context("could not create the demo table (check --ruleset and --seats)")?;
    let tty = std::io::stdout().is_terminal();
    let pace = Duration::from_millis(args.pace.unwrap_or(if tty { 150 } else { 0 }));
    let board = follow(
        &client,
        table.clone(),
        Follow {
            from_start: true,
            pace,
            redraw: tty,
        },
    )
    .await?;

    let record = client.get_game_record(&table.table_id).await?;
    let path = dir.join(format!("record-{}.json", table.table_id));
    std::fs::write(&path, record).with_context(|| format!("cannot write {}", path.display()))?;
    println!();
    println!("Final balances:");
    for state in &board.view.seat_states {
        println!(
            "  seat {} {:<18} {:+}",
            state.seat,
            render::seat_name(board.table.as_ref(), state.seat),
            state.balance
        );
    }
    println!("Game record written to {}", path.display());
    println!(
        "Replay it with: {} replay {}",
        super::invoked_as(),
        path.display()
    );
    Ok(())
}

async fn connect(url: &str) -> anyhow::Result<Client> {
    // The server thread may need a moment to start listening.
    let mut last = None;
    for _ in 0..50 {
        match Client::connect(url).await {
            Ok(client) => return Ok(client),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(last
        .map(anyhow::Error::from)
        .unwrap_or_else(|| anyhow::anyhow!("no connection")))
    .context("the embedded server did not start")
}
