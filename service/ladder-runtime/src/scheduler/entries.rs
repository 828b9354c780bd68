//! The entrants' bookkeeping: entering and leaving the ladder, in memory and in the store, and
//! the sweep that reconciles the two.

use super::{Entrant, Playing, Scheduler};
use crate::result::table_result;
use crate::strikes::check_cooldown;
use bete_base::status::ServerError;
use bete_store::clock::now_ms;
use bete_store::{EntryRow, MatchRow};
use bete_table::Command;
use std::collections::HashSet;

impl Scheduler {
    /// A follower's EnterLadder: written to the store, where the leader finds it.
    pub(super) async fn enter_stored(
        &self,
        bot_id: String,
        capacity: u32,
    ) -> Result<EntryRow, ServerError> {
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
        let look = bete_base::names::look(&bot.name);
        for e in entries
            .iter()
            .filter(|e| e.bot_id != bot_id && !taken_off_as_look_alike(e))
        {
            if let Some(other) = self.store.bot(e.bot_id.clone()).await?
                && other.owner_id() != bot.owner_id()
                && bete_base::names::look(&other.name) == look
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
    pub(super) async fn leave_stored(&self, bot_id: String) -> Result<EntryRow, ServerError> {
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
    pub(super) async fn stored_counts(&self) -> Result<(u32, u32, u64), ServerError> {
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
    pub(super) async fn sweep(&mut self) {
        self.refresh_entries().await;
        let id = self.spec.id.clone();
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
            let table = t.table.id.clone();
            let result = match self.tables.loaded(&table) {
                // Its actor has the result from the live game: taken from it, not replayed.
                Some(handle) => {
                    let Ok(Some((mut result, deals))) =
                        handle.call(|reply| Command::LadderResult { reply }).await
                    else {
                        continue;
                    };
                    if self.spec.luck_adjusted {
                        result.luck = crate::result::luck(&table, deals).await;
                    }
                    result
                }
                // No actor here (another node's, or unloaded): the stored record, replayed.
                // It is stored just after the table is marked finished: next sweep.
                None => match table_result(&*self.store, t, self.spec.luck_adjusted).await {
                    Ok(r) => r,
                    Err(_) => continue,
                },
            };
            if let Err(e) = self.table_result(&table, &mid, rotation, result).await {
                tracing::warn!(ladder = %id, %table, error = %e, "cannot take a finished ladder table");
            }
        }
    }

    /// Entries made through other nodes, taken in, and look-alikes among them settled.
    async fn refresh_entries(&mut self) {
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
                    self.entrants
                        .insert(entry.bot_id.clone(), Entrant::outside(entry, &bot));
                }
            }
            Err(e) => tracing::warn!(ladder = %id, error = %e, "cannot read the entries"),
        }
        self.settle_look_alikes().await;
    }

    /// Two look-alike names of different owners entered at once through two nodes both pass
    /// their node's check (each sees the store without the other). The leader settles it
    /// before it schedules from entries it has not seen: of the active entrants, in the order
    /// they entered (`entered_at_ms`, then bot id), one whose name looks like an earlier
    /// kept one's of another owner is taken off, with the reason, and never scheduled. The
    /// order is the store's, so any leader settles it the same way.
    pub(super) async fn settle_look_alikes(&mut self) {
        let mut active: Vec<&Entrant> = self
            .entrants
            .values()
            .filter(|e| !e.house && e.entry.active)
            .collect();
        active.sort_by(|a, b| {
            (a.entry.entered_at_ms, &a.entry.bot_id).cmp(&(b.entry.entered_at_ms, &b.entry.bot_id))
        });
        let mut kept: Vec<(String, &str, &str)> = Vec::new();
        let mut losers: Vec<(String, String)> = Vec::new();
        for e in active {
            let look = bete_base::names::look(&e.name);
            match kept
                .iter()
                .find(|(l, owner, _)| *l == look && *owner != e.owner)
            {
                Some((_, _, first)) => losers.push((e.entry.bot_id.clone(), first.to_string())),
                None => kept.push((look, &e.owner, &e.name)),
            }
        }
        for (bot, first) in losers {
            let Some(e) = self.entrants.get_mut(&bot) else {
                continue;
            };
            e.entry.active = false;
            e.entry.removed_reason = format!("{LOOK_ALIKE} {first}'s, entered first");
            let entry = e.entry.clone();
            tracing::info!(ladder = %self.spec.id, %bot, %first, "entry taken off: its name looks like an earlier entrant's");
            if let Err(err) = self.store.put_entry(entry).await {
                tracing::error!(ladder = %self.spec.id, %bot, error = %err, "cannot store the look-alike's removal");
            }
        }
    }

    pub(super) async fn enter(
        &mut self,
        bot_id: String,
        capacity: u32,
    ) -> Result<EntryRow, ServerError> {
        if self.entrants.get(&bot_id).is_some_and(|e| e.entry.active) {
            return Err(ServerError::LadderAlreadyEntered(self.spec.id.clone()));
        }
        // A cluster leader checks against what other nodes stored since its last sweep too:
        // only entries made at the same moment are left for `settle_look_alikes`.
        if self.leadership.is_cluster() {
            self.refresh_entries().await;
            if self.entrants.get(&bot_id).is_some_and(|e| e.entry.active) {
                return Err(ServerError::LadderAlreadyEntered(self.spec.id.clone()));
            }
        }
        let now = now_ms();
        self.strikes.check(&bot_id, now)?;
        check_cooldown(&*self.store, &self.spec.id, &bot_id, now).await?;
        let bot = self
            .store
            .bot(bot_id.clone())
            .await?
            .ok_or(ServerError::Unauthenticated("unknown bot"))?;
        let look = bete_base::names::look(&bot.name);
        if let Some(e) = self.entrants.values().find(|e| {
            !e.house
                && e.owner != bot.owner_id()
                && !taken_off_as_look_alike(&e.entry)
                && bete_base::names::look(&e.name) == look
        }) {
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
        self.entrants
            .insert(bot_id, Entrant::outside(entry.clone(), &bot));
        Ok(entry)
    }

    pub(super) async fn leave(&mut self, bot_id: String) -> Result<EntryRow, ServerError> {
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

    pub(super) fn online(&self, bot: &str) -> bool {
        self.tables.has_bot_stream(bot) || self.leadership.online_anywhere(bot)
    }
}

/// The start of the reason given to an entry taken off because its name looks like an earlier
/// entrant's (see `settle_look_alikes`).
const LOOK_ALIKE: &str = "its name looks like";

/// An entry taken off as a look-alike never held its name: it does not keep the earlier
/// entrant from entering again once that one has left.
fn taken_off_as_look_alike(e: &EntryRow) -> bool {
    !e.active && e.removed_reason.starts_with(LOOK_ALIKE)
}
