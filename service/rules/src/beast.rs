//! Beast (section 3, BS1–BS8, A31): three heaps (King, Play, Triolet), no bidding, the full
//! 52-card pack in Écarté order, follow / trump / overtrump without heading (0.4 item 5).

use crate::action::Action;
use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::config::Config;
use crate::deal::deal_hands;
use crate::event::{
    Amounts, DealResult, DealStart, Event, PrivateEvent, Privates, PublicEvent, Reveal, SeatSet,
    Settlement,
};
use crate::family::{Ctx, Family};
use crate::game::ActionError;
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::sink::Sink;
use crate::summary::{SummaryHead, SummaryLog};
use crate::trick::{ECARTE_RANKING, Trick};
use crate::view::{Phase, PlayedCard, Pools, TrickView, View, Viewer};

const PACK: usize = 52;
/// Heap indices, as in `Pools::heaps`.
const KING: usize = 0;
const PLAY: usize = 1;
const TRIOLET: usize = 2;
const HEAP_NAMES: [&str; 3] = ["king", "play", "triolet"];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stage {
    Idle,
    Tricks,
    Settled,
}

/// A Beast table: the three heaps and the deal in progress.
#[derive(Clone, Debug)]
pub struct BeastTable {
    seats: u8,
    /// King, Play, Triolet (BS3).
    heaps: [i64; 3],
    /// Heaps won at the last settlement, refilled at the next deal's antes (BS3).
    empty: [bool; 3],
    stage: Stage,
    match_over: bool,
    deal_no: u32,
    dealer: Seat,
    deck: [Card; PACK],
    turn_up: Card,
    trump: Suit,
    talon_len: u8,
    dealt: [CardSet; MAX_SEATS],
    hands: [CardSet; MAX_SEATS],
    turn: Seat,
    trick_no: u8,
    trick: Trick,
    done: [Trick; 5],
    tricks: [u8; MAX_SEATS],
    /// Who took each heap at the last settlement.
    winners: [Option<Seat>; 3],
    won_amounts: [i64; 3],
    net: Amounts,
}

impl BeastTable {
    fn eldest(&self) -> Seat {
        self.dealer.next(self.seats)
    }

    /// BS8: the holder of the best triplet (three or four of a rank), by Écarté rank.
    fn triolet(&self) -> Option<Seat> {
        let mut best: Option<(u32, Seat)> = None;
        for s in 0..self.seats {
            let hand = self.dealt[s as usize];
            for r in Rank::ALL {
                let count = Suit::ALL
                    .iter()
                    .filter(|&&su| hand.contains(Card::new(r, su)))
                    .count();
                if count >= 3 {
                    let strength = ECARTE_RANKING.strength(r);
                    if best.is_none_or(|(b, _)| strength > b) {
                        best = Some((strength, Seat(s)));
                    }
                }
            }
        }
        best.map(|(_, s)| s)
    }

    fn settle(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        let before = *ctx.balances;
        let n = self.seats as usize;
        // BS6: the Play heap to the single seat with the most tricks; a tie carries.
        let most = *self.tricks[..n].iter().max().unwrap_or(&0);
        let mut leaders = (0..self.seats).filter(|&s| self.tricks[s as usize] == most);
        let play = match (leaders.next(), leaders.next()) {
            (Some(s), None) => Some(Seat(s)),
            _ => None,
        };
        // BS7: the dealt King of trumps; the turn-up is held by nobody.
        let king_card = Card::new(Rank::King, self.trump);
        let king = (0..self.seats)
            .map(Seat)
            .find(|s| self.dealt[s.index()].contains(king_card));
        let triolet = self.triolet();
        self.winners = [None; 3];
        self.won_amounts = [0; 3];
        for (heap, winner) in [(KING, king), (PLAY, play), (TRIOLET, triolet)] {
            if let Some(w) = winner {
                ctx.balances[w.index()] += self.heaps[heap];
                self.won_amounts[heap] = self.heaps[heap];
                self.heaps[heap] = 0;
                self.empty[heap] = true;
                self.winners[heap] = Some(w);
            }
        }
        self.stage = Stage::Settled;
        let mut net = [0; MAX_SEATS];
        for i in 0..n {
            net[i] = ctx.balances[i] - before[i];
        }
        self.net = net;
        out.emit(|| Event {
            public: PublicEvent::DealSettled(Box::new(Settlement {
                deal: self.deal_no,
                result: DealResult::Heaps {
                    king,
                    play,
                    triolet,
                },
                tricks: self.tricks,
                net,
                betes: [0; MAX_SEATS],
                hidden_revealed: CardSet::EMPTY,
                pools: self.pools(),
                balances: *ctx.balances,
            })),
            private: Privates::None,
            reveal: Some(Box::new(Reveal {
                deal: self.deal_no,
                hands: self.dealt,
                deck: self.deck.to_vec(),
            })),
        });
        // 0.4 item 17: the end test always holds for Beast, so the match ends at deal R.
        if ctx.is_last_settlement(true) {
            let mut returned = [0; MAX_SEATS];
            for heap in &mut self.heaps {
                // A heap always holds a multiple of the seat count.
                let each = *heap / self.seats as i64;
                for r in returned.iter_mut().take(n) {
                    *r += each;
                }
                *heap = 0;
            }
            for (b, r) in ctx.balances.iter_mut().zip(returned).take(n) {
                *b += r;
            }
            self.match_over = true;
            out.emit(|| {
                Event::public(PublicEvent::MatchEnded {
                    returned: Box::new(returned),
                    balances: Box::new(*ctx.balances),
                })
            });
        }
    }
}

impl Family for BeastTable {
    fn new(_ruleset: RulesetId, _config: &Config, seats: u8) -> Self {
        let dummy = Card::new(Rank::Two, Suit::Spades);
        BeastTable {
            seats,
            heaps: [0; 3],
            // BS3: every heap is staked to open the session.
            empty: [true; 3],
            stage: Stage::Idle,
            match_over: false,
            deal_no: 0,
            dealer: Seat(0),
            deck: [dummy; PACK],
            turn_up: dummy,
            trump: Suit::Spades,
            talon_len: 0,
            dealt: [CardSet::EMPTY; MAX_SEATS],
            hands: [CardSet::EMPTY; MAX_SEATS],
            turn: Seat(0),
            trick_no: 0,
            trick: Trick::new(Seat(0)),
            done: [Trick::new(Seat(0)); 5],
            tricks: [0; MAX_SEATS],
            winners: [None; 3],
            won_amounts: [0; 3],
            net: [0; MAX_SEATS],
        }
    }

    fn take_antes(&mut self, ctx: &mut Ctx) -> Amounts {
        let mut paid = [0; MAX_SEATS];
        self.deal_no = ctx.deal;
        self.dealer = ctx.dealer;
        for heap in 0..3 {
            if self.empty[heap] {
                self.empty[heap] = false;
                self.heaps[heap] += self.seats as i64;
                for p in paid.iter_mut().take(self.seats as usize) {
                    *p += 1;
                }
            }
        }
        for (b, p) in ctx.balances.iter_mut().zip(paid).take(self.seats as usize) {
            *b -= p;
        }
        paid
    }

    fn deal(&mut self, ctx: &mut Ctx, deck: &[Card], paid: Amounts, out: &mut impl Sink) {
        let d = deal_hands(deck, self.seats, ctx.dealer, ctx.config.deal_pattern);
        self.deck.copy_from_slice(&deck[..PACK]);
        self.turn_up = d.turn_up;
        self.trump = d.turn_up.suit();
        self.talon_len = (deck.len() - d.talon_start) as u8;
        self.dealt = d.hands;
        self.hands = d.hands;
        self.tricks = [0; MAX_SEATS];
        self.trick_no = 0;
        self.stage = Stage::Tricks;
        // BS5: eldest leads.
        self.trick = Trick::new(self.eldest());
        self.turn = self.eldest();
        out.emit(|| Event {
            public: PublicEvent::DealStarted(Box::new(DealStart {
                deal: ctx.deal,
                dealer: ctx.dealer,
                paid,
                turn_up: self.turn_up,
                trump: self.trump,
                muss: false,
                pools: self.pools(),
            })),
            private: (0..self.seats)
                .map(|s| (Seat(s), PrivateEvent::Hand(self.hands[s as usize])))
                .collect(),
            reveal: None,
        });
    }

    fn to_act(&self) -> Option<Seat> {
        (self.stage == Stage::Tricks && !self.match_over).then_some(self.turn)
    }

    fn phase(&self) -> Phase {
        Phase::Trick {
            trick: self.trick_no,
        }
    }

    fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        if self.to_act() != Some(seat) {
            return;
        }
        let legal = self
            .trick
            .legal(self.hands[seat.index()], self.trump, &ECARTE_RANKING, false);
        out.extend(legal.iter().map(Action::Card));
    }

    fn apply(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        match self.to_act() {
            Some(s) if s == seat => {}
            Some(s) => return Err(ActionError::NotYourTurn { to_act: s }),
            None => return Err(ActionError::NoDeal),
        }
        let Action::Card(card) = action else {
            return Err(ActionError::WrongRuleset {
                action: action.verb(),
                ruleset: ctx.ruleset,
            });
        };
        let hand = self.hands[seat.index()];
        if !hand.contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        // Beast has no lenient mode: illegal cards are always refused (BS5).
        if !self
            .trick
            .legal(hand, self.trump, &ECARTE_RANKING, false)
            .contains(card)
        {
            return Err(self.trick.why_illegal(hand, card, self.trump));
        }
        self.hands[seat.index()].remove(card);
        self.trick.play(seat, card, self.trump, &ECARTE_RANKING);
        out.emit(|| Event::public(PublicEvent::CardPlayed { seat, card }));
        if self.trick.len < self.seats {
            self.turn = seat.next(self.seats);
            return Ok(());
        }
        let winner = self.trick.winner;
        out.emit(|| {
            Event::public(PublicEvent::TrickWon {
                trick: self.trick_no,
                winner,
            })
        });
        self.tricks[winner.index()] += 1;
        self.done[self.trick_no as usize] = self.trick;
        self.trick_no += 1;
        if self.trick_no == 5 {
            self.settle(ctx, out);
        } else {
            self.trick = Trick::new(winner);
            self.turn = winner;
        }
        Ok(())
    }

    fn deal_settled(&self) -> bool {
        self.stage == Stage::Settled
    }

    fn match_over(&self) -> bool {
        self.match_over
    }

    fn pools(&self) -> Pools {
        Pools {
            heaps: self.heaps,
            ..Pools::default()
        }
    }

    fn hand(&self, seat: Seat) -> CardSet {
        self.hands.get(seat.index()).copied().unwrap_or_default()
    }

    fn set_hand(&mut self, seat: Seat, hand: CardSet) -> CardSet {
        match self.hands.get_mut(seat.index()) {
            Some(h) => std::mem::replace(h, hand),
            None => hand,
        }
    }

    fn restore_carried(&mut self, view: &View) {
        self.heaps = view.pools.heaps;
        self.empty = [false; 3];
    }

    fn fill_view(&self, viewer: Viewer, view: &mut View) {
        if self.stage == Stage::Idle {
            return;
        }
        if let Viewer::Seat(s) = viewer {
            view.hand = Some(self.hands[s.index()]);
        }
        view.turn_up = Some(self.turn_up);
        view.trump = Some(self.trump);
        view.talon_len = self.talon_len;
        for (i, st) in view.seat_states.iter_mut().enumerate() {
            st.hand_len = self.hands[i].len() as u8;
            st.tricks = self.tricks[i];
        }
        let trick_view = |t: &Trick, complete: bool| TrickView {
            leader: t.leader,
            cards: (0..t.len)
                .map(|k| {
                    (
                        t.leader.offset(k, self.seats),
                        PlayedCard::FaceUp(t.cards[k as usize]),
                    )
                })
                .collect(),
            winner: complete.then_some(t.winner),
        };
        view.tricks = self.done[..self.trick_no as usize]
            .iter()
            .map(|t| trick_view(t, true))
            .collect();
        if self.stage == Stage::Tricks {
            view.tricks.push(trick_view(&self.trick, false));
            // `winner` follows every card played (trick.rs).
            if self.trick.len > 0 {
                view.trick_holder = Some(self.trick.winner);
            }
        }
    }

    fn record_summary(&self, log: &mut SummaryLog) {
        log.push(
            SummaryHead {
                deal: self.deal_no,
                dealer: self.dealer,
                declarer: None,
                contrer: None,
                stayers: SeatSet((1u16 << self.seats) - 1),
                seats: self.seats,
                tricks: self.tricks,
                outcome: "heaps",
                net: self.net,
            },
            (0..3).filter_map(|h| self.winners[h].map(|w| (HEAP_NAMES[h], w, self.won_amounts[h]))),
            std::iter::empty(),
        );
    }
}
