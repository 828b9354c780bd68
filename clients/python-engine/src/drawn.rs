//! `bete_engine.DrawnMatch`: the Rust half of `bete_engine.openspiel`'s states. A match whose
//! every deck chance draws card by card, with what each seat saw happen, so that an OpenSpiel
//! step is one call into Rust and the strings and tensors are built only when asked.

use bete_rules::{Action, Card, CardSet, Config, Decks, Determinizer, Game, Seat, Seen, Setup};
use bete_rules::{Rank, Suit, Viewer};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyList, PyTuple};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng as _;

use crate::game::{PyGame, legal_by_id};
use crate::{convert, encode, errors, infostate};

/// OpenSpiel's player id of a chance node (`pyspiel.PlayerId.CHANCE`; `bete_engine.openspiel`
/// checks both ids against pyspiel's at import).
pub const CHANCE: i64 = -1;
/// OpenSpiel's player id once the game is over (`pyspiel.PlayerId.TERMINAL`).
pub const TERMINAL: i64 = -4;

/// One thing that happened, as the log keeps it.
#[derive(Clone, Debug)]
enum Step {
    /// A deal began: every seat's hand as dealt.
    Dealt(Vec<CardSet>),
    Acted(Seat, Action),
}

/// A match whose decks chance draws card by card (outcome: the card's number, suit * 13 +
/// rank, every card left with equal probability), played by action ids, remembering what each
/// seat saw: OpenSpiel's state of a bete game.
#[pyclass(name = "DrawnMatch", module = "bete_engine")]
#[derive(Clone, Debug)]
pub struct DrawnMatch {
    game: Game,
    /// The table's config, as the determinizer needs it.
    config: Config,
    /// The numbers of the cards not yet drawn into the deck, ascending.
    left: Vec<u8>,
    deck: Vec<Card>,
    log: Vec<Step>,
    /// What each seat saw of its own moves in the current deal.
    seen: Vec<Seen>,
    /// The player id to act (a seat, CHANCE or TERMINAL), kept up to date by `apply`.
    player: i64,
    /// A reused buffer for legal actions.
    legal: Vec<Action>,
}

/// `(card, 1/n)` for every card number and every count n of cards left, made once: a chance
/// node's outcomes are a list of these shared tuples, not new ones.
fn outcome_table(py: Python<'_>) -> PyResult<&'static [Vec<Py<PyTuple>>]> {
    static TABLE: GILOnceCell<Vec<Vec<Py<PyTuple>>>> = GILOnceCell::new();
    let table = TABLE.get_or_try_init(py, || {
        (0..=encode::CARDS)
            .map(|n| {
                let p = 1.0 / n.max(1) as f64;
                (0..encode::CARDS)
                    .map(|c| Ok((c, p).into_pyobject(py)?.unbind()))
                    .collect::<PyResult<Vec<_>>>()
            })
            .collect::<PyResult<Vec<_>>>()
    })?;
    Ok(table)
}

fn card_at(i: u8) -> Card {
    Card::new(
        Rank::from_index(usize::from(i % 13)),
        Suit::from_index(usize::from(i / 13)),
    )
}

fn card_number(c: Card) -> u8 {
    // At most 51: it fits.
    encode::card_index(c) as u8
}

/// What the other seats see of an action: an exchange's count, not its cards; a face-down
/// lead and a discard, not their card.
fn public(a: Action) -> String {
    match a {
        Action::Exchange(set) => format!("exchange {}", set.len()),
        Action::Hidden(_) => "hidden".to_string(),
        Action::Discard(_) => "discard".to_string(),
        a => a.to_string(),
    }
}

impl DrawnMatch {
    fn who(&self) -> i64 {
        match self.game.to_act() {
            Some(s) => i64::from(s.0),
            None if self.game.is_over() => TERMINAL,
            None => CHANCE,
        }
    }

    fn seat(&self, player: i64) -> PyResult<Seat> {
        convert::seat(player, self.game.seats())
    }

    fn hand(&self, seat: Seat) -> CardSet {
        self.game.hand(seat)
    }

    fn refill(&mut self) {
        let mut pack: Vec<u8> = self.game.pack().iter().map(|&c| card_number(c)).collect();
        pack.sort_unstable();
        self.left = pack;
    }

    /// The chance outcome `card` drawn into the deck; the deal begins when the pack is drawn.
    fn draw(&mut self, card: i64) -> PyResult<()> {
        let at = u8::try_from(card)
            .ok()
            .and_then(|c| self.left.iter().position(|&l| l == c))
            .ok_or_else(|| {
                errors::illegal(format!(
                    "chance outcome {card} is not a card left in the pack"
                ))
            })?;
        let c = self.left.remove(at);
        self.deck.push(card_at(c));
        if self.left.is_empty() {
            let deck = std::mem::take(&mut self.deck);
            self.game.provide_deck(deck).map_err(errors::illegal)?;
            self.refill();
            let seats = (0..self.game.seats()).map(Seat);
            let hands: Vec<CardSet> = seats.map(|s| self.hand(s)).collect();
            let deal = Some(self.game.deal_index());
            for (seen, &h) in self.seen.iter_mut().zip(&hands) {
                *seen = Seen {
                    deal,
                    dealt: Some(h),
                    ..Seen::default()
                };
            }
            self.log.push(Step::Dealt(hands));
        }
        Ok(())
    }

    /// Seat `seat` plays the action with id `id`, remembering its own exchanges and discard.
    fn act(&mut self, seat: Seat, id: i64) -> PyResult<()> {
        let a = legal_by_id(&self.game, seat, id, &mut self.legal)?;
        let before = matches!(a, Action::Exchange(_)).then(|| self.hand(seat));
        self.game.play(seat, a).map_err(errors::illegal)?;
        let after = before.map(|_| self.hand(seat));
        let seen = &mut self.seen[seat.index()];
        match (a, before.zip(after)) {
            (Action::Exchange(set_aside), Some((before, after))) => {
                let drawn = after.minus(before.minus(set_aside));
                if let Some(slot) = seen.exchanges.iter_mut().find(|e| e.is_none()) {
                    *slot = Some((set_aside, drawn));
                }
            }
            (Action::Discard(c), _) => seen.discarded = Some(c),
            _ => {}
        }
        self.log.push(Step::Acted(seat, a));
        Ok(())
    }

    /// The steps of the current deal (since it was dealt).
    fn this_deal(&self) -> &[Step] {
        let start = self
            .log
            .iter()
            .rposition(|s| matches!(s, Step::Dealt(_)))
            .unwrap_or(self.log.len());
        &self.log[start..]
    }
}

#[pymethods]
impl DrawnMatch {
    /// A new match waiting for its first deck (`config` as for `Game`).
    #[new]
    #[pyo3(signature = (ruleset, seats, config=None))]
    fn new(
        py: Python<'_>,
        ruleset: &str,
        seats: i64,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<DrawnMatch> {
        let ruleset = convert::ruleset(ruleset)?;
        let seats = u8::try_from(seats)
            .map_err(|_| errors::config(format!("seat count {seats} is out of range")))?;
        let config = convert::config(py, ruleset, seats, config)?;
        let setup = Setup {
            ruleset,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Explicit(Vec::new()),
        };
        let (game, _) = Game::new(setup).map_err(errors::config)?;
        let mut m = DrawnMatch {
            game,
            config,
            left: Vec::new(),
            deck: Vec::new(),
            log: Vec::new(),
            seen: vec![Seen::default(); usize::from(seats)],
            player: CHANCE,
            legal: Vec::new(),
        };
        m.refill();
        m.player = m.who();
        Ok(m)
    }

    /// The player to act: a seat, -1 (chance) or -4 (the match is over).
    #[getter]
    fn player(&self) -> i64 {
        self.player
    }

    /// Applies a chance outcome (a card left in the pack) or the acting seat's action id and
    /// returns the player to act next. Raises IllegalActionError, the match unchanged, for an
    /// outcome or id not legal now.
    fn apply(&mut self, action: i64) -> PyResult<i64> {
        match self.player {
            CHANCE => self.draw(action)?,
            TERMINAL => return Err(errors::illegal("the match is over: no action is legal")),
            // `player` is otherwise a seat, set by `who` from a u8: the cast is exact.
            seat => self.act(Seat(seat as u8), action)?,
        }
        self.player = self.who();
        Ok(self.player)
    }

    /// The legal actions now, ascending: the seat's action ids, or at a chance node the cards
    /// left; empty once the match is over.
    fn legal_actions(&mut self) -> Vec<usize> {
        match self.game.to_act() {
            Some(seat) => {
                self.game.legal_actions_into(seat, &mut self.legal);
                let hand = if encode::needs_hand(&self.legal) {
                    self.hand(seat)
                } else {
                    CardSet::default()
                };
                encode::ids(&self.legal, hand)
            }
            None if self.player == CHANCE => self.left.iter().map(|&c| usize::from(c)).collect(),
            None => Vec::new(),
        }
    }

    /// At a chance node, `(card, probability)` for every card left in the pack (empty
    /// otherwise).
    fn chance_outcomes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.player != CHANCE {
            return Ok(PyList::empty(py));
        }
        let row = &outcome_table(py)?[self.left.len()];
        PyList::new(py, self.left.iter().map(|&c| row[usize::from(c)].bind(py)))
    }

    /// The cards drawn into the deck of the deal being drawn, in order.
    #[getter]
    fn deck(&self) -> Vec<usize> {
        self.deck.iter().map(|&c| encode::card_index(c)).collect()
    }

    /// A copy of the match as a `Game` (record included), to read or play on.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame {
            game: self.game.clone(),
        }
    }

    /// The action `action` stands for from `player` now: 11.3 text, or `deck C` for chance.
    fn action_text(&self, player: i64, action: i64) -> PyResult<String> {
        if player == CHANCE {
            return u8::try_from(action)
                .ok()
                .filter(|&c| usize::from(c) < encode::CARDS)
                .map(|c| format!("deck {}", card_at(c)))
                .ok_or_else(|| errors::illegal(format!("chance outcome {action} is no card")));
        }
        let seat = self.seat(player)?;
        usize::try_from(action)
            .ok()
            .and_then(|id| {
                let hand = if encode::is_exchange(id) {
                    self.hand(seat)
                } else {
                    CardSet::default()
                };
                encode::action_of(id, hand)
            })
            .map(|a| a.to_string())
            .ok_or_else(|| errors::illegal(encode::refuse(action, None, &[], None)))
    }

    /// The player's observation string: its whole view as one line (`Game.view_text`).
    fn observation_string(&self, player: i64) -> PyResult<String> {
        let seat = self.seat(player)?;
        Ok(format!("{:?}", self.game.view(Viewer::Seat(seat))))
    }

    /// The player's information-state string: its hand at each deal, its own actions in full
    /// and the others' as the table saw them, one a line, then its view.
    fn information_state_string(&self, player: i64) -> PyResult<String> {
        let seat = self.seat(player)?;
        let mut out = String::new();
        for step in &self.log {
            match step {
                Step::Dealt(hands) => {
                    let codes: Vec<String> =
                        hands[seat.index()].iter().map(|c| c.to_string()).collect();
                    out.push_str(&format!("hand {}\n", codes.join(" ")));
                }
                Step::Acted(who, a) if *who == seat => out.push_str(&format!("{} {a}\n", who.0)),
                Step::Acted(who, a) => out.push_str(&format!("{} {}\n", who.0, public(*a))),
            }
        }
        out.push_str(&format!("{:?}", self.game.view(Viewer::Seat(seat))));
        Ok(out)
    }

    /// The player's observation tensor (`OBSERVATION_SIZE` little-endian f32).
    fn observation_tensor<'py>(
        &self,
        py: Python<'py>,
        player: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let seat = self.seat(player)?;
        Ok(encode::tensor_bytes(
            py,
            &self.game.view(Viewer::Seat(seat)),
        ))
    }

    /// The player's information-state tensor (`INFOSTATE_SIZE` little-endian f32): the
    /// observation tensor, then what the seat remembers of the current deal (docs/research.md).
    fn information_state_tensor<'py>(
        &self,
        py: Python<'py>,
        player: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let seat = self.seat(player)?;
        let view = self.game.view(Viewer::Seat(seat));
        let mut t = encode::observation(&view);
        let spoken = self.this_deal().iter().filter_map(|s| match s {
            Step::Acted(who, a) if infostate::is_spoken(*a) => Some((*who, *a)),
            _ => None,
        });
        t.extend(infostate::memory(
            &view,
            seat,
            &self.seen[seat.index()],
            spoken,
        ));
        let bytes: Vec<u8> = t.iter().flat_map(|x| x.to_le_bytes()).collect();
        Ok(PyBytes::new(py, &bytes))
    }

    /// Each seat's balance after the last settled deal once the match is over; zeros before.
    fn returns(&self) -> Vec<f64> {
        if self.game.is_over() {
            self.game
                .settled_balances()
                .iter()
                .map(|&b| b as f64)
                .collect()
        } else {
            vec![0.0; usize::from(self.game.seats())]
        }
    }

    /// A match `player` cannot tell from this one: the other hands and the talon drawn again to
    /// agree with its view and with what it saw of its own moves (the cards it set aside, drew
    /// and discarded), from `seed`. Only while a seat is to act in a deal.
    fn resample(&self, py: Python<'_>, player: i64, seed: u64) -> PyResult<DrawnMatch> {
        let seat = self.seat(player)?;
        let view = self.game.view(Viewer::Seat(seat));
        let seen = &self.seen[seat.index()];
        let config = &self.config;
        let game = py
            .allow_threads(|| {
                Determinizer::new(&view, config, seen)
                    .and_then(|d| d.sample(&mut ChaCha8Rng::seed_from_u64(seed)))
            })
            .map_err(errors::determinize)?;
        // The player's own memory stays; the others' dealt hands in the log are the sample's
        // where the player cannot know them (the log keeps only what the player may read).
        let mut other = self.clone();
        other.game = game;
        for step in &mut other.log {
            if let Step::Dealt(hands) = step {
                for (p, h) in hands.iter_mut().enumerate() {
                    if p != seat.index() {
                        *h = CardSet::default();
                    }
                }
            }
        }
        other.player = other.who();
        Ok(other)
    }

    fn __copy__(&self) -> DrawnMatch {
        self.clone()
    }

    /// An exact copy (OpenSpiel clones states with `copy.deepcopy`).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> DrawnMatch {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "DrawnMatch(ruleset={:?}, seats={}, deal={}, player={}, deck {}/{})",
            self.game.ruleset().id(),
            self.game.seats(),
            self.game.deal_index(),
            self.player,
            self.deck.len(),
            self.deck.len() + self.left.len()
        )
    }
}
