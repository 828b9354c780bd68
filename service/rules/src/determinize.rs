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

    /// One proposal, replayed and checked; None if it does not agree with the view.
    // The per-seat arrays (hands, leads, gone, after, dealt) are indexed together by seat.
    #[allow(clippy::needless_range_loop)]
    fn try_once(
        &self,
        rng: &mut impl RngCore,
        challenger: bool,
        probe: Option<&mut [CardSet; MAX_SEATS]>,
    ) -> Option<Game> {
        let n = self.view.seats as usize;
        let me = self.me.index();
        let dealer = self.view.dealer.index();
        let turn_up = *self.turn_ups.last()?;
        let exchange = self.view.ruleset.is_exchange_family();
        let pool = self.view.ruleset.is_pool_family();
        let mut hands = [CardSet::EMPTY; MAX_SEATS];
        let mut free = [FILLER; MAX_CARDS];
        // Where the placed turn-up goes: 0..hand its hand, then each lead, then the discard.
        let placed = self.turn_up_place.as_ref().map(|p| {
            let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            let at = if u < p.odds[0] {
                0
            } else if u < p.odds[1] && p.leads > 0 {
                p.hand + uniform_index(rng, p.leads)
            } else {
                p.hand + p.leads
            };
            (p, at)
        });
        let dealing = match placed {
            Some((p, at)) if at < p.hand => p.with_it_in_hand.as_deref().unwrap_or(&self.dealer),
            _ => &self.dealer,
        };
        let free_len = dealing.deal(rng, &mut hands, &mut free);
        let in_place = |s: usize, part: usize| -> usize {
            match placed {
                Some((p, at)) if s == dealer => {
                    let (lo, hi) = match part {
                        0 => (0, p.hand),
                        1 => (p.hand, p.hand + p.leads),
                        _ => (p.hand + p.leads, p.hand + p.leads + 1),
                    };
                    usize::from((lo..hi).contains(&at))
                }
                _ => 0,
            }
        };
        let mut constrained = [false; MAX_SEATS];
        for s in dealing.constrained() {
            constrained[s] = true;
        }
        // The free cards come shuffled: laying them out in order is uniform.
        let mut next = free[..free_len].iter().copied();
        let mut h = Hidden::default();
        let mut gone = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            h.hands[s] = if s == me {
                self.known[s]
            } else {
                let mut hand = if constrained[s] {
                    hands[s]
                } else {
                    next.by_ref()
                        .take(self.hand_len[s] - in_place(s, 0))
                        .collect()
                };
                if let (1, Some((p, _))) = (in_place(s, 0), placed) {
                    hand.insert(p.card);
                }
                hand
            };
            // In the shuffled order, so which hidden card led which trick is uniform too.
            let k = self.hidden_leads[s] - in_place(s, 1);
            h.leads[s] = next.by_ref().take(k).collect();
            if let (1, Some((p, at))) = (in_place(s, 1), placed) {
                h.leads[s].insert(at - p.hand, p.card);
            }
            let k = self.gone_len[s] - in_place(s, 2);
            gone[s] = next.by_ref().take(k).collect();
            if let (1, Some((p, _))) = (in_place(s, 2), placed) {
                gone[s].insert(p.card);
            }
        }
        // Each seat's five cards after the exchanges and the discard.
        let mut after = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            let mut f = h.hands[s].union(self.known[s]);
            for &c in &h.leads[s] {
                f.insert(c);
            }
            after[s] = f;
        }
        if self.own_turn_up_gone {
            gone[me].insert(turn_up);
        }
        if self.dealer_took {
            // The dealer held five cards and the turn-up, and discarded one of the six.
            let discard = match (self.own_discard, placed) {
                (Some(c), _) if dealer == me => c,
                // The placed turn-up among his gone cards is his discard.
                (_, Some((p, at))) if at == p.hand + p.leads => {
                    gone[dealer].remove(p.card);
                    p.card
                }
                _ => {
                    let c = pick(gone[dealer], 1, rng).first()?;
                    gone[dealer].remove(c);
                    c
                }
            };
            h.discard = Some(discard);
        }
        // Rams: the widow, which its taker holds now instead of the five he threw in.
        let mut widow = CardSet::EMPTY;
        if let Some(t) = self.widow_taker {
            let t = t.index();
            widow = after[t];
            after[t] = match self.own_old_hand {
                Some(old) if t == me => old,
                _ => std::mem::take(&mut gone[t]),
            };
        } else if self.widow_len > 0 {
            widow = next.by_ref().take(self.widow_len).collect();
        }
        if widow.contains(turn_up) {
            return None;
        }
        if let Some(discard) = h.discard {
            let mut six = after[dealer];
            six.insert(discard);
            if !six.contains(turn_up) {
                return None;
            }
            six.remove(turn_up);
            after[dealer] = six;
        }
        if after.iter().any(|a| a.contains(turn_up)) && (exchange || pool) {
            // Only the dealer's discard swap above may hold the turn-up.
            return None;
        }
        // Which cards each seat set aside and drew, round by round, backwards from `after`.
        let mut dealt = [CardSet::EMPTY; MAX_SEATS];
        for s in 0..n {
            let ex = self.exchanged[s];
            let mut hand = after[s];
            let mut g = gone[s];
            for r in (0..2).rev() {
                let k = ex[r] as usize;
                if k == 0 {
                    continue;
                }
                let (known_aside, known_drawn) = if s == me {
                    (self.own_aside[r], self.own_drawn[r])
                } else {
                    (None, None)
                };
                let aside = known_aside.unwrap_or_else(|| pick(g, k, rng));
                g = g.minus(aside);
                let drawn = known_drawn.unwrap_or_else(|| pick(hand, k, rng));
                if !drawn.is_subset(hand) || aside.len() as usize != k {
                    return None;
                }
                h.set_aside[s][r] = aside;
                h.drawn[s][r] = drawn;
                hand = hand.minus(drawn).union(aside);
            }
            dealt[s] = hand;
        }
        // The deck: dealt hands, the turn-ups, the talon in the order it is drawn.
        let mut deck = [turn_up; MAX_CARDS];
        for s in 0..n {
            if dealt[s].len() as usize != self.dealt_at[s].len() {
                return None;
            }
            for (c, &at) in dealt[s].iter().zip(&self.dealt_at[s]) {
                *deck.get_mut(at)? = c;
            }
        }
        if widow.len() as usize != self.widow_at.len() {
            return None;
        }
        for (c, &at) in widow.iter().zip(&self.widow_at) {
            *deck.get_mut(at)? = c;
        }
        let mut at = self.turn_up_at;
        let mut put = |c: Card| -> Option<()> {
            *deck.get_mut(at)? = c;
            at += 1;
            Some(())
        };
        for &c in &self.turn_ups {
            put(c)?;
        }
        if exchange || pool {
            for r in 0..2 {
                for k in 1..=n as u8 {
                    let s = self.view.dealer.offset(k, n as u8);
                    for c in h.drawn[s.index()][r].iter() {
                        put(c)?;
                    }
                }
            }
        }
        for c in next.take(self.talon_len) {
            put(c)?;
        }
        if at != self.pack_len {
            return None;
        }
        let deck = &deck[..self.pack_len];

        let mut g = self.template.clone();
        g.play_deck(deck).ok()?;
        self.replay(&mut g, &h, challenger, probe)?;
        g.restore_carried(&self.view);
        (g.view(Viewer::Seat(self.me)) == self.view).then_some(g)
    }

    /// Plays the view's actions on `g`, filling in the sample's hidden cards, until the view's
    /// decision point. None if an action is refused.
    fn replay(
        &self,
        g: &mut Game,
        h: &Hidden,
        challenger: bool,
        mut probe: Option<&mut [CardSet; MAX_SEATS]>,
    ) -> Option<()> {
        // Only a probe asks the engine, so only a probe allocates.
        let mut buf = Vec::new();
        let mut bids = self.bids.iter();
        let mut plays = self.plays.iter();
        let mut leads: [usize; MAX_SEATS] = [0; MAX_SEATS];
        let hidden_challenger = self.hidden_challenger.filter(|_| challenger);
        loop {
            let seat = g.to_act()?;
            let i = seat.index();
            let action = match g.phase() {
                Phase::Bidding => match bids.next() {
                    Some(&(s, a)) if s == seat => a,
                    Some(_) => return None,
                    None => break,
                },
                Phase::Exchange { round } => {
                    let r = usize::from(round.clamp(1, 2) - 1);
                    let word = if r == 0 && hidden_challenger == Some(seat) {
                        Some(Word::Drop)
                    } else {
                        self.round_words[r][i]
                    };
                    match word {
                        None => break,
                        Some(Word::Stand) => Action::Stand,
                        Some(Word::Drop) => Action::Drop,
                        Some(Word::Exchange(_)) => Action::Exchange(h.set_aside[i][r]),
                        Some(Word::Widow) => Action::Widow,
                        Some(Word::General) => Action::General,
                    }
                }
                Phase::Challenge => {
                    if hidden_challenger == Some(seat) {
                        Action::Challenge
                    } else {
                        match self.challenge_words[i] {
                            Some(a) => a,
                            None => break,
                        }
                    }
                }
                Phase::DealerDiscard => match h.discard {
                    Some(c) if self.dealer_took => Action::Discard(c),
                    _ => break,
                },
                Phase::Trick { .. } => match plays.next() {
                    Some(&(s, pc)) if s == seat => match pc {
                        PlayedCard::FaceUp(c) => Action::Card(c),
                        PlayedCard::FaceDown(Some(c)) => Action::Hidden(c),
                        PlayedCard::FaceDown(None) => {
                            let c = *h.leads[i].get(leads[i])?;
                            leads[i] += 1;
                            Action::Hidden(c)
                        }
                    },
                    Some(_) => return None,
                    None => break,
                },
                Phase::AwaitingDeck | Phase::MatchOver => return None,
            };
            if let (Some(masks), Phase::Trick { .. }) = (probe.as_deref_mut(), g.phase())
                && seat != self.me
            {
                for &c in &self.unseen {
                    let (hand, asked) = match action {
                        Action::Card(x) if x != c => {
                            (CardSet::single(x).union(CardSet::single(c)), action)
                        }
                        Action::Hidden(_) => (CardSet::single(c), Action::Hidden(c)),
                        _ => continue,
                    };
                    if !g.legal_with_hand(seat, hand, asked, &mut buf) {
                        masks[i].insert(c);
                    }
                }
            }
            g.play(seat, action).ok()?;
        }
        (bids.next().is_none() && plays.next().is_none()).then_some(())
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

/// A uniformly random `k`-card subset of `set` (all of it if it has at most `k` cards).
fn pick(set: CardSet, k: usize, rng: &mut impl RngCore) -> CardSet {
    if set.len() as usize <= k {
        return set;
    }
    // A partial Fisher–Yates over the set's bit indices.
    let mut bits = [0u8; 64];
    let mut n = 0;
    let mut rest = set.bits();
    while rest != 0 {
        bits[n] = rest.trailing_zeros() as u8;
        n += 1;
        rest &= rest - 1;
    }
    let mut out = 0u64;
    for t in 0..k {
        let j = t + uniform_index(rng, n - t);
        bits.swap(t, j);
        out |= 1 << bits[t];
    }
    CardSet(out)
}

/// Part II: the deck indices of each seat's dealt hand, of Rams's widow, and of the turn-up,
/// dealt as the table deals them: packet rounds from eldest to the dealer, the widow's packet
/// just before the dealer's (19, RA4).
fn packet_layout(
    seats: u8,
    dealer: Seat,
    pattern: DealPattern,
    rams: bool,
) -> (Vec<Vec<usize>>, Vec<usize>, usize) {
    let mut hands = vec![Vec::with_capacity(5); seats as usize];
    let mut widow = Vec::new();
    let mut i = 0;
    for &packet in pattern.packets() {
        for p in 0..seats {
            let seat = dealer.offset(p + 1, seats);
            if rams && seat == dealer {
                widow.extend(i..i + packet as usize);
                i += packet as usize;
            }
            if let Some(h) = hands.get_mut(seat.index()) {
                h.extend(i..i + packet as usize);
            }
            i += packet as usize;
        }
    }
    (hands, widow, i)
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
