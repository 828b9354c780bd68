//! Counters and latency histograms shared by every bot task.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use tonic_types::StatusExt;

/// Latencies are recorded in microseconds, from 1 µs to 10 minutes, at 3 significant digits.
const HIGHEST_US: u64 = 600_000_000;

/// A latency histogram in microseconds.
#[derive(Debug)]
pub struct Latency(Mutex<Histogram<u64>>);

impl Default for Latency {
    fn default() -> Self {
        Latency(Mutex::new(new_histogram()))
    }
}

/// An empty histogram with the harness's bounds.
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts (low 1, high ≥ 2 × low, sigfig ≤ 5),
    // so this cannot fail.
    #[allow(clippy::expect_used)]
    Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("valid histogram bounds")
}

impl Latency {
    /// Adds one sample (clamped into the histogram's range).
    pub fn record(&self, d: Duration) {
        let us = (d.as_micros() as u64).clamp(1, HIGHEST_US);
        if let Ok(mut h) = self.0.lock() {
            // In range after the clamp, so saturating record never drops it.
            h.saturating_record(us);
        }
    }

    /// Adds every sample of another histogram.
    pub fn merge(&self, other: &Histogram<u64>) {
        if let Ok(mut h) = self.0.lock() {
            // Same bounds on both sides, so `add` cannot fail; a failure would only lose samples.
            let _ = h.add(other);
        }
    }

    /// A copy of the histogram (for the report's serialised form).
    pub fn histogram(&self) -> Histogram<u64> {
        match self.0.lock() {
            Ok(h) => h.clone(),
            Err(_) => new_histogram(),
        }
    }

    /// The percentiles of the report.
    pub fn summary(&self) -> Percentiles {
        match self.0.lock() {
            Ok(h) => Percentiles::of(&h),
            Err(_) => Percentiles::default(),
        }
    }
}

/// Percentiles in milliseconds, as the report states them.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    /// Samples behind these figures.
    pub count: u64,
}

impl Percentiles {
    /// Reads a microsecond histogram.
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        let ms = |us: u64| us as f64 / 1000.0;
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
            mean: h.mean() / 1000.0,
            count: h.len(),
        }
    }
}

/// A histogram as the report carries it: HdrHistogram's V2 compressed encoding (the one its
/// Java, Go and Python ports read too), in base64. Merging reports adds these exactly, where
/// percentiles could only be averaged.
pub fn encode_histogram(h: &Histogram<u64>) -> Result<String, String> {
    use base64::Engine as _;
    use hdrhistogram::serialization::Serializer as _;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .map_err(|e| format!("encoding a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Reads [`encode_histogram`]'s form back into a histogram with the harness's bounds.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("not base64: {e}"))?;
    let read: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("not an HdrHistogram V2 encoding: {e:?}"))?;
    let mut h = new_histogram();
    h.add(&read)
        .map_err(|e| format!("a histogram out of the harness's range: {e:?}"))?;
    Ok(h)
}

/// The canonical name of a gRPC code, e.g. `FAILED_PRECONDITION`.
pub fn code_name(code: tonic::Code) -> String {
    let mut out = String::new();
    for (i, c) in format!("{code:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Errors counted by gRPC code and `ErrorInfo` reason, with the first message of each kind.
#[derive(Debug, Default)]
pub struct Errors {
    counts: Mutex<BTreeMap<(String, String), u64>>,
    samples: Mutex<BTreeMap<String, String>>,
}

impl Errors {
    /// Counts one failed call.
    pub fn record(&self, status: &tonic::Status) {
        let reason = status
            .get_details_error_info()
            .map(|i| i.reason)
            .unwrap_or_else(|| "(no ErrorInfo)".to_string());
        let code = code_name(status.code());
        if let Ok(mut m) = self.samples.lock() {
            m.entry(format!("{code}/{reason}"))
                .or_insert_with(|| status.message().chars().take(300).collect());
        }
        self.record_named(&code, &reason);
    }

    /// Counts one failure that is not a gRPC status (e.g. a stream cut by a Resync message).
    pub fn record_named(&self, code: &str, reason: &str) {
        if let Ok(mut m) = self.counts.lock() {
            *m.entry((code.to_string(), reason.to_string())).or_default() += 1;
        }
    }

    /// Every (code, reason) with its count.
    pub fn snapshot(&self) -> BTreeMap<(String, String), u64> {
        self.counts.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// The first status message seen for each `CODE/REASON`.
    pub fn samples(&self) -> BTreeMap<String, String> {
        self.samples.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// How many failures so far.
    pub fn total(&self) -> u64 {
        self.counts.lock().map(|m| m.values().sum()).unwrap_or(0)
    }
}

/// Everything the bots count while the harness runs.
#[derive(Debug, Default)]
pub struct Stats {
    /// Acknowledged submits inside the measured window.
    pub moves: AtomicU64,
    /// Events delivered to any bot inside the window (one per seat per event).
    pub events: AtomicU64,
    /// Decision requests received inside the window.
    pub decisions: AtomicU64,
    /// Matches whose MatchEnded arrived inside the window.
    pub matches_finished: AtomicU64,
    /// Tables created (setup and replacements).
    pub tables_created: AtomicU64,
    /// Event copies flagged `auto` (the server played for a seat whose deadline passed).
    pub auto_event_copies: AtomicU64,
    /// Resync messages received (a stream fell behind and was cut).
    pub resyncs: AtomicU64,
    /// WatchBot streams reopened after they ended or failed.
    pub reconnects: AtomicU64,
    /// SubmitActions streams opened.
    pub submit_streams: AtomicU64,
    /// Events missing between two consecutive deliveries to one seat (silent loss: must be 0).
    pub event_gaps: AtomicU64,
    /// Events delivered twice to one seat (must be 0).
    pub event_duplicates: AtomicU64,
    /// Submits whose first event never reached every seat (e.g. because a stream was cut).
    pub fanout_incomplete: AtomicU64,
    /// Slow watchers: events read.
    pub slow_events: AtomicU64,
    /// Slow watchers: Resync messages received.
    pub slow_resyncs: AtomicU64,
    /// Slow watchers: streams ended with WATCHER_TOO_SLOW.
    pub slow_cut: AtomicU64,
    /// Slow watchers: events missing across a cut and resume (must be 0).
    pub slow_gaps: AtomicU64,
    /// Slow watchers: events read twice (must be 0).
    pub slow_duplicates: AtomicU64,
    /// Slow watchers: streams reopened with `from_seq`.
    pub slow_reconnects: AtomicU64,
    /// Slow watchers: other failures.
    pub slow_errors: AtomicU64,
    /// Submit until the acknowledgement arrives.
    pub ack: Latency,
    /// Submit until the action's first event reached every seat of the table.
    pub event_all_seats: Latency,
    /// Failed calls during the run (setup failures included).
    pub errors: Errors,
}

/// Adds one to a counter.
pub fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Reads a counter.
pub fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_out_in_milliseconds() {
        let l = Latency::default();
        for ms in 1..=100u64 {
            l.record(Duration::from_millis(ms));
        }
        let p = l.summary();
        assert_eq!(p.count, 100);
        assert!((p.p50 - 50.0).abs() < 0.1, "{p:?}");
        assert!((p.p99 - 99.0).abs() < 0.1, "{p:?}");
        assert!((p.max - 100.0).abs() < 0.1, "{p:?}");
    }

    #[test]
    fn histograms_survive_their_encoding_exactly() {
        let l = Latency::default();
        for us in [1u64, 10, 999, 1_234, 56_789, 3_000_000] {
            l.record(Duration::from_micros(us));
        }
        let h = l.histogram();
        let back = decode_histogram(&encode_histogram(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert_eq!(Percentiles::of(&back).max, Percentiles::of(&h).max);
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("aGVsbG8=").is_err());
    }

    #[test]
    fn errors_are_keyed_by_code_and_reason() {
        let e = Errors::default();
        e.record(&tonic::Status::aborted("stale"));
        e.record(&tonic::Status::aborted("stale"));
        e.record_named("RESYNC", "too slow");
        let s = e.snapshot();
        assert_eq!(
            s.get(&("ABORTED".to_string(), "(no ErrorInfo)".to_string())),
            Some(&2)
        );
        assert_eq!(e.total(), 3);
        assert_eq!(
            code_name(tonic::Code::FailedPrecondition),
            "FAILED_PRECONDITION"
        );
    }
}
