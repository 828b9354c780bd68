//! Determinization from a `SeatView` received over gRPC, and playouts whose loop runs in Rust,
//! so that a Python search crosses the boundary once per decision rather than once per move.

use std::time::{Duration, Instant};

use bete_rules::{Action, Determinizer, Seen, View, Viewer};
use pyo3::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng as _;

use crate::game::PyGame;
use crate::{convert, errors, seen};

/// The most playouts one call may run (about a minute of work: a bound, not a budget).
pub const MAX_PLAYOUTS: u64 = 10_000_000;

/// Samples full deals that agree with everything one seat's view shows: its hand, the cards
/// played, exchanged-card counts, turn-ups and the voids its opponents revealed.
///
/// The view does not carry the table's config: pass it (`table.config` of `GetTable`) when the
/// table does not play the ruleset's defaults. `events`, the seat's own `bete.v1.Event`s of the
/// deal (as received), let it remember the cards it set aside, drew and discarded.
#[pyclass(name = "Determinizer", module = "bete_engine")]
#[derive(Debug)]
pub struct PyDeterminizer {
    d: Determinizer,
    view: View,
}

#[pymethods]
impl PyDeterminizer {
    #[new]
    #[pyo3(signature = (view, config=None, events=None))]
    fn new(
        py: Python<'_>,
        view: &Bound<'_, PyAny>,
        config: Option<&Bound<'_, PyAny>>,
        events: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDeterminizer> {
        let view = convert::view(view)?;
        let config = convert::config(py, view.ruleset, view.seats, config)?;
        let seen = match (events.filter(|e| !e.is_none()), view.viewer) {
            (Some(events), Viewer::Seat(me)) => seen::from_events(&view, me, events)?,
            _ => Seen::default(),
        };
        let d = py
            .allow_threads(|| Determinizer::new(&view, &config, &seen))
            .map_err(errors::determinize)?;
        Ok(PyDeterminizer { d, view })
    }

    /// The seat whose view this is.
    #[getter]
    fn seat(&self) -> u8 {
        self.d.seat().0
    }

    /// The view's legal actions (11.3 text).
    #[getter]
    fn legal_actions(&self) -> Vec<String> {
        self.view
            .legal_actions
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// One full deal that agrees with the view, as a match standing where the view stands
    /// (its every seat's hand filled in), to play on with `apply`, `play_out_deal` or `view`.
    fn sample(&self, py: Python<'_>, seed: u64) -> PyResult<PyGame> {
        let d = &self.d;
        py.allow_threads(|| d.sample(&mut ChaCha8Rng::seed_from_u64(seed)))
            .map(|game| PyGame { game })
            .map_err(errors::determinize)
    }

    /// The mean jetons the seat wins by the deal's settlement if it plays `action` now and
    /// everyone then plays uniformly at random, over `n` sampled deals, or as many as fit in
    /// `max_ms` milliseconds (at least one).
    #[pyo3(signature = (action, n, seed, max_ms=None))]
    fn playouts(
        &self,
        py: Python<'_>,
        action: &str,
        n: u64,
        seed: u64,
        max_ms: Option<f64>,
    ) -> PyResult<f64> {
        let action = legal(&self.view, action)?;
        let n = budget(n)?;
        let until = deadline(max_ms)?;
        let (d, view) = (&self.d, &self.view);
        let (totals, done) = py
            .allow_threads(|| run(d, view, &[action], n, seed, until))
            .map_err(errors::determinize)?;
        Ok(totals[0] as f64 / done as f64)
    }

    /// `playouts` for every legal action on the same sampled deals (comparing actions on the
    /// same hidden cards removes most of the sampling noise): `(action, mean jetons)` in the
    /// view's order, over `n` samples or as many as fit in `max_ms` milliseconds (at least one).
    #[pyo3(signature = (n, seed, max_ms=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        n: u64,
        seed: u64,
        max_ms: Option<f64>,
    ) -> PyResult<Vec<(String, f64)>> {
        let n = budget(n)?;
        let until = deadline(max_ms)?;
        let (d, view) = (&self.d, &self.view);
        let (totals, done) = py
            .allow_threads(|| run(d, view, &view.legal_actions, n, seed, until))
            .map_err(errors::determinize)?;
        Ok(view
            .legal_actions
            .iter()
            .zip(totals)
            .map(|(a, t)| (a.to_string(), t as f64 / done as f64))
            .collect())
    }
}

/// `Determinizer(view, config, events).playouts(action, n, seed, max_ms)` in one call.
#[pyfunction]
#[pyo3(signature = (view, action, n, seed, config=None, events=None, max_ms=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, each optional
pub fn playouts(
    py: Python<'_>,
    view: &Bound<'_, PyAny>,
    action: &str,
    n: u64,
    seed: u64,
    config: Option<&Bound<'_, PyAny>>,
    events: Option<&Bound<'_, PyAny>>,
    max_ms: Option<f64>,
) -> PyResult<f64> {
    PyDeterminizer::new(py, view, config, events)?.playouts(py, action, n, seed, max_ms)
}

fn legal(view: &View, text: &str) -> PyResult<Action> {
    let action = convert::action(text)?;
    if view.legal_actions.contains(&action) {
        Ok(action)
    } else {
        Err(errors::illegal(format!(
            "{action} is not among the view's legal actions"
        )))
    }
}

/// When a time-boxed call stops sampling.
fn deadline(max_ms: Option<f64>) -> PyResult<Option<Instant>> {
    match max_ms {
        None => Ok(None),
        // At most an hour, as the server's longest decision deadline.
        Some(ms) if ms > 0.0 && ms <= 3_600_000.0 => {
            Ok(Some(Instant::now() + Duration::from_secs_f64(ms / 1000.0)))
        }
        Some(ms) => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "max_ms = {ms}: more than 0 and at most 3,600,000 (an hour)"
        ))),
    }
}

fn budget(n: u64) -> PyResult<u64> {
    if (1..=MAX_PLAYOUTS).contains(&n) {
        Ok(n)
    } else {
        Err(pyo3::exceptions::PyValueError::new_err(format!(
            "n = {n} playouts: between 1 and {MAX_PLAYOUTS}"
        )))
    }
}

/// For each of `n` samples (fewer if `until` passes first, at least one), each action played
/// on it and the deal played out: the seat's jetons won, summed per action, and the samples.
fn run(
    d: &Determinizer,
    view: &View,
    actions: &[Action],
    n: u64,
    seed: u64,
    until: Option<Instant>,
) -> Result<(Vec<i64>, u64), bete_rules::DeterminizeError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let me = d.seat();
    let now = match view.viewer {
        Viewer::Seat(s) => view.seat_states.get(s.index()).map_or(0, |st| st.balance),
        Viewer::Spectator => 0,
    };
    let mut totals = vec![0i64; actions.len()];
    let mut done = 0;
    while done < n && (done == 0 || until.is_none_or(|t| Instant::now() < t)) {
        let sample = d.sample(&mut rng)?;
        for (total, &a) in totals.iter_mut().zip(actions) {
            let mut g = sample.playout();
            // Every sample shows the seat its view's legal actions (the sample's view equals
            // the view), so this is legal; a refusal would score nothing rather than stop.
            if g.play(me, a).is_ok() && g.to_act().is_some() {
                g.play_out_deal(&mut rng);
            }
            let after = g.settled_balances().get(me.index()).copied().unwrap_or(now);
            *total += after - now;
        }
        done += 1;
    }
    Ok((totals, done))
}
