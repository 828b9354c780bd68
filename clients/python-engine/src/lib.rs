//! # bete-engine
//!
//! The referee's own rules engine (`bete-rules`) as the Python module `bete_engine`, built into a
//! wheel by maturin (`clients/python-engine/pyproject.toml`): games driven action by action,
//! every seat's view as the server's `bete.v1.SeatView`, records and replay, the seeded shuffle,
//! determinization from a `SeatView` received over gRPC, and playouts whose loop runs in Rust.
//! `bete_engine.pyi` beside this crate is the module's typed interface.

use pyo3::prelude::*;

mod convert;
mod drawn;
mod encode;
mod errors;
mod game;
mod infostate;
mod record;
mod research;
mod search;
mod seen;

/// The Python module.
#[pymodule]
fn bete_engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RULES_VERSION", bete_rules::RULES_VERSION)?;
    m.add(
        "RULESETS",
        bete_rules::RulesetId::ALL
            .iter()
            .map(|r| r.id())
            .collect::<Vec<_>>(),
    )?;
    m.add("MAX_PLAYOUTS", search::MAX_PLAYOUTS)?;
    m.add("NUM_ACTIONS", encode::ACTIONS)?;
    m.add("OBSERVATION_SIZE", encode::OBS_LEN)?;
    m.add("INFOSTATE_SIZE", infostate::INFOSTATE_LEN)?;
    errors::add(m)?;
    m.add_class::<game::PyGame>()?;
    m.add_class::<record::PyRecord>()?;
    m.add_class::<search::PyDeterminizer>()?;
    m.add_class::<drawn::DrawnMatch>()?;
    m.add_function(wrap_pyfunction!(record::replay, m)?)?;
    m.add_function(wrap_pyfunction!(record::deck_order, m)?)?;
    m.add_function(wrap_pyfunction!(record::default_config, m)?)?;
    m.add_function(wrap_pyfunction!(search::playouts, m)?)?;
    m.add_function(wrap_pyfunction!(research::observation_of, m)?)?;
    m.add_function(wrap_pyfunction!(research::legal_action_ids_of, m)?)?;
    m.add_function(wrap_pyfunction!(research::action_of, m)?)?;
    Ok(())
}
