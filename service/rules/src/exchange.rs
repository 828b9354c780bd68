//! Beste Boer, Lanterlui and Bester Bube (RULES.md sections 4–6 with 0.4 items 6–19): exchange
//! rounds, the two bowers, the Muss, Lanterlui flushes, five tricks paid from the pot, bêtes.
//!
//! Submodules: `ranking` (bowers, trick strength, flushes), `tricks` (duties of play),
//! `settle` (pay-outs, bêtes, the end of the match). This file holds the state and the
//! buying rounds.

mod ranking;
mod settle;
mod tricks;

use crate::action::Action;
use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::config::{BeteGrowth, BetePayoff, Config, DealPattern, Legality, PerTrick};
use crate::deal::deal_hands;
use crate::event::{Amounts, DealStart, Event, PrivateEvent, Privates, PublicEvent};
use crate::family::{Ctx, Family};
use crate::game::ActionError;
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::sink::Sink;
use crate::summary::{SummaryHead, SummaryLog};
use crate::view::{Phase, PlayedCard, Pools, TrickView, View, Viewer};

use ranking::Trumps;

/// The dealer's stake (BO3, BB4) and the dropped seat's flush payment (LL9).
const FIVE: i64 = 5;

/// Where the deal stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// Buying round 1 or 2 (0.4 item 6); `turn` is to act.
    Round(u8),
    /// Lanterlui: dropped seats answer `challenge` or `decline` (0.4 item 9).
    Challenge,
    /// The dealer takes up the turn-up and discards.
    Discard,
    /// Tricks.
    Trick,
    /// Settled; the match starts the next deal or is over.
    Settled,
}

/// One card in a trick.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Play {
    seat: Seat,
    card: Card,
    hidden: bool,
}

const NO_PLAY: Play = Play {
    seat: Seat(0),
    card: Card::new(Rank::Two, Suit::Spades),
    hidden: false,
};

/// The most card plays of a deal: five tricks of up to seven cards (bounds the revoke list).
const MAX_PLAYS: usize = 5 * MAX_SEATS;

/// The exchange family's table: the pot and everything it carries, and the deal in progress.
#[derive(Clone, Debug)]
pub struct ExchangeTable {
    ruleset: RulesetId,
    config: Config,
    seats: u8,

    // Carried between deals.
    /// The pot (0.4 item 14).
    pot: i64,
    /// Bester Bube `successive_fifo`: queued bêtes with their payers (returned at the end).
    queue: Vec<(Seat, i64)>,
    /// k − 1 of 0.4 item 10: consecutive deals, before the current one, with a bête.
    streak: u32,
    /// `plus5_per_bete`: the last bête charged in the current streak (0 after a bête-free deal).
    last_charged: i64,
    /// Somebody paid a bête in the previous deal (the Muss test under `per_trick = "one"`).
    prev_bete: bool,
    /// The previous deal was a Muss (LL6).
    prev_muss: bool,
    match_over: bool,

    // The deal in progress.
    deal: u32,
    dealer: Seat,
    muss: bool,
    /// The pot after the dealer's 5 and any queued bête: pay-out base and "the pot" bête.
    start_pot: i64,
    paid: Amounts,
    /// This deal's deck order; the talon is `deck[talon_next..]`.
    deck: Vec<Card>,
    talon_next: usize,
    dealt: [CardSet; MAX_SEATS],
    hands: [CardSet; MAX_SEATS],
    trumps: Trumps,
    turn_up: Card,
    turn_up_taken: bool,
    discarded: Option<Card>,
    stage: Stage,
    turn: Seat,
    /// Seats still in the deal (bit = seat).
    inn: u8,
    /// Seats that acted in round 1.
    spoke1: u8,
    /// Seats that stood or exchanged in round 1 (stayed in, for the flush payment of item 8).
    stayed1: u8,
    /// Lanterlui: seats holding a dealt flush (outside a Muss: they may only stand or drop).
    flush_holders: u8,
    exchanged: [[u8; 2]; MAX_SEATS],
    last_spoke: [Option<Action>; MAX_SEATS],
    /// The trick being played (0-based) and every trick's plays.
    trick: u8,
    plays: [[Play; MAX_SEATS]; 5],
    lens: [u8; 5],
    winners: [Option<Seat>; 5],
    tricks_won: [u8; MAX_SEATS],
    /// Cards led face down this deal (public at settlement).
    hidden: CardSet,
    /// Lenient mode: the revokers, in the order the revokes happened (0.4 item 19).
    revokes: [Seat; MAX_PLAYS],
    revoke_len: u8,
    /// The last settlement, for `record_summary`: its head, the pots won and the bêtes charged
    /// (reused buffers, so a settlement does not allocate once they are warm).
    summary: Option<SummaryHead>,
    won: Vec<(Seat, i64)>,
    payments: Vec<(Seat, i64)>,
}

impl ExchangeTable {
    fn bit(s: Seat) -> u8 {
        1 << s.0
    }

    /// Every seat of the table as a mask (at most 7 seats, so it fits a u8).
    fn all_seats(&self) -> u8 {
        ((1u16 << self.seats) - 1) as u8
    }

    fn is_in(&self, s: Seat) -> bool {
        self.inn & Self::bit(s) != 0
    }

    fn lanterlui(&self) -> bool {
        self.ruleset == RulesetId::Lanterlui
    }

    fn lenient(&self) -> bool {
        self.config.enforce_legality == Legality::Lenient
    }

    /// Position in play order from Vorhand (0) to the dealer (n − 1).
    fn pos(&self, s: Seat) -> u8 {
        (s.0 + self.seats - self.dealer.0 - 1) % self.seats
    }

    /// The first seat in `mask` after position `after` (None = from Vorhand), up to the dealer.
    fn next_in(&self, mask: u8, after: Option<u8>) -> Option<Seat> {
        let start = after.map_or(0, |p| p + 1);
        (start..self.seats)
            .map(|p| self.dealer.offset(p + 1, self.seats))
            .find(|s| mask & Self::bit(*s) != 0)
    }

    fn talon_left(&self) -> usize {
        self.deck.len() - self.talon_next
    }

    fn stage_name(&self) -> &'static str {
        match self.stage {
            Stage::Round(1) => "buying round 1",
            Stage::Round(_) => "buying round 2",
            Stage::Challenge => "challenge or decline",
            Stage::Discard => "the dealer's discard",
            Stage::Trick => "trick play",
            Stage::Settled => "deal settled",
        }
    }

    fn wrong_phase(&self, a: &Action) -> ActionError {
        ActionError::WrongPhase {
            action: a.verb(),
            phase: self.stage_name(),
        }
    }

    /// The deal's bête level growth key; Bester Bube always pays the pot (BB14).
    fn growth(&self) -> BeteGrowth {
        match self.ruleset {
            RulesetId::BesterBube => BeteGrowth::Pot,
            _ => self.config.bete_growth,
        }
    }

    fn fifo(&self) -> bool {
        self.ruleset == RulesetId::BesterBube
            && self.config.bete_payoff == BetePayoff::SuccessiveFifo
    }

    /// Why this seat may not `drop` now, if it may not (round 1 only; 0.4 items 6, 13; LL6).
    fn drop_forbidden(&self, seat: Seat) -> Option<&'static str> {
        if self.stage != Stage::Round(1) {
            return Some("only in round 1");
        }
        if self.muss {
            return Some("this deal is a Muss");
        }
        if self.lanterlui() && self.config.forced_after_muss && self.prev_muss {
            let n = self.seats;
            let before = self.dealer.offset(n - 1, n); // seat dealer − 1
            let others = !(Self::bit(before) | Self::bit(self.dealer));
            // every earlier seat dropped: seat dealer − 1 must play, and then the dealer too
            if (seat == before || seat == self.dealer) && self.inn & others == 0 {
                return Some(
                    "forced_after_muss: the seat before the dealer must play after a Muss",
                );
            }
        }
        None
    }

    /// A Lanterlui dealt flush outside a Muss may only `stand` or `drop` in round 1 (item 8).
    fn exchange_forbidden(&self, seat: Seat) -> bool {
        self.stage == Stage::Round(1) && self.flush_holders & Self::bit(seat) != 0
    }

    fn round_actions(&self, seat: Seat, out: &mut Vec<Action>) {
        out.push(Action::Stand);
        if self.drop_forbidden(seat).is_none() {
            out.push(Action::Drop);
        }
        if self.exchange_forbidden(seat) {
            return;
        }
        let max = self.talon_left().min(5) as u32;
        let hand = self.hands[seat.index()].bits();
        // every non-empty subset of the hand of at most `max` cards
        let mut sub = hand;
        while sub != 0 {
            if sub.count_ones() <= max {
                out.push(Action::Exchange(CardSet(sub)));
            }
            sub = (sub - 1) & hand;
        }
    }

    fn apply_round(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        let Stage::Round(round) = self.stage else {
            return Err(self.wrong_phase(&action));
        };
        match action {
            Action::Stand => {
                out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
            }
            Action::Drop => {
                if let Some(why) = self.drop_forbidden(seat) {
                    return Err(ActionError::CannotDrop(why.to_string()));
                }
                self.inn &= !Self::bit(seat);
                out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
            }
            Action::Exchange(set) => {
                let hand = self.hands[seat.index()];
                if set.is_empty() || set.len() > 5 {
                    return Err(ActionError::Other(
                        "exchange lists one to five cards".to_string(),
                    ));
                }
                if let Some(c) = set.minus(hand).first() {
                    return Err(ActionError::NotInHand(c));
                }
                if self.exchange_forbidden(seat) {
                    return Err(ActionError::Other(
                        "a dealt Lanterlui may only stand or drop in round 1".to_string(),
                    ));
                }
                let k = set.len() as usize;
                if k > self.talon_left() {
                    return Err(ActionError::TalonTooShort {
                        asked: k as u32,
                        left: self.talon_left() as u32,
                    });
                }
                let drawn: CardSet = self.deck[self.talon_next..self.talon_next + k]
                    .iter()
                    .copied()
                    .collect();
                self.talon_next += k;
                self.hands[seat.index()] = hand.minus(set).union(drawn);
                self.exchanged[seat.index()][(round - 1) as usize] = k as u8;
                out.emit(|| Event {
                    public: PublicEvent::Exchanged {
                        seat,
                        count: k as u8,
                    },
                    private: Privates::One((
                        seat,
                        PrivateEvent::Exchange {
                            set_aside: set,
                            drawn,
                        },
                    )),
                    reveal: None,
                });
            }
            _ => return Err(self.wrong_phase(&action)),
        }
        self.last_spoke[seat.index()] = Some(action);
        if round == 1 {
            self.spoke1 |= Self::bit(seat);
            if action != Action::Drop {
                self.stayed1 |= Self::bit(seat);
            }
            // 0.4 item 9: Lanterlui round 1 ends when the last non-dealer drops
            let all_but_dealer_out = self.inn & !Self::bit(self.dealer) == 0;
            if self.lanterlui() && seat != self.dealer && all_but_dealer_out {
                self.end_round1(ctx, true, out);
                return Ok(());
            }
        }
        match self.next_in(self.inn, Some(self.pos(seat))) {
            Some(next) => self.turn = next,
            None if round == 1 => self.end_round1(ctx, false, out),
            None => self.end_round2(ctx, out),
        }
        Ok(())
    }

    /// 0.4 item 11, in its order.
    fn end_round1(&mut self, ctx: &mut Ctx, early: bool, out: &mut impl Sink) {
        if self.lanterlui() && self.flush_holders != 0 {
            self.settle_dealt_flush(ctx, out);
        } else if self.lanterlui() && early {
            self.stage = Stage::Challenge;
            // every non-dealer dropped; they answer from Vorhand on
            self.turn = self.dealer.next(self.seats);
        } else if self.inn.count_ones() == 1 {
            let s = self.next_in(self.inn, None).unwrap_or(self.dealer);
            self.settle(ctx, settle::End::LoneStayer(s), out);
        } else if self.inn == 0 {
            self.settle(ctx, settle::End::Carried, out);
        } else {
            self.start_round2();
        }
    }

    fn start_round2(&mut self) {
        self.stage = Stage::Round(2);
        self.turn = self.next_in(self.inn, None).unwrap_or(self.dealer);
    }

    fn end_round2(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        if self.is_in(self.dealer) {
            self.stage = Stage::Discard;
            self.turn = self.dealer;
        } else {
            self.before_tricks(ctx, out);
        }
    }

    /// After the exchanges: Lanterlui's exchanged flush (item 8), else trick 1.
    fn before_tricks(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        if self.lanterlui()
            && let Some((seat, cards)) = self.best_flush_among(self.inn, &self.hands)
        {
            out.emit(|| Event::public(PublicEvent::FlushShown { seat, cards }));
            self.settle(ctx, settle::End::Flush { seat, dealt: false }, out);
            return;
        }
        self.stage = Stage::Trick;
        self.trick = 0;
        self.turn = self.next_in(self.inn, None).unwrap_or(self.dealer);
    }

    /// The best flush among `seats`; a full tie goes to the seat earlier from Vorhand.
    fn best_flush_among(&self, seats: u8, hands: &[CardSet; MAX_SEATS]) -> Option<(Seat, CardSet)> {
        let mut best: Option<(u64, Seat, CardSet)> = None;
        for p in 0..self.seats {
            let s = self.dealer.offset(p + 1, self.seats);
            if seats & Self::bit(s) == 0 {
                continue;
            }
            if let Some((key, cards)) = self
                .trumps
                .best_flush(hands[s.index()], self.config.four_card_flush)
                && best.is_none_or(|(k, _, _)| key > k)
            {
                best = Some((key, s, cards));
            }
        }
        best.map(|(_, s, c)| (s, c))
    }

    fn settle_dealt_flush(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        if let Some((seat, cards)) = self.best_flush_among(self.all_seats(), &self.dealt) {
            out.emit(|| Event::public(PublicEvent::FlushShown { seat, cards }));
            self.settle(ctx, settle::End::Flush { seat, dealt: true }, out);
        }
    }

    fn apply_challenge(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if !self.lanterlui() {
            return Err(ActionError::WrongRuleset {
                action: action.verb(),
                ruleset: self.ruleset,
            });
        }
        if self.stage != Stage::Challenge {
            return Err(self.wrong_phase(&action));
        }
        self.last_spoke[seat.index()] = Some(action);
        out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
        if action == Action::Challenge {
            // he takes up his dealt hand again and plays against the dealer
            self.inn |= Self::bit(seat);
            self.start_round2();
            return Ok(());
        }
        let dropped = !self.inn & !Self::bit(self.dealer) & self.all_seats();
        match self.next_in(dropped, Some(self.pos(seat))) {
            Some(next) => self.turn = next,
            None => self.settle(ctx, settle::End::DealerTakesPot, out),
        }
        Ok(())
    }

    fn apply_discard(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        card: Card,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if self.stage != Stage::Discard {
            return Err(self.wrong_phase(&Action::Discard(card)));
        }
        let mut hand = self.hands[seat.index()];
        hand.insert(self.turn_up);
        if !hand.contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        hand.remove(card);
        self.hands[seat.index()] = hand;
        self.turn_up_taken = true;
        self.discarded = Some(card);
        self.last_spoke[seat.index()] = Some(Action::Discard(card));
        out.emit(|| Event {
            public: PublicEvent::TookTurnUp {
                seat,
                turn_up: self.turn_up,
            },
            private: Privates::One((seat, PrivateEvent::Discarded(card))),
            reveal: None,
        });
        self.before_tricks(ctx, out);
        Ok(())
    }
}

impl Family for ExchangeTable {
    fn new(ruleset: RulesetId, config: &Config, seats: u8) -> Self {
        let turn_up = NO_PLAY.card;
        ExchangeTable {
            ruleset,
            config: config.clone(),
            seats,
            pot: 0,
            queue: Vec::new(),
            streak: 0,
            last_charged: 0,
            prev_bete: false,
            prev_muss: false,
            match_over: false,
            deal: 0,
            dealer: Seat(0),
            muss: false,
            start_pot: 0,
            paid: [0; MAX_SEATS],
            deck: Vec::new(),
            talon_next: 0,
            dealt: [CardSet::EMPTY; MAX_SEATS],
            hands: [CardSet::EMPTY; MAX_SEATS],
            trumps: Trumps::new(turn_up.suit()),
            turn_up,
            turn_up_taken: false,
            discarded: None,
            stage: Stage::Settled,
            turn: Seat(0),
            inn: 0,
            spoke1: 0,
            stayed1: 0,
            flush_holders: 0,
            exchanged: [[0; 2]; MAX_SEATS],
            last_spoke: [None; MAX_SEATS],
            trick: 0,
            plays: [[NO_PLAY; MAX_SEATS]; 5],
            lens: [0; 5],
            winners: [None; 5],
            tricks_won: [0; MAX_SEATS],
            hidden: CardSet::EMPTY,
            revokes: [Seat(0); MAX_PLAYS],
            revoke_len: 0,
            summary: None,
            won: Vec::new(),
            payments: Vec::new(),
        }
    }

    fn take_antes(&mut self, ctx: &mut Ctx) -> Amounts {
        let mut paid = [0; MAX_SEATS];
        let pot_was_empty = self.pot == 0;
        ctx.balances[ctx.dealer.index()] -= FIVE;
        paid[ctx.dealer.index()] = FIVE;
        self.pot += FIVE;
        // 0.4 item 14: an empty pot draws the head of the bête queue
        if self.fifo() && pot_was_empty && !self.queue.is_empty() {
            let (_, amount) = self.queue.remove(0);
            self.pot += amount;
        }
        debug_assert_eq!(
            self.pot % 5,
            0,
            "every pot is a multiple of 5 (0.4 item 14)"
        );
        // 0.4 item 13
        let pot_test =
            if self.ruleset == RulesetId::BesterBube && self.config.per_trick == PerTrick::One {
                !self.prev_bete
            } else {
                self.pot <= self.config.muss_max_pot
            };
        self.prev_muss = ctx.deal > 0 && self.muss;
        self.muss = ctx.deal == 0 || (pot_test && self.queue.is_empty());
        self.start_pot = self.pot;
        self.deal = ctx.deal;
        self.dealer = ctx.dealer;
        self.stage = Stage::Settled; // until the cards are dealt
        paid
    }

    fn deal(&mut self, ctx: &mut Ctx, deck: &[Card], paid: Amounts, out: &mut impl Sink) {
        let n = self.seats;
        let d = deal_hands(deck, n, ctx.dealer, DealPattern::ThreeTwo);
        self.deal = ctx.deal;
        self.dealer = ctx.dealer;
        self.paid = paid;
        self.deck.clear();
        self.deck.extend_from_slice(deck);
        self.talon_next = d.talon_start;
        self.dealt = d.hands;
        self.hands = d.hands;
        self.turn_up = d.turn_up;
        self.trumps = Trumps::new(d.turn_up.suit());
        self.turn_up_taken = false;
        self.discarded = None;
        self.inn = self.all_seats();
        self.spoke1 = 0;
        self.stayed1 = 0;
        self.exchanged = [[0; 2]; MAX_SEATS];
        self.last_spoke = [None; MAX_SEATS];
        self.trick = 0;
        self.lens = [0; 5];
        self.winners = [None; 5];
        self.tricks_won = [0; MAX_SEATS];
        self.hidden = CardSet::EMPTY;
        self.revoke_len = 0;
        self.summary = None;
        self.flush_holders = 0;
        if self.lanterlui() {
            for s in 0..n {
                if self
                    .trumps
                    .best_flush(self.hands[s as usize], self.config.four_card_flush)
                    .is_some()
                {
                    self.flush_holders |= 1 << s;
                }
            }
        }
        out.emit(|| Event {
            public: PublicEvent::DealStarted(Box::new(DealStart {
                deal: ctx.deal,
                dealer: ctx.dealer,
                paid,
                turn_up: d.turn_up,
                trump: d.turn_up.suit(),
                muss: self.muss,
                pools: self.pools(),
            })),
            private: (0..n)
                .map(|s| (Seat(s), PrivateEvent::Hand(d.hands[s as usize])))
                .collect(),
            reveal: None,
        });
        self.stage = Stage::Round(1);
        self.turn = ctx.dealer.next(n);
        // 0.4 item 8: a dealt flush in a Muss is shown at once and settles the deal
        if self.muss && self.flush_holders != 0 {
            self.settle_dealt_flush(ctx, out);
        }
    }

    fn to_act(&self) -> Option<Seat> {
        match self.stage {
            Stage::Settled => None,
            _ => Some(self.turn),
        }
    }

    fn phase(&self) -> Phase {
        match self.stage {
            Stage::Round(r) => Phase::Exchange { round: r },
            Stage::Challenge => Phase::Challenge,
            Stage::Discard => Phase::DealerDiscard,
            Stage::Trick => Phase::Trick { trick: self.trick },
            Stage::Settled => Phase::MatchOver,
        }
    }

    fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        if self.stage == Stage::Settled || seat != self.turn {
            return;
        }
        match self.stage {
            Stage::Round(_) => self.round_actions(seat, out),
            Stage::Challenge => {
                out.push(Action::Challenge);
                out.push(Action::Decline);
            }
            Stage::Discard => {
                let mut hand = self.hands[seat.index()];
                hand.insert(self.turn_up);
                out.extend(hand.iter().map(Action::Discard));
            }
            Stage::Trick => self.play_actions(seat, out),
            Stage::Settled => {}
        }
    }

    fn apply(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if self.stage == Stage::Settled {
            return Err(ActionError::NoDeal);
        }
        if seat != self.turn {
            return Err(ActionError::NotYourTurn { to_act: self.turn });
        }
        match action {
            Action::Pass | Action::Play | Action::Contre | Action::Widow | Action::General => {
                Err(ActionError::WrongRuleset {
                    action: action.verb(),
                    ruleset: self.ruleset,
                })
            }
            Action::Drop | Action::Stand | Action::Exchange(_) => {
                self.apply_round(ctx, seat, action, out)
            }
            Action::Challenge | Action::Decline => self.apply_challenge(ctx, seat, action, out),
            Action::Discard(c) => self.apply_discard(ctx, seat, c, out),
            Action::Card(c) => self.apply_play(ctx, seat, c, false, out),
            Action::Hidden(c) => self.apply_play(ctx, seat, c, true, out),
        }
    }

    fn deal_settled(&self) -> bool {
        self.stage == Stage::Settled
    }

    fn match_over(&self) -> bool {
        self.match_over
    }

    fn pools(&self) -> Pools {
        Pools {
            pot: self.pot,
            bete_queue: self.queue.iter().map(|(_, a)| *a).collect(),
            bete_streak: self.streak,
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
        let p = &view.pools;
        // The pot does not move between the antes and the settlement, so it is also the
        // deal's pay-out base. Payers of queued bêtes are not public: the dealer stands in.
        self.pot = p.pot;
        self.start_pot = p.pot;
        self.queue = p.bete_queue.iter().map(|&a| (view.dealer, a)).collect();
        self.streak = p.bete_streak;
        self.muss = view.muss;
    }

    fn fill_view(&self, viewer: Viewer, view: &mut View) {
        let settled = self.stage == Stage::Settled;
        if let Viewer::Seat(s) = viewer {
            view.hand = Some(self.hands[s.index()]);
        }
        view.turn_up = Some(self.turn_up);
        view.trump = Some(self.trumps.suit);
        view.talon_len = self.talon_left() as u8;
        view.muss = self.muss;
        view.turn_up_taken = self.turn_up_taken;
        for st in view.seat_states.iter_mut() {
            let i = st.seat.index();
            st.hand_len = self.hands[i].len() as u8;
            st.tricks = self.tricks_won[i];
            st.dropped = !self.is_in(st.seat);
            st.exchanged = self.exchanged[i];
            st.last_spoke = match self.last_spoke[i] {
                // 0.4 item 18: which cards a seat set aside or discarded is its own secret;
                // others learn only the count (`exchanged`) and that the turn-up was taken.
                Some(Action::Exchange(_)) if viewer != Viewer::Seat(st.seat) => {
                    Some(Action::Exchange(CardSet::EMPTY))
                }
                Some(Action::Discard(_)) if viewer != Viewer::Seat(st.seat) => None,
                spoke => spoke,
            };
        }
        let played = if self.stage == Stage::Trick {
            self.trick as usize + 1
        } else {
            5
        };
        for t in 0..played.min(5) {
            let len = self.lens[t] as usize;
            if len == 0 {
                continue;
            }
            let cards = self.plays[t][..len]
                .iter()
                .map(|p| {
                    let card = if !p.hidden {
                        PlayedCard::FaceUp(p.card)
                    } else if settled || viewer == Viewer::Seat(p.seat) {
                        PlayedCard::FaceDown(Some(p.card))
                    } else {
                        PlayedCard::FaceDown(None)
                    };
                    (p.seat, card)
                })
                .collect();
            view.tricks.push(TrickView {
                leader: self.plays[t][0].seat,
                cards,
                winner: self.winners[t],
            });
        }
        if self.stage == Stage::Trick {
            view.trick_holder = self.holder();
        }
    }

    /// Lenient mode: a card outside the strict legal set is a revoke, so the server's safe
    /// action on a timeout never picks one while a dutiful card exists.
    fn is_revoke(&self, seat: Seat, action: Action) -> bool {
        self.lenient() && self.stage == Stage::Trick && self.breaks_duty(seat, action)
    }

    fn record_summary(&self, log: &mut SummaryLog) {
        if let Some(head) = self.summary {
            log.push(
                head,
                self.won.iter().map(|&(s, amount)| ("pot", s, amount)),
                self.payments.iter().copied(),
            );
        }
    }
}
