//! The harness's flags. Kept in the library so tests build the same `Options` from a command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::shard::{Shard, parse_shard};

/// How the harness runs the server it measures when no `--server` is given.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Embed {
    /// The `bete-server` binary as a child process if it is found, else in-process.
    Auto,
    /// The `bete-server` binary as a child process: its CPU time and peak RSS are its own.
    Child,
    /// The `bete-server` library on its own tokio runtime in this process (CPU is counted per
    /// thread; RSS cannot be separated from the harness).
    Inproc,
}

/// How the bots submit their moves.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Submit {
    /// One unary `SubmitAction` call per move.
    Unary,
    /// `SubmitActions` streams: each bot keeps a few open (one per move it has in flight) and
    /// sends each move as one message on a free one.
    Stream,
}

/// Bounded load generator for the bete game service: real bots over real gRPC play whole
/// matches at many tables, then a report with throughput, latency percentiles, errors, the raw
/// transport ceiling and server CPU/memory.
#[derive(Debug, Clone, Parser)]
#[command(name = "bete-load", version, args_conflicts_with_subcommands = true)]
pub struct Options {
    /// `bete-load merge REPORT.json...`: one report from the shards' reports.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Concurrent tables kept playing; a table whose match ends is replaced by a new one.
    #[arg(long, default_value_t = 10)]
    pub tables: u32,
    /// Seats per table; every seat is a load bot (no house bots).
    #[arg(long, default_value_t = 5)]
    pub seats: u32,
    /// Ruleset id: bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams.
    #[arg(long, default_value = "bete")]
    pub ruleset: String,
    /// How long the measured phase lasts (e.g. 30s, 500ms, 1m).
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub duration: Duration,
    /// Ends the measured phase as soon as this many matches have finished, `--duration` staying
    /// the cap: a run that must see whole matches does, however slow the machine.
    #[arg(long, value_name = "N")]
    pub until_matches: Option<u64>,
    /// HTTP/2 connections all bots share (bots are spread over them round-robin).
    #[arg(long, default_value_t = 8)]
    pub connections: u32,
    /// Target moves per second over all tables (open loop). Unset: closed loop, every bot acts
    /// as soon as it is asked.
    #[arg(long)]
    pub rate: Option<f64>,
    /// How moves are submitted: `unary` (SubmitAction per move) or `stream` (SubmitActions).
    #[arg(long, value_enum, default_value_t = Submit::Unary)]
    pub submit: Submit,
    /// Pause of a bot before it answers a decision (e.g. 50ms).
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    pub think_time: Duration,
    /// Address of a running server (host:port or http://host:port). Unset: start one.
    #[arg(long)]
    pub server: Option<String>,
    /// Several nodes of one cluster (host:port,host:port,...): the tables go round-robin over
    /// them, each created, joined and played by its bots on one node (no call needs
    /// forwarding). The ceiling and the report's server are the first node's; server CPU is
    /// not measured (a script reads each node's).
    #[arg(long, value_delimiter = ',', conflicts_with = "server")]
    pub targets: Vec<String>,
    /// How to start the server when `--server` is not given.
    #[arg(long, value_enum, default_value_t = Embed::Auto)]
    pub embed: Embed,
    /// The `bete-server` binary for `--embed child`; default: next to this executable.
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
    /// Write the report here: `.json` or `.md` by extension; `-` writes the JSON report on one
    /// line to stdout (a pod's log, which `bete-load merge` reads back).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// This process's shard of the load, `I/N` (0 ≤ I < N): of the tables numbered 0..--tables
    /// it drives those ≡ I mod N, with bots numbered the same way, and its share of `--rate`.
    /// A Kubernetes indexed Job passes `$(JOB_COMPLETION_INDEX)/N`. Merge the N reports with
    /// `bete-load merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, default_value = "0/1")]
    pub shard: Shard,
    /// PEM CA the server's certificate is checked against (implies TLS); default with an
    /// `https://` address: the system's roots.
    #[arg(long, env = "BETE_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// The name the server's certificate is checked for, when the address is another (a
    /// Service's in-cluster name while the certificate carries the public one).
    #[arg(long, env = "BETE_TLS_DOMAIN")]
    pub tls_domain: Option<String>,
    /// PEM client certificate presented to a server that asks for one (with `--client-key`).
    #[arg(
        long,
        env = "BETE_CLIENT_CERT",
        value_name = "FILE",
        requires = "client_key"
    )]
    pub client_cert: Option<PathBuf>,
    /// PEM key of `--client-cert`.
    #[arg(
        long,
        env = "BETE_CLIENT_KEY",
        value_name = "FILE",
        requires = "client_cert"
    )]
    pub client_key: Option<PathBuf>,
    /// Account tokens, one a line (blank lines and `#` comments skipped), for a server with
    /// open signup off: the bots are registered under these accounts (the shard's share of the
    /// tokens, round-robin; a bot of the same name from an earlier run is reused, its token
    /// rotated). Unset: bots are registered without an account.
    #[arg(long, env = "BETE_LOAD_ACCOUNT_TOKENS", value_name = "FILE")]
    pub account_tokens: Option<PathBuf>,
    /// Bot identities per seat position; default max(connections, tables / 64). Each bot holds
    /// one seat at many tables and reads them all on one WatchBot stream.
    #[arg(long)]
    pub bots_per_seat: Option<u32>,
    /// Table config keys (RULES.md section 10), e.g. `--config rounds=1`.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Decision deadline of the tables, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub deadline_ms: u32,
    /// After the measured phase, how long in-flight submits may take before the harness stops anyway.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub drain: Duration,
    /// Longest time for setup (bots, tables, seats) before the harness gives up.
    #[arg(long, value_parser = parse_duration, default_value = "120s")]
    pub setup_timeout: Duration,
    /// How long the raw unary ceiling (grpc.health.v1 Check) is measured; 0s skips it.
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    pub ceiling_duration: Duration,
    /// Calls in flight for the ceiling; default min(tables, 256), the most submits the
    /// tables can have in flight (one seat acts at a time).
    #[arg(long)]
    pub ceiling_concurrency: Option<u32>,
    /// CreateTable/JoinTable/RegisterBot calls in flight during setup.
    #[arg(long, default_value_t = 64)]
    pub setup_concurrency: u32,
    /// Let hyper size the HTTP/2 windows adaptively (BDP pings) instead of the fixed large
    /// windows; small windows can make h2 close a busy connection (ENHANCE_YOUR_CALM).
    #[arg(long)]
    pub h2_adaptive_window: bool,
    /// Extra spectators that follow a table each on `WatchTable` but read slowly (one message
    /// per `--slow-watch-delay`), to drive the server's resync path under overload.
    #[arg(long, default_value_t = 0)]
    pub slow_watchers: u32,
    /// Pause of a slow watcher after each message it reads.
    #[arg(long, value_parser = parse_duration, default_value = "200ms")]
    pub slow_watch_delay: Duration,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Ladder mode: `--bots` bots enter one ladder with `--capacity` each, hold their WatchBot
    /// streams and play whatever the server's scheduler seats them at (no tables of their own).
    /// Without `--server`, the started server gets a ladders file declaring that ladder from
    /// `--ruleset`, `--seats`, `--config` (`rounds` gives the deals per match), `--deadline-ms`,
    /// `--duplicate` and `--house`.
    #[arg(long)]
    pub ladder: bool,
    /// Ladder mode: the ladder entered (declared by the harness unless `--server` is given).
    #[arg(long, default_value = "load")]
    pub ladder_id: String,
    /// Ladder mode: bots entered.
    #[arg(long, default_value_t = 24)]
    pub bots: u32,
    /// Ladder mode: ladder tables (or sets) each bot plays at once.
    #[arg(long, default_value_t = 1)]
    pub capacity: u32,
    /// Ladder mode: duplicate sets (one seed, every rotation) or single tables.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub duplicate: bool,
    /// Ladder mode: house entrants of the declared ladder (random, heuristic), comma-separated;
    /// none by default.
    #[arg(long, value_delimiter = ',')]
    pub house: Vec<String>,
}

/// The subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Merges the JSON reports of a sharded run (`--shard I/N`) into one: counts and moves/s
    /// summed, latency histograms merged exactly, errors summed, the window the union of the
    /// shards'. Each file is a JSON report or a pod log holding one (`--report -`).
    Merge(MergeArgs),
}

/// `bete-load merge`'s arguments.
#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// The shards' reports.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Write the merged report here: `.json` or `.md` by extension, `-` for JSON on stdout.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

impl Options {
    /// Bot identities per seat position.
    pub fn bots_per_seat(&self) -> u32 {
        self.bots_per_seat
            .unwrap_or_else(|| self.connections.max(self.tables.div_ceil(64)))
            .max(1)
    }

    /// In-flight calls of the transport ceiling.
    pub fn ceiling_concurrency(&self) -> u32 {
        self.ceiling_concurrency
            .unwrap_or_else(|| self.tables.clamp(1, 256))
            .max(1)
    }
}

/// Parses `250ms`, `3s`, `1.5s`, `2m`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a duration like 500ms, 3s or 1m"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}` is not a non-negative duration"));
    }
    let secs = match unit {
        "ms" => v / 1000.0,
        "s" => v,
        "m" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (use ms, s, m or h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert!(parse_duration("3 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn targets_are_a_list() {
        let o = Options::try_parse_from(["bete-load", "--targets", "a:1,b:2,c:3"]).unwrap();
        assert_eq!(o.targets, ["a:1", "b:2", "c:3"]);
        assert!(
            Options::try_parse_from(["bete-load", "--targets", "a:1", "--server", "b:2"]).is_err()
        );
    }

    #[test]
    fn shard_and_merge_parse_and_bad_shards_name_the_flag() {
        let o = Options::try_parse_from(["bete-load", "--shard", "2/3"]).unwrap();
        assert_eq!(o.shard, Shard { index: 2, count: 3 });
        assert_eq!(
            Options::try_parse_from(["bete-load"]).unwrap().shard,
            Shard::default()
        );
        for bad in ["3/3", "0/0", "x", "1/"] {
            let e = Options::try_parse_from(["bete-load", "--shard", bad])
                .unwrap_err()
                .to_string();
            assert!(e.contains("--shard"), "{bad}: {e}");
        }
        let o = Options::try_parse_from(["bete-load", "merge", "a.json", "b.json"]).unwrap();
        match o.command {
            Some(Command::Merge(m)) => assert_eq!(m.reports.len(), 2),
            None => panic!("no merge"),
        }
        assert!(Options::try_parse_from(["bete-load", "merge"]).is_err());
        assert!(Options::try_parse_from(["bete-load", "--tables", "3", "merge", "a"]).is_err());
    }

    #[test]
    fn defaults_follow_the_table_count() {
        let o = Options::try_parse_from(["bete-load", "--tables", "10000"]).unwrap();
        assert_eq!(o.bots_per_seat(), 157);
        assert_eq!(o.ceiling_concurrency(), 256);
        let o =
            Options::try_parse_from(["bete-load", "--tables", "4", "--connections", "2"]).unwrap();
        assert_eq!(o.bots_per_seat(), 2);
        assert_eq!(o.ceiling_concurrency(), 4);
    }
}
