//! Bots that time out: their decisions judged, strikes, and taking a bot off the ladder.

use crate::Decision;
use crate::result::TableResult;
use bete_ladder::duplicate;
use bete_table::registry::Tables;
use std::sync::Arc;

use super::Scheduler;
use bete_store::clock::now_ms;

impl Scheduler {
    /// At a table's end, take off the ladder every bot that let more decisions time out there
    /// than a table allows: a backstop for decisions this scheduler did not hear one by one
    /// (a cluster's tables played on other nodes).
    pub(super) async fn strike_out(
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
    pub(super) async fn decided(&mut self, d: Decision) {
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
    pub(super) async fn take_off(&mut self, bot: &str, why: &str) {
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
    pub(super) fn forfeited(&self, entrants: &[String]) -> Vec<String> {
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
}

/// Tell a table that a bot was taken off its ladder (its seat is auto-moved from now on), in a
/// task of its own: the scheduler never waits for a table.
pub(super) fn forfeit(tables: Arc<Tables>, table: String, bot: String) {
    tokio::spawn(async move {
        let told = tables
            .call(&table, |reply| bete_table::Command::Forfeit {
                bot: bot.clone(),
                reply,
            })
            .await;
        if let Err(e) = told {
            tracing::warn!(%table, %bot, error = %e, "cannot tell a table that its bot was taken off");
        }
    });
}
