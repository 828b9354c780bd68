//! Results: each finished table's result, the match's rating, and the writer that stores and
//! announces rated matches in order.

use super::{RATING_TRIES, Rated, Scheduler};
use crate::LadderCommand;
use crate::result::{TableResult, match_luck};
use bete_api::pb;
use bete_base::status::ServerError;
use bete_ladder::{Rating, duplicate};
use bete_store::clock::now_ms;
use bete_store::{EntrantResult, MatchRow, RatingRow, Store, StoreError, TableState};
use bete_table::project;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

impl Scheduler {
    /// A finished table's result: the set's next table, or the match rated.
    pub(super) async fn table_result(
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

    /// Rate a match whose every table finished: totals per entrant, places, new ratings, in
    /// one store transaction that the store applies once.
    pub(super) async fn rate(&mut self, match_id: &str) -> Result<(), ServerError> {
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
pub(super) async fn write_ratings(
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
pub(super) async fn store_rating(store: &dyn Store, r: &Rated) -> Result<(), StoreError> {
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

/// A match as the schema shows it.
pub fn match_to_pb(
    m: &MatchRow,
    tables: &[bete_store::StoredTable],
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
