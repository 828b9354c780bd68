//! # bete-load
//!
//! A bounded load harness for the bete game service. [`run`] starts (or finds) a server, measures
//! the raw unary transport ceiling, registers bots, keeps `--tables` matches running with a load
//! bot in every seat for `--duration`, drains, stops the server and returns a [`Report`].
//! It always stops by itself: setup, window, drain and server stop are each bounded.

pub mod ceiling;
pub mod cli;
pub mod driver;
pub mod ladder;
pub mod merge;
pub mod procfs;
pub mod register;
pub mod report;
pub mod server;
pub mod shard;
pub mod stats;
pub mod transport;

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bete_api::pb;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::sync::{Notify, Semaphore};
use tonic::transport::Channel;

pub use cli::Options;
pub use report::Report;

use driver::{Bot, Shared, SlotPlan};
use procfs::{Machine, ServerProc};
use register::Registrar;
use report::{ErrorCounts, RunSettings, StreamHealth};
use server::Server;
use shard::ShardInfo;
use stats::get;

/// HTTP/2 receive window of each connection (also sizes h2's small-frame budget, see `connect`).
const CONNECTION_WINDOW: u32 = 32 << 20;
/// HTTP/2 receive window of each stream.
const STREAM_WINDOW: u32 = 4 << 20;

/// Why a run could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("bad options: {0}")]
    Options(String),
    #[error("server: {0}")]
    Server(String),
    #[error("setup: {0}")]
    Setup(String),
    #[error("connect: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("merge: {0}")]
    Merge(String),
}

/// `bete-ace-high` → `RULESET_BETE_ACE_HIGH`.
fn ruleset(id: &str) -> Result<pb::Ruleset, LoadError> {
    let name = format!("RULESET_{}", id.to_ascii_uppercase().replace('-', "_"));
    match pb::Ruleset::from_str_name(&name) {
        Some(pb::Ruleset::Unspecified) | None => Err(LoadError::Options(format!(
            "unknown ruleset `{id}` (bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams)"
        ))),
        Some(r) => Ok(r),
    }
}

fn parse_config(pairs: &[String]) -> Result<BTreeMap<String, String>, LoadError> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| LoadError::Options(format!("--config `{p}` is not KEY=VALUE")))
        })
        .collect()
}

/// CPU time of this process (the harness and, in-process, the server too).
fn own_cpu() -> Option<Duration> {
    ServerProc::Child(std::process::id()).cpu()
}

fn unix_now() -> u64 {
    unix_now_ms() / 1000
}

fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The nodes the bots play on: every `--targets` address, or the one server.
fn targets(opts: &Options, server: &Server) -> Vec<String> {
    if opts.targets.len() < 2 {
        return vec![server.uri.clone()];
    }
    opts.targets
        .iter()
        .map(|t| server.transport.uri(t))
        .collect()
}

/// `http://host:port` from `host:port` (or a full URI as given).
pub fn uri_of(addr: &str) -> String {
    if addr.contains("://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    }
}

/// The connection of bot `i`. Seat s of table slot k is bot `s * per_seat + k % per_seat`
/// (driver::SlotPlan), so every bot of a slot's tables has the same `i % per_seat`: that picks
/// the node, and a table is created, joined and played on one node (no call needs forwarding),
/// while the slots, hence the tables, go round-robin over the nodes.
fn bot_channel(nodes: &[Vec<Channel>], per_seat: usize, i: usize) -> Channel {
    let node = &nodes[(i % per_seat.max(1)) % nodes.len()];
    node[(i / nodes.len()) % node.len()].clone()
}

async fn connect(
    server: &Server,
    uri: &str,
    n: u32,
    adaptive: bool,
) -> Result<Vec<Channel>, LoadError> {
    let mut channels = Vec::new();
    for _ in 0..n.max(1) {
        // Each `connect` opens its own HTTP/2 connection. Large fixed windows: h2 closes a
        // connection with ENHANCE_YOUR_CALM when received-but-unread small DATA frames exceed a
        // budget of half the connection window (min 25,600 bytes), and one connection carries
        // the event streams of thousands of seats.
        let ch = server
            .transport
            .endpoint(uri)?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5))
            .initial_connection_window_size((!adaptive).then_some(CONNECTION_WINDOW))
            .initial_stream_window_size((!adaptive).then_some(STREAM_WINDOW))
            .http2_adaptive_window(adaptive)
            .connect()
            .await?;
        channels.push(ch);
    }
    Ok(channels)
}

/// The account tokens this shard registers its bots with (none: without an account).
fn account_tokens(opts: &Options) -> Result<Vec<String>, LoadError> {
    match &opts.account_tokens {
        Some(path) => Ok(register::shard_tokens(
            &register::read_tokens(path)?,
            opts.shard,
        )),
        None => Ok(Vec::new()),
    }
}

/// The name of this shard's bot `i`: `load-` and its number in the whole load.
fn bot_name(opts: &Options, i: usize) -> String {
    format!("load-{}", opts.shard.global(i))
}

async fn register_bots(
    registrar: &Arc<Registrar>,
    channels: &[Channel],
    names: Vec<String>,
    concurrency: usize,
) -> Result<Vec<Arc<Bot>>, LoadError> {
    let each: Vec<Channel> = (0..names.len())
        .map(|i| channels[i % channels.len()].clone())
        .collect();
    register_bots_on(registrar, &each, names, channels.len(), concurrency).await
}

/// Registers one bot per channel of `each` (bot i, named `names[i]`, on `each[i]`, through
/// which it then plays), over `connections` connections in all.
async fn register_bots_on(
    registrar: &Arc<Registrar>,
    each: &[Channel],
    names: Vec<String>,
    connections: usize,
    concurrency: usize,
) -> Result<Vec<Arc<Bot>>, LoadError> {
    let count = each.len();
    let sem = Arc::new(Semaphore::new(concurrency.max(1)));
    let lanes = driver::lanes_per_bot(count, connections);
    let mut tasks = tokio::task::JoinSet::new();
    for ((i, channel), name) in each.iter().enumerate().zip(names) {
        let channel = channel.clone();
        let sem = sem.clone();
        let registrar = registrar.clone();
        tasks.spawn(async move {
            let _permit = sem.acquire().await;
            let (id, token) = registrar.bot(i, name, channel.clone()).await?;
            Bot::new(i, id, &token, channel, lanes)
        });
    }
    let mut bots = Vec::with_capacity(count);
    while let Some(r) = tasks.join_next().await {
        bots.push(Arc::new(r.map_err(|e| LoadError::Setup(e.to_string()))??));
    }
    bots.sort_by_key(|b| b.index);
    Ok(bots)
}

fn progress(opts: &Options) -> ProgressBar {
    let bar = ProgressBar::new(opts.duration.as_millis() as u64);
    if opts.quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) = ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Runs the whole load test described by `opts`; `command` is recorded verbatim in the report.
pub async fn run(opts: &Options, command: String) -> Result<Report, LoadError> {
    let tables_total = opts.tables;
    // A shard is a whole harness over its share of the tables (and of `--rate`).
    let sharded;
    let opts = if opts.shard.is_whole() {
        opts
    } else {
        if opts.ladder {
            return Err(LoadError::Options(
                "--shard splits the harness's own tables; --ladder plays a server's ladder \
                 and cannot be sharded"
                    .into(),
            ));
        }
        let share = opts.shard.share(opts.tables);
        if share == 0 {
            return Err(LoadError::Options(format!(
                "--shard {}: no table of --tables {} falls to this shard (use at most {} shards)",
                opts.shard, opts.tables, opts.tables
            )));
        }
        sharded = Options {
            tables: share,
            rate: opts.rate.map(|r| opts.shard.rate(r, opts.tables)),
            ..opts.clone()
        };
        &sharded
    };
    // Bad files are told before anything starts.
    account_tokens(opts)?;
    transport::Transport::from_options(opts)?;
    let ruleset_pb = ruleset(&opts.ruleset)?;
    let config = parse_config(&opts.config)?;
    if opts.tables == 0 || opts.seats == 0 || opts.connections == 0 {
        return Err(LoadError::Options(
            "--tables, --seats and --connections must be at least 1".into(),
        ));
    }
    let bots = if opts.ladder {
        opts.bots as usize
    } else {
        opts.bots_per_seat() as usize * opts.seats as usize
    };
    if opts.submit == cli::Submit::Stream
        && driver::lanes_per_bot(bots, opts.connections as usize) == 0
    {
        return Err(LoadError::Options(format!(
            "--submit stream: {bots} bots over {} connections leave no room for one \
             SubmitActions stream each under the server's {} streams per connection; \
             use more --connections or --submit unary",
            opts.connections,
            bete_server::server::MAX_STREAMS_PER_CONNECTION
        )));
    }
    if let Some(r) = opts.rate
        && !(r.is_finite() && r > 0.0)
    {
        return Err(LoadError::Options(
            "--rate must be a positive number of moves per second".into(),
        ));
    }
    // Ladder mode declares its ladder for the server it starts (a remote one has its own).
    let ladders = if opts.ladder {
        if opts.capacity == 0 || opts.bots == 0 {
            return Err(LoadError::Options(
                "--ladder: --bots and --capacity must be at least 1".into(),
            ));
        }
        if opts.house.is_empty() && opts.bots < opts.seats {
            return Err(LoadError::Options(format!(
                "--ladder: {} bots cannot fill a {}-seat table without house entrants (--house)",
                opts.bots, opts.seats
            )));
        }
        let text = ladder::ladders_file(opts, &config)?;
        opts.server.is_none().then_some(text)
    } else {
        None
    };
    if opts.targets.len() > 1 && opts.ladder {
        return Err(LoadError::Options(
            "--targets spreads tables of its own; --ladder plays a server's ladder: use --server"
                .into(),
        ));
    }
    if opts.targets.len() > 1 && (opts.bots_per_seat() as usize) < opts.targets.len() {
        return Err(LoadError::Options(format!(
            "--targets: {} bots per seat cannot cover {} nodes (raise --bots-per-seat or --connections)",
            opts.bots_per_seat(),
            opts.targets.len()
        )));
    }
    let started_unix_s = unix_now();
    let machine = Machine::read();
    // `--targets`: a remote cluster, reported (and its ceiling measured) through its first node.
    let remote;
    let opts = match opts.targets.first() {
        Some(first) if opts.server.is_none() => {
            remote = Options {
                server: Some(first.clone()),
                ..opts.clone()
            };
            &remote
        }
        _ => opts,
    };
    let server = Server::start(opts, ladders.as_deref()).await?;
    let result = if opts.ladder {
        ladder::drive(opts, &server).await
    } else {
        drive(opts, &server, ruleset_pb, &config).await
    };
    let peak = server.proc.peak_rss_kib();
    let metrics = server.scrape_metrics().await;
    let tail = server.log_tail();
    let info = server.info.clone();
    let stopped = server.stop().await;
    let mut m = result.map_err(|e| match e {
        LoadError::Setup(s) => LoadError::Setup(format!("{s}{tail}")),
        e => e,
    })?;

    let window_s = m.window.as_secs_f64();
    // Ladder mode: the tables the bots' capacity keeps busy at once.
    let tables = if opts.ladder {
        (opts.bots * opts.capacity / opts.seats.max(1)).max(1)
    } else {
        opts.tables
    };
    let moves = get(&m.shared.stats.moves);
    let events = get(&m.shared.stats.events);
    let server_cpu_s = m.server_cpu.map(|d| d.as_secs_f64());
    let mut latency_ms = BTreeMap::new();
    latency_ms.insert("submit_to_ack".to_string(), m.shared.stats.ack.summary());
    latency_ms.insert(
        "submit_to_event_at_every_seat".to_string(),
        m.shared.stats.event_all_seats.summary(),
    );
    // The histograms themselves, so that shards' reports merge exactly (`bete-load merge`).
    let mut histograms = BTreeMap::new();
    for (path, h) in [
        ("submit_to_ack", m.shared.stats.ack.histogram()),
        (
            "submit_to_event_at_every_seat",
            m.shared.stats.event_all_seats.histogram(),
        ),
        (
            report::CEILING_HISTOGRAM,
            m.ceiling
                .histogram
                .clone()
                .unwrap_or_else(stats::new_histogram),
        ),
    ] {
        histograms.insert(
            path.to_string(),
            stats::encode_histogram(&h).map_err(LoadError::Setup)?,
        );
    }
    let mut versions = BTreeMap::new();
    versions.insert(
        "bete-load".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    );
    if let Some(v) = &info.version {
        versions.insert("bete-server".to_string(), v.clone());
    }
    if let Some(c) = git_commit() {
        versions.insert("git_head_at_run".to_string(), c);
    }
    let s = &m.shared.stats;
    let stream = StreamHealth {
        resyncs: get(&s.resyncs),
        reconnects: get(&s.reconnects),
        event_gaps: get(&s.event_gaps),
        event_duplicates: get(&s.event_duplicates),
        fanout_incomplete: get(&s.fanout_incomplete),
        auto_moves: get(&s.auto_event_copies) / u64::from(opts.seats.max(1)),
        submit_streams_opened: get(&s.submit_streams),
    };
    let ceiling = std::mem::take(&mut m.ceiling);
    let harness_cores_busy = match (info.mode.as_str(), m.harness_cpu) {
        ("inproc", _) => None,
        (_, Some(c)) => Some(c.as_secs_f64() / window_s),
        _ => None,
    };
    Ok(Report {
        format: report::FORMAT.into(),
        command,
        started_unix_s,
        window_started_unix_ms: Some(m.window_unix_ms.0),
        window_ended_unix_ms: Some(m.window_unix_ms.1),
        shard: (!opts.shard.is_whole()).then(|| ShardInfo::new(opts.shard, tables_total)),
        versions,
        machine,
        server: info,
        settings: RunSettings {
            tables,
            seats: opts.seats,
            ruleset: opts.ruleset.clone(),
            duration_s: opts.duration.as_secs_f64(),
            connections: opts.connections,
            rate: opts.rate,
            think_time_ms: opts.think_time.as_secs_f64() * 1000.0,
            bots: m.bots,
            bots_per_seat: opts.bots_per_seat(),
            config,
            deadline_ms: opts.deadline_ms,
            harness_build: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .into(),
        },
        submit: opts.submit,
        setup_s: m.setup.as_secs_f64(),
        window_s,
        drain_s: m.drain.as_secs_f64(),
        stopped_by_itself: stopped && m.drained,
        moves,
        moves_per_s: moves as f64 / window_s,
        events,
        events_per_s: events as f64 / window_s,
        decisions: get(&s.decisions),
        matches_finished: get(&s.matches_finished),
        tables_created: get(&s.tables_created),
        latency_ms,
        errors: ErrorCounts::from_map(&m.errors, m.error_samples),
        ceiling_rps: ceiling.rps,
        ratio_to_ceiling: (ceiling.rps > 0.0).then(|| moves as f64 / window_s / ceiling.rps),
        ceiling,
        server_cpu_s,
        server_cpu_us_per_move: server_cpu_s
            .filter(|_| moves > 0)
            .map(|c| c * 1e6 / moves as f64),
        server_cores_busy: server_cpu_s.map(|c| c / window_s),
        harness_cores_busy,
        server_peak_rss_kib: peak,
        server_rss_kib_before_tables: m.rss_before,
        server_rss_kib_after_setup: m.rss_after,
        server_rss_per_table_kib: match (m.rss_before, m.rss_after) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b) as f64 / f64::from(tables)),
            _ => None,
        },
        stream,
        slow_watchers: report::SlowWatchers {
            watchers: opts.slow_watchers,
            delay_ms: opts.slow_watch_delay.as_secs_f64() * 1000.0,
            events: get(&s.slow_events),
            resyncs: get(&s.slow_resyncs),
            cut_too_slow: get(&s.slow_cut),
            reconnects: get(&s.slow_reconnects),
            gaps: get(&s.slow_gaps),
            duplicates: get(&s.slow_duplicates),
            other_errors: get(&s.slow_errors),
        },
        server_metrics: metrics,
        ladder: m.ladder.take(),
        histograms,
        merged: None,
    })
}

/// What `drive` measured, before it becomes a report.
struct Measured {
    shared: Arc<Shared>,
    ceiling: ceiling::Ceiling,
    bots: usize,
    setup: Duration,
    window: Duration,
    /// Unix milliseconds at the window's start and end (a merge takes their union).
    window_unix_ms: (u64, u64),
    drain: Duration,
    drained: bool,
    server_cpu: Option<Duration>,
    harness_cpu: Option<Duration>,
    rss_before: Option<u64>,
    rss_after: Option<u64>,
    /// Taken after the drain, before the server stops (its shutdown would add UNAVAILABLE noise).
    errors: BTreeMap<(String, String), u64>,
    error_samples: BTreeMap<String, String>,
    /// Ladder mode's own figures.
    ladder: Option<ladder::LadderFigures>,
}

async fn drive(
    opts: &Options,
    server: &Server,
    ruleset: pb::Ruleset,
    config: &BTreeMap<String, String>,
) -> Result<Measured, LoadError> {
    // `--connections` to each node: the one server, or every `--targets` node.
    let mut nodes = Vec::new();
    for uri in targets(opts, server) {
        nodes.push(connect(server, &uri, opts.connections, opts.h2_adaptive_window).await?);
    }
    let channels = nodes[0].clone();
    let registrar = Arc::new(Registrar::new(&account_tokens(opts)?, &channels[0]).await?);

    // 1. The transport ceiling, on the same connections, before any table exists.
    let ceiling =
        ceiling::measure(&channels, opts.ceiling_concurrency(), opts.ceiling_duration).await;

    // 2. Bots, their streams, and the tables.
    let setup_started = Instant::now();
    let rss_before = server.proc.rss_kib();
    let per_seat = opts.bots_per_seat() as usize;
    let bot_count = per_seat * opts.seats as usize;
    let setup_concurrency = opts.setup_concurrency as usize;
    let each: Vec<Channel> = (0..bot_count)
        .map(|i| bot_channel(&nodes, per_seat, i))
        .collect();
    let bots = tokio::time::timeout(
        opts.setup_timeout,
        register_bots_on(
            &registrar,
            &each,
            (0..bot_count).map(|i| bot_name(opts, i)).collect(),
            nodes.iter().map(Vec::len).sum(),
            setup_concurrency,
        ),
    )
    .await
    .map_err(|_| {
        LoadError::Setup(format!(
            "registering {bot_count} bots took longer than {:?}",
            opts.setup_timeout
        ))
    })??;
    let shared = Arc::new(Shared::new(
        opts.seats,
        opts.think_time,
        opts.rate,
        opts.submit,
    ));
    let mut tasks = tokio::task::JoinSet::new();
    for bot in &bots {
        tasks.spawn(driver::bot_stream(bot.clone(), shared.clone()));
    }
    let plan = Arc::new(SlotPlan {
        ruleset: ruleset as i32,
        seats: opts.seats,
        config: config
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<HashMap<_, _>>(),
        deadline_ms: opts.deadline_ms,
        bots_per_seat: per_seat,
        bots: bots.clone(),
        setup: Semaphore::new(setup_concurrency.max(1)),
        ready: Default::default(),
        ready_notify: Notify::new(),
        failed: Default::default(),
    });
    for slot in 0..opts.tables as usize {
        tasks.spawn(driver::table_slot(slot, plan.clone(), shared.clone()));
    }
    let all_ready = async {
        loop {
            let notified = plan.ready_notify.notified();
            if plan.ready.load(Ordering::Acquire) >= opts.tables as usize {
                break;
            }
            notified.await;
        }
    };
    let setup_ok = tokio::time::timeout(opts.setup_timeout, all_ready)
        .await
        .is_ok();
    let failed = plan.failed.load(Ordering::Acquire);
    if !setup_ok || failed > 0 {
        shared.stop.cancel();
        tasks.abort_all();
        let why = if setup_ok {
            format!("{failed} of {} tables could not be set up", opts.tables)
        } else {
            format!(
                "seating {} tables took longer than {:?}",
                opts.tables, opts.setup_timeout
            )
        };
        let errors = ErrorCounts::from_map(
            &shared.stats.errors.snapshot(),
            shared.stats.errors.samples(),
        );
        return Err(LoadError::Setup(format!(
            "{why}; errors: {:?}; first messages: {:?}",
            errors.by_code_and_reason, errors.samples
        )));
    }
    let setup = setup_started.elapsed();
    let rss_after = server.proc.rss_kib();

    // Slow spectators, on their own connection with small windows so that h2 flow control
    // pushes back on the server instead of buffering megabytes in the client.
    if opts.slow_watchers > 0 {
        let channel = server
            .transport
            .endpoint(&server.uri)?
            .tcp_nodelay(true)
            .initial_connection_window_size(1 << 20)
            .initial_stream_window_size(64 << 10)
            .connect()
            .await?;
        let name = format!("load-watcher-{}", opts.shard.index);
        let watcher = register_bots(&registrar, std::slice::from_ref(&channel), vec![name], 1)
            .await?
            .pop()
            .ok_or_else(|| LoadError::Setup("no slow-watcher bot".into()))?;
        let tables: Vec<String> = shared
            .tracks
            .read()
            .map(|t| {
                t.keys()
                    .take(opts.slow_watchers as usize)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for table in tables {
            tasks.spawn(driver::slow_watcher(
                watcher.clone(),
                shared.clone(),
                table,
                opts.slow_watch_delay,
            ));
        }
    }

    let w = window(opts, server, &shared).await;
    let drain = drain(opts, &shared, &mut tasks).await;
    Ok(Measured {
        errors: drain.errors,
        error_samples: drain.error_samples,
        shared,
        ceiling,
        bots: bots.len(),
        setup,
        window: w.window,
        window_unix_ms: w.unix_ms,
        drain: drain.took,
        drained: drain.drained,
        server_cpu: w.server_cpu,
        harness_cpu: w.harness_cpu,
        rss_before,
        rss_after,
        ladder: None,
    })
}

/// What the measured window took.
struct Window {
    window: Duration,
    unix_ms: (u64, u64),
    server_cpu: Option<Duration>,
    harness_cpu: Option<Duration>,
}

/// The measured window: counters record for `--duration`, server and harness CPU are read
/// at both ends.
async fn window(opts: &Options, server: &Server, shared: &Shared) -> Window {
    let bar = progress(opts);
    let cpu0 = server.proc.cpu_mark();
    let own0 = own_cpu();
    let window_started = Instant::now();
    let started_unix_ms = unix_now_ms();
    shared.recording.store(true, Ordering::Release);
    shared.go.cancel();
    let until = window_started + opts.duration;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let enough = || {
        opts.until_matches
            .is_some_and(|n| get(&shared.stats.matches_finished) >= n)
    };
    while Instant::now() < until && !enough() {
        tick.tick().await;
        let secs = window_started.elapsed().as_secs_f64().max(0.001);
        bar.set_position(window_started.elapsed().as_millis() as u64);
        bar.set_message(format!(
            "{:.0} moves/s, {:.0} events/s, {} matches, {} errors",
            get(&shared.stats.moves) as f64 / secs,
            get(&shared.stats.events) as f64 / secs,
            get(&shared.stats.matches_finished),
            shared.stats.errors.total()
        ));
    }
    shared.recording.store(false, Ordering::Release);
    let window = window_started.elapsed();
    let unix_ms = (started_unix_ms, started_unix_ms + window.as_millis() as u64);
    let server_cpu = match (cpu0, server.proc.cpu_mark()) {
        (Some(a), Some(b)) => Some(b.since(&a)),
        _ => None,
    };
    let harness_cpu = match (own0, own_cpu()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    bar.finish_and_clear();
    Window {
        window,
        unix_ms,
        server_cpu,
        harness_cpu,
    }
}

/// How the drain went, and the errors counted up to its end.
struct Drain {
    took: Duration,
    drained: bool,
    /// Taken after the drain, before the server stops (its shutdown would add UNAVAILABLE noise).
    errors: BTreeMap<(String, String), u64>,
    error_samples: BTreeMap<String, String>,
}

/// No new submits or tables; in-flight submits get `--drain` to finish; then every task ends.
async fn drain(opts: &Options, shared: &Shared, tasks: &mut tokio::task::JoinSet<()>) -> Drain {
    shared.stop.cancel();
    let drain_started = Instant::now();
    let mut drained = false;
    while drain_started.elapsed() < opts.drain {
        if shared.inflight.load(Ordering::Acquire) == 0 {
            drained = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let took = drain_started.elapsed();
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    Drain {
        took,
        drained,
        errors: shared.stats.errors.snapshot(),
        error_samples: shared.stats.errors.samples(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruleset_ids_map_to_the_enum() {
        assert_eq!(ruleset("bete").ok(), Some(pb::Ruleset::Bete));
        assert_eq!(
            ruleset("bete-ace-high").ok(),
            Some(pb::Ruleset::BeteAceHigh)
        );
        assert_eq!(ruleset("bester-bube").ok(), Some(pb::Ruleset::BesterBube));
        assert_eq!(ruleset("loo").ok(), Some(pb::Ruleset::Loo));
        assert_eq!(ruleset("rams").ok(), Some(pb::Ruleset::Rams));
        assert!(ruleset("poker").is_err());
        assert!(ruleset("unspecified").is_err());
    }

    #[test]
    fn config_pairs_parse() {
        let c = parse_config(&["rounds=1".into(), "win_rule = plurality".into()]);
        assert_eq!(
            c.ok().and_then(|c| c.get("win_rule").cloned()),
            Some("plurality".into())
        );
        assert!(parse_config(&["rounds".into()]).is_err());
    }
}
