//! Deadlines and the house: when the actor next wakes, time-outs, house moves and searches.

use super::{Actor, SearchDone};
use crate::house;
use bete_rules::{Action, Game, Seat};
use bete_store::clock::now_ms;
use bete_store::{LogEntry, Occupant};
use std::time::Duration;
use tokio::time::Instant;

impl Actor {
    /// The current decision's deadline (Unix ms): its start, plus the table's deadline, plus
    /// the time the server itself was paused since it began (never a bot's fault).
    pub(super) fn deadline_ms(&self) -> i64 {
        let paused = (self.deps.progress.paused_ms() - self.paused_at_decision_ms).max(0);
        self.decision_since_ms + self.meta.deadline_ms as i64 + paused
    }

    /// A house bot's pause before acting: the server's, or a showcase table's slower pace.
    pub(super) fn house_delay(&self) -> Duration {
        if self.meta.created_by == crate::SHOWCASE_CREATOR {
            self.deps.house_delay.max(crate::SHOWCASE_PACE)
        } else {
            self.deps.house_delay
        }
    }

    /// When the actor must act by itself: a house bot's turn, a deadline, or unloading.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        let after_ms = |ms: i64| Instant::now() + Duration::from_millis(ms.max(0) as u64);
        if self.closed.is_some() {
            return Some(self.last_request + self.deps.idle_unload);
        }
        let Some(game) = &self.game else {
            // Ladder tables are seated by their scheduler, which owns their fate.
            if self.meta.ladder.is_some() {
                return None;
            }
            return Some(after_ms(self.expires_at_ms() - now_ms()));
        };
        if game.is_over() {
            return Some(self.last_request + self.deps.idle_unload);
        }
        let seat = game.to_act()?;
        let delay = self.house_delay().as_millis() as i64;
        match &self.seats[seat.index()].occupant {
            // A search under way: wake only if its deadline passes first.
            Occupant::House(_) if self.searching == Some(self.last_seq()) => {
                Some(after_ms(self.deadline_ms() + delay - now_ms()))
            }
            Occupant::House(_) => Some(after_ms(self.decision_since_ms + delay - now_ms())),
            // Taken off the ladder: played at once, not after the deadline.
            _ if self.is_forfeited(seat) => Some(Instant::now()),
            _ => Some(after_ms(self.deadline_ms() - now_ms())),
        }
    }

    /// A house bot's move for `seat`, as a log entry; None when there is nothing to store now
    /// (a search has started, and reports through `search_tx`).
    pub(super) fn house_move(&mut self, policy: &str, seat: Seat) -> Option<LogEntry> {
        let game = self.game.as_ref()?;
        let entry = |action: Action, auto: bool| LogEntry::Action {
            seat: seat.0,
            action: action.to_string(),
            auto,
            request_id: None,
            time_ms: now_ms(),
        };
        let seq = self.last_seq();
        let policy = house::HousePolicy::parse(policy);
        let Some(house::HousePolicy::Search { budget_ms }) = policy else {
            // A stored policy this server does not know (a newer server's) plays safe.
            return match policy {
                Some(p) => house::choose_now(p, game, seat, &mut self.rng).map(|a| entry(a, false)),
                None => game.safe_action(seat).map(|a| entry(a, true)),
            };
        };
        if self.searching == Some(seq) {
            // Its deadline passed before the search answered: the safe action, a strike.
            self.searching = None;
            self.count_search("late");
            return game.safe_action(seat).map(|a| entry(a, true));
        }
        match self.start_search(seat, budget_ms) {
            Ok(()) => None,
            Err(fallback) => fallback.map(|a| entry(a, false)),
        }
    }

    pub(super) fn count_search(&self, outcome: &'static str) {
        self.deps
            .metrics
            .house_searches
            .get_or_create(&bete_base::metrics::SearchLabels { outcome })
            .inc();
    }

    /// Starts a search for `seat`'s decision now; Err with the heuristic's action when every
    /// core is searching already (Err(None): nothing to decide).
    pub(super) fn start_search(
        &mut self,
        seat: Seat,
        budget_ms: u32,
    ) -> Result<(), Option<Action>> {
        let seq = self.last_seq();
        let game = self.game.as_ref().ok_or(None)?;
        // The think time counts from when the decision began, like the deadline.
        let began = self.decision_since_ms + self.house_delay().as_millis() as i64;
        let think = house::HousePolicy::think_time(budget_ms, self.meta.deadline_ms)
            .saturating_sub(Duration::from_millis((now_ms() - began).max(0) as u64));
        let job =
            house::SearchJob::new(game, seat, &self.events, think, &mut self.rng).ok_or(None)?;
        let Some(slot) = house::SearchSlot::take() else {
            self.count_search("no_core");
            return Err(Some(job.fallback()));
        };
        self.searching = Some(seq);
        let tx = self.search_tx.clone();
        tokio::task::spawn_blocking(move || {
            let action = job.run();
            drop(slot);
            // The actor may be gone (table unloaded): then nobody needs the answer.
            let _ = tx.send(SearchDone { seq, seat, action });
        });
        Ok(())
    }

    /// A search house bot to act next, with no pause asked for, starts thinking at once,
    /// while the entry that made it its turn is being stored (its answer is stored only
    /// after that entry, by the actor's loop).
    pub(super) fn search_ahead(&mut self) {
        if !self.house_delay().is_zero() || self.searching == Some(self.last_seq()) {
            return;
        }
        let Some(seat) = self.game.as_ref().and_then(Game::to_act) else {
            return;
        };
        let Occupant::House(policy) = &self.seats[seat.index()].occupant else {
            return;
        };
        if let Some(house::HousePolicy::Search { budget_ms }) = house::HousePolicy::parse(policy) {
            // Every core busy: the timer's turn plays it, as usual.
            let _ = self.start_search(seat, budget_ms);
        }
    }

    /// A search answered: its move is stored if the table still waits for that decision.
    pub(super) async fn on_search_done(&mut self, done: SearchDone) {
        let current = self.searching == Some(done.seq)
            && self.last_seq() == done.seq
            && self.game.as_ref().and_then(Game::to_act) == Some(done.seat);
        if !current {
            self.count_search("stale");
            return;
        }
        self.searching = None;
        self.count_search("answered");
        let entry = LogEntry::Action {
            seat: done.seat.0,
            action: done.action.to_string(),
            auto: false,
            request_id: None,
            time_ms: now_ms(),
        };
        if let Err(e) = self.commit(entry).await {
            tracing::warn!(table = %self.meta.id, error = %e, "search house move failed");
        }
    }

    /// Returns false when the actor should stop.
    pub(super) async fn on_timer(&mut self) -> bool {
        if self.closed.is_some() {
            return false;
        }
        let Some(game) = &self.game else {
            if self.meta.ladder.is_some() || now_ms() < self.expires_at_ms() {
                return true;
            }
            let ttl = self.deps.waiting_ttl.as_secs();
            return match self
                .close(format!("no match began within {ttl} s of its creation"))
                .await
            {
                Ok(_) => false,
                Err(e) => {
                    tracing::warn!(table = %self.meta.id, error = %e, "could not close an expired table");
                    // Do not spin on a failing store.
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    true
                }
            };
        };
        if game.is_over() {
            return false;
        }
        let Some(seat) = game.to_act() else {
            return true;
        };
        let entry = match &self.seats[seat.index()].occupant {
            Occupant::House(policy) => match self.house_move(&policy.clone(), seat) {
                Some(e) => e,
                None => return true,
            },
            _ => match game.safe_action(seat) {
                Some(a) => LogEntry::Action {
                    seat: seat.0,
                    action: a.to_string(),
                    auto: true,
                    request_id: None,
                    time_ms: now_ms(),
                },
                None => return true,
            },
        };
        if let Err(e) = self.commit(entry).await {
            tracing::warn!(table = %self.meta.id, error = %e, "server-side move failed");
            // Do not spin on a failing store.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        true
    }

    /// When a table still waiting for its seats expires (Unix ms).
    pub(super) fn expires_at_ms(&self) -> i64 {
        self.meta
            .created_at_ms
            .saturating_add(self.deps.waiting_ttl.as_millis().min(i64::MAX as u128) as i64)
    }
}
