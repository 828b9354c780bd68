//! The research encodings from a `bete.v1.SeatView` alone (what a bot receives from the server):
//! the observation tensor, the legal action ids and the action an id stands for. The
//! environments compute the same from a `Game`; these prove it needs nothing but the view, and
//! let a policy trained on ids play on the ladder.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{convert, encode, errors};

/// The observation tensor of a `SeatView` (`OBSERVATION_SIZE` little-endian f32).
#[pyfunction]
pub fn observation_of<'py>(
    py: Python<'py>,
    view: &Bound<'_, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let view = convert::view(view)?;
    Ok(encode::tensor_bytes(py, &view))
}

/// The ids of a `SeatView`'s legal actions, ascending.
#[pyfunction]
pub fn legal_action_ids_of(view: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let view = convert::view(view)?;
    Ok(encode::ids(
        &view.legal_actions,
        view.hand.unwrap_or_default(),
    ))
}

/// The action (11.3 text) id `action_id` stands for in a `SeatView`, which must be one of its
/// legal actions (IllegalActionError otherwise).
#[pyfunction]
pub fn action_of(view: &Bound<'_, PyAny>, action_id: i64) -> PyResult<String> {
    let view = convert::view(view)?;
    let action = usize::try_from(action_id)
        .ok()
        .and_then(|id| encode::action_of(id, view.hand.unwrap_or_default()));
    match action {
        Some(a) if view.legal_actions.contains(&a) => Ok(a.to_string()),
        a => Err(errors::illegal(encode::refuse(
            action_id,
            a,
            &view.legal_actions,
            None,
        ))),
    }
}
