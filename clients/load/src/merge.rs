//! `bete-load merge`: the reports of a sharded run (`--shard I/N`, one per process or pod) as
//! one report. Counts, moves/s and errors are summed; latency histograms, which every report
//! carries encoded, are added bucket by bucket and the percentiles read from the sum (averaging
//! percentiles would be wrong); the window is the union of the shards' windows, and how much
//! of it they overlapped is stated, since summed rates mean "at once" only when they did.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use crate::LoadError;
use crate::report::{CEILING_HISTOGRAM, ErrorCounts, FORMAT, Report};
use crate::stats::{Percentiles, decode_histogram, encode_histogram, new_histogram};

/// The latency paths every report must carry a histogram of.
const REQUIRED: [&str; 2] = ["submit_to_ack", "submit_to_event_at_every_seat"];

/// What a merged report was made of.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Merged {
    /// Each input, in the order given.
    pub reports: Vec<MergedInput>,
    /// Seconds from the earliest window start to the latest window end (the report's `window_s`).
    pub window_union_s: f64,
    /// Seconds all the windows had in common (0 when some did not overlap at all).
    pub window_overlap_s: f64,
    /// The merged moves over the union window (the report's `moves_per_s` is the sum of the
    /// shards' rates, each over its own window; the two agree when the windows coincide).
    pub moves_per_s_over_union: f64,
    /// Shard indexes of 0..N with no report among the inputs: the merged figures lack them.
    pub missing_shards: Vec<u32>,
}

/// One input of a merge, as it reported itself.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MergedInput {
    pub file: String,
    /// `I/N`, or null for an unsharded run.
    pub shard: Option<String>,
    pub moves: u64,
    pub moves_per_s: f64,
    pub errors: u64,
    pub window_started_unix_ms: Option<u64>,
    pub window_ended_unix_ms: Option<u64>,
    pub submit_to_ack_ms: Percentiles,
}

impl Merged {
    /// The merged report's "Shards" section.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\n## Shards\n\nMerged from {} reports; their windows overlap {:.2} s of a union of {:.2} s ({} moves/s over the union).\n",
            self.reports.len(),
            self.window_overlap_s,
            self.window_union_s,
            format_args!("{:.0}", self.moves_per_s_over_union)
        );
        if !self.missing_shards.is_empty() {
            let _ = writeln!(
                s,
                "**Missing shards: {:?}** (their load is not in these figures).\n",
                self.missing_shards
            );
        }
        let _ = writeln!(
            s,
            "| file | shard | moves | moves/s | errors | ack p50 | ack p99 | ack max |\n|---|---|---|---|---|---|---|---|"
        );
        for r in &self.reports {
            let p = &r.submit_to_ack_ms;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.0} | {} | {:.2} | {:.2} | {:.2} |",
                r.file.replace('|', "\\|"),
                r.shard.as_deref().unwrap_or("whole"),
                r.moves,
                r.moves_per_s,
                r.errors,
                p.p50,
                p.p99,
                p.max
            );
        }
        s
    }
}

/// Reads a report: a JSON report file, or any text (a pod's log) with the report on a line of
/// its own (`--report -`); the last such line counts.
pub fn read_report(path: &Path) -> Result<Report, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::Merge(format!("{}: {e}", path.display())))?;
    let report = match serde_json::from_str::<Report>(&text) {
        Ok(r) => r,
        Err(whole) => text
            .lines()
            .rev()
            .filter(|l| l.trim_start().starts_with('{'))
            .find_map(|l| serde_json::from_str::<Report>(l).ok())
            .ok_or_else(|| {
                LoadError::Merge(format!(
                    "{}: no bete-load JSON report in it (as a whole: {whole})",
                    path.display()
                ))
            })?,
    };
    if report.format != FORMAT {
        return Err(LoadError::Merge(format!(
            "{}: format {:?}, this bete-load merges {FORMAT:?}",
            path.display(),
            report.format
        )));
    }
    Ok(report)
}

fn sum_opt(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.sum()
}

/// Checks the shards fit together; returns the shard indexes that are missing.
fn check_shards(inputs: &[(String, Report)]) -> Result<Vec<u32>, LoadError> {
    let sharded: Vec<_> = inputs
        .iter()
        .filter_map(|(f, r)| r.shard.as_ref().map(|s| (f, s)))
        .collect();
    if sharded.is_empty() {
        return Ok(Vec::new());
    }
    if sharded.len() != inputs.len() {
        return Err(LoadError::Merge(
            "the reports mix sharded runs (--shard) with a whole one: they are not one load".into(),
        ));
    }
    let count = sharded[0].1.count;
    let mut seen: BTreeMap<u32, &String> = BTreeMap::new();
    for (file, s) in &sharded {
        if s.count != count || s.tables_total != sharded[0].1.tables_total {
            return Err(LoadError::Merge(format!(
                "{file} is shard {}/{} of {} tables, {} is shard {}/{} of {}: not one load",
                s.index,
                s.count,
                s.tables_total,
                sharded[0].0,
                sharded[0].1.index,
                count,
                sharded[0].1.tables_total
            )));
        }
        if let Some(other) = seen.insert(s.index, file) {
            return Err(LoadError::Merge(format!(
                "shard {}/{count} is in both {other} and {file}",
                s.index
            )));
        }
    }
    Ok((0..count).filter(|i| !seen.contains_key(i)).collect())
}

/// One report from `inputs` (file name, report); `command` is recorded as the merged one's.
pub fn merge(inputs: &[(String, Report)], command: String) -> Result<Report, LoadError> {
    let Some((_, first)) = inputs.first() else {
        return Err(LoadError::Merge("no report to merge".into()));
    };
    for (file, r) in inputs {
        if r.ladder.is_some() {
            return Err(LoadError::Merge(format!(
                "{file} is a ladder-mode report: only table-mode runs (what --shard splits) merge"
            )));
        }
        if r.merged.is_some() {
            return Err(LoadError::Merge(format!(
                "{file} is already a merged report: merge the shards' own reports"
            )));
        }
        for path in REQUIRED {
            if !r.histograms.contains_key(path) {
                return Err(LoadError::Merge(format!(
                    "{file} has no {path} histogram (a report of an older bete-load): its \
                     percentiles cannot be merged exactly"
                )));
            }
        }
    }
    let missing_shards = check_shards(inputs)?;

    // Histograms: every path any report has, added exactly.
    let mut sums: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for (file, r) in inputs {
        for (path, text) in &r.histograms {
            let h = decode_histogram(text)
                .map_err(|e| LoadError::Merge(format!("{file}: histogram {path}: {e}")))?;
            sums.entry(path.clone())
                .or_insert_with(new_histogram)
                .add(&h)
                .map_err(|e| LoadError::Merge(format!("{file}: histogram {path}: {e:?}")))?;
        }
    }
    let mut latency_ms = BTreeMap::new();
    let mut histograms = BTreeMap::new();
    for (path, h) in &sums {
        if path != CEILING_HISTOGRAM {
            latency_ms.insert(path.clone(), Percentiles::of(h));
        }
        histograms.insert(path.clone(), encode_histogram(h).map_err(LoadError::Merge)?);
    }

    let reports = || inputs.iter().map(|(_, r)| r);
    let sum = |f: fn(&Report) -> u64| reports().map(f).sum::<u64>();
    let sumf = |f: fn(&Report) -> f64| reports().map(f).sum::<f64>();

    // The window: the union of the shards' (and their overlap), when every report has one.
    let starts: Option<Vec<u64>> = reports().map(|r| r.window_started_unix_ms).collect();
    let ends: Option<Vec<u64>> = reports().map(|r| r.window_ended_unix_ms).collect();
    let (window_started, window_ended, union_s, overlap_s) = match (starts, ends) {
        (Some(starts), Some(ends)) => {
            let (min_start, max_start) = (starts.iter().min(), starts.iter().max());
            let (min_end, max_end) = (ends.iter().min(), ends.iter().max());
            match (min_start, max_start, min_end, max_end) {
                (Some(&a), Some(&b), Some(&c), Some(&d)) => (
                    Some(a),
                    Some(d),
                    d.saturating_sub(a) as f64 / 1000.0,
                    c.saturating_sub(b) as f64 / 1000.0,
                ),
                _ => (None, None, 0.0, 0.0),
            }
        }
        // Older reports: no clock times, so the longest window stands for the union.
        _ => {
            let longest = reports().map(|r| r.window_s).fold(0.0, f64::max);
            (None, None, longest, 0.0)
        }
    };

    let mut errors = BTreeMap::<(String, String), u64>::new();
    let mut samples = BTreeMap::new();
    for r in reports() {
        for (key, n) in &r.errors.by_code_and_reason {
            let (code, reason) = key.split_once('/').unwrap_or((key.as_str(), ""));
            *errors
                .entry((code.to_string(), reason.to_string()))
                .or_default() += n;
        }
        for (k, m) in &r.errors.samples {
            samples.entry(k.clone()).or_insert_with(|| m.clone());
        }
    }

    let moves = sum(|r| r.moves);
    let moves_per_s = sumf(|r| r.moves_per_s);
    let mut ceiling = first.ceiling.clone();
    ceiling.rps = sumf(|r| r.ceiling.rps);
    ceiling.concurrency = reports().map(|r| r.ceiling.concurrency).sum();
    ceiling.seconds = reports().map(|r| r.ceiling.seconds).fold(0.0, f64::max);
    ceiling.calls = sum(|r| r.ceiling.calls);
    ceiling.errors = sum(|r| r.ceiling.errors);
    ceiling.latency_ms = sums
        .get(CEILING_HISTOGRAM)
        .map(Percentiles::of)
        .unwrap_or_default();
    ceiling.histogram = None;

    let mut settings = first.settings.clone();
    settings.tables = reports().map(|r| r.settings.tables).sum();
    settings.connections = reports().map(|r| r.settings.connections).sum();
    settings.bots = reports().map(|r| r.settings.bots).sum();
    settings.bots_per_seat = reports().map(|r| r.settings.bots_per_seat).sum();
    settings.rate = sum_opt(reports().map(|r| r.settings.rate));
    settings.duration_s = reports().map(|r| r.settings.duration_s).fold(0.0, f64::max);

    let mut stream = first.stream.clone();
    stream.resyncs = sum(|r| r.stream.resyncs);
    stream.reconnects = sum(|r| r.stream.reconnects);
    stream.event_gaps = sum(|r| r.stream.event_gaps);
    stream.event_duplicates = sum(|r| r.stream.event_duplicates);
    stream.fanout_incomplete = sum(|r| r.stream.fanout_incomplete);
    stream.auto_moves = sum(|r| r.stream.auto_moves);
    stream.submit_streams_opened = sum(|r| r.stream.submit_streams_opened);
    let mut slow = first.slow_watchers.clone();
    slow.watchers = reports().map(|r| r.slow_watchers.watchers).sum();
    slow.events = sum(|r| r.slow_watchers.events);
    slow.resyncs = sum(|r| r.slow_watchers.resyncs);
    slow.cut_too_slow = sum(|r| r.slow_watchers.cut_too_slow);
    slow.reconnects = sum(|r| r.slow_watchers.reconnects);
    slow.gaps = sum(|r| r.slow_watchers.gaps);
    slow.duplicates = sum(|r| r.slow_watchers.duplicates);
    slow.other_errors = sum(|r| r.slow_watchers.other_errors);

    let server_cpu_s = sum_opt(reports().map(|r| r.server_cpu_s));
    let merged = Merged {
        reports: inputs
            .iter()
            .map(|(file, r)| MergedInput {
                file: file.clone(),
                shard: r.shard.as_ref().map(|s| format!("{}/{}", s.index, s.count)),
                moves: r.moves,
                moves_per_s: r.moves_per_s,
                errors: r.errors.total,
                window_started_unix_ms: r.window_started_unix_ms,
                window_ended_unix_ms: r.window_ended_unix_ms,
                submit_to_ack_ms: r
                    .latency_ms
                    .get("submit_to_ack")
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect(),
        window_union_s: union_s,
        window_overlap_s: overlap_s.max(0.0),
        moves_per_s_over_union: if union_s > 0.0 {
            moves as f64 / union_s
        } else {
            0.0
        },
        missing_shards,
    };
    Ok(Report {
        format: FORMAT.into(),
        command,
        started_unix_s: reports().map(|r| r.started_unix_s).min().unwrap_or(0),
        window_started_unix_ms: window_started,
        window_ended_unix_ms: window_ended,
        shard: None,
        versions: first.versions.clone(),
        machine: first.machine.clone(),
        server: first.server.clone(),
        settings,
        submit: first.submit,
        setup_s: reports().map(|r| r.setup_s).fold(0.0, f64::max),
        window_s: union_s,
        drain_s: reports().map(|r| r.drain_s).fold(0.0, f64::max),
        stopped_by_itself: reports().all(|r| r.stopped_by_itself),
        moves,
        moves_per_s,
        events: sum(|r| r.events),
        events_per_s: sumf(|r| r.events_per_s),
        decisions: sum(|r| r.decisions),
        matches_finished: sum(|r| r.matches_finished),
        tables_created: sum(|r| r.tables_created),
        latency_ms,
        errors: ErrorCounts::from_map(&errors, samples),
        ceiling_rps: ceiling.rps,
        ratio_to_ceiling: (ceiling.rps > 0.0).then(|| moves_per_s / ceiling.rps),
        ceiling,
        server_cpu_s,
        server_cpu_us_per_move: server_cpu_s
            .filter(|_| moves > 0)
            .map(|c| c * 1e6 / moves as f64),
        server_cores_busy: sum_opt(reports().map(|r| r.server_cores_busy)),
        harness_cores_busy: sum_opt(reports().map(|r| r.harness_cores_busy)),
        server_peak_rss_kib: reports().filter_map(|r| r.server_peak_rss_kib).max(),
        server_rss_kib_before_tables: None,
        server_rss_kib_after_setup: None,
        server_rss_per_table_kib: None,
        stream,
        slow_watchers: slow,
        server_metrics: None,
        ladder: None,
        histograms,
        merged: Some(merged),
    })
}

/// Reads every report; a file given twice is refused (its load would count twice).
pub fn read_all(paths: &[std::path::PathBuf]) -> Result<Vec<(String, Report)>, LoadError> {
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for p in paths {
        let name = p.display().to_string();
        if !names.insert(name.clone()) {
            return Err(LoadError::Merge(format!("{name} is given twice")));
        }
        out.push((name, read_report(p)?));
    }
    Ok(out)
}
