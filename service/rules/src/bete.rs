//! Bête (section 1) and its Ace-high variation (section 2): the deal pot, the fiche dish, the
//! King (Ace) pool and the bête queue; bidding with contre and the Curieuse; trick play with
//! heading, trumping and overtrumping; the settlement of 1.8 in its five steps; the end of the
//! match (0.4 item 17).
//!
//! The Ace-high variation differs only by its ranking and the card of the top pool; both come
//! from [`Variant`], so the whole table code is shared.

use crate::action::Action;
use crate::card::{Card, Rank, Suit};
use crate::cardset::CardSet;
use crate::config::{AnteRule, Config, ContreRule, Legality, QueueOrder, WinRule};
use crate::deal::DealPlan;
use crate::event::SeatSet;
use crate::event::{
    Amounts, BidderResult, DealResult, DealStart, Event, PrivateEvent, Privates, PublicEvent,
    Reveal, Settlement,
};
use crate::family::{Ctx, Family};
use crate::game::ActionError;
use crate::game::LoggedAction;
use crate::playout::uniform_index;
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::sink::{Discard, Sink};
use crate::summary::{SummaryHead, SummaryLog};
use crate::trick::{ACE_HIGH_RANKING, ECARTE_RANKING, FollowRules, MaskTrick, Ranking, Trick};
use crate::view::{Phase, PlayedCard, Pools, TrickView, View, Viewer};
use rand_chacha::rand_core::RngCore;

mod playout;
mod settle;

/// What the Ace-high variation overrides (AH1, AH2).
#[derive(Debug)]
pub(crate) struct Variant {
    pub ranking: &'static Ranking,
    /// The rank whose trump card wins the top pool: King (B33) or Ace (AH2).
    pub top_rank: Rank,
    /// The top pool's name in deal summaries.
    pub top_pool: &'static str,
}

static BETE: Variant = Variant {
    ranking: &ECARTE_RANKING,
    top_rank: Rank::King,
    top_pool: "king",
};
static ACE_HIGH: Variant = Variant {
    ranking: &ACE_HIGH_RANKING,
    top_rank: Rank::Ace,
    top_pool: "ace",
};

/// The largest pack (36 cards).
const MAX_PACK: usize = 36;
/// At most every follower revokes in every trick.
const MAX_REVOKES: usize = 5 * MAX_SEATS;

/// A bête on the table: who paid it (for the final return, 0.4 item 17) and how much.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Bete {
    payer: Seat,
    amount: i64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stage {
    /// Before the first deal.
    Idle,
    Bidding,
    Tricks,
    Settled,
}

/// One settled pool, for the summary (converted to `PoolWon` on request).
#[derive(Copy, Clone, Debug)]
struct Won {
    pool: &'static str,
    seat: Seat,
    amount: i64,
}

/// A Bête or Ace-high table: the pools between deals and the deal in progress.
#[derive(Clone, Debug)]
pub struct BeteTable {
    variant: &'static Variant,
    seats: u8,
    fiche_value: i64,
    win_rule: WinRule,
    ante_rule: AnteRule,
    queue_order: QueueOrder,
    must_head: bool,
    contre_enabled: bool,
    max_curieuse: u8,
    lenient: bool,
    /// Who gets which card of a deck (the seat count and `deal_pattern` are fixed per match).
    deal_plan: DealPlan,

    // --- pools carried between deals (1.3) ---
    /// The deal pot beside the dish, jetons.
    pot: i64,
    /// Fiches in the dish (each `fiche_value` jetons).
    fiches: i64,
    /// N of 1.8: deals since the pot was last won, counting the current one.
    n: u32,
    king_pool: i64,
    /// The bête at stake in this deal (B31).
    staked: Option<Bete>,
    /// Waiting bêtes, oldest first.
    queue: Vec<Bete>,

    // --- the deal in progress ---
    stage: Stage,
    match_over: bool,
    deal_no: u32,
    dealer: Seat,
    deck: [Card; MAX_PACK],
    deck_len: u8,
    /// Index in `deck` of the talon's top card.
    talon_pos: u8,
    turn_up: Card,
    trump: Suit,
    set_aside: [Card; 3],
    curieuses: u8,
    dealt: [CardSet; MAX_SEATS],
    hands: [CardSet; MAX_SEATS],
    /// The seat to act in bidding or in the trick.
    turn: Seat,
    /// Speakers so far in the current bidding round.
    spoken: u8,
    declarer: Option<Seat>,
    contrer: Option<Seat>,
    last_spoke: [Option<Action>; MAX_SEATS],
    trick_no: u8,
    trick: Trick,
    /// Completed tricks of this deal.
    done: [Trick; 5],
    tricks: [u8; MAX_SEATS],
    revokes: [Seat; MAX_REVOKES],
    revoke_count: u8,

    // --- the last settlement, for `summary` ---
    outcome: &'static str,
    won: Vec<Won>,
    betes_made: Vec<Bete>,
    net: Amounts,
}

impl BeteTable {
    fn eldest(&self) -> Seat {
        self.dealer.next(self.seats)
    }

    fn n_us(&self) -> usize {
        self.seats as usize
    }

    /// W of 1.8: the deal pot + N fiches + the current bête.
    fn w(&self) -> i64 {
        self.pot + self.n as i64 * self.fiche_value + self.staked.map_or(0, |b| b.amount)
    }

    fn talon_len(&self) -> u8 {
        self.deck_len - self.talon_pos
    }

    fn pay(ctx: &mut Ctx, seat: Seat, amount: i64) {
        ctx.balances[seat.index()] -= amount;
    }

    fn legal_cards(&self, seat: Seat) -> CardSet {
        let hand = self.hands[seat.index()];
        if self.lenient {
            hand
        } else {
            self.trick
                .legal(hand, self.trump, self.variant.ranking, self.must_head)
        }
    }

    /// B24: the strict pass test (tricks ≥ 3, or 2 made of tricks #1 and #2 with nobody on 3),
    /// or under `plurality` more tricks than anyone else.
    fn passes(&self, s: Seat) -> bool {
        self.passes_with(s, self.tricks[s.index()], self.most_other(s))
    }

    /// `passes` given `s`'s tricks `d` and the most tricks of any other seat `m`.
    fn passes_with(&self, s: Seat, d: u8, m: u8) -> bool {
        match self.win_rule {
            WinRule::Strict => {
                d >= 3 || (d == 2 && self.done[0].winner == s && self.done[1].winner == s && m < 3)
            }
            WinRule::Plurality => d > m,
        }
    }

    fn most_other(&self, s: Seat) -> u8 {
        // A max without a branch per seat: who has more tricks than whom is random in a playout.
        let mut m = 0;
        for (i, &t) in self.tricks[..self.n_us()].iter().enumerate() {
            m = m.max(if i == s.index() { 0 } else { t });
        }
        m
    }

    /// B24–B26 for the declarer.
    fn declarer_result(&self, p: Seat) -> BidderResult {
        let (d, m) = (self.tricks[p.index()], self.most_other(p));
        if self.passes_with(p, d, m) {
            BidderResult::Win { vole: d == 5 }
        } else if d == m {
            BidderResult::Null
        } else {
            BidderResult::Lose { devole: d == 0 }
        }
    }

    fn start_bidding_round(&mut self) {
        self.turn = self.eldest();
        self.spoken = 0;
        self.last_spoke = [None; MAX_SEATS];
    }

    fn start_tricks(&mut self) {
        self.stage = Stage::Tricks;
        self.trick_no = 0;
        // B19: eldest leads trick 1 whoever declared.
        self.trick = Trick::new(self.eldest());
        self.turn = self.eldest();
    }

    fn apply_bid(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        match (action, self.declarer) {
            (Action::Pass, _) => {}
            (Action::Play, None) => {}
            (Action::Play, Some(_)) => {
                return Err(ActionError::WrongPhase {
                    action: "play",
                    phase: "a declarer has spoken: pass or contre",
                });
            }
            (Action::Contre, None) => {
                return Err(ActionError::WrongPhase {
                    action: "contre",
                    phase: "nobody has declared yet",
                });
            }
            (Action::Contre, Some(_)) if !self.contre_enabled => {
                return Err(ActionError::Other(
                    "contre is disabled at this table".into(),
                ));
            }
            (Action::Contre, Some(_)) => {}
            _ => unreachable!("apply routes only bids here"),
        }
        self.bid(ctx, seat, action, out);
        Ok(())
    }

    /// A bid already found legal: who declared or contred, the next speaker, the Curieuse or
    /// the all-pass. (A playout calls it directly: it draws only from the legal bids.)
    fn bid(&mut self, ctx: &mut Ctx, seat: Seat, action: Action, out: &mut impl Sink) {
        self.last_spoke[seat.index()] = Some(action);
        out.emit(|| Event::public(PublicEvent::Spoke { seat, action }));
        self.spoken += 1;
        let dealer_spoke = seat == self.dealer;
        match action {
            Action::Play => {
                self.declarer = Some(seat);
                if !self.contre_enabled || dealer_spoke {
                    self.start_tricks();
                    return;
                }
            }
            Action::Contre => {
                self.contrer = Some(seat);
                self.start_tricks();
                return;
            }
            _ => {}
        }
        if !dealer_spoke {
            self.turn = seat.next(self.seats);
            return;
        }
        if self.declarer.is_some() {
            self.start_tricks();
            return;
        }
        // Everyone passed: a Curieuse (B17) or the all-pass (B18).
        if self.curieuses < self.max_curieuse && self.talon_len() > 0 {
            let mut paid = [0; MAX_SEATS];
            for s in 0..self.seats {
                paid[s as usize] = 1;
                Self::pay(ctx, Seat(s), 1);
            }
            self.pot += self.seats as i64;
            let set_aside = self.turn_up;
            self.set_aside[self.curieuses as usize] = set_aside;
            self.curieuses += 1;
            self.turn_up = self.deck[self.talon_pos as usize];
            self.talon_pos += 1;
            self.trump = self.turn_up.suit();
            out.emit(|| {
                Event::public(PublicEvent::Curieuse {
                    set_aside,
                    turn_up: self.turn_up,
                    trump: self.trump,
                    paid: Box::new(paid),
                })
            });
            self.start_bidding_round();
        } else {
            self.settle(ctx, out);
        }
    }

    fn apply_card(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        card: Card,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        let hand = self.hands[seat.index()];
        if !hand.contains(card) {
            return Err(ActionError::NotInHand(card));
        }
        let legal = self
            .trick
            .legal(hand, self.trump, self.variant.ranking, self.must_head);
        if !legal.contains(card) {
            if !self.lenient {
                return Err(self.trick.why_illegal(hand, card, self.trump));
            }
            // 0.4 item 19: the card stands and costs a bête at settlement.
            self.revokes[self.revoke_count as usize] = seat;
            self.revoke_count += 1;
        }
        self.play_card(ctx, seat, card, out);
        Ok(())
    }

    /// Plays a card already found legal (or standing as a revoke): the trick, its winner, the
    /// next turn, and the settlement after the fifth trick.
    #[inline]
    fn play_card(&mut self, ctx: &mut Ctx, seat: Seat, card: Card, out: &mut impl Sink) {
        self.hands[seat.index()].remove(card);
        self.trick
            .play(seat, card, self.trump, self.variant.ranking);
        out.emit(|| Event::public(PublicEvent::CardPlayed { seat, card }));
        if self.trick.len < self.seats {
            self.turn = seat.next(self.seats);
            return;
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
            // B23: all five tricks are played out.
            self.settle(ctx, out);
        } else {
            self.trick = Trick::new(winner);
            self.turn = winner;
        }
    }
}

impl Family for BeteTable {
    fn new(ruleset: RulesetId, config: &Config, seats: u8) -> Self {
        let variant = if ruleset == RulesetId::BeteAceHigh {
            &ACE_HIGH
        } else {
            &BETE
        };
        let dummy = Card::new(Rank::Two, Suit::Spades);
        BeteTable {
            variant,
            seats,
            fiche_value: config.fiche_value,
            win_rule: config.win_rule,
            ante_rule: config.ante_rule,
            queue_order: config.queue_order,
            must_head: config.must_head_in_suit,
            contre_enabled: config.contre == ContreRule::ModelA,
            max_curieuse: config.max_curieuse,
            lenient: config.enforce_legality == Legality::Lenient,
            deal_plan: DealPlan::new(seats, config.deal_pattern),
            pot: 0,
            fiches: 0,
            n: 0,
            king_pool: 0,
            staked: None,
            // Room for the usual few waiting bêtes and settled pools, so that deals do not
            // allocate once the match has started, save when random play queues more bêtes
            // than that and the queue doubles (tests/allocations.rs). A clone (`Game::playout`)
            // keeps only the lengths, so a copy's first few deals may allocate once.
            queue: Vec::with_capacity(8),
            stage: Stage::Idle,
            match_over: false,
            deal_no: 0,
            dealer: Seat(0),
            deck: [dummy; MAX_PACK],
            deck_len: 0,
            talon_pos: 0,
            turn_up: dummy,
            trump: Suit::Spades,
            set_aside: [dummy; 3],
            curieuses: 0,
            dealt: [CardSet::EMPTY; MAX_SEATS],
            hands: [CardSet::EMPTY; MAX_SEATS],
            turn: Seat(0),
            spoken: 0,
            declarer: None,
            contrer: None,
            last_spoke: [None; MAX_SEATS],
            trick_no: 0,
            trick: Trick::new(Seat(0)),
            done: [Trick::new(Seat(0)); 5],
            tricks: [0; MAX_SEATS],
            revokes: [Seat(0); MAX_REVOKES],
            revoke_count: 0,
            outcome: "",
            won: Vec::with_capacity(8),
            betes_made: Vec::with_capacity(8),
            net: [0; MAX_SEATS],
        }
    }

    fn take_antes(&mut self, ctx: &mut Ctx) -> Amounts {
        let mut paid = [0; MAX_SEATS];
        let seats = self.seats;
        self.deal_no = ctx.deal;
        self.dealer = ctx.dealer;
        self.n += 1;
        // B8 / A9: the players' deal stake when the pot is empty (and, literally, no bête waits).
        let players_ante = self.pot == 0
            && match self.ante_rule {
                AnteRule::PotEmpty => true,
                AnteRule::Literal => self.staked.is_none() && self.queue.is_empty(),
            };
        if players_ante {
            for s in 0..seats {
                paid[s as usize] += 1;
            }
            self.pot += seats as i64;
        }
        // B8: the dealer's jeton on every deal.
        paid[ctx.dealer.index()] += 1;
        self.pot += 1;
        // B7 / B9: a fiche each when the dish is empty (the first deal included).
        if self.fiches == 0 {
            for s in 0..seats {
                paid[s as usize] += self.fiche_value;
            }
            self.fiches += seats as i64;
        }
        // B7: the King pool opens the session; later it is refilled when won (B10).
        if ctx.deal == 0 {
            for s in 0..seats {
                paid[s as usize] += 1;
            }
            self.king_pool += seats as i64;
        }
        for (b, p) in ctx.balances.iter_mut().zip(paid).take(seats as usize) {
            *b -= p;
        }
        // B31: stake a waiting bête.
        if self.staked.is_none() && !self.queue.is_empty() {
            let i = match self.queue_order {
                QueueOrder::Fifo => 0,
                QueueOrder::LargestFirst => {
                    let max = self.queue.iter().map(|b| b.amount).max().unwrap_or(0);
                    self.queue.iter().position(|b| b.amount == max).unwrap_or(0)
                }
            };
            self.staked = Some(self.queue.remove(i));
        }
        paid
    }

    fn deal(&mut self, ctx: &mut Ctx, deck: &[Card], paid: Amounts, out: &mut impl Sink) {
        let d = self.deal_plan.deal(deck, ctx.dealer);
        self.deck_len = deck.len() as u8;
        self.deck[..deck.len()].copy_from_slice(deck);
        self.talon_pos = d.talon_start as u8;
        self.turn_up = d.turn_up;
        self.trump = d.turn_up.suit();
        self.curieuses = 0;
        self.dealt = d.hands;
        self.hands = d.hands;
        self.declarer = None;
        self.contrer = None;
        self.trick_no = 0;
        self.tricks = [0; MAX_SEATS];
        self.revoke_count = 0;
        self.stage = Stage::Bidding;
        self.start_bidding_round();
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
        match self.stage {
            Stage::Bidding | Stage::Tricks if !self.match_over => Some(self.turn),
            _ => None,
        }
    }

    fn phase(&self) -> Phase {
        match self.stage {
            Stage::Tricks => Phase::Trick {
                trick: self.trick_no,
            },
            _ => Phase::Bidding,
        }
    }

    fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        if self.to_act() != Some(seat) {
            return;
        }
        match self.stage {
            Stage::Bidding => {
                out.push(Action::Pass);
                match self.declarer {
                    None => out.push(Action::Play),
                    Some(_) if self.contre_enabled => out.push(Action::Contre),
                    Some(_) => {}
                }
            }
            Stage::Tricks => out.extend(self.legal_cards(seat).iter().map(Action::Card)),
            _ => {}
        }
    }

    fn apply(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        if self.to_act() != Some(seat) {
            return Err(match self.to_act() {
                Some(s) => ActionError::NotYourTurn { to_act: s },
                None => ActionError::NoDeal,
            });
        }
        match (action, self.stage) {
            (Action::Pass | Action::Play | Action::Contre, Stage::Bidding) => {
                self.apply_bid(ctx, seat, action, out)
            }
            (Action::Card(c), Stage::Tricks) => self.apply_card(ctx, seat, c, out),
            (Action::Pass | Action::Play | Action::Contre, _) => Err(ActionError::WrongPhase {
                action: action.verb(),
                phase: "trick play",
            }),
            (Action::Card(_), _) => Err(ActionError::WrongPhase {
                action: "card",
                phase: "bidding",
            }),
            _ => Err(ActionError::WrongRuleset {
                action: action.verb(),
                ruleset: ctx.ruleset,
            }),
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
            fiches: self.fiches,
            deals_since_won: self.n,
            king_pool: self.king_pool,
            staked_bete: self.staked.map(|b| b.amount),
            bete_queue: self.queue.iter().map(|b| b.amount).collect(),
            fiche_value: self.fiche_value,
            ..Pools::default()
        }
    }

    fn fill_view(&self, viewer: Viewer, view: &mut View) {
        if self.stage == Stage::Idle {
            return;
        }
        if let Viewer::Seat(s) = viewer {
            view.hand = Some(self.hands[s.index()]);
        }
        view.turn_up = Some(self.turn_up);
        view.set_aside_turn_ups = self.set_aside[..self.curieuses as usize].to_vec();
        view.trump = Some(self.trump);
        view.talon_len = self.talon_len();
        for (i, st) in view.seat_states.iter_mut().enumerate() {
            st.hand_len = self.hands[i].len() as u8;
            st.tricks = self.tricks[i];
            st.declarer = self.declarer == Some(Seat(i as u8));
            st.contrer = self.contrer == Some(Seat(i as u8));
            st.last_spoke = self.last_spoke[i];
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

    /// The fast playout: bids drawn from the two-or-one legal words, cards from the legal mask,
    /// in `legal_actions_into`'s order (Pass first; cards in bit order), one draw each, so it
    /// picks exactly what the general loop would. In lenient mode the cards go through
    /// `apply_card`, which books revokes.
    fn play_out(
        &mut self,
        ctx: &mut Ctx,
        rng: &mut impl RngCore,
        mut log: Option<&mut Vec<LoggedAction>>,
    ) {
        let mut logged = |seat, action| {
            if let Some(log) = log.as_deref_mut() {
                log.push(LoggedAction {
                    seat,
                    action,
                    auto: false,
                });
            }
        };
        while self.stage == Stage::Bidding && !self.match_over {
            let seat = self.turn;
            let second = match self.declarer {
                None => Some(Action::Play),
                Some(_) if self.contre_enabled => Some(Action::Contre),
                Some(_) => None,
            };
            let n = 1 + usize::from(second.is_some());
            let action = match (uniform_index(rng, n), second) {
                (1, Some(a)) => a,
                _ => Action::Pass,
            };
            // Pass is always a bid, and `second` is exactly the other legal bid now.
            self.bid(ctx, seat, action, &mut Discard);
            logged(seat, action);
        }
        if self.lenient {
            // Every card is legal and some stand as revokes: `apply_card` books them.
            while self.stage == Stage::Tricks {
                let seat = self.turn;
                let hand = self.hands[seat.index()];
                let k = uniform_index(rng, hand.len() as usize);
                let Some(card) = hand.nth_card(k as u32) else {
                    debug_assert!(false, "a seat to play holds no card");
                    return;
                };
                if self.apply_card(ctx, seat, card, &mut Discard).is_err() {
                    debug_assert!(false, "a legal card was refused");
                    return;
                }
                logged(seat, Action::Card(card));
            }
            return;
        }
        // Strict play. Two copies of the loop: without a record nothing opaque is called per
        // card, so the generator's state can stay in registers.
        match log {
            Some(log) => self.play_tricks(ctx, rng, |seat, card| {
                log.push(LoggedAction {
                    seat,
                    action: Action::Card(card),
                    auto: false,
                })
            }),
            None => self.play_tricks(ctx, rng, |_, _| {}),
        }
    }

    fn is_revoke(&self, seat: Seat, action: Action) -> bool {
        match action {
            Action::Card(c) if self.lenient && self.stage == Stage::Tricks => !self
                .trick
                .legal(
                    self.hands[seat.index()],
                    self.trump,
                    self.variant.ranking,
                    self.must_head,
                )
                .contains(c),
            _ => false,
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
        // Who paid a waiting bête is not public (it matters only for the final return of the
        // stakes); the dealer stands in for every payer.
        let bete = |amount| Bete {
            payer: view.dealer,
            amount,
        };
        self.pot = p.pot;
        self.fiches = p.fiches;
        self.n = p.deals_since_won;
        self.king_pool = p.king_pool;
        self.staked = p.staked_bete.map(bete);
        self.queue = p.bete_queue.iter().copied().map(bete).collect();
    }

    fn record_summary(&self, log: &mut SummaryLog) {
        log.push(
            SummaryHead {
                deal: self.deal_no,
                dealer: self.dealer,
                declarer: self.declarer,
                contrer: self.contrer,
                stayers: SeatSet::default(),
                seats: self.seats,
                tricks: self.tricks,
                outcome: self.outcome,
                net: self.net,
            },
            self.won.iter().map(|w| (w.pool, w.seat, w.amount)),
            self.betes_made.iter().map(|b| (b.payer, b.amount)),
        );
    }
}
