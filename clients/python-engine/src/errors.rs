//! The Python exceptions of `bete_engine`, and the one place engine errors become them.
//!
//! Every failure a caller can cause is one of these (a subclass of `EngineError`), with the
//! engine's own message; nothing panics across the boundary.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    bete_engine,
    EngineError,
    PyException,
    "Base class of every error bete_engine raises."
);
create_exception!(
    bete_engine,
    ConfigError,
    EngineError,
    "An unknown ruleset, a bad seat count, seed or config key."
);
create_exception!(
    bete_engine,
    IllegalActionError,
    EngineError,
    "An action that is not legal now (or not an action at all), with the engine's reason."
);
create_exception!(
    bete_engine,
    BadRecordError,
    EngineError,
    "A game record that is malformed (what `bete replay` exits 2 for)."
);
create_exception!(
    bete_engine,
    BadViewError,
    EngineError,
    "A SeatView the engine cannot read or search from (not a SeatView, a spectator's, no deal in progress)."
);
create_exception!(
    bete_engine,
    UnreconciledViewError,
    BadViewError,
    "A SeatView no deal agrees with: a stale or altered view, or one from another rules version."
);

pub fn config(e: impl std::fmt::Display) -> PyErr {
    ConfigError::new_err(e.to_string())
}

pub fn illegal(e: impl std::fmt::Display) -> PyErr {
    IllegalActionError::new_err(e.to_string())
}

pub fn bad_view(e: impl std::fmt::Display) -> PyErr {
    BadViewError::new_err(e.to_string())
}

pub fn determinize(e: bete_rules::DeterminizeError) -> PyErr {
    match e {
        bete_rules::DeterminizeError::Unreconciled(_) => {
            UnreconciledViewError::new_err(e.to_string())
        }
        _ => BadViewError::new_err(e.to_string()),
    }
}

/// A replay's error, with `bete replay`'s exact line (RULES.md 11.4): `illegal action at deal D,
/// action A (seat S): …` or `malformed record: …`.
pub fn replay(e: bete_rules::record::ReplayError) -> PyErr {
    match e {
        bete_rules::record::ReplayError::Illegal { .. } => illegal(e),
        bete_rules::record::ReplayError::Malformed(_) => BadRecordError::new_err(e.to_string()),
    }
}

pub fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("EngineError", py.get_type::<EngineError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("IllegalActionError", py.get_type::<IllegalActionError>())?;
    m.add("BadRecordError", py.get_type::<BadRecordError>())?;
    m.add("BadViewError", py.get_type::<BadViewError>())?;
    m.add(
        "UnreconciledViewError",
        py.get_type::<UnreconciledViewError>(),
    )?;
    Ok(())
}
