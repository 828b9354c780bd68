//! `bete_engine.Game`: a match driven action by action, as the server drives it.

use bete_rules::record::{Record, Report};
use bete_rules::{Action, CardSet, Decks, Game, Phase, Seat, Setup, Viewer};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore as _, SeedableRng as _};

use crate::{convert, encode, errors};

/// A match of one ruleset: its deals, every pool carried between them and the ledger.
#[pyclass(name = "Game", module = "bete_engine")]
#[derive(Debug)]
pub struct PyGame {
    pub game: Game,
}

impl PyGame {
    fn seat(&self, n: i64) -> PyResult<Seat> {
        convert::seat(n, self.game.seats())
    }

    /// The seat's hand, when its legal actions need it to be named by id (an exchange).
    fn hand_for(&self, seat: Seat, legal: &[Action]) -> CardSet {
        if encode::needs_hand(legal) {
            self.game.hand(seat)
        } else {
            CardSet::default()
        }
    }

    fn hand_of(&self, seat: Seat) -> CardSet {
        self.game.hand(seat)
    }
}

/// The phase's name, as in `bete.v1.Phase` without its prefix, lower-case.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::AwaitingDeck => "awaiting_deck",
        Phase::Bidding => "bidding",
        Phase::Exchange { .. } => "exchange",
        Phase::DealerDiscard => "dealer_discard",
        Phase::Challenge => "challenge",
        Phase::Trick { .. } => "trick",
        Phase::MatchOver => "match_over",
    }
}

#[pymethods]
impl PyGame {
    /// A new match. With `seed` (64 hex digits) every deck is the seed's (RULES.md 11.5), as at a
    /// server's table; without it the match waits for each deal's deck (`provide_deck`).
    #[new]
    #[pyo3(signature = (ruleset, seats, seed=None, config=None, first_dealer=0))]
    fn new(
        py: Python<'_>,
        ruleset: &str,
        seats: i64,
        seed: Option<&str>,
        config: Option<&Bound<'_, PyAny>>,
        first_dealer: i64,
    ) -> PyResult<PyGame> {
        let ruleset = convert::ruleset(ruleset)?;
        let seats = u8::try_from(seats)
            .map_err(|_| errors::config(format!("seat count {seats} is out of range")))?;
        let config = convert::config(py, ruleset, seats, config)?;
        let first_dealer = u8::try_from(first_dealer)
            .map_err(|_| errors::config(format!("first_dealer {first_dealer} is not a seat")))?;
        let decks = match seed {
            Some(s) => Decks::Seed(convert::seed(s)?),
            None => Decks::Explicit(Vec::new()),
        };
        let setup = Setup {
            ruleset,
            config,
            seats,
            first_dealer: Seat(first_dealer),
            decks,
        };
        let (game, _) = Game::new(setup).map_err(errors::config)?;
        Ok(PyGame { game })
    }

    /// The ruleset's id (`"bete"`, `"beast"`, …).
    #[getter]
    fn ruleset(&self) -> &'static str {
        self.game.ruleset().id()
    }

    #[getter]
    fn seats(&self) -> u8 {
        self.game.seats()
    }

    /// The index of the current deal, from 0 (the last one once the match is over).
    #[getter]
    fn deal(&self) -> u32 {
        self.game.deal_index()
    }

    #[getter]
    fn dealer(&self) -> u8 {
        self.game.dealer().0
    }

    /// `"bidding"`, `"exchange"`, `"dealer_discard"`, `"challenge"`, `"trick"`,
    /// `"awaiting_deck"` or `"match_over"`.
    #[getter]
    fn phase(&self) -> &'static str {
        phase_name(self.game.phase())
    }

    /// The seat that must act now, or None.
    #[getter]
    fn to_act(&self) -> Option<u8> {
        self.game.to_act().map(|s| s.0)
    }

    /// The full effective config, as a record writes it.
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = serde_json::Value::Object(self.game.setup().config.to_json(self.game.ruleset()));
        py.import("json")?
            .call_method1("loads", (json.to_string(),))
    }

    fn is_over(&self) -> bool {
        self.game.is_over()
    }

    /// Net jetons per seat.
    #[getter]
    fn balances(&self) -> Vec<i64> {
        self.game.balances().to_vec()
    }

    /// Each seat's balance right after the last settled deal, before the next deal's antes.
    #[getter]
    fn settled_balances(&self) -> Vec<i64> {
        self.game.settled_balances().to_vec()
    }

    /// Everything still on the table, in jetons: `sum(balances) + on_table == 0`.
    #[getter]
    fn on_table(&self) -> i64 {
        self.game.on_table()
    }

    /// The seat's legal actions now, in RULES.md 11.3 text (`"play"`, `"card KS"`, …); empty
    /// when it is not the seat's turn.
    fn legal_actions(&self, seat: i64) -> PyResult<Vec<String>> {
        let seat = self.seat(seat)?;
        Ok(self
            .game
            .legal_actions(seat)
            .iter()
            .map(ToString::to_string)
            .collect())
    }

    /// Plays `action` (11.3 text) for `seat`; raises IllegalActionError with the engine's
    /// reason, leaving the match unchanged, when it is not legal.
    fn apply(&mut self, seat: i64, action: &str) -> PyResult<()> {
        let seat = self.seat(seat)?;
        let action = convert::action(action)?;
        self.game
            .apply(seat, action)
            .map(drop)
            .map_err(errors::illegal)
    }

    /// What `seat` may see (None: a spectator), as the serialized `bete.v1.SeatView` the server
    /// would send it: `SeatView.FromString(game.view(seat))`.
    #[pyo3(signature = (seat=None))]
    fn view<'py>(&self, py: Python<'py>, seat: Option<i64>) -> PyResult<Bound<'py, PyBytes>> {
        let viewer = match seat {
            Some(s) => Viewer::Seat(self.seat(s)?),
            None => Viewer::Spectator,
        };
        Ok(convert::view_bytes(py, &self.game.view(viewer)))
    }

    /// Gives a match without a seed the deck of the deal it waits for (cards in 11.2 notation).
    fn provide_deck(&mut self, deck: Vec<String>) -> PyResult<()> {
        let deck = convert::cards(&deck)?;
        self.game
            .provide_deck(deck)
            .map(drop)
            .map_err(errors::illegal)
    }

    /// Plays the current deal to its settlement with uniformly random legal actions from a
    /// generator seeded with `seed`; False (and nothing done) when no deal waits for an action.
    fn play_out_deal(&mut self, py: Python<'_>, seed: u64) -> bool {
        let game = &mut self.game;
        py.allow_threads(|| game.play_out_deal(&mut ChaCha8Rng::seed_from_u64(seed)))
    }

    /// A copy for search: the same state and rules without the record.
    fn copy(&self) -> PyGame {
        PyGame {
            game: self.game.playout(),
        }
    }

    /// What `bete replay --json` prints for this match, as a dict: balances, on_table, match_over,
    /// deal and one summary per settled deal (settlement: outcome, pools won, bêtes, net).
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.report_json(),))
    }

    /// `report()` as the exact line of JSON `bete replay --json` prints.
    fn report_json(&self) -> String {
        Report::of(&self.game).to_json()
    }

    /// The match's record (`bete-record/1`, RULES.md 11.4) as JSON text. A `copy()` keeps no
    /// record.
    #[pyo3(signature = (pretty=false))]
    fn record_json(&self, pretty: bool) -> PyResult<String> {
        if !self.game.is_recorded() {
            return Err(errors::BadRecordError::new_err(
                "a copy() of a match keeps no record",
            ));
        }
        let record = Record::from_game(&self.game);
        Ok(if pretty {
            record.to_json_pretty()
        } else {
            record.to_json()
        })
    }

    /// The ids of the seat's legal actions (the fixed encoding of docs/research.md), ascending;
    /// empty when it is not the seat's turn.
    fn legal_action_ids(&self, seat: i64) -> PyResult<Vec<usize>> {
        let seat = self.seat(seat)?;
        let legal = self.game.legal_actions(seat);
        Ok(encode::ids(&legal, self.hand_for(seat, &legal)))
    }

    /// The seat's legal actions as a mask over every id: `NUM_ACTIONS` bytes of 0 or 1
    /// (`numpy.frombuffer(m, numpy.int8)`).
    fn action_mask<'py>(&self, py: Python<'py>, seat: i64) -> PyResult<Bound<'py, PyBytes>> {
        let mut mask = vec![0u8; encode::ACTIONS];
        for id in self.legal_action_ids(seat)? {
            mask[id] = 1;
        }
        Ok(PyBytes::new(py, &mask))
    }

    /// Plays the action with id `action_id` for `seat` and returns its 11.3 text. Raises
    /// IllegalActionError naming the id, its action and why, leaving the match unchanged, when
    /// it is not legal now.
    fn apply_id(&mut self, seat: i64, action_id: i64) -> PyResult<String> {
        let seat = self.seat(seat)?;
        let mut legal = Vec::new();
        let a = legal_by_id(&self.game, seat, action_id, &mut legal)?;
        self.game.play(seat, a).map_err(errors::illegal)?;
        Ok(a.text())
    }

    /// The action (11.3 text) that id `action_id` stands for from `seat` now (an exchange names
    /// positions in the seat's hand). Raises IllegalActionError for an id naming none.
    fn action_text(&self, seat: i64, action_id: i64) -> PyResult<String> {
        let seat = self.seat(seat)?;
        usize::try_from(action_id)
            .ok()
            // Only an exchange names cards by their place in the hand.
            .and_then(|id| {
                encode::action_of(
                    id,
                    if encode::is_exchange(id) {
                        self.hand_of(seat)
                    } else {
                        CardSet::default()
                    },
                )
            })
            .map(|a| a.to_string())
            .ok_or_else(|| errors::illegal(encode::refuse(action_id, None, &[], None)))
    }

    /// The id of an action (11.3 text) from `seat` now.
    fn action_id(&self, seat: i64, action: &str) -> PyResult<usize> {
        let seat = self.seat(seat)?;
        let a = convert::action(action)?;
        encode::action_id(a, self.hand_of(seat))
            .ok_or_else(|| errors::illegal(format!("{a} has no id for seat {seat}'s hand")))
    }

    /// The seat's observation tensor (docs/research.md), `OBSERVATION_SIZE` little-endian f32
    /// (`numpy.frombuffer(t, numpy.float32)`), built from its view alone.
    fn observation<'py>(&self, py: Python<'py>, seat: i64) -> PyResult<Bound<'py, PyBytes>> {
        let seat = self.seat(seat)?;
        Ok(encode::tensor_bytes(
            py,
            &self.game.view(Viewer::Seat(seat)),
        ))
    }

    /// Plays up to `steps` uniformly random legal actions (the loop in Rust; a deck is never
    /// awaited, so a match without a seed stops at its first deal); returns how many were played.
    fn play_random(&mut self, py: Python<'_>, steps: u64, seed: u64) -> u64 {
        let game = &mut self.game;
        py.allow_threads(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut legal = Vec::new();
            let mut done = 0;
            while done < steps {
                let Some(seat) = game.to_act() else { break };
                game.legal_actions_into(seat, &mut legal);
                let Some(&a) = legal.get(rng.next_u32() as usize % legal.len().max(1)) else {
                    break;
                };
                if game.play(seat, a).is_err() {
                    break;
                }
                done += 1;
            }
            done
        })
    }

    /// The seat's hand (11.2 codes, canonical order), as its view shows it.
    fn hand(&self, seat: i64) -> PyResult<Vec<String>> {
        let seat = self.seat(seat)?;
        Ok(self.hand_of(seat).iter().map(|c| c.to_string()).collect())
    }

    /// The seat's whole view as one line of text (the engine's `View`, everything the seat may
    /// know and nothing else): the research environments' observation string.
    fn view_text(&self, seat: i64) -> PyResult<String> {
        let seat = self.seat(seat)?;
        Ok(format!("{:?}", self.game.view(Viewer::Seat(seat))))
    }

    /// An exact copy, record included (`copy.copy`).
    fn __copy__(&self) -> PyGame {
        PyGame {
            game: self.game.clone(),
        }
    }

    /// An exact copy, record included (`copy.deepcopy`: OpenSpiel clones states this way).
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        self.__copy__()
    }

    fn __repr__(&self) -> String {
        format!(
            "Game(ruleset={:?}, seats={}, deal={}, phase={:?}, to_act={})",
            self.game.ruleset().id(),
            self.game.seats(),
            self.game.deal_index(),
            phase_name(self.game.phase()),
            self.game
                .to_act()
                .map_or_else(|| "None".to_string(), |s| s.0.to_string())
        )
    }
}

/// The action id `action_id` stands for from `seat` now, if it is legal (`legal` is a reused
/// buffer, left holding the seat's legal actions). Else IllegalActionError naming the id, its
/// action and why.
pub fn legal_by_id(
    game: &Game,
    seat: Seat,
    action_id: i64,
    legal: &mut Vec<Action>,
) -> PyResult<Action> {
    game.legal_actions_into(seat, legal);
    let hand = if encode::needs_hand(legal) {
        game.hand(seat)
    } else {
        CardSet::default()
    };
    let action = usize::try_from(action_id)
        .ok()
        .and_then(|id| encode::action_of(id, hand));
    match action {
        Some(a) if legal.contains(&a) => Ok(a),
        Some(a) => {
            // The engine's own reason (not your turn, the match is over, …) when it has one;
            // else the legal actions.
            let why = game.playout().play(seat, a).err();
            Err(errors::illegal(encode::refuse(
                action_id,
                Some(a),
                legal,
                why,
            )))
        }
        None => Err(errors::illegal(encode::refuse(
            action_id, None, legal, None,
        ))),
    }
}

/// A dict of the summaries' JSON (used by `Record`).
pub fn json_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    Ok(py
        .import("json")?
        .call_method1("loads", (text,))?
        .downcast_into::<PyDict>()?)
}
