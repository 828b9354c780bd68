//! One ladder's scheduler: a task that owns the ladder's entrants, its running matches and its
//! last 24 hours, forms groups with `bete_ladder::choose_group`, creates and seats the tables,
//! and rates each finished match (or set) once.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bete_api::pb;
use bete_ladder::{Candidate, LadderSpec, Rating, duplicate};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::leadership::Leadership;
use super::result::{TableResult, match_luck, table_result};
use super::strikes::{Strikes, check_cooldown};
use super::{Decision, LadderCommand};
use crate::auth::hex;
use crate::registry::Tables;
use crate::shutdown::Shutdown;
use crate::status::ServerError;
use crate::store::{
    EntrantResult, EntryRow, LadderTable, MatchRow, Occupant, RatingRow, SeatRow, Store,
    StoreError, TableRow, TableState, Visibility,
};
use crate::{now_ms, project};

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
            self.entrants.insert(
                entry.bot_id.clone(),
                Entrant {
                    waiting_since_ms: entry.entered_at_ms,
                    entry,
                    name: bot.name.clone(),
                    owner: bot.owner_id().to_string(),
                    house: false,
                },
            );
        }
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

    /// A follower's EnterLadder: written to the store, where the leader finds it.
    async fn enter_stored(&self, bot_id: String, capacity: u32) -> Result<EntryRow, ServerError> {
        let id = self.spec.id.clone();
        let entries = self.store.entries(id.clone()).await?;
        if entries.iter().any(|e| e.bot_id == bot_id && e.active) {
            return Err(ServerError::LadderAlreadyEntered(id));
        }
        // The leader's removals are in the store: they hold on every node.
        check_cooldown(&*self.store, &id, &bot_id, now_ms()).await?;
        let bot = self
            .store
            .bot(bot_id.clone())
            .await?
            .ok_or(ServerError::Unauthenticated("unknown bot"))?;
        // As the leader checks its entrants (`enter`), from the store: one lookup per entrant,
        // on a node that does not lead this ladder only.
        let look = crate::names::look(&bot.name);
        for e in entries.iter().filter(|e| e.bot_id != bot_id) {
            if let Some(other) = self.store.bot(e.bot_id.clone()).await?
                && other.owner_id() != bot.owner_id()
                && crate::names::look(&other.name) == look
            {
                return Err(ServerError::NameLooksTaken {
                    ladder: id,
                    taken: other.name,
                });
            }
        }
        let entry = EntryRow {
            ladder_id: id,
            bot_id,
            capacity,
            active: true,
            removed_reason: String::new(),
            entered_at_ms: now_ms(),
        };
        self.store.put_entry(entry.clone()).await?;
        Ok(entry)
    }

    /// A follower's LeaveLadder.
    async fn leave_stored(&self, bot_id: String) -> Result<EntryRow, ServerError> {
        let id = self.spec.id.clone();
        let Some(mut entry) = self
            .store
            .entries(id.clone())
            .await?
            .into_iter()
            .find(|e| e.bot_id == bot_id && e.active)
        else {
            return Err(ServerError::LadderNotEntered(id));
        };
        entry.active = false;
        self.store.put_entry(entry.clone()).await?;
        Ok(entry)
    }

    /// A follower's counts, from the store and the cluster's online bots.
    async fn stored_counts(&self) -> Result<(u32, u32, u64), ServerError> {
        let id = self.spec.id.clone();
        let entries = self.store.entries(id.clone()).await?;
        let active: Vec<&EntryRow> = entries.iter().filter(|e| e.active).collect();
        let house = self.spec.house_entrants.len() as u32;
        let online = active.iter().filter(|e| self.online(&e.bot_id)).count() as u32;
        let rated = self.store.rated_match_count(id).await?;
        Ok((active.len() as u32 + house, online + house, rated))
    }

    /// A cluster leader's look at the store: entries made through other nodes, matches it
    /// does not hold (a former leader's, or one whose start failed), and ladder tables that
    /// finished on other nodes (their actors told their own node, not this one).
    async fn sweep(&mut self) {
        let id = self.spec.id.clone();
        match self.store.entries(id.clone()).await {
            Ok(entries) => {
                for entry in entries {
                    let same = self.entrants.get(&entry.bot_id).is_some_and(|e| {
                        e.entry.active == entry.active && e.entry.capacity == entry.capacity
                    });
                    if same {
                        continue;
                    }
                    let Ok(Some(bot)) = self.store.bot(entry.bot_id.clone()).await else {
                        continue;
                    };
                    self.entrants.insert(
                        entry.bot_id.clone(),
                        Entrant {
                            waiting_since_ms: entry.entered_at_ms,
                            entry,
                            name: bot.name.clone(),
                            owner: bot.owner_id().to_string(),
                            house: false,
                        },
                    );
                }
            }
            Err(e) => tracing::warn!(ladder = %id, error = %e, "cannot read the entries"),
        }
        let stored: Vec<MatchRow> = match self.store.playing_matches().await {
            Ok(m) => m.into_iter().filter(|m| m.ladder_id == id).collect(),
            Err(e) => {
                tracing::warn!(ladder = %id, error = %e, "cannot read the matches playing");
                return;
            }
        };
        let ids: HashSet<&str> = stored.iter().map(|m| m.id.as_str()).collect();
        self.rated_here.retain(|m| ids.contains(m.as_str()));
        for m in &stored {
            if self.playing.contains_key(&m.id) || self.rated_here.contains(&m.id) {
                continue;
            }
            let mid = m.id.clone();
            tracing::info!(ladder = %id, r#match = %mid, "taking up a ladder match from the store");
            self.playing.insert(
                mid.clone(),
                Playing {
                    row: m.clone(),
                    done: Vec::new(),
                    stalled: false,
                },
            );
            if let Err(e) = self.resume(&mid).await {
                tracing::warn!(ladder = %id, r#match = %mid, error = %e, "cannot resume a ladder match");
            }
        }
        let stalled: Vec<String> = self
            .playing
            .iter_mut()
            .filter(|(_, p)| p.stalled)
            .map(|(k, p)| {
                p.stalled = false;
                k.clone()
            })
            .collect();
        for mid in stalled {
            if let Err(e) = self.resume(&mid).await {
                tracing::warn!(ladder = %id, r#match = %mid, error = %e, "cannot resume a ladder match");
            }
        }
        let playing: Vec<(String, usize)> = self
            .playing
            .iter()
            .map(|(k, p)| (k.clone(), p.done.len()))
            .collect();
        if playing.is_empty() {
            return;
        }
        let ids = playing.iter().map(|(mid, _)| mid.clone()).collect();
        let finished = match self.store.finished_match_tables(ids).await {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(ladder = %id, error = %e, "cannot read the finished ladder tables");
                return;
            }
        };
        for (mid, rotation) in playing {
            let Some(t) = finished.iter().find(|t| {
                t.table
                    .ladder
                    .as_ref()
                    .is_some_and(|l| l.match_id == mid && usize::from(l.rotation) == rotation)
            }) else {
                continue;
            };
            // The record is stored just after the table is marked finished: next sweep.
            let Ok(result) = table_result(&*self.store, t, self.spec.luck_adjusted).await else {
                continue;
            };
            let table = t.table.id.clone();
            if let Err(e) = self.table_result(&table, &mid, rotation, result).await {
                tracing::warn!(ladder = %id, %table, error = %e, "cannot take a finished ladder table");
            }
        }
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

    async fn enter(&mut self, bot_id: String, capacity: u32) -> Result<EntryRow, ServerError> {
        if self.entrants.get(&bot_id).is_some_and(|e| e.entry.active) {
            return Err(ServerError::LadderAlreadyEntered(self.spec.id.clone()));
        }
        let now = now_ms();
        self.strikes.check(&bot_id, now)?;
        check_cooldown(&*self.store, &self.spec.id, &bot_id, now).await?;
        let bot = self
            .store
            .bot(bot_id.clone())
            .await?
            .ok_or(ServerError::Unauthenticated("unknown bot"))?;
        let look = crate::names::look(&bot.name);
        if let Some(e) = self
            .entrants
            .values()
            .find(|e| !e.house && e.owner != bot.owner_id() && crate::names::look(&e.name) == look)
        {
            return Err(ServerError::NameLooksTaken {
                ladder: self.spec.id.clone(),
                taken: e.name.clone(),
            });
        }
        let entry = EntryRow {
            ladder_id: self.spec.id.clone(),
            bot_id: bot_id.clone(),
            capacity,
            active: true,
            removed_reason: String::new(),
            entered_at_ms: now_ms(),
        };
        self.store.put_entry(entry.clone()).await?;
        tracing::info!(ladder = %self.spec.id, bot = %bot_id, capacity, "entered the ladder");
        self.entrants.insert(
            bot_id,
            Entrant {
                waiting_since_ms: entry.entered_at_ms,
                entry: entry.clone(),
                name: bot.name.clone(),
                owner: bot.owner_id().to_string(),
                house: false,
            },
        );
        Ok(entry)
    }

    async fn leave(&mut self, bot_id: String) -> Result<EntryRow, ServerError> {
        let Some(e) = self
            .entrants
            .get(&bot_id)
            .filter(|e| e.entry.active && !e.house)
        else {
            return Err(ServerError::LadderNotEntered(self.spec.id.clone()));
        };
        let mut entry = e.entry.clone();
        entry.active = false;
        self.store.put_entry(entry.clone()).await?;
        if let Some(e) = self.entrants.get_mut(&bot_id) {
            e.entry = entry.clone();
        }
        // Tables already being seated with the bot are seated before the answer: once it is
        // given, nothing new seats the bot (later tables of its set seat a stand-in).
        let mut i = 0;
        while i < self.seating.len() {
            if self.seating[i].0.contains(&bot_id) {
                let (_, task) = self.seating.swap_remove(i);
                let _ = task.await;
            } else {
                i += 1;
            }
        }
        tracing::info!(ladder = %self.spec.id, bot = %bot_id, "left the ladder");
        Ok(entry)
    }

    fn online(&self, bot: &str) -> bool {
        self.tables.has_bot_stream(bot) || self.leadership.online_anywhere(bot)
    }

    /// Form and start every match the entrants allow now.
    async fn schedule(&mut self) {
        let now = now_ms();
        while self
            .recent
            .front()
            .is_some_and(|(t, _, _)| *t < now - DAY_MS)
        {
            if let Some((_, ids, tables)) = self.recent.pop_front() {
                for id in &ids {
                    if let Some(n) = self.today.get_mut(id) {
                        *n = n.saturating_sub(tables);
                        if *n == 0 {
                            self.today.remove(id);
                        }
                    }
                }
                let key = group_key(&ids);
                if let Some(n) = self.meetings.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.meetings.remove(&key);
                    }
                }
                for (a, b) in outside_pairs(&ids) {
                    for (x, y) in [(a, b), (b, a)] {
                        if let Some(m) = self.pairs.get_mut(x) {
                            if let Some(n) = m.get_mut(y) {
                                *n = n.saturating_sub(1);
                                if *n == 0 {
                                    m.remove(y);
                                }
                            }
                            if m.is_empty() {
                                self.pairs.remove(x);
                            }
                        }
                    }
                }
            }
        }
        let seats = usize::from(self.spec.seats);
        let per_match = self.spec.tables_per_match() as u32;
        let mut busy: HashMap<&str, u32> = HashMap::new();
        for p in self.playing.values() {
            for e in &p.row.entrants {
                *busy.entry(e.as_str()).or_default() += 1;
            }
        }
        for entrants in self.unstored.values() {
            for e in entrants {
                *busy.entry(e.as_str()).or_default() += 1;
            }
        }
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut busy_now: Vec<String> = Vec::new();
        for e in self.entrants.values() {
            if !e.entry.active {
                continue;
            }
            let id = e.entry.bot_id.as_str();
            let used = busy.get(id).copied().unwrap_or(0);
            let free = e.entry.capacity.saturating_sub(used);
            if e.house && free == 0 {
                continue;
            }
            if !e.house {
                if self.today.get(id).copied().unwrap_or(0) + per_match
                    > self.spec.max_matches_per_day
                {
                    continue;
                }
                if !self.online(id) {
                    continue;
                }
                if free == 0 {
                    // Busy: its wait for partners starts when a slot frees, not before.
                    busy_now.push(id.to_string());
                }
            }
            // An outside bot online but busy stays a candidate: a free bot that should meet
            // it may wait for it (`house_fill_after_ms`).
            candidates.push(Candidate {
                id: id.to_string(),
                owner: e.owner.clone(),
                house: e.house,
                mu: self.rating(id).mu,
                free,
                waiting_since_ms: e.waiting_since_ms,
            });
        }
        for id in busy_now {
            if let Some(e) = self.entrants.get_mut(&id) {
                e.waiting_since_ms = now;
            }
        }
        let mut groups = Vec::new();
        loop {
            let met = &self.meetings;
            let meetings = |ids: &[&str]| {
                let key: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
                met.get(&key).copied().unwrap_or(0)
            };
            let pairs = &self.pairs;
            let pair_meetings =
                |a: &str, b: &str| pairs.get(a).and_then(|m| m.get(b)).copied().unwrap_or(0);
            let pool = bete_ladder::Pool {
                seats,
                now_ms: now,
                house_fill_after_ms: i64::try_from(self.spec.house_fill_after_ms)
                    .unwrap_or(i64::MAX),
                meetings: &meetings,
                max_meetings: self.spec.max_group_meetings_per_day,
                pair_meetings: &pair_meetings,
            };
            let Some(group) = bete_ladder::choose_group(&candidates, &pool, &mut self.rng) else {
                break;
            };
            for &i in &group {
                candidates[i].free -= 1;
                candidates[i].waiting_since_ms = now;
            }
            let mut ids: Vec<String> = group.iter().map(|&i| candidates[i].id.clone()).collect();
            // Seats by lot: the anchor must not always sit first.
            ids.shuffle(&mut self.rng);
            groups.push(ids);
            // `meetings` reads the index: count the group before choosing the next.
            self.remember(now, groups[groups.len() - 1].clone(), per_match);
        }
        for ids in groups {
            for id in &ids {
                if let Some(e) = self.entrants.get_mut(id) {
                    e.waiting_since_ms = now;
                }
            }
            if let Err(e) = self.start_match(ids).await {
                tracing::error!(ladder = %self.spec.id, error = %e, "cannot start a ladder match");
            }
        }
    }

    fn remember(&mut self, at_ms: i64, entrants: Vec<String>, tables: u32) {
        *self.meetings.entry(group_key(&entrants)).or_default() += 1;
        for (a, b) in outside_pairs(&entrants) {
            *self
                .pairs
                .entry(a.clone())
                .or_default()
                .entry(b.clone())
                .or_default() += 1;
            *self
                .pairs
                .entry(b.clone())
                .or_default()
                .entry(a.clone())
                .or_default() += 1;
        }
        for id in &entrants {
            *self.today.entry(id.clone()).or_default() += tables;
        }
        self.recent.push_back((at_ms, entrants, tables));
    }

    fn rating(&self, bot: &str) -> Rating {
        self.ratings
            .get(bot)
            .map_or_else(Rating::default, |r| Rating {
                mu: r.mu,
                sigma: r.sigma,
            })
    }

    async fn start_match(&mut self, entrants: Vec<String>) -> Result<(), ServerError> {
        let seed = if self.fixed_seeds {
            bete_rules::Seed(rand::Rng::random(&mut self.rng))
        } else {
            bete_store::fresh_seed()?
        };
        let row = MatchRow {
            id: format!("m_{}", hex(&rand::random::<[u8; 8]>())),
            ladder_id: self.spec.id.clone(),
            seed: seed.to_string(),
            duplicate: self.spec.duplicate,
            entrants,
            rated: false,
            started_at_ms: now_ms(),
            rated_at_ms: None,
            results: Vec::new(),
            cursor: 0,
        };
        let id = row.id.clone();
        tracing::info!(ladder = %self.spec.id, r#match = %id, entrants = ?row.entrants, "ladder match scheduled");
        self.playing.insert(
            id.clone(),
            Playing {
                row: row.clone(),
                done: Vec::new(),
                stalled: false,
            },
        );
        // The match row is stored by the table's start, before its first table.
        self.start_table(&id, 0, true, Some(row)).await
    }

    /// The id of a match's table of `rotation`: fixed, so a restart finds the table it made.
    fn table_id(match_id: &str, rotation: usize) -> String {
        format!("t_{}r{rotation}", match_id.trim_start_matches("m_"))
    }

    /// Start the table of `rotation`: built here, then created and seated in a task of its own,
    /// so the scheduler never waits for the commits of one table (its row, one join per bot)
    /// before it looks at the next. Creation and seating are idempotent (a fixed table id, an
    /// "already seated" join), so a restart may simply do them again.
    async fn start_table(
        &mut self,
        match_id: &str,
        rotation: usize,
        fresh: bool,
        new_match: Option<MatchRow>,
    ) -> Result<(), ServerError> {
        let Some(p) = self.playing.get(match_id) else {
            return Ok(());
        };
        let row = p.row.clone();
        let seats = usize::from(self.spec.seats);
        let id = Self::table_id(match_id, rotation);
        let at_seat: Vec<String> = (0..seats)
            .filter_map(|s| row.entrants.get(duplicate::entrant_at(s, rotation, seats)))
            .cloned()
            .collect();
        let table = TableRow {
            id: id.clone(),
            ruleset: self.spec.ruleset.id().to_string(),
            seats: self.spec.seats,
            config_json: serde_json::Value::Object(self.spec.config_json()).to_string(),
            seed: row.seed.clone(),
            first_dealer: 0,
            deadline_ms: self.spec.deadline_ms,
            // A set's later rotations deal the same decks: its tables stay private (no
            // spectator sees a revealed hand, no record is served) until it is rated.
            visibility: if row.duplicate {
                Visibility::Private
            } else {
                Visibility::Listed
            },
            state: TableState::Waiting,
            last_seq: 0,
            created_by: format!("ladder:{}", self.spec.id),
            created_at_ms: now_ms(),
            seed_chosen: false,
            ladder: Some(LadderTable {
                ladder_id: self.spec.id.clone(),
                match_id: match_id.to_string(),
                rotation: rotation as u8,
            }),
        };
        // A bot that left during its set is not seated at the set's later tables: the house's
        // random policy plays its seat there, and the set (whose result still counts for the
        // bot) keeps every rotation for the others.
        let left = |bot: &str| {
            self.entrants
                .get(bot)
                .is_some_and(|e| !e.house && !e.entry.active)
        };
        let seat_rows = at_seat
            .iter()
            .enumerate()
            .map(|(s, bot)| SeatRow {
                seat: s as u8,
                occupant: match bot.strip_prefix("house:") {
                    Some(p) => Occupant::House(house_text(
                        bete_ladder::spec::house_policy(p),
                        self.spec.search_budget_ms,
                    )),
                    None if left(bot) => {
                        Occupant::House(house_text("random", self.spec.search_budget_ms))
                    }
                    None => Occupant::Empty,
                },
                name: String::new(),
                strikes: 0,
            })
            .collect();
        let bots: Vec<crate::table::Seating> = at_seat
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.starts_with("house:") && !left(b))
            .map(|(s, b)| {
                let name = self
                    .entrants
                    .get(b.as_str())
                    .map(|e| e.name.clone())
                    .unwrap_or_default();
                (s as u8, b.clone(), name)
            })
            .collect();
        let forfeits = self.forfeited(&at_seat);
        let (store, tables, ladder, back) = (
            self.store.clone(),
            self.tables.clone(),
            self.spec.id.clone(),
            self.me.clone(),
        );
        let match_id = match_id.to_string();
        let seated: Vec<String> = bots.iter().map(|b| b.1.clone()).collect();
        let task = tokio::spawn(async move {
            let mut stored = new_match.is_none();
            let started = async {
                if let Some(m) = new_match {
                    store.create_match(m).await?;
                    stored = true;
                }
                seat_table(&*store, &tables, table, seat_rows, bots, fresh).await
            }
            .await;
            if started.is_ok() {
                // The set's later tables of a bot taken off: auto-moved too.
                for bot in forfeits {
                    forfeit(tables.clone(), id.clone(), bot);
                }
            }
            if let Err(e) = started {
                tracing::error!(%ladder, table = %id, error = %e, "cannot start a ladder table");
                if let Some(tx) = back.upgrade() {
                    let _ = tx.send(LadderCommand::StartFailed { match_id, stored });
                }
            }
        });
        self.seating.retain(|(_, t)| !t.is_finished());
        self.seating.push((seated, task));
        Ok(())
    }

    /// After a restart: take the finished tables' results and carry on from the first
    /// unfinished (or not yet created) table.
    async fn resume(&mut self, match_id: &str) -> Result<(), ServerError> {
        let tables = self.store.match_tables(match_id.to_string()).await?;
        let n = self.spec.tables_per_match();
        let mut done = Vec::new();
        for r in 0..n {
            let Some(t) = tables.iter().find(|t| {
                t.table
                    .ladder
                    .as_ref()
                    .is_some_and(|l| usize::from(l.rotation) == r)
            }) else {
                if let Some(p) = self.playing.get_mut(match_id) {
                    p.done = done;
                }
                return self.start_table(match_id, r, false, None).await;
            };
            if t.table.state != TableState::Finished {
                if let Some(p) = self.playing.get_mut(match_id) {
                    p.done = done;
                }
                return self.start_table(match_id, r, false, None).await;
            }
            done.push(table_result(&*self.store, t, self.spec.luck_adjusted).await?);
        }
        if let Some(p) = self.playing.get_mut(match_id) {
            p.done = done;
        }
        self.rate(match_id).await
    }

    /// A finished table's result: the set's next table, or the match rated.
    async fn table_result(
        &mut self,
        table_id: &str,
        match_id: &str,
        rotation: usize,
        result: TableResult,
    ) -> Result<(), ServerError> {
        let Some(p) = self.playing.get(match_id) else {
            // Rated already (a notice repeated by recovery).
            return Ok(());
        };
        if p.done.len() != rotation {
            // Seen already, or out of order: the match's own state decides.
            return Ok(());
        }
        self.strike_out(&p.row.entrants.clone(), rotation, &result, table_id)
            .await;
        if let Some(p) = self.playing.get_mut(match_id) {
            p.done.push(result);
        }
        if rotation + 1 < self.spec.tables_per_match() {
            self.start_table(match_id, rotation + 1, true, None).await
        } else {
            self.rate(match_id).await
        }
    }

    /// At a table's end, take off the ladder every bot that let more decisions time out there
    /// than a table allows: a backstop for decisions this scheduler did not hear one by one
    /// (a cluster's tables played on other nodes).
    async fn strike_out(
        &mut self,
        entrants: &[String],
        rotation: usize,
        result: &TableResult,
        table_id: &str,
    ) {
        let seats = usize::from(self.spec.seats);
        for (seat, &strikes) in result.strikes.iter().enumerate() {
            if strikes <= self.spec.max_strikes_per_match {
                continue;
            }
            let Some(bot) = entrants.get(duplicate::entrant_at(seat, rotation, seats)) else {
                continue;
            };
            let why = format!(
                "{strikes} decisions timed out at table {table_id}, more than the {} a table allows",
                self.spec.max_strikes_per_match
            );
            self.take_off(&bot.clone(), &why).await;
        }
    }

    /// A bot's decision at one of the ladder's tables: judged with its recent ones, and the bot
    /// taken off at once when past the limit.
    async fn decided(&mut self, d: Decision) {
        let active = self
            .entrants
            .get(&d.bot)
            .is_some_and(|e| !e.house && e.entry.active);
        if !active {
            return;
        }
        let window = self
            .strikes
            .decided(&d.bot, d.timed_out, self.spec.strike_window);
        if let Some(why) = bete_ladder::past_limit(&self.spec, window, d.table_strikes) {
            self.take_off(&d.bot, &why).await;
        }
    }

    /// Take a bot off the ladder for timeouts: its entry inactive with a reason its owner can
    /// read (LadderEntry.removed_reason), a cooldown before it may enter again (doubled at each
    /// removal), and its seats at the ladder's tables auto-moved from now on (its matches are
    /// played out and count).
    async fn take_off(&mut self, bot: &str, why: &str) {
        if !self
            .entrants
            .get(bot)
            .is_some_and(|e| !e.house && e.entry.active)
        {
            return;
        }
        // The removal and its cooldown are stored before the entry is marked: a bot the
        // store shows inactive is never one whose cooldown it lacks.
        let (removals, cooldown, stored) = self.strikes.take_off(bot, &self.spec, now_ms()).await;
        if let Err(err) = stored {
            tracing::error!(ladder = %self.spec.id, %bot, error = %err, "cannot store the removal's cooldown");
        }
        let Some(e) = self.entrants.get_mut(bot) else {
            return;
        };
        e.entry.active = false;
        e.entry.removed_reason = format!(
            "taken off the ladder: {why}; it may enter again in {} s (removal {}: the wait \
             doubles with each), once it answers within {} ms",
            cooldown.div_ceil(1000),
            removals,
            self.spec.deadline_ms
        );
        let entry = e.entry.clone();
        tracing::info!(ladder = %self.spec.id, %bot, %why, "bot taken off the ladder for timeouts");
        if let Err(err) = self.store.put_entry(entry).await {
            tracing::error!(ladder = %self.spec.id, %bot, error = %err, "cannot store the removal");
        }
        let tables: Vec<String> = self
            .playing
            .iter()
            .filter(|(_, p)| p.row.entrants.iter().any(|b| b == bot))
            .map(|(mid, p)| Self::table_id(mid, p.done.len()))
            .collect();
        for table in tables {
            forfeit(self.tables.clone(), table, bot.to_string());
        }
    }

    /// Bots of a match taken off the ladder for timeouts (not those that left): their seats
    /// are auto-moved.
    fn forfeited(&self, entrants: &[String]) -> Vec<String> {
        entrants
            .iter()
            .filter(|b| {
                self.entrants
                    .get(b.as_str())
                    .is_some_and(|e| !e.entry.active && !e.entry.removed_reason.is_empty())
            })
            .cloned()
            .collect()
    }

    /// Rate a match whose every table finished: totals per entrant, places, new ratings, in
    /// one store transaction that the store applies once.
    async fn rate(&mut self, match_id: &str) -> Result<(), ServerError> {
        let Some(p) = self.playing.get(match_id).cloned() else {
            return Ok(());
        };
        let seats = usize::from(self.spec.seats);
        let per_table: Vec<Vec<i64>> = p.done.iter().map(|r| r.nets.clone()).collect();
        let nets = duplicate::totals(&per_table, seats);
        let luck = match_luck(&p.done, seats, self.spec.luck_adjusted);
        // Places and ratings come from the luck-adjusted nets on a `luck_adjusted` ladder; the
        // jetons stored and shown stay the raw nets.
        let ranked: Vec<f64> = match &luck {
            Some(l) => bete_ladder::luck::adjusted(&nets, l),
            None => nets.iter().map(|&n| n as f64).collect(),
        };
        let mut strikes = vec![0u32; seats];
        for (r, t) in p.done.iter().enumerate() {
            for (s, k) in t.strikes.iter().enumerate() {
                if let Some(x) = strikes.get_mut(duplicate::entrant_at(s, r, seats)) {
                    *x += k;
                }
            }
        }
        let deals: u32 = p.done.iter().map(|t| t.deals).sum();
        let before: Vec<Rating> = p.row.entrants.iter().map(|b| self.rating(b)).collect();
        let after = bete_ladder::update(&before, &ranked);
        let places = bete_ladder::places(&ranked);
        let mut results = Vec::new();
        let mut ratings: Vec<RatingRow> = Vec::new();
        for (i, bot) in p.row.entrants.iter().enumerate() {
            results.push(EntrantResult {
                bot_id: bot.clone(),
                net: nets[i],
                place: places[i],
                mu_before: before[i].mu,
                sigma_before: before[i].sigma,
                mu_after: after[i].mu,
                sigma_after: after[i].sigma,
                strikes: strikes[i],
                deals,
            });
            let old = self.ratings.get(bot);
            ratings.push(RatingRow {
                ladder_id: self.spec.id.clone(),
                bot_id: bot.clone(),
                mu: after[i].mu,
                sigma: after[i].sigma,
                matches: old.map_or(0, |r| r.matches) + 1,
                jetons: old.map_or(0, |r| r.jetons) + nets[i],
                deals: old.map_or(0, |r| r.deals) + u64::from(deals),
                last_net: nets[i],
                last_place: places[i],
            });
        }
        let rated_at = now_ms();
        for r in &ratings {
            self.ratings.insert(r.bot_id.clone(), r.clone());
        }
        self.playing.remove(match_id);
        self.unstored
            .insert(match_id.to_string(), p.row.entrants.clone());
        if self.leadership.is_cluster() {
            self.rated_here.insert(match_id.to_string());
        }
        self.rated += 1;
        let mut row = p.row;
        row.rated = true;
        row.rated_at_ms = Some(rated_at);
        row.results = results;
        tracing::info!(ladder = %self.spec.id, r#match = %match_id, ?nets, ?luck, "ladder match rated");
        let names: HashMap<String, String> = row
            .entrants
            .iter()
            .filter_map(|b| Some((b.clone(), self.entrants.get(b)?.name.clone())))
            .collect();
        // Stored in rating order by the writer; until then (or if the store fails) the match
        // is unrated in the store, and a restart rates it again from the stored ratings.
        let _ = self.rater.send(Rated {
            term: self.term,
            row,
            ratings,
            names,
            announce: self.announcing.remove(match_id),
        });
        Ok(())
    }
}

/// The rating writer: each rated match in one store transaction (which applies it once), one
/// after another in the order the scheduler rated them (each carries absolute ratings, so the
/// order matters), then announced to WatchLadderResults.
///
/// A write that fails is retried while the failure may pass (PostgreSQL restarting). One that
/// fails for good (this node no longer leads, or the store refuses it) leaves the scheduler's
/// memory ahead of the store: the writer drops the rest of that term's ratings (they were
/// computed on top of the lost one) and asks the scheduler to reload from the store, which
/// rates the match again from the stored ratings.
async fn write_ratings(
    store: Arc<dyn Store>,
    results: broadcast::Sender<pb::LadderMatch>,
    mut rated: mpsc::UnboundedReceiver<Rated>,
    scheduler: mpsc::WeakUnboundedSender<LadderCommand>,
) {
    let mut lost_term = None;
    while let Some(mut r) = rated.recv().await {
        if lost_term.is_some_and(|t| r.term <= t) {
            continue;
        }
        let stored = store_rating(&*store, &r).await;
        // The ratings are readable (or will not be soon): the table may announce its end.
        drop(r.announce.take());
        let m = &r.row;
        if let Err(e) = stored {
            tracing::error!(ladder = %m.ladder_id, r#match = %m.id, error = %e, "cannot store a rated match");
            lost_term = Some(r.term);
            if let Some(tx) = scheduler.upgrade() {
                let _ = tx.send(LadderCommand::RatingLost {
                    match_id: m.id.clone(),
                    term: r.term,
                });
            }
            continue;
        }
        if let Some(tx) = scheduler.upgrade() {
            let _ = tx.send(LadderCommand::RatingStored {
                match_id: m.id.clone(),
                term: r.term,
            });
        }
        let tables = store.match_tables(m.id.clone()).await.unwrap_or_default();
        let _ = results.send(match_to_pb(m, &tables, &r.names));
    }
}

/// Tries to store one rated match: failures that may pass are retried for a few seconds; a
/// node that no longer leads stops at once.
async fn store_rating(store: &dyn Store, r: &Rated) -> Result<(), StoreError> {
    let m = &r.row;
    let mut pause = Duration::from_millis(100);
    let mut tries = 0;
    loop {
        let res = store
            .rate_match(
                m.id.clone(),
                m.results.clone(),
                r.ratings.clone(),
                m.rated_at_ms.unwrap_or_default(),
            )
            .await;
        match res {
            Ok(()) => return Ok(()),
            Err(e @ StoreError::LadderFenced { .. }) => return Err(e),
            Err(e) if tries >= RATING_TRIES => return Err(e),
            Err(e) => {
                tracing::warn!(ladder = %m.ladder_id, r#match = %m.id, error = %e, "storing a rated match failed; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
                tries += 1;
            }
        }
    }
}

/// Tell a table that a bot was taken off its ladder (its seat is auto-moved from now on), in a
/// task of its own: the scheduler never waits for a table.
fn forfeit(tables: Arc<Tables>, table: String, bot: String) {
    tokio::spawn(async move {
        let told = tables
            .call(&table, |reply| crate::table::Command::Forfeit {
                bot: bot.clone(),
                reply,
            })
            .await;
        if let Err(e) = told {
            tracing::warn!(%table, %bot, error = %e, "cannot tell a table that its bot was taken off");
        }
    });
}

/// Create a ladder table with its bots seated, in one store transaction, then attach their
/// WatchBot streams. After a restart (`fresh` false) the table may exist already, perhaps
/// from an older server that seated bots one join at a time: then each bot is seated through
/// the table actor's own join, where already seated counts as seated.
async fn seat_table(
    store: &dyn Store,
    tables: &Tables,
    table: TableRow,
    seat_rows: Vec<SeatRow>,
    bots: Vec<crate::table::Seating>,
    fresh: bool,
) -> Result<(), ServerError> {
    let id = table.id.clone();
    if fresh || store.table(id.clone()).await?.is_none() {
        tables.create_seated(table, seat_rows, bots.clone()).await?;
    } else {
        for (seat, bot, name) in &bots {
            let joined = tables
                .call(&id, |reply| crate::table::Command::Join {
                    bot: bot.clone(),
                    name: name.clone(),
                    seat: Some(*seat),
                    by_ladder: true,
                    reply,
                })
                .await;
            match joined {
                Ok(Ok(_)) | Ok(Err(ServerError::AlreadySeated(_))) => {}
                // Played by another node of the cluster (claimed after its creator died), with
                // its seats as stored: nothing to do here.
                Err(ServerError::TableElsewhere { .. }) => return Ok(()),
                Ok(Err(e)) | Err(e) => return Err(e),
            }
        }
    }
    for (_, bot, _) in &bots {
        tables.attach_bot_streams(bot, &id).await;
    }
    Ok(())
}

/// Every pair of outside entrants (not house entrants) in a group.
fn outside_pairs(ids: &[String]) -> Vec<(&String, &String)> {
    let outside: Vec<&String> = ids.iter().filter(|b| !b.starts_with("house:")).collect();
    let mut out = Vec::new();
    for (k, a) in outside.iter().enumerate() {
        for b in &outside[k + 1..] {
            out.push((*a, *b));
        }
    }
    out
}

/// A group's identity whatever the seating: its ids, sorted.
fn group_key(ids: &[String]) -> Vec<String> {
    let mut k = ids.to_vec();
    k.sort_unstable();
    k
}

/// A match as the schema shows it.
pub fn match_to_pb(
    m: &MatchRow,
    tables: &[crate::store::StoredTable],
    names: &HashMap<String, String>,
) -> pb::LadderMatch {
    let seats = m.entrants.len();
    pb::LadderMatch {
        match_id: m.id.clone(),
        ladder_id: m.ladder_id.clone(),
        state: if m.rated {
            pb::LadderMatchState::Rated
        } else {
            pb::LadderMatchState::Playing
        }
        .into(),
        duplicate: m.duplicate,
        entrants: m
            .entrants
            .iter()
            .enumerate()
            .map(|(i, bot)| {
                let r = m.results.iter().find(|r| &r.bot_id == bot);
                pb::LadderMatchEntrant {
                    bot_id: bot.clone(),
                    bot_name: names.get(bot).cloned().unwrap_or_else(|| bot.clone()),
                    seat: duplicate::seat_of(i, 0, seats.max(1)) as u32,
                    net: r.map_or(0, |r| r.net),
                    place: r.map_or(0, |r| r.place),
                    mu_before: r.map_or(0.0, |r| r.mu_before),
                    sigma_before: r.map_or(0.0, |r| r.sigma_before),
                    mu_after: r.map_or(0.0, |r| r.mu_after),
                    sigma_after: r.map_or(0.0, |r| r.sigma_after),
                    strikes: r.map_or(0, |r| r.strikes),
                }
            })
            .collect(),
        tables: tables
            .iter()
            .filter_map(|t| {
                let l = t.table.ladder.as_ref()?;
                let seed: bete_rules::Seed = t.table.seed.parse().ok()?;
                Some(pb::LadderMatchTable {
                    table_id: t.table.id.clone(),
                    rotation: u32::from(l.rotation),
                    seed_sha256: seed.commitment(),
                    finished: t.table.state == TableState::Finished,
                })
            })
            .collect(),
        started_at: Some(project::timestamp(m.started_at_ms)),
        rated_at: m.rated_at_ms.map(project::timestamp),
        deals: m.results.first().map_or(0, |r| r.deals),
    }
}

/// The stored policy of a house entrant's seat: a `search` entrant with the ladder's budget.
fn house_text(policy: &str, search_budget_ms: u32) -> String {
    match policy {
        "search" => crate::table::HousePolicy::Search {
            budget_ms: search_budget_ms,
        }
        .text(),
        p => p.to_string(),
    }
}
