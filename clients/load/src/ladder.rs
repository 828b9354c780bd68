//! Ladder mode (`--ladder`): bots enter one ladder and play what its scheduler seats them at.
//! The harness declares the ladder (a ladders file for the server it starts), registers and
//! enters the bots, keeps their WatchBot streams open (the same reader as the plain mode), and
//! measures how long a bot with free capacity waits to be seated, besides the usual moves,
//! latencies and server CPU.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bete_api::pb;
use bete_api::pb::ladder_service_client::LadderServiceClient;
use tokio::sync::{Notify, Semaphore};

use crate::cli::Options;
use crate::driver::{self, Bot, Shared};
use crate::report::ErrorCounts;
use crate::server::Server;
use crate::stats::{Latency, Percentiles, bump};
use crate::{LoadError, Measured};

/// Days are long enough that no limit of the declared ladder binds during a bounded run.
const UNLIMITED: u32 = 1_000_000;

/// One `[[ladder]]` of the generated ladders file (service/ladder/src/spec.rs reads it).
#[derive(serde::Serialize)]
struct Decl {
    id: String,
    ruleset: String,
    seats: u32,
    deals_per_match: u32,
    decision_deadline_ms: u32,
    duplicate: bool,
    max_matches_per_day: u32,
    max_tables_per_bot: u32,
    house_entrants: Vec<String>,
    max_group_meetings_per_day: u32,
    config: BTreeMap<String, toml::Value>,
}

#[derive(serde::Serialize)]
struct File {
    ladder: Vec<Decl>,
}

/// A `--config` value as TOML: a number or boolean when it reads as one, else a string.
fn toml_value(v: &str) -> toml::Value {
    if let Ok(i) = v.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(b) = v.parse::<bool>() {
        toml::Value::Boolean(b)
    } else if let Ok(f) = v.parse::<f64>() {
        toml::Value::Float(f)
    } else {
        toml::Value::String(v.to_string())
    }
}

/// The ladders file declaring `--ladder-id` from the options, checked by the server's own
/// parser. `rounds` in `--config` becomes the match length (deals = rounds × seats; default 2
/// rounds, the ladders' default); `max_extra_deals` must be 0 or absent (a ladder match has
/// exactly its deals).
pub fn ladders_file(
    opts: &Options,
    config: &BTreeMap<String, String>,
) -> Result<String, LoadError> {
    let mut rounds = 2;
    let mut table_config = BTreeMap::new();
    for (k, v) in config {
        match k.as_str() {
            "rounds" => {
                rounds = v.parse().map_err(|_| {
                    LoadError::Options(format!("--config rounds={v} is not a whole number"))
                })?;
            }
            "max_extra_deals" if v == "0" => {}
            "max_extra_deals" => {
                return Err(LoadError::Options(
                    "--ladder: a ladder match has exactly its deals (max_extra_deals=0)".into(),
                ));
            }
            _ => {
                table_config.insert(k.clone(), toml_value(v));
            }
        }
    }
    let file = File {
        ladder: vec![Decl {
            id: opts.ladder_id.clone(),
            ruleset: opts.ruleset.clone(),
            seats: opts.seats,
            deals_per_match: rounds * opts.seats,
            decision_deadline_ms: opts.deadline_ms,
            duplicate: opts.duplicate,
            max_matches_per_day: UNLIMITED,
            max_tables_per_bot: opts.capacity.max(1),
            house_entrants: opts.house.clone(),
            max_group_meetings_per_day: UNLIMITED,
            config: table_config,
        }],
    };
    let text = toml::to_string(&file).map_err(|e| LoadError::Options(e.to_string()))?;
    bete_ladder::parse_ladders(&text).map_err(|e| LoadError::Options(format!("--ladder: {e}")))?;
    Ok(text)
}

/// What one bot's ladder seating looks like to the harness.
#[derive(Debug, Default)]
struct BotSeating {
    /// When each free slot opened (entering, or a ladder table's end), oldest first.
    free_since: VecDeque<Instant>,
    /// Seated messages that came before the end of the table they follow was seen on the
    /// stream (the two travel on different paths): the next end opens no free slot.
    seated_early: u32,
    entered: Option<Instant>,
    seated_once: bool,
    /// Ladder matches this bot has been seated in: a second table of one is a set's next
    /// rotation.
    matches: HashSet<String>,
}

/// Seating of every bot of a ladder run.
#[derive(Debug)]
pub struct LadderTrack {
    capacity: u32,
    bots: Vec<Mutex<BotSeating>>,
    /// Free slot → Seated, every seating in the window.
    pub free_to_seated: Latency,
    /// Free slot → Seated at the first table of a new match (the scheduler forming a group).
    pub new_match: Latency,
    /// Free slot → Seated at a duplicate set's next rotation.
    pub next_rotation: Latency,
    /// EnterLadder sent → first Seated, during setup.
    pub enter_to_first_seated: Latency,
    /// Seated messages in the window.
    pub seated: AtomicU64,
    pub seated_before_end_seen: AtomicU64,
    /// Sets (or single-table matches) rated in the window, from WatchLadderResults.
    pub sets_rated: AtomicU64,
    /// Bots seated at least once.
    pub first_seated: AtomicUsize,
    first_seated_notify: Notify,
    /// WatchBot streams opened.
    pub streams_open: AtomicUsize,
    pub streams_notify: Notify,
}

impl LadderTrack {
    pub fn new(bots: usize, capacity: u32) -> LadderTrack {
        LadderTrack {
            capacity,
            bots: (0..bots)
                .map(|_| Mutex::new(BotSeating::default()))
                .collect(),
            free_to_seated: Latency::default(),
            new_match: Latency::default(),
            next_rotation: Latency::default(),
            enter_to_first_seated: Latency::default(),
            seated: AtomicU64::new(0),
            seated_before_end_seen: AtomicU64::new(0),
            sets_rated: AtomicU64::new(0),
            first_seated: AtomicUsize::new(0),
            first_seated_notify: Notify::new(),
            streams_open: AtomicUsize::new(0),
            streams_notify: Notify::new(),
        }
    }

    fn with_bot<R>(&self, index: usize, f: impl FnOnce(&mut BotSeating) -> R) -> Option<R> {
        self.bots.get(index)?.lock().ok().map(|mut b| f(&mut b))
    }

    /// The bot is about to send EnterLadder: its whole capacity is free from now.
    pub fn entering(&self, index: usize) {
        let now = Instant::now();
        let capacity = self.capacity.max(1);
        self.with_bot(index, |b| {
            b.entered = Some(now);
            b.free_since.extend((0..capacity).map(|_| now));
        });
    }

    /// A WatchBot stream of a bot is open.
    pub fn stream_opened(&self) {
        self.streams_open.fetch_add(1, Ordering::AcqRel);
        self.streams_notify.notify_waiters();
    }

    /// The bot got Seated at a table of ladder match `match_id`.
    pub fn seated(&self, index: usize, match_id: &str, recording: bool) {
        let now = Instant::now();
        let first = self.with_bot(index, |b| {
            let next_rotation = !match_id.is_empty() && !b.matches.insert(match_id.to_string());
            let waited = match b.free_since.pop_front() {
                Some(t) => now.saturating_duration_since(t),
                None => {
                    b.seated_early += 1;
                    if recording {
                        bump(&self.seated_before_end_seen);
                    }
                    Duration::ZERO
                }
            };
            if recording {
                bump(&self.seated);
                self.free_to_seated.record(waited);
                if next_rotation {
                    self.next_rotation.record(waited);
                } else {
                    self.new_match.record(waited);
                }
            }
            let first = !b.seated_once;
            b.seated_once = true;
            if first && let Some(e) = b.entered {
                self.enter_to_first_seated
                    .record(now.saturating_duration_since(e));
            }
            first
        });
        if first == Some(true) {
            self.first_seated.fetch_add(1, Ordering::AcqRel);
            self.first_seated_notify.notify_waiters();
        }
    }

    /// One of the bot's ladder tables ended (as its stream showed): a slot is free.
    pub fn freed(&self, index: usize) {
        let now = Instant::now();
        self.with_bot(index, |b| {
            if b.seated_early > 0 {
                b.seated_early -= 1;
            } else {
                b.free_since.push_back(now);
            }
        });
    }

    /// Free slots still waiting now, and the longest of their waits.
    fn waiting(&self) -> (u64, Duration) {
        let now = Instant::now();
        let mut n = 0;
        let mut longest = Duration::ZERO;
        for b in &self.bots {
            if let Ok(b) = b.lock() {
                n += b.free_since.len() as u64;
                if let Some(t) = b.free_since.front() {
                    longest = longest.max(now.saturating_duration_since(*t));
                }
            }
        }
        (n, longest)
    }
}

/// The ladder figures of a report.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LadderFigures {
    pub ladder_id: String,
    /// Whether the harness declared the ladder (false with `--server`: the server's own).
    pub declared_by_harness: bool,
    pub bots: usize,
    pub capacity: u32,
    pub duplicate: bool,
    pub house_entrants: Vec<String>,
    /// Ladder tables that ended in the window (counted once per table).
    pub tables_finished: u64,
    pub tables_per_min: f64,
    /// Matches rated in the window (a duplicate set is one), from WatchLadderResults.
    pub sets_rated: u64,
    pub sets_per_min: f64,
    /// Seated messages in the window.
    pub seated: u64,
    /// Seatings that came before the bot's stream showed the end of its previous table
    /// (counted as no wait).
    pub seated_before_end_seen: u64,
    /// Free slot (entered, or a ladder table ended) → Seated, in the window: all seatings,
    /// first tables of new matches, a set's next rotations.
    pub free_to_seated_ms: Percentiles,
    pub new_match_seated_ms: Percentiles,
    pub next_rotation_seated_ms: Percentiles,
    /// EnterLadder sent → first Seated, during setup (every bot entering at once).
    pub enter_to_first_seated_ms: Percentiles,
    /// Bots seated at least once by the end of setup.
    pub bots_seated_in_setup: usize,
    /// Free slots still unseated when the window closed, and the longest such wait (these
    /// waits are not in the percentiles).
    pub waiting_at_end: u64,
    pub longest_wait_at_end_ms: f64,
}

/// Counts the ladder's rated matches while the window records.
async fn watch_results(channel: tonic::transport::Channel, ladder_id: String, shared: Arc<Shared>) {
    let Some(track) = shared.ladder.clone() else {
        return;
    };
    let mut client = LadderServiceClient::new(channel);
    while !shared.stop.is_cancelled() {
        let opened = tokio::select! {
            _ = shared.stop.cancelled() => return,
            r = client.watch_ladder_results(pb::WatchLadderResultsRequest {
                ladder_id: ladder_id.clone(),
            }) => r,
        };
        let mut stream = match opened {
            Ok(s) => s.into_inner(),
            Err(status) => {
                shared.stats.errors.record(&status);
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        loop {
            let msg = tokio::select! {
                _ = shared.stop.cancelled() => return,
                m = stream.message() => m,
            };
            match msg {
                Ok(Some(m)) => {
                    if matches!(
                        m.kind,
                        Some(pb::watch_ladder_results_response::Kind::Rated(_))
                    ) && shared.recording.load(Ordering::Relaxed)
                    {
                        bump(&track.sets_rated);
                    }
                }
                Ok(None) => break,
                Err(status) => {
                    if !shared.stop.is_cancelled() {
                        shared.stats.errors.record(&status);
                    }
                    break;
                }
            }
        }
    }
}

/// Waits until `done()` holds, woken by `notify`, for at most `limit`; whether it held.
async fn wait_for(notify: &Notify, limit: Duration, done: impl Fn() -> bool) -> bool {
    tokio::time::timeout(limit, async {
        loop {
            let notified = notify.notified();
            if done() {
                return;
            }
            // Notifications can race the check: look again at least every 100 ms.
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    })
    .await
    .is_ok()
}

fn setup_error(why: String, shared: &Shared) -> LoadError {
    let errors = ErrorCounts::from_map(
        &shared.stats.errors.snapshot(),
        shared.stats.errors.samples(),
    );
    LoadError::Setup(format!(
        "{why}; errors: {:?}; first messages: {:?}",
        errors.by_code_and_reason, errors.samples
    ))
}

async fn enter_all(
    opts: &Options,
    bots: &[Arc<Bot>],
    track: &Arc<LadderTrack>,
    shared: &Arc<Shared>,
) -> usize {
    let sem = Arc::new(Semaphore::new(opts.setup_concurrency.max(1) as usize));
    let mut entries = tokio::task::JoinSet::new();
    for bot in bots {
        let (bot, sem, track, shared) = (bot.clone(), sem.clone(), track.clone(), shared.clone());
        let request = pb::EnterLadderRequest {
            ladder_id: opts.ladder_id.clone(),
            capacity: opts.capacity,
        };
        entries.spawn(async move {
            let _permit = sem.acquire().await;
            track.entering(bot.index);
            let r = LadderServiceClient::new(bot.channel())
                .enter_ladder(bot.request(request))
                .await;
            if let Err(status) = &r {
                shared.stats.errors.record(status);
            }
            r.is_ok()
        });
    }
    let mut failed = 0;
    while let Some(r) = entries.join_next().await {
        if !matches!(r, Ok(true)) {
            failed += 1;
        }
    }
    failed
}

/// Ladder mode: register and enter the bots, wait until the scheduler seated them, then the
/// measured window and the drain.
pub(crate) async fn drive(opts: &Options, server: &Server) -> Result<Measured, LoadError> {
    let channels = crate::connect(
        server,
        &server.uri,
        opts.connections,
        opts.h2_adaptive_window,
    )
    .await?;
    let registrar = Arc::new(
        crate::register::Registrar::new(&crate::account_tokens(opts)?, &channels[0]).await?,
    );
    let ceiling =
        crate::ceiling::measure(&channels, opts.ceiling_concurrency(), opts.ceiling_duration).await;

    let setup_started = Instant::now();
    let rss_before = server.proc.rss_kib();
    let count = opts.bots as usize;
    let bots = tokio::time::timeout(
        opts.setup_timeout,
        crate::register_bots(
            &registrar,
            &channels,
            (0..count).map(|i| crate::bot_name(opts, i)).collect(),
            opts.setup_concurrency as usize,
        ),
    )
    .await
    .map_err(|_| {
        LoadError::Setup(format!(
            "registering {count} bots took longer than {:?}",
            opts.setup_timeout
        ))
    })??;
    let track = Arc::new(LadderTrack::new(bots.len(), opts.capacity));
    let shared = Arc::new(
        Shared::new(opts.seats, opts.think_time, opts.rate, opts.submit).with_ladder(track.clone()),
    );
    // Bots play as soon as they are seated: the scheduler, not the harness, starts the tables.
    shared.go.cancel();
    let mut tasks = tokio::task::JoinSet::new();
    for bot in &bots {
        tasks.spawn(driver::bot_stream(bot.clone(), shared.clone()));
    }
    tasks.spawn(watch_results(
        channels[0].clone(),
        opts.ladder_id.clone(),
        shared.clone(),
    ));
    // The scheduler seats only online bots: every stream open before the first entry, so no
    // bot's wait includes its own stream opening.
    if !wait_for(&track.streams_notify, opts.setup_timeout, || {
        track.streams_open.load(Ordering::Acquire) >= bots.len()
    })
    .await
    {
        shared.stop.cancel();
        tasks.abort_all();
        return Err(setup_error(
            format!(
                "only {} of {} WatchBot streams opened in {:?}",
                track.streams_open.load(Ordering::Acquire),
                bots.len(),
                opts.setup_timeout
            ),
            &shared,
        ));
    }
    let failed = enter_all(opts, &bots, &track, &shared).await;
    if failed > 0 {
        shared.stop.cancel();
        tasks.abort_all();
        return Err(setup_error(
            format!(
                "{failed} of {} bots could not enter ladder {:?}",
                bots.len(),
                opts.ladder_id
            ),
            &shared,
        ));
    }
    // Every bot that can be seated at once: with no house entrant, a remainder of fewer bots
    // than seats waits for others to finish.
    let seats = opts.seats.max(1) as usize;
    let expected = if opts.house.is_empty() {
        count - count % seats
    } else {
        count
    };
    wait_for(&track.first_seated_notify, opts.setup_timeout, || {
        track.first_seated.load(Ordering::Acquire) >= expected
    })
    .await;
    let bots_seated_in_setup = track.first_seated.load(Ordering::Acquire);
    if bots_seated_in_setup == 0 {
        shared.stop.cancel();
        tasks.abort_all();
        return Err(setup_error(
            format!(
                "the scheduler seated no bot of {} in {:?}",
                bots.len(),
                opts.setup_timeout
            ),
            &shared,
        ));
    }
    let setup = setup_started.elapsed();
    let rss_after = server.proc.rss_kib();

    let w = crate::window(opts, server, &shared).await;
    let (waiting_at_end, longest) = track.waiting();
    let drain = crate::drain(opts, &shared, &mut tasks).await;

    let minutes = w.window.as_secs_f64() / 60.0;
    let tables_finished = crate::stats::get(&shared.stats.matches_finished);
    let sets_rated = crate::stats::get(&track.sets_rated);
    let figures = LadderFigures {
        ladder_id: opts.ladder_id.clone(),
        declared_by_harness: opts.server.is_none(),
        bots: bots.len(),
        capacity: opts.capacity,
        duplicate: opts.duplicate,
        house_entrants: opts.house.clone(),
        tables_finished,
        tables_per_min: tables_finished as f64 / minutes,
        sets_rated,
        sets_per_min: sets_rated as f64 / minutes,
        seated: crate::stats::get(&track.seated),
        seated_before_end_seen: crate::stats::get(&track.seated_before_end_seen),
        free_to_seated_ms: track.free_to_seated.summary(),
        new_match_seated_ms: track.new_match.summary(),
        next_rotation_seated_ms: track.next_rotation.summary(),
        enter_to_first_seated_ms: track.enter_to_first_seated.summary(),
        bots_seated_in_setup,
        waiting_at_end,
        longest_wait_at_end_ms: longest.as_secs_f64() * 1000.0,
    };
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
        ladder: Some(figures),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_declared_ladder_reads_back_as_asked() {
        let o = Options::try_parse_from([
            "bete-load",
            "--ladder",
            "--seats",
            "3",
            "--ruleset",
            "beste-boer",
            "--duplicate",
            "false",
            "--house",
            "random,heuristic",
            "--capacity",
            "2",
            "--deadline-ms",
            "5000",
        ])
        .unwrap();
        let mut config = BTreeMap::new();
        config.insert("rounds".to_string(), "1".to_string());
        config.insert("max_extra_deals".to_string(), "0".to_string());
        config.insert("enforce_legality".to_string(), "lenient".to_string());
        let text = ladders_file(&o, &config).unwrap();
        let l = bete_ladder::parse_ladders(&text).unwrap();
        assert_eq!(l.len(), 1);
        let l = &l[0];
        assert_eq!(l.id, "load");
        assert_eq!(l.seats, 3);
        assert_eq!(l.deals_per_match, 3);
        assert_eq!(l.deadline_ms, 5000);
        assert!(!l.duplicate);
        assert_eq!(l.max_tables_per_bot, 2);
        assert_eq!(l.house_entrants, ["random", "heuristic"]);
        assert_eq!(l.config_json()["enforce_legality"], "lenient");

        config.insert("max_extra_deals".to_string(), "2".to_string());
        assert!(ladders_file(&o, &config).is_err());
        config.remove("max_extra_deals");
        let o = Options::try_parse_from(["bete-load", "--ladder", "--house", "croupier"]).unwrap();
        assert!(ladders_file(&o, &config).is_err());
    }

    #[test]
    fn a_seating_waits_from_the_oldest_free_slot() {
        let t = LadderTrack::new(1, 2);
        t.entering(0);
        t.seated(0, "m1", true);
        t.seated(0, "m2", true);
        assert_eq!(t.free_to_seated.summary().count, 2);
        assert_eq!(t.new_match.summary().count, 2);
        // A set's next table seen before the end of the previous one: no wait, and that end
        // frees nothing.
        t.seated(0, "m1", true);
        assert_eq!(t.next_rotation.summary().count, 1);
        assert_eq!(get_(&t.seated_before_end_seen), 1);
        t.freed(0);
        assert_eq!(t.waiting().0, 0);
        t.freed(0);
        assert_eq!(t.waiting().0, 1);
        assert_eq!(t.first_seated.load(Ordering::Acquire), 1);
    }

    fn get_(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
