//! Python values into engine values: rulesets, seats, seeds, configs, cards, actions and
//! received `SeatView`s.

use bete_api::pb;
use bete_rules::{Action, Card, Config, RulesetId, Seat, Seed, View};
use prost::Message as _;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

pub fn ruleset(id: &str) -> PyResult<RulesetId> {
    id.parse().map_err(errors::config)
}

/// A seat of a `seats`-seat table.
pub fn seat(n: i64, seats: u8) -> PyResult<Seat> {
    match u8::try_from(n) {
        Ok(s) if s < seats => Ok(Seat(s)),
        _ => Err(errors::illegal(format!(
            "seat {n} is not at this table (seats 0..{})",
            seats.saturating_sub(1)
        ))),
    }
}

pub fn seed(hex: &str) -> PyResult<Seed> {
    hex.parse().map_err(errors::config)
}

pub fn action(text: &str) -> PyResult<Action> {
    text.parse()
        .map_err(|e: bete_rules::ParseActionError| errors::illegal(e))
}

pub fn cards(codes: &[String]) -> PyResult<Vec<Card>> {
    codes
        .iter()
        .map(|c| c.parse().map_err(errors::illegal))
        .collect()
}

/// A table config: `None` (the ruleset's defaults), a dict, or its JSON text; keys left out
/// take their defaults, as in a record's `config`.
pub fn config(
    py: Python<'_>,
    ruleset: RulesetId,
    seats: u8,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Config> {
    let Some(obj) = config.filter(|c| !c.is_none()) else {
        return Ok(Config::defaults(ruleset, seats));
    };
    let text: String = match obj.extract::<String>() {
        Ok(s) => s,
        Err(_) => py
            .import("json")?
            .call_method1("dumps", (obj,))?
            .extract()?,
    };
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| errors::config(format!("config: {e}")))?;
    Config::from_json(ruleset, seats, &map).map_err(errors::config)
}

/// The engine's view from a `bete.v1.SeatView`: its serialized bytes, or the message itself
/// (anything with `SerializeToString()`, such as the SDK's protobuf class).
pub fn view(obj: &Bound<'_, PyAny>) -> PyResult<View> {
    let bytes: Vec<u8> = match obj.downcast::<PyBytes>() {
        Ok(b) => b.as_bytes().to_vec(),
        Err(_) => {
            if !obj.hasattr("SerializeToString")? {
                return Err(errors::bad_view(format!(
                    "expected a bete.v1.SeatView or its serialized bytes, got {}",
                    obj.get_type().name()?
                )));
            }
            obj.call_method0("SerializeToString")?
                .downcast::<PyBytes>()?
                .as_bytes()
                .to_vec()
        }
    };
    let msg = pb::SeatView::decode(bytes.as_slice())
        .map_err(|e| errors::bad_view(format!("not a bete.v1.SeatView: {e}")))?;
    bete_api::convert::view_from_pb(&msg).map_err(|e| errors::bad_view(format!("SeatView.{e}")))
}

/// A view as the serialized `bete.v1.SeatView` the server would send its viewer.
pub fn view_bytes<'py>(py: Python<'py>, view: &View) -> Bound<'py, PyBytes> {
    let msg = bete_api::convert::view_to_pb("", 0, view, None);
    PyBytes::new(py, &msg.encode_to_vec())
}
