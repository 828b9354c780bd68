//! The run's report: one JSON object (the stable, machine-read form) and a Markdown rendering.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::ceiling::Ceiling;
use crate::procfs::Machine;
use crate::server::ServerInfo;
use crate::shard::ShardInfo;
use crate::stats::Percentiles;

/// The report's `format`. Fields are only ever added under it (a reader ignores those it does
/// not know); it is bumped when a field changes meaning.
pub const FORMAT: &str = "bete-load/1";
/// The key of the transport ceiling's histogram in `histograms`.
pub const CEILING_HISTOGRAM: &str = "ceiling";

/// Error counts three ways, so a reader can branch on the code, the reason, or both.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ErrorCounts {
    pub total: u64,
    /// By gRPC code name, e.g. `ABORTED`.
    pub by_code: BTreeMap<String, u64>,
    /// By `ErrorInfo` reason, e.g. `STALE_SEQ` (`(no ErrorInfo)` when the status had none).
    pub by_reason: BTreeMap<String, u64>,
    /// By `CODE/REASON`.
    pub by_code_and_reason: BTreeMap<String, u64>,
    /// The first status message of each `CODE/REASON`, for diagnosis.
    pub samples: BTreeMap<String, String>,
}

impl ErrorCounts {
    pub fn from_map(
        m: &BTreeMap<(String, String), u64>,
        samples: BTreeMap<String, String>,
    ) -> ErrorCounts {
        let mut e = ErrorCounts {
            samples,
            ..ErrorCounts::default()
        };
        for ((code, reason), n) in m {
            e.total += n;
            *e.by_code.entry(code.clone()).or_default() += n;
            *e.by_reason.entry(reason.clone()).or_default() += n;
            *e.by_code_and_reason
                .entry(format!("{code}/{reason}"))
                .or_default() += n;
        }
        e
    }
}

/// The run's settings as they took effect.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunSettings {
    pub tables: u32,
    pub seats: u32,
    pub ruleset: String,
    pub duration_s: f64,
    pub connections: u32,
    /// Target moves/s; null for closed loop.
    pub rate: Option<f64>,
    pub think_time_ms: f64,
    pub bots: usize,
    pub bots_per_seat: u32,
    pub config: BTreeMap<String, String>,
    pub deadline_ms: u32,
    /// `release` or `debug`: the profile bete-load was built with.
    pub harness_build: String,
}

/// Stream health: what proves that no event was lost silently.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct StreamHealth {
    /// Resync messages received (the server cut a stream that fell behind).
    pub resyncs: u64,
    /// WatchBot streams reopened (after a resync, an error or the server ending them).
    pub reconnects: u64,
    /// Events missing between consecutive deliveries to one seat: silent loss, must be 0.
    pub event_gaps: u64,
    /// Events delivered twice to one seat: must be 0.
    pub event_duplicates: u64,
    /// Submits whose first event did not reach every seat while tracked.
    pub fanout_incomplete: u64,
    /// Moves the server played for a seat whose deadline passed.
    pub auto_moves: u64,
    /// SubmitActions streams opened (`--submit stream`; 0 otherwise).
    pub submit_streams_opened: u64,
}

/// What the deliberately slow spectators saw (`--slow-watchers`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SlowWatchers {
    pub watchers: u32,
    pub delay_ms: f64,
    pub events: u64,
    /// Resync messages received.
    pub resyncs: u64,
    /// Streams ended with WATCHER_TOO_SLOW.
    pub cut_too_slow: u64,
    /// Streams reopened with `from_seq`.
    pub reconnects: u64,
    /// Events missing across cuts and resumes: silent loss, must be 0.
    pub gaps: u64,
    pub duplicates: u64,
    pub other_errors: u64,
}

/// Everything a run measured.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Always `bete-load/1`; bumped when a field changes meaning.
    pub format: String,
    /// The exact command line.
    pub command: String,
    /// Unix time of the start, in seconds.
    pub started_unix_s: u64,
    /// Unix time of the measured window's start and end, in milliseconds (absent from reports
    /// of older harnesses). A merged report's window is the union of its shards'.
    #[serde(default)]
    pub window_started_unix_ms: Option<u64>,
    #[serde(default)]
    pub window_ended_unix_ms: Option<u64>,
    /// `--shard I/N`: which share of the load this run drove (absent when it drove it all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    pub versions: BTreeMap<String, String>,
    pub machine: Machine,
    pub server: ServerInfo,
    pub settings: RunSettings,
    /// How moves were submitted: "unary" (SubmitAction) or "stream" (SubmitActions).
    pub submit: crate::cli::Submit,
    /// Seconds spent registering bots, creating tables and seating every bot before the window.
    pub setup_s: f64,
    /// The measured window, in seconds (all rates divide by it).
    pub window_s: f64,
    /// Seconds from the end of the window until every in-flight call finished (or the drain timed out).
    pub drain_s: f64,
    /// True when the harness stopped on its own within its bounds and the server stopped cleanly.
    pub stopped_by_itself: bool,
    pub moves: u64,
    pub moves_per_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub decisions: u64,
    pub matches_finished: u64,
    pub tables_created: u64,
    /// `submit_to_ack` and `submit_to_event_at_every_seat`, in milliseconds.
    pub latency_ms: BTreeMap<String, Percentiles>,
    pub errors: ErrorCounts,
    pub ceiling_rps: f64,
    pub ceiling: Ceiling,
    /// moves_per_s / ceiling_rps.
    pub ratio_to_ceiling: Option<f64>,
    /// Server CPU (user + system) during the window, in seconds.
    pub server_cpu_s: Option<f64>,
    pub server_cpu_us_per_move: Option<f64>,
    /// Server CPU per wall second of the window (1.0 = one core busy).
    pub server_cores_busy: Option<f64>,
    /// This harness's own CPU during the window, in cores busy (child mode: the load generator alone).
    pub harness_cores_busy: Option<f64>,
    pub server_peak_rss_kib: Option<u64>,
    /// Server RSS before any table existed and once every table was seated.
    pub server_rss_kib_before_tables: Option<u64>,
    pub server_rss_kib_after_setup: Option<u64>,
    /// (after setup - before tables) / tables.
    pub server_rss_per_table_kib: Option<f64>,
    pub stream: StreamHealth,
    pub slow_watchers: SlowWatchers,
    /// `bete_*` samples scraped from the server's /metrics at the end (child mode).
    pub server_metrics: Option<BTreeMap<String, f64>>,
    /// Ladder mode (`--ladder`): matches per minute and the wait from free capacity to seated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder: Option<crate::ladder::LadderFigures>,
    /// The latency histograms behind `latency_ms` and the ceiling's (key `ceiling`), in
    /// microseconds: HdrHistogram's V2 compressed encoding in base64 (stats::encode_histogram),
    /// which `bete-load merge` adds exactly.
    #[serde(default)]
    pub histograms: BTreeMap<String, String>,
    /// A merged report (`bete-load merge`): what it was merged from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<crate::merge::Merged>,
}

impl Report {
    /// Writes JSON (`.json`) or Markdown (anything else, e.g. `.md`); `-`: the JSON on one line
    /// to stdout (a pod's log: `bete-load merge` finds the line among the log's others).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        if path == Path::new("-") {
            let line = serde_json::to_string(self).map_err(std::io::Error::other)?;
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}")?;
            return out.flush();
        }
        let text = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                serde_json::to_string_pretty(self).map_err(std::io::Error::other)? + "\n"
            }
            _ => self.markdown(),
        };
        std::fs::write(path, text)
    }

    /// A short human summary for the terminal.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let ack = self
            .latency_ms
            .get("submit_to_ack")
            .cloned()
            .unwrap_or_default();
        let all = self
            .latency_ms
            .get("submit_to_event_at_every_seat")
            .cloned()
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{} moves/s, {} events/s over {:.1}s; {} matches finished; {} errors",
            fmt0(self.moves_per_s),
            fmt0(self.events_per_s),
            self.window_s,
            self.matches_finished,
            self.errors.total
        );
        let _ = writeln!(
            s,
            "submit→ack ms: p50 {:.2} p99 {:.2} p99.9 {:.2} max {:.2}",
            ack.p50, ack.p99, ack.p999, ack.max
        );
        let _ = writeln!(
            s,
            "submit→every seat ms: p50 {:.2} p99 {:.2} p99.9 {:.2} max {:.2}",
            all.p50, all.p99, all.p999, all.max
        );
        let _ = writeln!(
            s,
            "ceiling {} rps at {} in flight; ratio {}",
            fmt0(self.ceiling_rps),
            self.ceiling.concurrency,
            self.ratio_to_ceiling
                .map_or("n/a".into(), |r| format!("{r:.3}"))
        );
        let _ = writeln!(
            s,
            "server: {} µs CPU/move, {} cores busy, peak RSS {} KiB, {} KiB/table",
            opt(self.server_cpu_us_per_move, 1),
            opt(self.server_cores_busy, 2),
            self.server_peak_rss_kib
                .map_or("n/a".into(), |v| v.to_string()),
            opt(self.server_rss_per_table_kib, 1)
        );
        let _ = write!(
            s,
            "streams: {} gaps, {} duplicates, {} resyncs, {} reconnects, {} auto-moves",
            self.stream.event_gaps,
            self.stream.event_duplicates,
            self.stream.resyncs,
            self.stream.reconnects,
            self.stream.auto_moves
        );
        if let Some(l) = &self.ladder {
            let f = &l.free_to_seated_ms;
            let _ = write!(
                s,
                "\nladder {}: {} bots × {}; {:.0} tables/min, {:.0} {}/min; free→seated ms: p50 {:.1} p99 {:.1} max {:.1} ({} seatings, {} waiting at end, longest {:.0} ms)",
                l.ladder_id,
                l.bots,
                l.capacity,
                l.tables_per_min,
                l.sets_per_min,
                if l.duplicate { "sets" } else { "matches" },
                f.p50,
                f.p99,
                f.max,
                f.count,
                l.waiting_at_end,
                l.longest_wait_at_end_ms
            );
        }
        if let Some(m) = &self.merged {
            let _ = write!(
                s,
                "\nmerged {} reports: windows overlap {:.1} s of their union {:.1} s; {} moves/s over the union",
                m.reports.len(),
                m.window_overlap_s,
                m.window_union_s,
                fmt0(m.moves_per_s_over_union)
            );
            if !m.missing_shards.is_empty() {
                let _ = write!(s, "; MISSING shards {:?}", m.missing_shards);
            }
        }
        if self.slow_watchers.watchers > 0 {
            let w = &self.slow_watchers;
            let _ = write!(
                s,
                "\nslow watchers: {} events, {} resyncs, {} cut WATCHER_TOO_SLOW, {} resumes, {} gaps, {} duplicates",
                w.events, w.resyncs, w.cut_too_slow, w.reconnects, w.gaps, w.duplicates
            );
        }
        s
    }

    /// The report as a Markdown page.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# bete-load report\n");
        let _ = writeln!(s, "```\n{}\n```\n", self.command);
        let _ = writeln!(s, "| | |\n|---|---|");
        let m = &self.machine;
        let _ = writeln!(
            s,
            "| machine | {} cores, {} MiB, {}, kernel {}, load {} at start |",
            m.cores,
            m.memory_kib.map_or("?".into(), |k| (k / 1024).to_string()),
            m.cpu_model.as_deref().unwrap_or("?"),
            m.kernel.as_deref().unwrap_or("?"),
            m.load_1m_at_start.map_or("?".into(), |l| format!("{l:.2}"))
        );
        for (k, v) in &self.versions {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        let st = &self.settings;
        let _ = writeln!(
            s,
            "| server | {} at {} |",
            self.server.mode, self.server.address
        );
        let _ = writeln!(
            s,
            "| load | {} tables × {} seats of {}, {} connections, {} bots, {} |",
            st.tables,
            st.seats,
            st.ruleset,
            st.connections,
            st.bots,
            st.rate
                .map_or("closed loop".into(), |r| format!("{r} moves/s target"))
        );
        if let Some(sh) = &self.shard {
            let _ = writeln!(
                s,
                "| shard | {}/{} of {} tables (tables {:?}, ...) |",
                sh.index, sh.count, sh.tables_total, sh.first_tables
            );
        }
        let submit = match self.submit {
            crate::cli::Submit::Unary => "unary SubmitAction per move",
            crate::cli::Submit::Stream => "SubmitActions streams",
        };
        let _ = writeln!(
            s,
            "| submit | {submit} ({} streams opened) |",
            self.stream.submit_streams_opened
        );
        let _ = writeln!(
            s,
            "| window | {:.1} s (setup {:.1} s, drain {:.2} s) |",
            self.window_s, self.setup_s, self.drain_s
        );
        let _ = writeln!(
            s,
            "| moves/s | {} ({} moves) |",
            fmt0(self.moves_per_s),
            self.moves
        );
        let _ = writeln!(s, "| events/s | {} |", fmt0(self.events_per_s));
        let _ = writeln!(s, "| matches finished | {} |", self.matches_finished);
        let _ = writeln!(
            s,
            "| ceiling | {} rps at {} in flight; ratio {} |",
            fmt0(self.ceiling_rps),
            self.ceiling.concurrency,
            self.ratio_to_ceiling
                .map_or("n/a".into(), |r| format!("{r:.3}"))
        );
        let _ = writeln!(
            s,
            "| server CPU | {} s, {} µs/move, {} cores busy |",
            opt(self.server_cpu_s, 2),
            opt(self.server_cpu_us_per_move, 1),
            opt(self.server_cores_busy, 2)
        );
        let _ = writeln!(
            s,
            "| harness CPU | {} cores busy |",
            opt(self.harness_cores_busy, 2)
        );
        let _ = writeln!(
            s,
            "| server memory | peak {} KiB; {} KiB per table |",
            self.server_peak_rss_kib
                .map_or("n/a".into(), |v| v.to_string()),
            opt(self.server_rss_per_table_kib, 1)
        );
        if let Some(l) = &self.ladder {
            let _ = writeln!(
                s,
                "| ladder | {} ({}; {} bots × capacity {}; house {:?}): {} tables ({:.0}/min), {} {} rated ({:.0}/min); {} free slots waiting at the end, longest {:.0} ms |",
                l.ladder_id,
                if l.duplicate {
                    "duplicate sets"
                } else {
                    "single tables"
                },
                l.bots,
                l.capacity,
                l.house_entrants,
                l.tables_finished,
                l.tables_per_min,
                l.sets_rated,
                if l.duplicate { "sets" } else { "matches" },
                l.sets_per_min,
                l.waiting_at_end,
                l.longest_wait_at_end_ms
            );
        }
        let _ = writeln!(s, "| stopped by itself | {} |\n", self.stopped_by_itself);
        let _ = writeln!(
            s,
            "## Latency (ms)\n\n| path | p50 | p90 | p99 | p99.9 | max | samples |\n|---|---|---|---|---|---|---|"
        );
        for (path, p) in &self.latency_ms {
            let _ = writeln!(
                s,
                "| {path} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
                p.p50, p.p90, p.p99, p.p999, p.max, p.count
            );
        }
        if let Some(l) = &self.ladder {
            for (path, p) in [
                ("ladder: free → seated", &l.free_to_seated_ms),
                ("ladder: free → seated, new match", &l.new_match_seated_ms),
                (
                    "ladder: free → seated, next rotation",
                    &l.next_rotation_seated_ms,
                ),
                (
                    "ladder: enter → first seated (setup)",
                    &l.enter_to_first_seated_ms,
                ),
            ] {
                let _ = writeln!(
                    s,
                    "| {path} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
                    p.p50, p.p90, p.p99, p.p999, p.max, p.count
                );
            }
        }
        let c = &self.ceiling.latency_ms;
        let _ = writeln!(
            s,
            "| ceiling (health Check) | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |",
            c.p50, c.p90, c.p99, c.p999, c.max, c.count
        );
        let _ = writeln!(s, "\n## Errors\n");
        if self.errors.total == 0 {
            let _ = writeln!(s, "None.");
        } else {
            let _ = writeln!(s, "| code/reason | count | first message |\n|---|---|---|");
            for (k, n) in &self.errors.by_code_and_reason {
                let msg = self
                    .errors
                    .samples
                    .get(k)
                    .map(|m| m.replace('|', "\\|"))
                    .unwrap_or_default();
                let _ = writeln!(s, "| {k} | {n} | {msg} |");
            }
        }
        if let Some(m) = &self.merged {
            s.push_str(&m.markdown());
        }
        let h = &self.stream;
        let _ = writeln!(
            s,
            "\n## Streams\n\n{} gaps, {} duplicates, {} resyncs, {} reconnects, {} incomplete fan-outs, {} auto-moves.",
            h.event_gaps,
            h.event_duplicates,
            h.resyncs,
            h.reconnects,
            h.fanout_incomplete,
            h.auto_moves
        );
        s
    }
}

fn fmt0(v: f64) -> String {
    format!("{v:.0}")
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.digits$}"))
}
