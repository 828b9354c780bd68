//! Requests from bots: joining, leaving, submitting actions, and the table moving owner.

use super::Actor;
use crate::sink::SinkTx;
use crate::{Submitted, TableStatus};
use bete_base::status::ServerError;
use bete_rules::Action;
use bete_store::clock::now_ms;
use bete_store::{LogEntry, Occupant, TableState};

impl Actor {
    /// The table now belongs to another node: this actor stops without another write (its
    /// state may be behind the store's), and its streams end so that clients come back
    /// through the node that plays it.
    pub(super) fn moved(&mut self, owner: String) {
        tracing::warn!(table = %self.meta.id, %owner, "the table was claimed by another node; dropping it here");
        let before = self.sinks.len();
        for s in &self.sinks {
            s.end(
                &self.meta,
                Some(ServerError::TableElsewhere {
                    table: self.meta.id.clone(),
                    node: owner.clone(),
                    addr: String::new(),
                }),
            );
        }
        self.sinks.clear();
        self.update_watchers(before);
        self.broken = true;
    }

    pub(super) async fn join(
        &mut self,
        bot: String,
        name: String,
        seat: Option<u8>,
    ) -> Result<(u8, TableStatus), ServerError> {
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        if let Some(s) = self.seat_of(&bot) {
            return Err(ServerError::AlreadySeated(s));
        }
        // A hand seen at a seat stays seen: within the deal, only that seat again.
        let held = match (self.left_in_deal.get(&bot), &self.game) {
            (Some((deal, held)), Some(g)) if *deal == g.deal_index() => Some(*held),
            _ => None,
        };
        let seat = match (seat, held) {
            (Some(s), Some(h)) if s != h => return Err(ServerError::SeatChangeRefused { held: h }),
            (None, Some(h)) if self.seats[h as usize].occupant != Occupant::Empty => {
                return Err(ServerError::SeatChangeRefused { held: h });
            }
            (None, Some(h)) => Some(h),
            (s, _) => s,
        };
        let seat = match seat {
            Some(s) if s >= self.meta.seats => {
                return Err(ServerError::field(
                    "seat",
                    format!(
                        "seat {s} does not exist: the table has seats 0-{}",
                        self.meta.seats - 1
                    ),
                ));
            }
            Some(s) if self.seats[s as usize].occupant != Occupant::Empty => {
                return Err(ServerError::SeatTaken(s));
            }
            Some(s) => s,
            None => self
                .seats
                .iter()
                .position(|s| s.occupant == Occupant::Empty)
                .map(|i| i as u8)
                .ok_or(ServerError::TableFull)?,
        };
        self.commit(LogEntry::Join {
            seat,
            bot,
            name,
            time_ms: now_ms(),
        })
        .await?;
        Ok((seat, self.status()))
    }

    pub(super) async fn leave(&mut self, bot: String) -> Result<TableStatus, ServerError> {
        let seat = self.seat_of(&bot).ok_or(ServerError::NotSeated)?;
        if self.meta.ladder.is_some() {
            // The result of a ladder match is its entrants'; a freed seat could be taken by
            // another bot (or left to a friend's auto-moves). The match is played out.
            return Err(ServerError::LadderTable(self.meta.id.clone()));
        }
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.state() == TableState::Finished {
            return Err(ServerError::TableFinished);
        }
        self.commit(LogEntry::Leave {
            seat,
            bot: bot.clone(),
            time_ms: now_ms(),
        })
        .await?;
        // A WatchBot stream follows the tables its bot sits at: SeatLeft is the last it hears
        // of this one, listed or private. A WatchTable stream of a listed table goes on in
        // spectator form; of a private table it ends (no longer seated: no longer allowed).
        let private = self.visibility == bete_store::Visibility::Private;
        let before = self.sinks.len();
        let meta = self.meta.clone();
        self.sinks.retain(|s| {
            if s.bot != bot {
                return true;
            }
            match s.tx {
                SinkTx::Bot(_) => false,
                SinkTx::Table(_) if private => {
                    s.end(&meta, Some(ServerError::TablePrivate));
                    false
                }
                SinkTx::Table(_) => true,
            }
        });
        self.update_watchers(before);
        Ok(self.status())
    }

    pub(super) async fn submit(
        &mut self,
        bot: &str,
        action: Action,
        expected_seq: u64,
        request_id: Option<String>,
    ) -> Result<Submitted, ServerError> {
        let seat = self.seat_of(bot).ok_or(ServerError::SpectatorCannotAct)?;
        if let Some(reason) = &self.closed {
            return Err(ServerError::TableClosed(reason.clone()));
        }
        if self.forfeited.iter().any(|b| b == bot) {
            return Err(ServerError::LadderRemoved(self.meta.id.clone()));
        }
        if let Some(id) = &request_id
            && let Some((done, seq)) = self.requests.get(&(bot.to_string(), id.clone()))
        {
            return if *done == action {
                Ok(Submitted {
                    seq: *seq,
                    replayed: true,
                })
            } else {
                Err(ServerError::DuplicateRequestConflict(id.clone()))
            };
        }
        let Some(game) = &self.game else {
            return Err(ServerError::IllegalAction(
                "the match has not started: seats are still free".into(),
            ));
        };
        if game.is_over() {
            return Err(ServerError::TableFinished);
        }
        if expected_seq != 0 && expected_seq != self.last_seq() {
            return Err(ServerError::StaleSeq {
                expected: expected_seq,
                last_seq: self.last_seq(),
            });
        }
        match game.to_act() {
            Some(s) if s.0 == seat => {}
            Some(s) => return Err(ServerError::NotYourSeat { to_act: s.0 }),
            None => return Err(ServerError::NobodyToAct),
        }
        self.commit(LogEntry::Action {
            seat,
            action: action.to_string(),
            auto: false,
            request_id,
            time_ms: now_ms(),
        })
        .await?;
        Ok(Submitted {
            seq: self.last_seq(),
            replayed: false,
        })
    }
}
