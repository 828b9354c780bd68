//! Mouche, Mistigri, Five-card Loo and Rams (RULES.md Part II, sections 12–15): one pool (the
//! basket or the pool) paid out a fifth a trick, one declaration round, mouches and flushes,
//! Pam and Mistigri, the Rams widow and General Rams.
//!
//! Submodules: `order` (ranking, the top card, mouches and flushes), `tricks` (duties of play),
//! `settle` (pay-outs, penalties, the end of the match). This file holds the state, the deal
//! and the declarations.

mod order;
mod settle;
mod tricks;

use crate::action::Action;
use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::config::{Config, DealerAnte, MouchePayoff};
use crate::event::{Amounts, DealStart, Event, PrivateEvent, Privates, PublicEvent};
use crate::family::{Ctx, Family};
use crate::game::ActionError;
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::sink::Sink;
use crate::summary::{SummaryHead, SummaryLog};
use crate::view::{Phase, PlayedCard, Pools, TrickView, View, Viewer};

use order::Order;

/// The dealer's ante (MO5 `"five"`, LO5, RA3).
const FIVE: i64 = 5;

/// Where the deal stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// Rams: the dealer robs the turn-up before anybody declares (RA5).
    Rob,
    /// The one declaration round, eldest to the dealer (MO10, LO7, RA6).
    Declare,
    /// Mouche, Mistigri: the dealer takes up the turn-up after his own turn (MO11).
    Discard,
    Trick,
    Settled,
}

/// The Part II table: the pool and the mouche queue it carries, and the deal in progress.
#[derive(Clone, Debug)]
pub struct PoolTable {
    ruleset: RulesetId,
    config: Config,
    seats: u8,

    // Carried between deals.
    /// The basket (Mouche, Mistigri) or the pool (Loo, Rams) (RC2).
    pool: i64,
    /// `mouche_payoff = "queue_largest_first"`: queued mouches with their payers, oldest first.
    queue: Vec<(Seat, i64)>,
    match_over: bool,

    // The deal in progress.
    deal: u32,
    dealer: Seat,
    /// The start basket B or start pool P: pay-out base (MO6, LO5, RA3).
    start_pool: i64,
    deck: Vec<Card>,
    talon_next: usize,
    dealt: [CardSet; MAX_SEATS],
    hands: [CardSet; MAX_SEATS],
    /// Rams: the widow (RA4).
    widow: CardSet,
    widow_taker: Option<Seat>,
    /// Rams: the announcer of General Rams (RA6).
    general: Option<Seat>,
    order: Order,
    turn_up: Card,
    turn_up_taken: bool,
    stage: Stage,
    turn: Seat,
    /// Seats still in the deal (bit = seat).
    inn: u16,
    exchanged: [u8; MAX_SEATS],
    last_spoke: [Option<Action>; MAX_SEATS],
    trick: u8,
    plays: [[(Seat, Card); MAX_SEATS]; 5],
    lens: [u8; 5],
    winners: [Option<Seat>; 5],
    tricks_won: [u8; MAX_SEATS],
    /// The last settlement, for `record_summary` (reused buffers).
    summary: Option<SummaryHead>,
    won: Vec<(Seat, i64)>,
    payments: Vec<(Seat, i64)>,
}

impl PoolTable {
    fn bit(s: Seat) -> u16 {
        1 << s.0
    }

    fn all_seats(&self) -> u16 {
        (1u16 << self.seats) - 1
    }

    fn is_in(&self, s: Seat) -> bool {
        self.inn & Self::bit(s) != 0
    }

    /// Mouche and Mistigri share every rule but the top card (MI1).
    fn mouche_like(&self) -> bool {
        matches!(self.ruleset, RulesetId::Mouche | RulesetId::Mistigri)
    }

    fn loo(&self) -> bool {
        self.ruleset == RulesetId::Loo
    }

    fn rams(&self) -> bool {
        self.ruleset == RulesetId::Rams
    }

    /// The pool's name in summaries: the basket of Mouche (MO5), else the pool.
    fn pool_name(&self) -> &'static str {
        if self.mouche_like() { "basket" } else { "pool" }
    }

    fn queued(&self) -> bool {
        self.mouche_like() && self.config.mouche_payoff == MouchePayoff::QueueLargestFirst
    }

    /// Seats in play order from eldest to the dealer.
    fn play_order(&self) -> impl Iterator<Item = Seat> + use<> {
        let (dealer, n) = (self.dealer, self.seats);
        (1..=n).map(move |k| dealer.offset(k, n))
    }

    /// The first seat in `mask` from eldest on.
    fn first_in(&self, mask: u16) -> Option<Seat> {
        self.play_order().find(|s| mask & Self::bit(*s) != 0)
    }

    fn talon_left(&self) -> usize {
        self.deck.len() - self.talon_next
    }

    fn stage_name(&self) -> &'static str {
        match self.stage {
            Stage::Rob => "the dealer's robbing of the turn-up",
            Stage::Declare => "the declarations",
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

    fn wrong_ruleset(&self, a: &Action) -> ActionError {
        ActionError::WrongRuleset {
            action: a.verb(),
            ruleset: self.ruleset,
        }
    }

    /// Whether some seat has already declared something other than `stand` (RA6: General
    /// Rams only while every earlier declarer stood).
    fn someone_left_the_stand(&self) -> bool {
        self.last_spoke[..self.seats as usize]
            .iter()
            .any(|a| matches!(a, Some(Action::Drop | Action::Widow)))
    }

    /// Why `drop` is not allowed for this seat now (Rams: RA6), if it is not.
    fn drop_forbidden(&self) -> Option<&'static str> {
        if self.general.is_some() {
            return Some("General Rams was announced: every later seat must stand");
        }
        if self.rams() && self.config.drop_requires_widow_taken && self.widow_taker.is_none() {
            return Some("drop_requires_widow_taken: the widow has not been taken yet");
        }
        None
    }

    fn declare_actions(&self, seat: Seat, out: &mut Vec<Action>) {
        out.push(Action::Stand);
        if self.drop_forbidden().is_none() {
            out.push(Action::Drop);
        }
        if self.rams() {
            if self.general.is_none() {
                if self.widow_taker.is_none() {
                    out.push(Action::Widow);
                }
                if !self.someone_left_the_stand() {
                    out.push(Action::General);
                }
            }
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

    fn apply_declare(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if self.stage != Stage::Declare {
            return Err(self.wrong_phase(&action));
        }
        match action {
            Action::Stand => out.emit(|| Event::public(PublicEvent::Spoke { seat, action })),
            Action::Drop => {
                if let Some(why) = self.drop_forbidden() {
                    return Err(ActionError::CannotDrop(why.to_string()));
                }
                self.inn &= !Self::bit(seat);
                out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
            }
            Action::Exchange(set) => {
                if self.rams() {
                    return Err(self.wrong_ruleset(&action));
                }
                let hand = self.hands[seat.index()];
                if set.is_empty() || set.len() > 5 {
                    return Err(ActionError::Other(
                        "exchange lists one to five cards".to_string(),
                    ));
                }
                if let Some(c) = set.minus(hand).first() {
                    return Err(ActionError::NotInHand(c));
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
                self.exchanged[seat.index()] = k as u8;
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
            Action::Widow | Action::General if !self.rams() => {
                return Err(self.wrong_ruleset(&action));
            }
            Action::Widow => {
                if self.general.is_some() {
                    return Err(ActionError::Other(
                        "General Rams was announced: every later seat must stand".to_string(),
                    ));
                }
                if self.widow_taker.is_some() {
                    return Err(ActionError::Other(
                        "the widow has already been taken".to_string(),
                    ));
                }
                let old = self.hands[seat.index()];
                let widow = self.widow;
                self.hands[seat.index()] = widow;
                self.widow_taker = Some(seat);
                out.emit(|| Event {
                    public: PublicEvent::Spoke { seat, action },
                    private: Privates::One((
                        seat,
                        PrivateEvent::Exchange {
                            set_aside: old,
                            drawn: widow,
                        },
                    )),
                    reveal: None,
                });
            }
            Action::General => {
                if self.general.is_some() || self.someone_left_the_stand() {
                    return Err(ActionError::Other(
                        "General Rams only while every earlier seat stood and nobody announced it"
                            .to_string(),
                    ));
                }
                self.general = Some(seat);
                out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
            }
            _ => return Err(self.wrong_phase(&action)),
        }
        self.last_spoke[seat.index()] = Some(action);
        // MO12, LO8, RA7: every non-dealer dropped: the dealer takes the pool without a turn
        if seat != self.dealer && self.inn & !Self::bit(self.dealer) == 0 {
            self.settle(ctx, settle::End::DealerTakesPool, out);
            return Ok(());
        }
        if seat != self.dealer {
            self.turn = seat.next(self.seats);
        } else if self.mouche_like() && self.is_in(seat) {
            // MO11: right after his own stand or exchange the dealer takes up the turn-up
            self.stage = Stage::Discard;
        } else {
            self.end_declarations(ctx, out);
        }
        Ok(())
    }

    /// MO13, LO8–LO9, RA7: the lone stayer, the exchanged mouche, the Loo flush, else tricks.
    fn end_declarations(&mut self, ctx: &mut Ctx, out: &mut impl Sink) {
        if self.inn.count_ones() <= 1 {
            match self.first_in(self.inn) {
                Some(s) => self.settle(ctx, settle::End::LoneStayer(s), out),
                // Cannot happen (the round ends before the dealer when all others drop).
                None => self.settle(ctx, settle::End::DealerTakesPool, out),
            }
            return;
        }
        if (self.mouche_like() && self.config.exchanged_mouche) || self.loo() {
            let hands = self.hands;
            if let Some(seat) = self.show_best_flush(self.inn, &hands, out) {
                let end = if self.loo() {
                    settle::End::Flush(seat)
                } else {
                    settle::End::Mouche { seat, dealt: false }
                };
                self.settle(ctx, end, out);
                return;
            }
        }
        self.stage = Stage::Trick;
        self.trick = 0;
        // RA8: the General Rams announcer leads; else the first seat in after the dealer
        self.turn = self
            .general
            .or_else(|| self.first_in(self.inn))
            .unwrap_or(self.dealer);
    }

    /// The best mouche or flush among `seats` (a full tie to the seat nearer eldest), after
    /// showing every one that takes part in the comparison, the best last (RC1). Returns its
    /// holder.
    fn show_best_flush(
        &self,
        seats: u16,
        hands: &[CardSet; MAX_SEATS],
        out: &mut impl Sink,
    ) -> Option<Seat> {
        let mut best: Option<(u64, Seat)> = None;
        for s in self.play_order() {
            if seats & Self::bit(s) == 0 {
                continue;
            }
            if let Some(key) = self.order.flush_key(hands[s.index()])
                && best.is_none_or(|(k, _)| key > k)
            {
                best = Some((key, s));
            }
        }
        let (_, winner) = best?;
        for s in self.play_order() {
            if s != winner
                && seats & Self::bit(s) != 0
                && self.order.flush_key(hands[s.index()]).is_some()
            {
                let cards = hands[s.index()];
                out.emit(|| Event::public(PublicEvent::FlushShown { seat: s, cards }));
            }
        }
        let cards = hands[winner.index()];
        out.emit(|| {
            Event::public(PublicEvent::FlushShown {
                seat: winner,
                cards,
            })
        });
        Some(winner)
    }

    fn apply_discard(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        card: Card,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        let action = Action::Discard(card);
        if self.ruleset == RulesetId::Loo {
            return Err(self.wrong_ruleset(&action));
        }
        if !matches!(self.stage, Stage::Discard | Stage::Rob) {
            return Err(self.wrong_phase(&action));
        }
        let mut hand = self.hands[seat.index()];
        hand.insert(self.turn_up);
        if !hand.contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        hand.remove(card);
        self.hands[seat.index()] = hand;
        self.turn_up_taken = true;
        self.last_spoke[seat.index()] = Some(action);
        out.emit(|| Event {
            public: PublicEvent::TookTurnUp {
                seat,
                turn_up: self.turn_up,
            },
            private: Privates::One((seat, PrivateEvent::Discarded(card))),
            reveal: None,
        });
        if self.stage == Stage::Rob {
            // RA5: then the declarations, from eldest
            self.last_spoke[seat.index()] = None;
            self.stage = Stage::Declare;
            self.turn = self.dealer.next(self.seats);
        } else {
            self.end_declarations(ctx, out);
        }
        Ok(())
    }

    /// Deals `deck` in packet rounds from eldest to the dealer, Rams's widow getting its packet
    /// just before the dealer's (19, RA4). Returns the index of the turn-up.
    fn deal_packets(&mut self, deck: &[Card]) -> usize {
        let n = self.seats;
        let mut i = 0;
        self.hands = [CardSet::EMPTY; MAX_SEATS];
        self.widow = CardSet::EMPTY;
        for &packet in self.config_pattern().packets() {
            for p in 0..n {
                let seat = self.dealer.offset(p + 1, n);
                if self.rams() && seat == self.dealer {
                    for c in &deck[i..i + packet as usize] {
                        self.widow.insert(*c);
                    }
                    i += packet as usize;
                }
                for c in &deck[i..i + packet as usize] {
                    self.hands[seat.index()].insert(*c);
                }
                i += packet as usize;
            }
        }
        i
    }

    fn config_pattern(&self) -> crate::config::DealPattern {
        self.config.deal_pattern
    }
}

impl Family for PoolTable {
    fn new(ruleset: RulesetId, config: &Config, seats: u8) -> Self {
        let two = Card::new(Rank::Two, Suit::Spades);
        PoolTable {
            ruleset,
            config: config.clone(),
            seats,
            pool: 0,
            // Room for many queued mouches, so that a settlement rarely allocates.
            queue: Vec::with_capacity(
                if ruleset == RulesetId::Mouche || ruleset == RulesetId::Mistigri {
                    4 * MAX_SEATS
                } else {
                    0
                },
            ),
            match_over: false,
            deal: 0,
            dealer: Seat(0),
            start_pool: 0,
            deck: Vec::with_capacity(52),
            talon_next: 0,
            dealt: [CardSet::EMPTY; MAX_SEATS],
            hands: [CardSet::EMPTY; MAX_SEATS],
            widow: CardSet::EMPTY,
            widow_taker: None,
            general: None,
            order: Order::new(ruleset, config, Suit::Spades),
            turn_up: two,
            turn_up_taken: false,
            stage: Stage::Settled,
            turn: Seat(0),
            inn: 0,
            exchanged: [0; MAX_SEATS],
            last_spoke: [None; MAX_SEATS],
            trick: 0,
            plays: [[(Seat(0), two); MAX_SEATS]; 5],
            lens: [0; 5],
            winners: [None; 5],
            tricks_won: [0; MAX_SEATS],
            summary: None,
            won: Vec::with_capacity(MAX_SEATS),
            payments: Vec::with_capacity(2 * MAX_SEATS),
        }
    }

    fn take_antes(&mut self, ctx: &mut Ctx) -> Amounts {
        let mut paid = [0; MAX_SEATS];
        let empty_before = self.pool == 0;
        // MO5: five, or one a seat; LO5, RA3: five
        let ante = if self.mouche_like() && self.config.dealer_ante == DealerAnte::PerSeat {
            i64::from(self.seats)
        } else {
            FIVE
        };
        ctx.balances[ctx.dealer.index()] -= ante;
        paid[ctx.dealer.index()] = ante;
        self.pool += ante;
        // MO18: an empty basket draws the largest queued mouche (the oldest among equal ones)
        if self.queued() && empty_before && !self.queue.is_empty() {
            let mut at = 0;
            for (i, &(_, amount)) in self.queue.iter().enumerate() {
                if amount > self.queue[at].1 {
                    at = i;
                }
            }
            let (_, amount) = self.queue.remove(at);
            self.pool += amount;
        }
        if !(self.mouche_like() && self.config.dealer_ante == DealerAnte::PerSeat) {
            debug_assert_eq!(self.pool % 5, 0, "RC2: the start pool is a multiple of 5");
        }
        self.start_pool = self.pool;
        self.deal = ctx.deal;
        self.dealer = ctx.dealer;
        self.stage = Stage::Settled; // until the cards are dealt
        paid
    }

    fn deal(&mut self, ctx: &mut Ctx, deck: &[Card], paid: Amounts, out: &mut impl Sink) {
        let n = self.seats;
        self.deal = ctx.deal;
        self.dealer = ctx.dealer;
        let at = self.deal_packets(deck);
        self.deck.clear();
        self.deck.extend_from_slice(deck);
        self.turn_up = deck[at];
        // Rams: the remaining cards take no part (RA4), so there is no talon.
        self.talon_next = if self.rams() { deck.len() } else { at + 1 };
        self.dealt = self.hands;
        self.order = Order::new(self.ruleset, &self.config, self.turn_up.suit());
        self.turn_up_taken = false;
        self.widow_taker = None;
        self.general = None;
        self.inn = self.all_seats();
        self.exchanged = [0; MAX_SEATS];
        self.last_spoke = [None; MAX_SEATS];
        self.trick = 0;
        self.lens = [0; 5];
        self.winners = [None; 5];
        self.tricks_won = [0; MAX_SEATS];
        self.summary = None;
        let hands = self.hands;
        out.emit(|| Event {
            public: PublicEvent::DealStarted(Box::new(DealStart {
                deal: ctx.deal,
                dealer: ctx.dealer,
                paid,
                turn_up: self.turn_up,
                trump: self.order.trump,
                muss: false,
                pools: self.pools(),
            })),
            private: (0..n)
                .map(|s| (Seat(s), PrivateEvent::Hand(hands[s as usize])))
                .collect(),
            reveal: None,
        });
        if self.rams() {
            self.stage = Stage::Rob;
            self.turn = ctx.dealer;
            return;
        }
        self.stage = Stage::Declare;
        self.turn = ctx.dealer.next(n);
        // MO8: a dealt mouche is shown at once and settles the deal
        if self.mouche_like()
            && let Some(seat) = self.show_best_flush(self.all_seats(), &hands, out)
        {
            self.settle(ctx, settle::End::Mouche { seat, dealt: true }, out);
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
            Stage::Declare => Phase::Exchange { round: 1 },
            Stage::Rob | Stage::Discard => Phase::DealerDiscard,
            Stage::Trick => Phase::Trick { trick: self.trick },
            Stage::Settled => Phase::MatchOver,
        }
    }

    fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        if self.stage == Stage::Settled || seat != self.turn {
            return;
        }
        match self.stage {
            Stage::Declare => self.declare_actions(seat, out),
            Stage::Rob | Stage::Discard => {
                let mut hand = self.hands[seat.index()];
                hand.insert(self.turn_up);
                out.extend(hand.iter().map(Action::Discard));
            }
            Stage::Trick => {
                let (legal, _) = self.legal(seat);
                out.extend(legal.iter().map(Action::Card));
            }
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
            Action::Pass
            | Action::Play
            | Action::Contre
            | Action::Challenge
            | Action::Decline
            | Action::Hidden(_) => Err(self.wrong_ruleset(&action)),
            Action::Drop
            | Action::Stand
            | Action::Exchange(_)
            | Action::Widow
            | Action::General => self.apply_declare(ctx, seat, action, out),
            Action::Discard(c) => self.apply_discard(ctx, seat, c, out),
            Action::Card(c) => self.apply_play(ctx, seat, c, out),
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
            pot: self.pool,
            bete_queue: self.queue.iter().map(|(_, a)| *a).collect(),
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
        // The pool does not move between the antes and the settlement, so it is also the
        // deal's pay-out base. Payers of queued mouches are not public: the dealer stands in.
        self.pool = view.pools.pot;
        self.start_pool = view.pools.pot;
        self.queue.clear();
        self.queue
            .extend(view.pools.bete_queue.iter().map(|&a| (view.dealer, a)));
    }

    fn fill_view(&self, viewer: Viewer, view: &mut View) {
        if let Viewer::Seat(s) = viewer {
            view.hand = Some(self.hands[s.index()]);
        }
        view.turn_up = Some(self.turn_up);
        view.trump = Some(self.order.trump);
        view.talon_len = self.talon_left() as u8;
        view.turn_up_taken = self.turn_up_taken;
        for st in view.seat_states.iter_mut() {
            let i = st.seat.index();
            st.hand_len = self.hands[i].len() as u8;
            st.tricks = self.tricks_won[i];
            st.dropped = !self.is_in(st.seat);
            st.exchanged = [self.exchanged[i], 0];
            st.last_spoke = match self.last_spoke[i] {
                // RC1: which cards a seat set aside is its own secret
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
            view.tricks.push(TrickView {
                leader: self.plays[t][0].0,
                cards: self.plays[t][..len]
                    .iter()
                    .map(|&(s, c)| (s, PlayedCard::FaceUp(c)))
                    .collect(),
                winner: self.winners[t],
            });
        }
        if self.stage == Stage::Trick {
            view.trick_holder = self.holder();
        }
    }

    fn record_summary(&self, log: &mut SummaryLog) {
        if let Some(head) = self.summary {
            let name = self.pool_name();
            log.push(
                head,
                self.won.iter().map(|&(s, amount)| (name, s, amount)),
                self.payments.iter().copied(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_family_is_the_four_new_rulesets() {
        let pool: Vec<_> = RulesetId::ALL
            .into_iter()
            .filter(|r| r.is_pool_family())
            .collect();
        assert_eq!(
            pool,
            [
                RulesetId::Mouche,
                RulesetId::Mistigri,
                RulesetId::Loo,
                RulesetId::Rams
            ]
        );
    }
}
