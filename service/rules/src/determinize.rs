//! Determinization: from what one seat knows of the deal in progress, sample full deals that
//! agree with all of it, as matches that play on with the normal `play`/`apply`.
//!
//! What the seat knows is its [`View`] (its hand, every card played face up and who played
//! it, the turn-ups, exchanged-card counts, who dropped, bids, pools) plus, optionally, what
//! only it saw of its own earlier moves ([`Seen`]: the cards it set aside and drew, its
//! discard), which a view no longer shows once its hand has changed.
//!
//! ## How a sample is made, and why it is uniform
//!
//! 1. The unseen cards (the pack minus everything the seat has seen) are dealt into the hidden
//!    places, whose sizes the view gives: each other seat's hand, its face-down leads, the
//!    cards it set aside (and the dealer's discard), and the talon. An opposing dealer who
//!    took up the turn-up holds it in one of his own places. The deal is exactly uniform over
//!    the assignments in which no hand holds a card its plays ruled out (`forbidden`: a
//!    revealed void, a bower it would have had to play, a trump it would have had to lead),
//!    by counting completions (`constrained`, whose notes give the argument). An opposing
//!    dealer's taken-up turn-up is first placed among his own places with the odds the
//!    replay would accept (`TurnUpPlace`).
//! 2. One history that leads there is built: for each exchanging seat, which of its cards it
//!    drew in each round and which it set aside (random choices among its own cards); the
//!    deck is stacked so that the deal and the talon give exactly those cards.
//! 3. The deal is replayed through the engine with the actions the view shows (bids, drops,
//!    stands, exchanges, the discard, every card in every trick), and the sample is kept only
//!    if every action is legal and the seat's view of the result equals the given view.
//!
//! Step 3 is the whole test of consistency, so nothing a ruleset reveals is missed: a card
//! not followed where following is forced (a revealed void), a bower not played where the
//! bower obligation of Beste Boer or Bester Bube applies, a face-down lead by a seat that must
//! have held no trump, a Lanterlui flush that would have been shown. Step 1 only leaves out
//! assignments step 3 would reject (the masks are sound: the engine found that each ruled-out
//! card would have made a played card illegal), so step 1 is uniform over a set that holds
//! every consistent assignment, and rejection in step 3 leaves the accepted samples uniform
//! over the consistent ones, because whether a sample is consistent depends only on the
//! hidden places of step 1 (hands only shrink during the tricks, so a void shown earlier is
//! a void now), with one exception: in Lanterlui a dealt flush depends on which cards were
//! dealt rather than drawn, so there a hidden state is weighted by the share of its
//! histories with no dealt flush (the Bayesian weight of "nobody was dealt a flush").
//! With the masks, step 3 rejects little (about one proposal in six in the tricks of the
//! exchange games, none in Bête and Beast; docs/benchmarks.md).
//!
//! Part II (Mouche, Mistigri, Loo, Rams) has one declaration round: an exchange draws from
//! the talon in turn, Mouche's and Mistigri's dealer takes up the turn-up after his own word
//! and discards, Rams's dealer robs it before anybody speaks, and Rams's widow is a hidden
//! place of its own until a seat takes it (the taker then holds it, and the five cards he threw
//! in are gone). A mouche that was dealt (MO8), or a mouche or Loo flush held when the
//! declarations ended, would have ended the deal: like Lanterlui's flushes these depend on
//! the history, and step 3 weighs them the same way. What a seat knows there is what its view
//! shows (docs/rules-decisions.md).
//!
//! The masks are learnt once per decision (`probe_forbidden`: proposals replayed with the
//! engine asked, before each card another seat played, which unseen cards would have made it
//! illegal), each proposal already dealt under the masks found so far.
//!
//! A view that no sample reconciles within [`MAX_TRIES`] draws (a stale view, another
//! ruleset version, or one this module cannot reproduce) is an error, never a guess.

mod constrained;
mod replay;

use replay::packet_layout;

use rand_chacha::rand_core::RngCore;
use thiserror::Error;

use constrained::{ConstrainedDeal, FILLER, MAX_CARDS};

use crate::action::Action;
use crate::card::Card;
use crate::cardset::CardSet;
use crate::config::{Config, DealPattern};
use crate::deal::deal_hands;
use crate::event::PrivateEvent;
use crate::game::{Decks, Game, Setup};
use crate::playout::uniform_index;
use crate::ruleset::{MAX_SEATS, RulesetId};
use crate::seat::Seat;
use crate::view::{Phase, PlayedCard, View, Viewer};

/// Draws before a view is declared irreconcilable.
pub const MAX_TRIES: u32 = 20_000;

/// Why no deal can be sampled from a view.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DeterminizeError {
    #[error("a spectator's view has no hand to determinize from")]
    Spectator,
    #[error("no deal is in progress (phase {0:?})")]
    NoDeal(Phase),
    #[error("the view does not fit this table: {0}")]
    Mismatch(String),
    #[error(
        "no deal agrees with the view after {0} draws (a stale view, or another rules version)"
    )]
    Unreconciled(u32),
}

/// What a seat saw of its own moves in the current deal that its view may no longer show.
/// Everything is optional: without it, the seat's own set-aside cards count as unseen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seen {
    /// The deal this is about; `observe` resets on a new one.
    pub deal: Option<u32>,
    /// The hand dealt to the seat.
    pub dealt: Option<CardSet>,
    /// Per buying round: the cards set aside and the cards drawn.
    pub exchanges: [Option<(CardSet, CardSet)>; 2],
    /// The dealer's discard after taking up the turn-up.
    pub discarded: Option<Card>,
}

impl Seen {
    /// Takes in one of the seat's own private events of deal `deal`.
    pub fn observe(&mut self, deal: u32, event: &PrivateEvent) {
        if self.deal != Some(deal) {
            *self = Seen {
                deal: Some(deal),
                ..Seen::default()
            };
        }
        match *event {
            PrivateEvent::Hand(h) => self.dealt = Some(h),
            PrivateEvent::Exchange { set_aside, drawn } => {
                if let Some(slot) = self.exchanges.iter_mut().find(|e| e.is_none()) {
                    *slot = Some((set_aside, drawn));
                }
            }
            PrivateEvent::Discarded(c) => self.discarded = Some(c),
            PrivateEvent::HiddenCard(_) => {}
        }
    }
}

/// Everything about the deal that is the same for every sample, worked out once.
#[derive(Clone, Debug)]
pub struct Determinizer {
    me: Seat,
    view: View,
    /// A fresh match at the view's deal, waiting for its deck.
    template: Game,
    /// Deck indices of each seat's dealt hand (by seat).
    dealt_at: Vec<Vec<usize>>,
    /// Rams: deck indices of the widow, and its size when it is still unseen (untaken).
    widow_at: Vec<usize>,
    widow_len: usize,
    widow_taker: Option<Seat>,
    /// Rams: the seat is the dealer, robbed, and threw the turn-up in with its hand (or
    /// discarded it, unknown which) for the widow.
    own_turn_up_gone: bool,
    /// Rams: the hand this seat threw in for the widow, when it remembers it.
    own_old_hand: Option<CardSet>,
    /// Index in the deck of the first turn-up.
    turn_up_at: usize,
    pack_len: usize,
    unseen: Vec<Card>,
    /// Per seat: known cards it holds or played (own hand; face-up plays; own face-down leads).
    known: [CardSet; MAX_SEATS],
    /// Per seat: unknown cards now in hand, face-down leads unseen, and cards gone (set aside,
    /// discarded) that are unknown.
    hand_len: [usize; MAX_SEATS],
    hidden_leads: [usize; MAX_SEATS],
    gone_len: [usize; MAX_SEATS],
    /// Exchanged counts per seat and round.
    exchanged: [[u8; 2]; MAX_SEATS],
    /// The seat's own set-aside and drawn cards per round, when known.
    own_aside: [Option<CardSet>; 2],
    own_drawn: [Option<CardSet>; 2],
    own_discard: Option<Card>,
    /// The dealer took up the turn-up (exchange family).
    dealer_took: bool,
    /// Bête: the bids in order. Exchange family: each seat's word per round (None: has not
    /// spoken), and its answer in a Lanterlui challenge.
    bids: Vec<(Seat, Action)>,
    round_words: [[Option<Word>; MAX_SEATS]; 2],
    challenge_words: [Option<Action>; MAX_SEATS],
    /// Lanterlui: a seat that may have challenged and then spoken again in round 2 (its
    /// challenge is then hidden in the view); tried as a second hypothesis.
    hidden_challenger: Option<Seat>,
    /// Every trick play in order.
    plays: Vec<(Seat, PlayedCard)>,
    /// The turn-ups in the order they were turned (Bête's Curieuse; otherwise one).
    turn_ups: Vec<Card>,
    talon_len: usize,
    /// Per seat: cards it cannot hold now, because a card it played would then have been
    /// illegal (a revealed void, a bower it would have had to play, a trump it would have had
    /// to lead). Found by asking the engine (`probe`), used to reject proposals early.
    forbidden: [CardSet; MAX_SEATS],
    /// Deals the unseen cards exactly uniformly among the deals that respect `forbidden`.
    dealer: ConstrainedDeal,
    /// Where the hidden turn-up goes, when it is placed directly rather than dealt.
    turn_up_place: Option<TurnUpPlace>,
}

/// An opposing dealer who took up the turn-up, with no card ruled out of his hand: the
/// turn-up is in his hand, one of his face-down leads, or his discard. Dealt like any unseen
/// card and kept only when the history fits, it lands in his hand with odds `hand` (his hand's
/// size) to 1 for each lead and 1 for the discard (it falls among his gone cards with odds
/// `gone` and is the one he discarded with chance 1 / `gone`); placing it with those odds and
/// dealing the rest uniformly gives the same distribution without the rejections.
///
/// Where his hand is constrained (his plays ruled cards out of it), the odds are the numbers
/// of completions instead: with the turn-up in his hand, `N_0` of the other cards with his
/// hand one card short; with it in one given free place, `N_0` with his hand whole divided by
/// the number of free places counting its own (a card no hand holds is in any free place
/// alike).
#[derive(Clone, Debug)]
struct TurnUpPlace {
    card: Card,
    hand: usize,
    leads: usize,
    /// The chance of his hand, and of his hand or a lead (the rest is the discard).
    odds: [f64; 2],
    /// His hand constrained: the other cards dealt with his hand one card short.
    with_it_in_hand: Option<Box<ConstrainedDeal>>,
}

/// A word in a buying round, before the sample gives its cards.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Word {
    Stand,
    Drop,
    Exchange(u8),
    /// Rams: took the widow, or announced General Rams (RA6).
    Widow,
    General,
}

/// One sample's hidden choices: what each seat holds, leads face down, set aside and drew.
#[derive(Debug, Default)]
struct Hidden {
    hands: [CardSet; MAX_SEATS],
    leads: [Vec<Card>; MAX_SEATS],
    set_aside: [[CardSet; 2]; MAX_SEATS],
    drawn: [[CardSet; 2]; MAX_SEATS],
    discard: Option<Card>,
}

impl Determinizer {
    /// Works out what is fixed about the deal from the seat's `view`, the table's `config`
    /// and what the seat saw of its own moves (`seen`; `Seen::default()` if nothing).
    pub fn new(
        view: &View,
        config: &Config,
        seen: &Seen,
    ) -> Result<Determinizer, DeterminizeError> {
        let Viewer::Seat(me) = view.viewer else {
            return Err(DeterminizeError::Spectator);
        };
        if view.to_act.is_none()
            || matches!(view.phase, Phase::AwaitingDeck | Phase::MatchOver)
            || view.match_over
        {
            return Err(DeterminizeError::NoDeal(view.phase));
        }
        let mismatch = |s: String| DeterminizeError::Mismatch(s);
        let n = view.seats;
        if view.seat_states.len() != n as usize || me.0 >= n {
            return Err(mismatch(format!(
                "{} seat states for {n} seats",
                view.seat_states.len()
            )));
        }
        let setup = Setup {
            ruleset: view.ruleset,
            config: config.clone(),
            seats: n,
            first_dealer: view.dealer,
            decks: Decks::Explicit(Vec::new()),
        };
        let mut template = Game::new_playout(setup).map_err(|e| mismatch(e.to_string()))?;
        template.restore_carried(view);
        let pack = template.pack().to_vec();
        let pack_set: CardSet = pack.iter().copied().collect();
        let hand = view
            .hand
            .ok_or_else(|| mismatch("a seat's view without its hand".into()))?;
        let exchange = view.ruleset.is_exchange_family();
        let pattern = if exchange {
            DealPattern::ThreeTwo
        } else {
            config.deal_pattern
        };
        let pool = view.ruleset.is_pool_family();
        let rams = view.ruleset == RulesetId::Rams;
        // Where each card of a deck goes: deal the canonical pack and look the cards up.
        let (dealt_at, widow_at, turn_up_at) = if pool {
            packet_layout(n, view.dealer, pattern, rams)
        } else {
            let probe = deal_hands(&pack, n, view.dealer, pattern);
            let index_of = |c: Card| pack.iter().position(|&p| p == c).unwrap_or(0);
            let at = (0..n as usize)
                .map(|s| probe.hands[s].iter().map(index_of).collect())
                .collect();
            (at, Vec::new(), probe.talon_start - 1)
        };
        // Rams: who took the widow (RA6; a public word), and whether it lies unseen still.
        let widow_taker = view
            .seat_states
            .iter()
            .find(|st| st.last_spoke == Some(Action::Widow))
            .map(|st| st.seat);

        let mut d = Determinizer {
            me,
            view: view.clone(),
            template,
            dealt_at,
            widow_at,
            widow_len: if rams && widow_taker.is_none() { 5 } else { 0 },
            widow_taker,
            own_turn_up_gone: false,
            own_old_hand: None,
            turn_up_at,
            pack_len: pack.len(),
            unseen: Vec::new(),
            known: [CardSet::EMPTY; MAX_SEATS],
            hand_len: [0; MAX_SEATS],
            hidden_leads: [0; MAX_SEATS],
            gone_len: [0; MAX_SEATS],
            exchanged: [[0; 2]; MAX_SEATS],
            own_aside: [None; 2],
            own_drawn: [None; 2],
            own_discard: None,
            dealer_took: (exchange || pool) && view.turn_up_taken,
            bids: Vec::new(),
            round_words: [[None; MAX_SEATS]; 2],
            challenge_words: [None; MAX_SEATS],
            hidden_challenger: None,
            plays: Vec::new(),
            turn_ups: Vec::new(),
            // Rams: the cards under the turn-up take no part (RA4) but are unseen all the same.
            talon_len: if rams {
                pack.len().saturating_sub(turn_up_at + 1)
            } else {
                view.talon_len as usize
            },
            forbidden: [CardSet::EMPTY; MAX_SEATS],
            dealer: ConstrainedDeal::new(&[], &[]),
            turn_up_place: None,
        };
        let mut seen_cards = hand;
        d.known[me.index()] = hand;
        for t in &view.tricks {
            for &(s, pc) in &t.cards {
                if s.0 >= n {
                    return Err(mismatch(format!("a trick card of seat {s}")));
                }
                match pc {
                    PlayedCard::FaceUp(c) | PlayedCard::FaceDown(Some(c)) => {
                        if seen_cards.contains(c) || !pack_set.contains(c) {
                            return Err(mismatch(format!("{c} seen twice or not in the pack")));
                        }
                        seen_cards.insert(c);
                        d.known[s.index()].insert(c);
                    }
                    PlayedCard::FaceDown(None) => d.hidden_leads[s.index()] += 1,
                }
                d.plays.push((s, pc));
            }
        }
        // The turn-ups, first turned first.
        d.turn_ups.extend(view.set_aside_turn_ups.iter().copied());
        let turn_up = view
            .turn_up
            .ok_or_else(|| mismatch("a deal in progress without a turn-up".into()))?;
        d.turn_ups.push(turn_up);
        for &c in &d.turn_ups {
            if !pack_set.contains(c) {
                return Err(mismatch(format!("turn-up {c} is not in the pack")));
            }
        }
        // The turn-up is seen by all; an opposing dealer who took it up may hold it still.
        let turn_up_hidden = d.dealer_took && view.dealer != me && !seen_cards.contains(turn_up);
        for &c in &d.turn_ups {
            if !(d.dealer_took && c == turn_up) {
                seen_cards.insert(c);
            }
        }
        if d.dealer_took && view.dealer == me {
            seen_cards.insert(turn_up);
        }
        for st in &view.seat_states {
            let i = st.seat.index();
            if i >= n as usize {
                return Err(mismatch(format!("seat state of seat {}", st.seat)));
            }
            d.exchanged[i] = st.exchanged;
            let k = st.exchanged[0] as usize + st.exchanged[1] as usize;
            // The widow's taker threw in the five cards he held (RA6).
            let discard = usize::from(d.dealer_took && st.seat == view.dealer)
                + if widow_taker == Some(st.seat) { 5 } else { 0 };
            if st.seat == me {
                if st.hand_len as u32 != hand.len() {
                    return Err(mismatch("own hand length".into()));
                }
                d.gone_len[i] = k + discard;
            } else {
                d.hand_len[i] = st.hand_len as usize;
                d.gone_len[i] = k + discard;
            }
        }
        // The seat's own moves: what it remembers, and what its view still shows (its last
        // word: the cards of its last exchange, or its discard).
        if exchange || pool {
            let mine = d.exchanged[me.index()];
            let rounds: Vec<usize> = (0..2).filter(|&r| mine[r] > 0).collect();
            let remembered: Vec<(CardSet, CardSet)> =
                seen.exchanges.iter().flatten().copied().collect();
            if remembered.len() == rounds.len() {
                for (&r, &(aside, drawn)) in rounds.iter().zip(&remembered) {
                    if aside.len() == u32::from(mine[r]) && drawn.len() == aside.len() {
                        d.own_aside[r] = Some(aside);
                        d.own_drawn[r] = Some(drawn);
                    }
                }
            }
            let last_word = view.seat_states[me.index()].last_spoke;
            if let (Some(Action::Exchange(aside)), Some(&r)) = (last_word, rounds.last())
                && aside.len() == u32::from(mine[r])
            {
                d.own_aside[r] = Some(aside);
            }
            for aside in d.own_aside.iter().flatten() {
                if aside.intersect(seen_cards).is_empty() {
                    seen_cards = seen_cards.union(*aside);
                    d.gone_len[me.index()] -= aside.len() as usize;
                }
            }
            // Rams: a seat (not the dealer) that took the widow remembers the hand it threw in.
            if widow_taker == Some(me)
                && view.dealer != me
                && seen.deal == Some(view.deal)
                && let Some((old, widow)) = seen.exchanges[0]
                && old.len() == 5
                && widow == d.known[me.index()]
                && old.intersect(seen_cards).is_empty()
            {
                d.own_old_hand = Some(old);
                seen_cards = seen_cards.union(old);
                d.gone_len[me.index()] -= 5;
            }
            if d.dealer_took && view.dealer == me {
                // A dealer who no longer holds the turn-up and played it nowhere discarded it
                // (unless he threw his hand in for the widow since).
                let shown = match last_word {
                    Some(Action::Discard(c)) => Some(c),
                    _ => None,
                };
                let discard = seen.discarded.or(shown).or_else(|| {
                    (widow_taker != Some(me) && !d.known[me.index()].contains(turn_up))
                        .then_some(turn_up)
                });
                if let Some(c) = discard {
                    d.own_discard = Some(c);
                    // The turn-up itself may be the discard; it is already seen.
                    seen_cards.insert(c);
                    d.gone_len[me.index()] -= 1;
                }
                // Rams: a dealer who robbed and then took the widow threw the turn-up in
                // with his hand, unless he discarded it: one of his gone cards is known.
                if widow_taker == Some(me) && d.own_discard != Some(turn_up) {
                    d.own_turn_up_gone = true;
                    d.gone_len[me.index()] -= 1;
                }
            }
        }
        d.unseen = pack
            .iter()
            .copied()
            .filter(|&c| !seen_cards.contains(c))
            .collect();
        if turn_up_hidden && !d.unseen.contains(&turn_up) {
            d.unseen.push(turn_up);
        }
        let places: usize = (0..n as usize)
            .map(|i| d.hand_len[i] + d.hidden_leads[i] + d.gone_len[i])
            .sum::<usize>()
            + d.talon_len
            + d.widow_len;
        if places != d.unseen.len() {
            return Err(mismatch(format!(
                "{} unseen cards for {places} hidden places",
                d.unseen.len()
            )));
        }
        d.words(view)?;
        d.rebuild_dealer();
        d.probe_forbidden()?;
        Ok(d)
    }

    /// Fills `forbidden` by replaying proposals with the engine asked, before each card
    /// another seat played, which unseen cards would have made that card illegal. What a card
    /// play reveals depends only on the public trick (the probe replaces the whole hand), so
    /// any replay that reaches the play tells it; the masks found so far already speed up
    /// later proposals. A card whose presence would have made the played card illegal cannot
    /// be in the seat's hand then, nor now (hands only shrink in the tricks).
    fn probe_forbidden(&mut self) -> Result<(), DeterminizeError> {
        use rand_chacha::rand_core::SeedableRng;
        if self.plays.iter().all(|&(s, _)| s == self.me) {
            return Ok(());
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let hypotheses = 1 + u32::from(self.hidden_challenger.is_some());
        for k in 0..MAX_TRIES {
            if self.dealer.impossible() {
                break;
            }
            let mut masks = self.forbidden;
            let found = self.try_once(&mut rng, k % hypotheses == 1, Some(&mut masks));
            if masks != self.forbidden {
                self.forbidden = masks;
                self.rebuild_dealer();
            }
            if found.is_some() {
                return Ok(());
            }
        }
        Err(DeterminizeError::Unreconciled(MAX_TRIES))
    }

    /// Works out the exact dealing of the unseen cards under what is ruled out so far: each
    /// other seat's hand refuses what its plays ruled out, and where an opposing dealer took
    /// up the turn-up, nobody else can hold it.
    fn rebuild_dealer(&mut self) {
        self.rebuild_dealer_placing(true);
    }

    /// `rebuild_dealer`, placing the hidden turn-up directly or not (then it is dealt like
    /// any unseen card and the replay rejects what does not fit; kept to test the odds).
    fn rebuild_dealer_placing(&mut self, place: bool) {
        let me = self.me.index();
        let dealer = self.view.dealer.index();
        let hidden_turn_up = self
            .turn_ups
            .last()
            .filter(|&&c| self.dealer_took && self.unseen.contains(&c));
        let hands: Vec<(usize, usize, CardSet)> = (0..self.view.seats as usize)
            .filter(|&s| s != me)
            .map(|s| {
                let mut no = self.forbidden[s];
                if let Some(&c) = hidden_turn_up
                    && s != dealer
                {
                    no.insert(c);
                }
                (s, self.hand_len[s], no)
            })
            .collect();
        // An opposing dealer who took up the turn-up holds it, led it face down, or discarded
        // it. Where his hand is free of ruled-out cards it is placed there directly (see
        // `TurnUpPlace`) and the other unseen cards are dealt without it.
        self.turn_up_place = None;
        let rams_taker = self.widow_taker == Some(self.view.dealer);
        if let Some(&c) = hidden_turn_up
            && place
            && !rams_taker
            && dealer != me
        {
            let rest: Vec<Card> = self.unseen.iter().copied().filter(|&u| u != c).collect();
            let (h, leads) = (self.hand_len[dealer], self.hidden_leads[dealer]);
            let others = ConstrainedDeal::new(&rest, &hands);
            if self.forbidden[dealer]
                .intersect(self.unseen_set())
                .is_empty()
            {
                // His hand is a free place: every one of his places is as likely.
                let all = (h + leads + 1) as f64;
                self.turn_up_place = Some(TurnUpPlace {
                    card: c,
                    hand: h,
                    leads,
                    odds: [h as f64 / all, (h + leads) as f64 / all],
                    with_it_in_hand: None,
                });
                self.dealer = others;
                return;
            }
            // His hand is constrained: the odds are the completions with the turn-up in his
            // hand (his other h - 1 cards dealt under his constraints) against those with it
            // out of every hand, shared among the free places.
            let mut fewer = hands.clone();
            for x in fewer.iter_mut().filter(|x| x.0 == dealer) {
                x.1 = x.1.saturating_sub(1);
            }
            let in_hand = (h > 0 && !self.forbidden[dealer].contains(c))
                .then(|| ConstrainedDeal::new(&rest, &fewer));
            let with_hand = match &in_hand {
                Some(d) => d.completions().map(|(n, _)| n),
                None => Some(0.0),
            };
            if let (Some(a), Some((b, free))) = (with_hand, others.completions()) {
                // Out of every hand, the turn-up is one of the free cards, each place alike.
                let each = b / (free + 1) as f64;
                let all = a + each * (leads + 1) as f64;
                self.turn_up_place = Some(TurnUpPlace {
                    card: c,
                    hand: h,
                    leads,
                    odds: [a / all, (a + each * leads as f64) / all],
                    with_it_in_hand: in_hand.map(Box::new),
                });
                self.dealer = others;
                return;
            }
        }
        self.dealer = ConstrainedDeal::new(&self.unseen, &hands);
    }

    fn unseen_set(&self) -> CardSet {
        self.unseen.iter().copied().collect()
    }

    /// The spoken actions of the deal, from the view.
    fn words(&mut self, view: &View) -> Result<(), DeterminizeError> {
        let n = view.seats;
        if view.ruleset.is_bete_family() {
            // Every Curieuse ended a round in which all passed; in the last round each seat
            // that spoke is shown by its last word, from eldest on.
            for _ in 0..view.set_aside_turn_ups.len() {
                for k in 1..=n {
                    self.bids.push((view.dealer.offset(k, n), Action::Pass));
                }
            }
            for k in 1..=n {
                let s = view.dealer.offset(k, n);
                match view.seat_states[s.index()].last_spoke {
                    Some(a) => self.bids.push((s, a)),
                    None => break,
                }
            }
            return Ok(());
        }
        if view.ruleset.is_pool_family() {
            self.pool_words(view);
            return Ok(());
        }
        if !view.ruleset.is_exchange_family() {
            return Ok(());
        }
        // Position from Vorhand (0) to the dealer (n - 1).
        let pos = |s: Seat| (s.0 + n - view.dealer.0 - 1) % n;
        let round = match view.phase {
            Phase::Exchange { round } => round,
            Phase::Challenge => 2,
            _ => 3,
        };
        let to_act_pos = view.to_act.map_or(n, pos);
        for st in &view.seat_states {
            let s = st.seat;
            let i = s.index();
            let ex = st.exchanged;
            let challenged = matches!(st.last_spoke, Some(Action::Challenge | Action::Decline));
            if challenged {
                self.challenge_words[i] = st.last_spoke;
            }
            let spoke1 = round > 1 || pos(s) < to_act_pos;
            if spoke1 {
                self.round_words[0][i] = Some(if ex[0] > 0 {
                    Word::Exchange(ex[0])
                } else if st.dropped || challenged {
                    Word::Drop
                } else {
                    Word::Stand
                });
            }
            let spoke2 = !st.dropped
                && (round > 2
                    || (round == 2 && view.phase != Phase::Challenge && pos(s) < to_act_pos));
            if spoke2 {
                self.round_words[1][i] = Some(if ex[1] > 0 {
                    Word::Exchange(ex[1])
                } else {
                    Word::Stand
                });
            }
        }
        // Lanterlui: every non-dealer dropped and one then challenged and has spoken again in
        // round 2 since: the view shows him in, with no Drop. Tried as a second hypothesis.
        if view.ruleset == RulesetId::Lanterlui {
            let ins: Vec<Seat> = view
                .seat_states
                .iter()
                .filter(|st| !st.dropped && st.seat != view.dealer)
                .map(|st| st.seat)
                .collect();
            if let [c] = ins[..]
                && self.exchanged[c.index()][0] == 0
                && self.challenge_words[c.index()].is_none()
            {
                self.hidden_challenger = Some(c);
            }
        }
        Ok(())
    }

    /// Part II: the one declaration round, eldest to the dealer (MO10, LO7, RA6). Before it,
    /// Rams's dealer robs the turn-up (RA5); after it, Mouche's dealer takes it up (MO11).
    fn pool_words(&mut self, view: &View) {
        let n = view.seats;
        let pos = |s: Seat| (s.0 + n - view.dealer.0 - 1) % n;
        let to_act_pos = match view.phase {
            Phase::Exchange { .. } => view.to_act.map_or(n, pos),
            // Rams's robbing comes before anybody declares.
            Phase::DealerDiscard if view.ruleset == RulesetId::Rams => 0,
            _ => n,
        };
        for st in &view.seat_states {
            if pos(st.seat) >= to_act_pos {
                continue;
            }
            let ex = st.exchanged[0];
            self.round_words[0][st.seat.index()] = Some(match st.last_spoke {
                Some(Action::Drop) => Word::Drop,
                Some(Action::Widow) => Word::Widow,
                Some(Action::General) => Word::General,
                // The dealer's word is hidden by his discard: his count tells it.
                _ if st.dropped => Word::Drop,
                _ if ex > 0 => Word::Exchange(ex),
                _ => Word::Stand,
            });
        }
    }

    /// The cards `seat` cannot hold now by what its plays revealed (see `forbidden`).
    pub fn ruled_out(&self, seat: Seat) -> CardSet {
        self.forbidden
            .get(seat.index())
            .copied()
            .unwrap_or_default()
    }

    /// The seat this determinizer samples for.
    pub fn seat(&self) -> Seat {
        self.me
    }

    /// One full deal that agrees with the view, drawn uniformly (see the module notes), as a
    /// match (without a record) standing exactly where the view stands.
    pub fn sample(&self, rng: &mut impl RngCore) -> Result<Game, DeterminizeError> {
        self.sample_counted(rng).map(|(g, _)| g)
    }

    /// `sample`, with the number of proposals it took (1 = the first was consistent).
    pub fn sample_counted(&self, rng: &mut impl RngCore) -> Result<(Game, u32), DeterminizeError> {
        let hypotheses = 1 + u32::from(self.hidden_challenger.is_some());
        if self.dealer.impossible() {
            return Err(DeterminizeError::Unreconciled(0));
        }
        for k in 0..MAX_TRIES {
            if let Some(g) = self.try_once(rng, k % hypotheses == 1, None) {
                return Ok((g, k + 1));
            }
        }
        Err(DeterminizeError::Unreconciled(MAX_TRIES))
    }
}

/// Samples one deal for the seat whose view this is (see [`Determinizer`]; build one to draw
/// many samples from the same view).
pub fn determinize(
    view: &View,
    config: &Config,
    seen: &Seen,
    rng: &mut impl RngCore,
) -> Result<Game, DeterminizeError> {
    Determinizer::new(view, config, seen)?.sample(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shuffle::Seed;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;

    /// The turn-up an opposing dealer took up lands in his hand as often when it is placed
    /// with the counted odds as when it is dealt blind and the replay rejects the misfits
    /// (two-proportion test over views where his plays ruled cards out of his hand).
    #[test]
    fn a_placed_turn_up_has_the_odds_of_rejection() {
        let mut views = 0;
        for seed in 0..200u8 {
            if views >= 4 {
                break;
            }
            for r in [RulesetId::BesteBoer, RulesetId::Lanterlui] {
                let n = 4;
                let setup = Setup {
                    ruleset: r,
                    config: Config::defaults(r, n),
                    seats: n,
                    first_dealer: Seat(0),
                    decks: Decks::Seed(Seed([seed; 32])),
                };
                let Ok((mut g, _)) = Game::new(setup) else {
                    continue;
                };
                let mut rng = ChaCha8Rng::seed_from_u64(u64::from(seed));
                while let Some(s) = g.to_act() {
                    if g.deal_index() > 0 {
                        break;
                    }
                    let view = g.view(Viewer::Seat(s));
                    if let Ok(d) =
                        Determinizer::new(&view, &Config::defaults(r, n), &Seen::default())
                        && let Some(p) = &d.turn_up_place
                        && p.with_it_in_hand.is_some()
                        && p.odds[0] > 0.05
                        && p.odds[0] < 0.95
                    {
                        let dealer = view.dealer;
                        let card = p.card;
                        let mut blind = d.clone();
                        blind.rebuild_dealer_placing(false);
                        let share = |d: &Determinizer, rng: &mut ChaCha8Rng| -> f64 {
                            let k = 4000;
                            let held = (0..k)
                                .filter(|_| {
                                    let g = d.sample(rng).expect("sample");
                                    let hand = g.view(Viewer::Seat(dealer)).hand;
                                    hand.is_some_and(|h| h.contains(card))
                                })
                                .count();
                            held as f64 / f64::from(k)
                        };
                        let (a, b) = (share(&d, &mut rng), share(&blind, &mut rng));
                        let pooled = (a + b) / 2.0;
                        let se = (2.0 * pooled * (1.0 - pooled) / 4000.0).sqrt();
                        assert!(
                            (a - b).abs() < 4.5 * se,
                            "{r}: placed {a} against blind {b}"
                        );
                        views += 1;
                    }
                    let legal = g.legal_actions(s);
                    let a = legal[uniform_index(&mut rng, legal.len())];
                    if g.play(s, a).is_err() {
                        break;
                    }
                }
            }
        }
        assert!(views >= 4, "only {views} views with a constrained dealer");
    }
}
