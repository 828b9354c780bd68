//! Records (`bete-record/1`, RULES.md 11.4): parse, write, replay; and the seeded shuffle.

use bete_rules::record::{self, Record};
use bete_rules::{Config, pack};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::game::{PyGame, json_value};
use crate::{convert, errors};

/// A parsed and checked game record (everything but its actions, which only a replay checks).
#[pyclass(name = "Record", module = "bete_engine")]
#[derive(Debug)]
pub struct PyRecord {
    record: Record,
}

#[pymethods]
impl PyRecord {
    /// Parses a record's JSON text; raises BadRecordError naming what is wrong.
    #[staticmethod]
    fn parse(text: &str) -> PyResult<PyRecord> {
        Record::from_json(text)
            .map(|record| PyRecord { record })
            .map_err(|e| errors::replay(e.into()))
    }

    /// The record of a match played so far.
    #[staticmethod]
    fn from_game(game: &PyGame) -> PyResult<PyRecord> {
        if !game.game.is_recorded() {
            return Err(errors::BadRecordError::new_err(
                "a copy() of a match keeps no record",
            ));
        }
        Ok(PyRecord {
            record: Record::from_game(&game.game),
        })
    }

    #[getter]
    fn ruleset(&self) -> &'static str {
        self.record.ruleset.id()
    }

    #[getter]
    fn seats(&self) -> u8 {
        self.record.seats
    }

    /// The record as a dict (its JSON).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        json_value(py, &self.record.to_json())
    }

    #[pyo3(signature = (pretty=false))]
    fn to_json(&self, pretty: bool) -> String {
        if pretty {
            self.record.to_json_pretty()
        } else {
            self.record.to_json()
        }
    }

    /// Replays the record, checking every action and the stored balances.
    fn replay(&self, py: Python<'_>) -> PyResult<PyGame> {
        let record = &self.record;
        py.allow_threads(|| record::replay(record))
            .map(|game| PyGame { game })
            .map_err(errors::replay)
    }

    fn __repr__(&self) -> String {
        format!(
            "Record(ruleset={:?}, seats={}, deals={})",
            self.record.ruleset.id(),
            self.record.seats,
            self.record.json.deals.len()
        )
    }
}

/// Parses and replays a record's JSON text: the match it describes. An illegal action raises
/// IllegalActionError with `bete replay`'s exact line, a malformed record BadRecordError.
#[pyfunction]
pub fn replay(py: Python<'_>, text: &str) -> PyResult<PyGame> {
    py.allow_threads(|| record::replay_json(text))
        .map(|game| PyGame { game })
        .map_err(errors::replay)
}

/// The deck of deal `deal` of a match with `seed` (RULES.md 11.5's versioned shuffle).
#[pyfunction]
#[pyo3(signature = (seed, deal, ruleset, seats, config=None))]
pub fn deck_order(
    py: Python<'_>,
    seed: &str,
    deal: u64,
    ruleset: &str,
    seats: i64,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<String>> {
    let ruleset = convert::ruleset(ruleset)?;
    let seats = u8::try_from(seats)
        .map_err(|_| errors::config(format!("seat count {seats} is out of range")))?;
    let config: Config = convert::config(py, ruleset, seats, config)?;
    config.check_seats(ruleset, seats).map_err(errors::config)?;
    let seed = convert::seed(seed)?;
    let pack = pack(ruleset, &config, seats);
    Ok(bete_rules::deck_order(&seed, deal, &pack)
        .iter()
        .map(ToString::to_string)
        .collect())
}

/// The full effective default config of a ruleset at a table of `seats`.
#[pyfunction]
pub fn default_config<'py>(
    py: Python<'py>,
    ruleset: &str,
    seats: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let ruleset = convert::ruleset(ruleset)?;
    let seats = u8::try_from(seats)
        .map_err(|_| errors::config(format!("seat count {seats} is out of range")))?;
    let json = serde_json::Value::Object(Config::defaults(ruleset, seats).to_json(ruleset));
    json_value(py, &json.to_string())
}
