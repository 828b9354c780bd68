//! The state transitions, shared by replay and the live path: one log entry at a time.

use super::Actor;
use crate::{Body, SeatInfo, TableEvent};
use bete_base::status::ServerError;
use bete_rules::{Action, Game, Seat};
use bete_store::{LogEntry, Occupant};
use std::sync::Arc;

impl Actor {
    pub(super) fn reset(&mut self) {
        self.seats = self.initial.clone();
        self.game = None;
        self.log_len = 0;
        self.events.clear();
        self.requests.clear();
        self.decision_since_ms = 0;
        self.closed = None;
        self.left_in_deal.clear();
        self.searching = None;
    }

    pub(super) fn replay(&mut self, log: &[LogEntry]) -> Result<(), ServerError> {
        self.reset();
        let created = self.meta.created_at_ms;
        for (i, s) in self.initial.clone().iter().enumerate() {
            if let Occupant::House(_) = s.occupant {
                self.push(
                    created,
                    false,
                    Body::SeatTaken {
                        seat: i as u8,
                        occupant: s.occupant.clone(),
                        name: s.name.clone(),
                    },
                );
            }
        }
        self.maybe_start(created)?;
        for (i, entry) in log.iter().enumerate() {
            // The reason only: the engine's text may name the cards of a stored exchange, and
            // this error reaches logs and whichever caller loaded the table.
            self.step(entry).map_err(|e| {
                ServerError::Internal(format!(
                    "table {} log entry {i} does not replay ({})",
                    self.meta.id,
                    e.reason()
                ))
            })?;
            self.log_len += 1;
        }
        Ok(())
    }

    pub(super) fn push(&mut self, time_ms: i64, auto: bool, body: Body) {
        let seq = self.events.len() as u64 + 1;
        self.events.push(Arc::new(TableEvent {
            seq,
            time_ms,
            auto,
            body,
        }));
    }

    pub(super) fn last_seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// Start the match once every seat is filled.
    pub(super) fn maybe_start(&mut self, time_ms: i64) -> Result<bool, ServerError> {
        if self.game.is_some() || self.seats.iter().any(|s| s.occupant == Occupant::Empty) {
            return Ok(false);
        }
        let (game, events) = Game::new(self.meta.setup())
            .map_err(|e| ServerError::Internal(format!("cannot start the match: {e}")))?;
        self.game = Some(game);
        self.push(time_ms, false, Body::MatchStarted);
        for e in events {
            self.push(time_ms, false, Body::Game(e));
        }
        self.begin_decision(time_ms);
        Ok(true)
    }

    /// A decision began at `time_ms`: its deadline counts from here, plus any pause of the
    /// server from now on.
    pub(super) fn begin_decision(&mut self, time_ms: i64) {
        self.decision_since_ms = time_ms;
        self.paused_at_decision_ms = self.deps.progress.paused_ms();
    }

    /// Apply one log entry; on error nothing changed.
    pub(super) fn step(&mut self, entry: &LogEntry) -> Result<(), ServerError> {
        let t = entry.time_ms();
        match entry {
            LogEntry::Join {
                seat, bot, name, ..
            } => {
                let s = self.seat_mut(*seat)?;
                if s.occupant != Occupant::Empty {
                    return Err(ServerError::SeatTaken(*seat));
                }
                s.occupant = Occupant::Bot(bot.clone());
                s.name = name.clone();
                self.push(
                    t,
                    false,
                    Body::SeatTaken {
                        seat: *seat,
                        occupant: Occupant::Bot(bot.clone()),
                        name: name.clone(),
                    },
                );
                self.maybe_start(t)?;
            }
            LogEntry::Leave { seat, bot, .. } => {
                let s = self.seat_mut(*seat)?;
                if s.occupant != Occupant::Bot(bot.clone()) {
                    return Err(ServerError::NotSeated);
                }
                s.occupant = Occupant::Empty;
                s.name.clear();
                if let Some(g) = self.game.as_ref().filter(|g| !g.is_over()) {
                    self.left_in_deal
                        .insert(bot.clone(), (g.deal_index(), *seat));
                }
                self.push(
                    t,
                    false,
                    Body::SeatLeft {
                        seat: *seat,
                        bot: bot.clone(),
                    },
                );
            }
            LogEntry::Action {
                seat,
                action,
                auto,
                request_id,
                ..
            } => {
                // Neither the action nor the parse error is quoted: both may name hidden cards.
                let a: Action = action.parse().map_err(|_| {
                    ServerError::Internal(format!("stored action of seat {seat} does not parse"))
                })?;
                let game = self.game.as_mut().ok_or_else(|| {
                    ServerError::IllegalAction("the match has not started".into())
                })?;
                let events = game
                    .apply_recorded(Seat(*seat), a, *auto)
                    .map_err(|e| ServerError::from_action(&e))?;
                // The strike comes first, so `MatchEnded` is always a table's last event.
                if *auto {
                    let s = self.seat_mut(*seat)?;
                    s.strikes += 1;
                    let strikes = s.strikes;
                    self.push(
                        t,
                        true,
                        Body::StrikeCounted {
                            seat: *seat,
                            strikes,
                        },
                    );
                }
                for e in events {
                    self.push(t, *auto, Body::Game(e));
                }
                if let Some(id) = request_id {
                    // Only a bot's own submits carry a request id, so the seat holds that bot.
                    if let Some(Occupant::Bot(bot)) =
                        self.seats.get(usize::from(*seat)).map(|s| &s.occupant)
                    {
                        let (key, seq) = ((bot.clone(), id.clone()), self.last_seq());
                        self.requests.insert(key, (a, seq));
                    }
                }
                self.begin_decision(t);
            }
            LogEntry::Close { reason, .. } => {
                self.closed = Some(reason.clone());
            }
        }
        Ok(())
    }

    pub(super) fn seat_mut(&mut self, seat: u8) -> Result<&mut SeatInfo, ServerError> {
        self.seats.get_mut(seat as usize).ok_or_else(|| {
            ServerError::field(
                "seat",
                format!("the table has seats 0-{}", self.meta.seats - 1),
            )
        })
    }

    /// The seat is a bot's that was taken off the table's ladder.
    pub(super) fn is_forfeited(&self, seat: Seat) -> bool {
        !self.forfeited.is_empty()
            && matches!(
                self.seats.get(seat.index()).map(|s| &s.occupant),
                Some(Occupant::Bot(b)) if self.forfeited.contains(b)
            )
    }
}
