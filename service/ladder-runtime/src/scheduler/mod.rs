//! One ladder's scheduler: a task that owns the ladder's entrants, its running matches and its
//! last 24 hours, forms groups with `bete_ladder::choose_group`, creates and seats the tables,
//! and rates each finished match (or set) once.

mod conduct;
mod entries;
mod pairing;
mod results;
mod sets;

pub use results::match_to_pb;
use results::write_ratings;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bete_api::pb;
use bete_ladder::LadderSpec;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::LadderCommand;
use super::result::TableResult;
use super::strikes::Strikes;
use bete_base::shutdown::Shutdown;
use bete_base::status::ServerError;
use bete_cluster::leadership::Leadership;
use bete_store::clock::now_ms;
use bete_store::{BotRow, EntryRow, MatchRow, RatingRow, Store};
use bete_table::registry::Tables;

/// The owner of house entrants: the server. Exempt from the one-owner-per-table rule.
pub const HOUSE_OWNER: &str = "house";

/// A look at the entrants even without a poke (a stream that closed, a day that rolled over).
const TICK: Duration = Duration::from_millis(250);

/// Ticks between a cluster leader's looks at the store (entries made on other nodes, ladder
/// tables finished on other nodes, matches of a former leader).
const SWEEP_TICKS: u32 = 4;

const DAY_MS: i64 = 24 * 3600 * 1000;

/// Retries of a rated match's write before it counts as lost (with backoff up to 2 s: about
/// ten seconds, the time PostgreSQL takes to restart).
const RATING_TRIES: u32 = 7;

/// An entrant as the scheduler holds it.
#[derive(Clone, Debug)]
struct Entrant {
    entry: EntryRow,
    name: String,
    owner: String,
    house: bool,
    /// When it last had a free slot with nothing to play (the longest waiting anchors).
    waiting_since_ms: i64,
}

impl Entrant {
    /// An outside bot's entry, waiting since it entered.
    fn outside(entry: EntryRow, bot: &BotRow) -> Entrant {
        Entrant {
            waiting_since_ms: entry.entered_at_ms,
            entry,
            name: bot.name.clone(),
            owner: bot.owner_id().to_string(),
            house: false,
        }
    }
}

/// A match being played.
#[derive(Clone, Debug)]
struct Playing {
    row: MatchRow,
    /// Results of the tables finished so far, in rotation order.
    done: Vec<TableResult>,
    /// Its current table could not be started (a cluster retries at the next sweep).
    stalled: bool,
}

struct Scheduler {
    spec: Arc<LadderSpec>,
    store: Arc<dyn Store>,
    tables: Arc<Tables>,
    shutdown: Shutdown,
    entrants: HashMap<String, Entrant>,
    playing: HashMap<String, Playing>,
    /// Matches started in the last 24 hours: (start, entrants, tables).
    recent: VecDeque<(i64, Vec<String>, u32)>,
    /// How often each exact group (ids sorted) met in `recent`.
    meetings: HashMap<Vec<String>, u32>,
    /// How often each pair of outside entrants met in `recent` (both ways round).
    pairs: HashMap<String, HashMap<String, u32>>,
    /// Each outside entrant's recent decisions on the ladder, its removals for timeouts and
    /// its cooldown: loaded from the store with the rest, and kept there.
    strikes: Strikes,
    /// Ladder tables each entrant started in `recent` (its daily limit).
    today: HashMap<String, u32>,
    ratings: HashMap<String, RatingRow>,
    rated: u64,
    /// The pairing's noise; seeds of record come from the OS (`fresh_seed`) unless
    /// `fixed_seeds`.
    rng: StdRng,
    /// `ServerConfig::ladder_seed` was set: match seeds come from `rng` too.
    fixed_seeds: bool,
    /// The rating writer: rated matches are stored (and announced) there, in the order they
    /// were rated, so the loop never waits for a commit while a generation of sets ends.
    rater: mpsc::UnboundedSender<Rated>,
    /// The scheduler's own channel, for the table starts it spawns to report a failure (weak:
    /// it must not keep the channel open by itself).
    me: mpsc::WeakUnboundedSender<LadderCommand>,
    /// Whether this node schedules (a cluster's leader; a single node always).
    leadership: Arc<Leadership>,
    /// The state above was loaded from the store for the current leadership.
    loaded: bool,
    /// Matches rated in this leadership whose rating the store may not hold yet: a sweep must
    /// not take them for a former leader's matches.
    rated_here: HashSet<String>,
    /// Matches rated in memory whose rating is not stored yet, with their entrants: those
    /// stay busy until the writer has stored it. Freed at once, a bot could be booked into
    /// its next match while its last one is still unrated in the store; were the leader to
    /// die then, the store would hold the next match started before the last was rated
    /// (the three-node ladder test's "an unrated match before another").
    unstored: HashMap<String, Vec<String>>,
    /// Counts the loads from the store: a rating the writer lost belongs to one of them, and
    /// only a loss in the current one calls for a reload.
    term: u64,
    /// The last table's wait to announce its end, while its result is taken (see `rate`).
    announcing: HashMap<String, oneshot::Sender<()>>,
    /// Tables being created and seated (the bots of each, and its task): a bot that leaves
    /// waits for its own, so no table seats it after LeaveLadder returns.
    seating: Vec<(Vec<String>, tokio::task::JoinHandle<()>)>,
}

/// A match rated in memory, for the rating writer to store and announce.
struct Rated {
    /// The scheduler's `term` when it rated the match.
    term: u64,
    row: MatchRow,
    ratings: Vec<RatingRow>,
    names: HashMap<String, String>,
    /// The last table's actor, waiting to announce `MatchEnded` until this is stored.
    announce: Option<oneshot::Sender<()>>,
}

pub(super) async fn spawn(
    spec: Arc<LadderSpec>,
    store: Arc<dyn Store>,
    tables: Arc<Tables>,
    results: broadcast::Sender<pb::LadderMatch>,
    shutdown: Shutdown,
    seed: Option<u64>,
    leadership: Arc<Leadership>,
) -> Result<mpsc::UnboundedSender<LadderCommand>, ServerError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (rater, rated) = mpsc::unbounded_channel();
    tokio::spawn(write_ratings(store.clone(), results, rated, tx.downgrade()));
    let strikes = Strikes::new(&spec.id, store.clone());
    let mut s = Scheduler {
        spec,
        store,
        tables,
        shutdown,
        entrants: HashMap::new(),
        playing: HashMap::new(),
        recent: VecDeque::new(),
        meetings: HashMap::new(),
        pairs: HashMap::new(),
        strikes,
        today: HashMap::new(),
        ratings: HashMap::new(),
        rated: 0,
        rng: seed.map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64),
        fixed_seeds: seed.is_some(),
        rater,
        me: tx.downgrade(),
        leadership,
        loaded: false,
        rated_here: HashSet::new(),
        unstored: HashMap::new(),
        term: 0,
        announcing: HashMap::new(),
        seating: Vec::new(),
    };
    // A single node leads from the start (and fails to start if it cannot load); a cluster
    // node loads when it becomes the leader.
    if s.leadership.leads() {
        s.load().await?;
        s.loaded = true;
    }
    tokio::spawn(s.run(rx));
    Ok(tx)
}

impl Scheduler {
    /// Entrants, ratings, the last day's matches, and every unrated match where it stood.
    async fn load(&mut self) -> Result<(), ServerError> {
        let now = now_ms();
        let id = self.spec.id.clone();
        for p in &self.spec.house_entrants {
            let bot = format!("house:{p}");
            self.entrants.insert(
                bot.clone(),
                Entrant {
                    entry: EntryRow {
                        ladder_id: id.clone(),
                        bot_id: bot.clone(),
                        capacity: self.spec.house_capacity,
                        active: true,
                        removed_reason: String::new(),
                        entered_at_ms: 0,
                    },
                    name: bot,
                    owner: HOUSE_OWNER.into(),
                    house: true,
                    waiting_since_ms: 0,
                },
            );
        }
        for entry in self.store.entries(id.clone()).await? {
            let Some(bot) = self.store.bot(entry.bot_id.clone()).await? else {
                continue;
            };
            self.entrants
                .insert(entry.bot_id.clone(), Entrant::outside(entry, &bot));
        }
        self.settle_look_alikes().await;
        self.strikes.load(&*self.store, &self.spec).await?;
        for r in self.store.ratings(id.clone()).await? {
            self.ratings.insert(r.bot_id.clone(), r);
        }
        self.rated = self.store.rated_matches(id.clone()).await?.len() as u64;
        for m in self.store.matches_since(id.clone(), now - DAY_MS).await? {
            let tables = self.spec.tables_per_match() as u32;
            self.remember(m.started_at_ms, m.entrants.clone(), tables);
        }
        let playing: Vec<MatchRow> = self
            .store
            .playing_matches()
            .await?
            .into_iter()
            .filter(|m| m.ladder_id == id)
            .collect();
        for m in playing {
            let mid = m.id.clone();
            self.playing.insert(
                mid.clone(),
                Playing {
                    row: m,
                    done: Vec::new(),
                    stalled: false,
                },
            );
            if let Err(e) = self.resume(&mid).await {
                tracing::error!(ladder = %id, r#match = %mid, error = %e, "cannot resume a ladder match");
            }
        }
        Ok(())
    }

    /// Forget everything loaded: another node leads now (or this one leads anew and reloads).
    fn reset(&mut self) {
        self.entrants.clear();
        self.playing.clear();
        self.recent.clear();
        self.meetings.clear();
        self.pairs.clear();
        self.today.clear();
        self.ratings.clear();
        self.rated = 0;
        self.rated_here.clear();
        self.unstored.clear();
        self.loaded = false;
        self.term += 1;
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<LadderCommand>) {
        let mut tick = tokio::time::interval(TICK);
        let mut dirty = true;
        let mut ticks = 0u32;
        let mut leader = self.leadership.subscribe();
        let mut led = *leader.borrow_and_update();
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                cmd = rx.recv() => {
                    let Some(cmd) = cmd else { return };
                    dirty |= self.command(cmd, led.is_some()).await;
                    // Take every command already queued before looking for groups once.
                    while let Ok(cmd) = rx.try_recv() {
                        dirty |= self.command(cmd, led.is_some()).await;
                    }
                }
                // A stream that closed or a day that rolled over changes nothing by itself.
                _ = tick.tick() => {
                    dirty = true;
                    ticks = ticks.wrapping_add(1);
                    if led.is_some() && self.loaded && self.leadership.is_cluster()
                        && ticks.is_multiple_of(SWEEP_TICKS)
                    {
                        self.sweep().await;
                    }
                }
                changed = leader.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let now = *leader.borrow_and_update();
                    if now != led {
                        // Whatever was held belongs to another term: start over from the store.
                        self.reset();
                        match now {
                            Some(epoch) => tracing::info!(ladder = %self.spec.id, epoch, "this node now schedules the ladder"),
                            None => tracing::info!(ladder = %self.spec.id, "another node schedules the ladder now"),
                        }
                        led = now;
                    }
                }
                _ = self.shutdown.stopped() => return,
            }
            if self.shutdown.is_cancelled() {
                return;
            }
            if led.is_none() {
                continue;
            }
            if !self.loaded {
                match self.load().await {
                    Ok(()) => self.loaded = true,
                    Err(e) => {
                        tracing::warn!(ladder = %self.spec.id, error = %e, "cannot load the ladder yet");
                        self.reset();
                        continue;
                    }
                }
            }
            // A pass looks at every entrant: only when something may let a match start.
            if dirty {
                self.schedule().await;
                dirty = false;
            }
        }
    }

    /// A command, as the leader (`handle`) or as a follower: another node schedules, so
    /// entries go straight to the store (the leader reads them there) and counts come from it.
    async fn command(&mut self, cmd: LadderCommand, leads: bool) -> bool {
        if leads && self.loaded {
            return self.handle(cmd).await;
        }
        match cmd {
            LadderCommand::Enter {
                bot,
                capacity,
                reply,
            } => {
                let _ = reply.send(self.enter_stored(bot, capacity).await);
            }
            LadderCommand::Leave { bot, reply } => {
                let _ = reply.send(self.leave_stored(bot).await);
            }
            LadderCommand::Counts { reply } => match self.stored_counts().await {
                Ok(c) => {
                    let _ = reply.send(c);
                }
                Err(e) => tracing::warn!(ladder = %self.spec.id, error = %e, "cannot count"),
            },
            // The leader learns these from the store.
            LadderCommand::TableResult { .. }
            | LadderCommand::Decided(_)
            | LadderCommand::Poke
            | LadderCommand::StartFailed { .. }
            | LadderCommand::RatingLost { .. }
            | LadderCommand::RatingStored { .. } => {}
        }
        false
    }

    /// Handles one command; true when it may let a new match start (an entry, a bot online, a
    /// slot freed), so the loop looks for groups.
    async fn handle(&mut self, cmd: LadderCommand) -> bool {
        let before = self.playing.len();
        match cmd {
            LadderCommand::Enter {
                bot,
                capacity,
                reply,
            } => {
                let _ = reply.send(self.enter(bot, capacity).await);
                return true;
            }
            LadderCommand::Leave { bot, reply } => {
                let _ = reply.send(self.leave(bot).await);
            }
            LadderCommand::TableResult {
                table,
                match_id,
                rotation,
                result,
                announce,
            } => {
                // `rate` hands it to the rating writer; otherwise it is dropped below and the
                // table announces its end at once.
                if let Some(a) = announce {
                    self.announcing.insert(match_id.clone(), a);
                }
                if let Err(e) = self.table_result(&table, &match_id, rotation, result).await {
                    tracing::error!(ladder = %self.spec.id, %table, error = %e, "cannot take a finished ladder table");
                }
                self.announcing.remove(&match_id);
            }
            LadderCommand::Poke => return true,
            LadderCommand::Decided(d) => self.decided(d).await,
            LadderCommand::StartFailed { match_id, stored } => {
                // In a cluster a stored match keeps its entrants' slots (its table may be
                // played on another node) and the next sweep starts it again. Otherwise the
                // slots are freed; whatever the store holds of the match is picked up where
                // it stood after a restart.
                match self.playing.get_mut(&match_id) {
                    Some(p) if stored && self.leadership.is_cluster() => p.stalled = true,
                    _ => {
                        self.playing.remove(&match_id);
                    }
                }
            }
            LadderCommand::RatingLost { match_id, term } => {
                if term == self.term {
                    // Ratings in memory include a match the store does not hold as rated:
                    // start over from the store, which rates it again (once) from the stored
                    // ratings. The writer drops this term's later ratings for the same reason.
                    tracing::warn!(ladder = %self.spec.id, r#match = %match_id, "a rating was not stored; reloading the ladder from the store");
                    self.reset();
                }
                return true;
            }
            LadderCommand::RatingStored { match_id, term } => {
                if term == self.term && self.unstored.remove(&match_id).is_some() {
                    return true;
                }
            }
            LadderCommand::Counts { reply } => {
                let entrants = self.entrants.values().filter(|e| e.entry.active).count() as u32;
                let online = self
                    .entrants
                    .values()
                    .filter(|e| e.entry.active && (e.house || self.online(&e.entry.bot_id)))
                    .count() as u32;
                let _ = reply.send((entrants, online, self.rated));
            }
        }
        // A match rated frees a slot of each of its entrants.
        self.playing.len() < before
    }
}
