//! `bete_engine.Game`: a match driven action by action, as the server drives it.

use bete_rules::record::{Record, Report};
use bete_rules::{Decks, Game, Phase, Seat, Setup, Viewer};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng as _;

use crate::{convert, errors};

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

    /// What `bete replay` prints for this match, as a dict: balances, on_table, match_over,
    /// deal and one summary per settled deal (settlement: outcome, pools won, bêtes, net).
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (self.report_json(),))
    }

    /// `report()` as the exact line of JSON `bete replay` prints.
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

/// A dict of the summaries' JSON (used by `Record`).
pub fn json_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    Ok(py
        .import("json")?
        .call_method1("loads", (text,))?
        .downcast_into::<PyDict>()?)
}
