//! The commit path: an entry is stepped, appended and durable before anyone hears of it; the
//! finished record, reloads and closing.

use super::{Actor, RATING_WAIT};
use crate::TableStatus;
use bete_base::status::ServerError;
use bete_rules::Game;
use bete_rules::record::Record;
use bete_store::clock::now_ms;
use bete_store::{LogEntry, Occupant, RatingDelta, StoreError, TableState};
use tracing::Instrument;

impl Actor {
    /// Step, make durable, then publish. Returns the index of the first new event.
    pub(super) async fn commit(&mut self, entry: LogEntry) -> Result<usize, ServerError> {
        let first = self.events.len();
        let was_playing = self.game.is_some();
        self.step(&entry)?;
        self.search_ahead();
        // The wait until the entry is durable; the group commit's span links to it.
        let append =
            tracing::debug_span!("store.append", table = %self.meta.id, seq = self.log_len);
        if let Err(e) = self
            .deps
            .store
            .append(
                self.meta.id.clone(),
                self.log_len,
                entry.clone(),
                self.last_seq(),
            )
            .instrument(append)
            .await
        {
            if let StoreError::Fenced { owner, .. } = &e {
                // Claimed by another node: rebuilding here would only race it.
                self.moved(owner.clone());
                return Err(e.into());
            }
            tracing::error!(table = %self.meta.id, error = %e, "append failed; rebuilding the table from the store");
            self.reload().await;
            return Err(e.into());
        }
        self.log_len += 1;
        let started = !was_playing && self.game.is_some();
        if started
            && let Err(e) = self
                .deps
                .store
                .set_state(self.meta.id.clone(), TableState::Playing)
                .await
        {
            tracing::warn!(table = %self.meta.id, error = %e, "could not store the table state");
        }
        if let LogEntry::Action { auto, seat, .. } = &entry {
            self.deps.metrics.moves.inc();
            if *auto {
                self.deps.metrics.auto_moves.inc();
            }
            self.report_decision(*seat, *auto);
        }
        self.publish();
        self.update_metrics();
        let decide = started || matches!(entry, LogEntry::Action { .. });
        // Store the record before anyone hears MatchEnded, so GetGameRecord answers at once.
        let finished_now = self.game.as_ref().is_some_and(Game::is_over) && !self.finished_stored;
        if finished_now {
            self.finish().await;
            self.finished_stored = true;
            self.deps
                .limits
                .table_done(&self.meta.created_by, &self.meta.id);
        }
        {
            let span = tracing::debug_span!(
                "table.fan_out",
                watchers = self.sinks.len() as i64,
                events = (self.events.len() - first) as i64
            );
            let _in = span.enter();
            self.fan_out(first, decide);
        }
        if finished_now {
            self.update_metrics();
            // WatchTable streams end after MatchEnded; bot streams just let go of this table.
            let before = self.sinks.len();
            self.sinks.clear();
            self.update_watchers(before);
        }
        Ok(first)
    }

    /// A bot's decision at a ladder table, made durable: its ladder hears whether it timed out.
    pub(super) fn report_decision(&self, seat: u8, timed_out: bool) {
        let (Some(ladder), Some(tx)) = (&self.meta.ladder, &self.deps.ladder_decisions) else {
            return;
        };
        let Some(s) = self.seats.get(usize::from(seat)) else {
            return;
        };
        let Occupant::Bot(bot) = &s.occupant else {
            return;
        };
        if self.forfeited.contains(bot) {
            return;
        }
        let _ = tx.send(crate::report::Decision {
            ladder_id: ladder.ladder_id.clone(),
            table: self.meta.id.clone(),
            bot: bot.clone(),
            timed_out,
            table_strikes: s.strikes,
        });
    }

    /// After a failed append: the in-memory state may be ahead of the store, so rebuild it.
    pub(super) async fn reload(&mut self) {
        let result = match self.deps.store.log(self.meta.id.clone()).await {
            Ok(log) => self.replay(&log),
            Err(e) => Err(e.into()),
        };
        if let Err(e) = result {
            tracing::error!(table = %self.meta.id, error = %e, "cannot rebuild the table; unloading it");
            self.broken = true;
        }
        self.publish();
    }

    /// The result of a finished ladder table, from the live game: what its ladder is told
    /// when it ends, and what the ladder's sweep asks for (no replay while the actor has it).
    pub(super) fn ladder_result(
        &self,
    ) -> Option<(crate::report::TableResult, crate::report::Deals)> {
        let game = self.game.as_ref().filter(|g| g.is_over())?;
        self.meta.ladder.as_ref()?;
        let result = crate::report::TableResult {
            nets: game.balances().to_vec(),
            strikes: self.seats.iter().map(|s| s.strikes).collect(),
            deals: game.log().len() as u32,
            luck: None,
        };
        let deals = std::sync::Arc::new((game.setup().clone(), game.log().to_vec()));
        Some((result, deals))
    }

    pub(super) async fn finish(&mut self) {
        let Some(game) = &self.game else { return };
        let record = Record::from_game(game).to_json();
        let balances = game.balances();
        // A chosen seed may have let its creator know the decks: never rated. Ladder tables
        // are rated by their ladder.
        let rated = !self.meta.seed_chosen && self.meta.ladder.is_none();
        let ratings = self
            .seats
            .iter()
            .filter(|_| rated)
            .enumerate()
            .filter_map(|(i, s)| match &s.occupant {
                Occupant::Bot(b) => Some(RatingDelta {
                    bot: b.clone(),
                    ruleset: self.meta.ruleset.id().to_string(),
                    net: balances.get(i).copied().unwrap_or(0),
                }),
                _ => None,
            })
            .collect();
        if let Err(e) = self
            .deps
            .store
            .finish(self.meta.id.clone(), record, ratings)
            .await
        {
            tracing::error!(table = %self.meta.id, error = %e, "could not store the finished record");
            return;
        }
        if let Some(ladder) = &self.meta.ladder
            && let Some(tx) = &self.deps.ladder_finished
        {
            let Some((result, deals)) = self.ladder_result() else {
                return;
            };
            let (announce, announced) = tokio::sync::oneshot::channel();
            let sent = tx.send(crate::report::FinishedTable {
                table: self.meta.id.clone(),
                ladder: ladder.clone(),
                result,
                announce: Some(announce),
                deals,
            });
            // A match's last table announces MatchEnded once the match's ratings are stored,
            // so a bot reading its rating then sees the new one; other tables are let go at
            // once. Bounded: a slow rating never holds the table for long.
            if sent.is_ok() {
                let _ = tokio::time::timeout(RATING_WAIT, announced).await;
            }
        }
    }

    /// Close the table without a finished match: stored as a log entry (the table's state
    /// becomes finished in the same transaction), streams end with TABLE_CLOSED, and the actor
    /// stops when this returns Ok.
    pub(super) async fn close(&mut self, reason: String) -> Result<TableStatus, ServerError> {
        if let Some(r) = &self.closed {
            return Err(ServerError::TableClosed(r.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        if self.meta.ladder.is_some() {
            // Its ladder's scheduler waits for the match to be rated; ladder matches are
            // bounded by the ladder's declaration, so there is no runaway to stop.
            return Err(ServerError::LadderTable(self.meta.id.clone()));
        }
        self.commit(LogEntry::Close {
            reason: reason.clone(),
            time_ms: now_ms(),
        })
        .await?;
        tracing::info!(table = %self.meta.id, %reason, "table closed");
        self.deps
            .limits
            .table_done(&self.meta.created_by, &self.meta.id);
        let before = self.sinks.len();
        for s in &self.sinks {
            s.end(&self.meta, Some(ServerError::TableClosed(reason.clone())));
        }
        self.sinks.clear();
        self.update_watchers(before);
        self.update_metrics();
        Ok(self.status())
    }
}
