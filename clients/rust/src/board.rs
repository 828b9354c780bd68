//! A table as a watcher follows it: the last view from the server with every later event
//! applied, and the most recent events for the event list.
//!
//! The server's view is authoritative; applying events locally only keeps the picture current
//! between views (e.g. when replaying a finished match from event 1 in `bete demo`). What an
//! event does not say (whose turn it is, the legal actions) is cleared rather than guessed.

use std::collections::VecDeque;

use bete_api::pb;
use pb::event::Body;

/// How many recent events a board keeps for display.
pub const RECENT: usize = 8;

/// A table followed from a view plus events.
#[derive(Clone, Debug, Default)]
pub struct Board {
    /// The current picture of the table.
    pub view: pb::SeatView,
    /// The table with its seats (names, strikes), when known.
    pub table: Option<pb::Table>,
    /// The latest events, oldest first, at most [`RECENT`].
    pub recent: VecDeque<pb::Event>,
}

impl Board {
    /// A board starting from a server view.
    pub fn from_view(view: pb::SeatView, table: Option<pb::Table>) -> Self {
        Board {
            view,
            table,
            recent: VecDeque::new(),
        }
    }

    /// An empty board for a table whose events will be applied from the first one.
    pub fn empty(table: &pb::Table) -> Self {
        let view = pb::SeatView {
            table_id: table.table_id.clone(),
            ruleset: table.ruleset,
            seats: table.seat_count,
            dealer: table.first_dealer,
            phase: pb::Phase::AwaitingPlayers as i32,
            seat_states: (0..table.seat_count)
                .map(|seat| pb::SeatState {
                    seat,
                    exchanged: vec![0, 0],
                    ..Default::default()
                })
                .collect(),
            pools: Some(pb::Pools::default()),
            ..Default::default()
        };
        Board {
            view,
            table: Some(table.clone()),
            recent: VecDeque::new(),
        }
    }

    /// Replaces the picture with a fresh server view (events already seen stay in `recent`).
    pub fn set_view(&mut self, view: pb::SeatView) {
        self.view = view;
    }

    /// Applies one event; events at or below the view's seq are only listed, not applied twice.
    pub fn apply(&mut self, event: &pb::Event) {
        if event.seq > self.view.seq {
            self.view.seq = event.seq;
            apply_event(&mut self.view, event);
        }
        self.recent.push_back(event.clone());
        while self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }
}

fn pack_size(ruleset: pb::Ruleset, seats: u32) -> u32 {
    use pb::Ruleset as R;
    match ruleset {
        R::Bete | R::BeteAceHigh => match seats {
            3 | 4 => 28,
            6 | 7 => 36,
            _ => 32,
        },
        R::Beast | R::Lanterlui => 52,
        R::BesteBoer | R::BesterBube => 32,
        // MO2's default `pack_rule = "academie"` (the view does not carry the config).
        R::Mouche | R::Mistigri => match seats {
            3 => 28,
            4 => 36,
            5 => 48,
            _ => 52,
        },
        R::Loo => 52,
        // RA4: no talon; the cards left over take no part.
        R::Rams => 5 * seats + 1,
        R::Unspecified => 0,
    }
}

fn remove_cards(hand: &mut Vec<String>, cards: &[String]) {
    hand.retain(|c| !cards.iter().any(|x| x.eq_ignore_ascii_case(c)));
}

fn seat_mut(view: &mut pb::SeatView, seat: u32) -> Option<&mut pb::SeatState> {
    view.seat_states.get_mut(seat as usize)
}

/// Applies what `event` says to `view`. Whose turn it is and the legal actions are not in
/// events, so they are cleared; the next server view restores them.
pub fn apply_event(view: &mut pb::SeatView, event: &pb::Event) {
    view.to_act = None;
    view.legal_actions.clear();
    view.deadline = None;
    let own = view.viewer_seat;
    let Some(body) = &event.body else { return };
    match body {
        Body::MatchStarted(m) => {
            view.ruleset = m.ruleset;
            view.seats = m.seats;
            view.dealer = m.first_dealer;
            if view.seat_states.len() != m.seats as usize {
                view.seat_states = (0..m.seats)
                    .map(|seat| pb::SeatState {
                        seat,
                        exchanged: vec![0, 0],
                        ..Default::default()
                    })
                    .collect();
            }
        }
        Body::DealStarted(d) => {
            view.deal = d.deal;
            view.dealer = d.dealer;
            view.turn_up = d.turn_up.clone();
            view.trump = d.trump;
            view.muss = d.muss;
            view.pools = d.pools.clone();
            view.set_aside_turn_ups.clear();
            view.turn_up_taken = false;
            view.tricks.clear();
            view.trick_index = 0;
            let ruleset = pb::Ruleset::try_from(view.ruleset).unwrap_or(pb::Ruleset::Unspecified);
            view.talon_len = pack_size(ruleset, view.seats).saturating_sub(5 * view.seats + 1);
            use pb::Ruleset as R;
            let (phase, round) = match ruleset {
                R::Bete | R::BeteAceHigh => (pb::Phase::Bidding, 0),
                R::Beast => (pb::Phase::Trick, 0),
                // RA5: the dealer robs the turn-up first.
                R::Rams => (pb::Phase::DealerDiscard, 0),
                _ => (pb::Phase::Exchange, 1),
            };
            view.phase = phase as i32;
            view.exchange_round = round;
            for (i, state) in view.seat_states.iter_mut().enumerate() {
                state.hand_len = 5;
                state.tricks = 0;
                state.declarer = false;
                state.contrer = false;
                state.dropped = false;
                state.exchanged = vec![0, 0];
                state.last_spoke = None;
                state.balance -= d.paid.get(i).copied().unwrap_or(0);
            }
            if !d.hand.is_empty() {
                view.hand = d.hand.clone();
            }
        }
        Body::Spoke(s) => {
            if let Some(state) = seat_mut(view, s.seat) {
                state.last_spoke = s.action.clone();
                match s
                    .action
                    .as_ref()
                    .and_then(|a| pb::ActionKind::try_from(a.kind).ok())
                {
                    Some(pb::ActionKind::Play) => state.declarer = true,
                    Some(pb::ActionKind::Contre) => state.contrer = true,
                    Some(pb::ActionKind::Drop) => state.dropped = true,
                    _ => {}
                }
            }
        }
        Body::Curieuse(c) => {
            view.set_aside_turn_ups.push(c.set_aside.clone());
            view.turn_up = c.turn_up.clone();
            view.trump = c.trump;
            let added: i64 = c.paid.iter().sum();
            if let Some(pools) = view.pools.as_mut() {
                pools.pot += added;
            }
            for (i, state) in view.seat_states.iter_mut().enumerate() {
                state.balance -= c.paid.get(i).copied().unwrap_or(0);
                state.last_spoke = None;
            }
        }
        Body::Exchanged(e) => {
            view.talon_len = view.talon_len.saturating_sub(e.count);
            if let Some(state) = seat_mut(view, e.seat) {
                let round = usize::from(state.exchanged.first().is_some_and(|&n| n > 0));
                if let Some(slot) = state.exchanged.get_mut(round) {
                    *slot = e.count;
                }
                state.last_spoke = Some(pb::Action {
                    kind: pb::ActionKind::Exchange as i32,
                    cards: e.set_aside.clone(),
                    text: format!("exchange {}", e.count),
                });
            }
            if own == Some(e.seat) && !e.set_aside.is_empty() {
                remove_cards(&mut view.hand, &e.set_aside);
                view.hand.extend(e.drawn.iter().cloned());
            }
        }
        Body::TookTurnUp(t) => {
            view.turn_up_taken = true;
            view.turn_up.clear();
            if own == Some(t.seat) && !t.discarded.is_empty() {
                view.hand.push(t.turn_up.clone());
                remove_cards(&mut view.hand, std::slice::from_ref(&t.discarded));
            }
        }
        Body::FlushShown(f) => {
            if let Some(state) = seat_mut(view, f.seat) {
                state.last_spoke = Some(pb::Action {
                    kind: pb::ActionKind::Unspecified as i32,
                    cards: f.cards.clone(),
                    text: format!("flush {}", f.cards.join(" ")),
                });
            }
        }
        Body::CardPlayed(c) => play(view, c.seat, &c.card, false),
        Body::HiddenLead(h) => play(view, h.seat, &h.card, true),
        Body::TrickWon(w) => {
            if let Some(trick) = view.tricks.last_mut() {
                trick.winner = Some(w.winner);
            }
            if let Some(state) = seat_mut(view, w.winner) {
                state.tricks += 1;
            }
            view.trick_index = (w.trick + 1).min(4);
        }
        Body::DealSettled(s) => {
            for (i, state) in view.seat_states.iter_mut().enumerate() {
                if let Some(&t) = s.tricks.get(i) {
                    state.tricks = t;
                }
                if let Some(&b) = s.balances.get(i) {
                    state.balance = b;
                }
            }
            view.pools = s.pools.clone();
            // Face-down leads are now public, in the order they were led.
            let mut revealed = s.hidden_revealed.iter();
            for play in view.tricks.iter_mut().flat_map(|t| t.plays.iter_mut()) {
                if play.face_down
                    && play.card.is_empty()
                    && let Some(card) = revealed.next()
                {
                    play.card = card.clone();
                }
            }
        }
        Body::MatchEnded(m) => {
            for (i, state) in view.seat_states.iter_mut().enumerate() {
                if let Some(&b) = m.balances.get(i) {
                    state.balance = b;
                }
            }
            // Everything left on the table went back to the seats (0.4 item 17).
            view.pools = Some(pb::Pools::default());
            view.phase = pb::Phase::MatchOver as i32;
            view.match_over = true;
        }
        Body::SeatTaken(_) | Body::SeatLeft(_) | Body::StrikeCounted(_) => {}
    }
}

fn play(view: &mut pb::SeatView, seat: u32, card: &str, face_down: bool) {
    view.phase = pb::Phase::Trick as i32;
    view.exchange_round = 0;
    let new_trick = view.tricks.last().is_none_or(|t| t.winner.is_some());
    if new_trick {
        view.tricks.push(pb::Trick {
            leader: seat,
            plays: vec![],
            winner: None,
        });
    }
    view.trick_index = (view.tricks.len() as u32).saturating_sub(1).min(4);
    if let Some(trick) = view.tricks.last_mut() {
        trick.plays.push(pb::TrickPlay {
            seat,
            card: card.to_string(),
            face_down,
        });
    }
    if let Some(state) = seat_mut(view, seat) {
        state.hand_len = state.hand_len.saturating_sub(1);
    }
    if view.viewer_seat == Some(seat) && !card.is_empty() {
        remove_cards(&mut view.hand, &[card.to_string()]);
    }
}
