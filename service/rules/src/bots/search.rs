//! The `search` policy: perfect-information Monte Carlo over determinized deals.
//!
//! For each of `playouts / legal actions` samples (at least one) drawn by
//! [`crate::determinize::Determinizer`], every legal action is tried on the same sample and the
//! deal played out to its settlement with uniformly random legal actions; the action with the
//! best mean jetons for the seat (its balance at the settlement minus its balance now) is
//! chosen. Trying every action on the same samples compares them on the same hidden cards,
//! which removes most of the sampling noise from the comparison. A playout budget rather
//! than a clock keeps the policy reproducible from its seed; a caller with a deadline picks a
//! budget that fits it.
//!
//! A view that cannot be determinized (which the property tests say does not happen for a
//! live view) falls back to the heuristic rather than stall a table.

use rand_chacha::rand_core::RngCore;

use crate::action::Action;
use crate::config::Config;
use crate::determinize::{Determinizer, Seen};
use crate::view::{View, Viewer};

use super::heuristic_action;

/// The fewest and most playouts a decision may be given (a bound for tables and ladders).
pub const MIN_PLAYOUTS: u32 = 1;
pub const MAX_PLAYOUTS: u32 = 1_000_000;
/// The playouts of `search` without a budget: about 5 ms a decision in a release build.
pub const DEFAULT_PLAYOUTS: u32 = 2_000;

/// The search policy's action for the seat whose view this is.
pub fn search_action(
    view: &View,
    config: &Config,
    seen: &Seen,
    playouts: u32,
    rng: &mut impl RngCore,
) -> Action {
    let legal = &view.legal_actions;
    if legal.len() <= 1 {
        return legal.first().copied().unwrap_or(Action::Pass);
    }
    let Viewer::Seat(me) = view.viewer else {
        return heuristic_action(view);
    };
    let Ok(d) = Determinizer::new(view, config, seen) else {
        return heuristic_action(view);
    };
    let now = view.seat_states.get(me.index()).map_or(0, |s| s.balance);
    let samples = (playouts / legal.len() as u32).max(1);
    let mut totals = vec![0i64; legal.len()];
    for _ in 0..samples {
        let Ok(sample) = d.sample(rng) else {
            return heuristic_action(view);
        };
        for (i, &a) in legal.iter().enumerate() {
            let mut g = sample.playout();
            if g.play(me, a).is_err() {
                // Every sample shows the seat the same legal actions as its view.
                totals[i] = i64::MIN / 2;
                continue;
            }
            if g.to_act().is_some() {
                g.play_out_deal(rng);
            }
            let after = g.settled_balances().get(me.index()).copied().unwrap_or(now);
            totals[i] += after - now;
        }
    }
    // Ties go to the heuristic's choice if it is among the best, else to the first best.
    let best = totals.iter().copied().max().unwrap_or(0);
    let h = heuristic_action(view);
    match legal.iter().position(|&a| a == h) {
        Some(i) if totals[i] == best => h,
        _ => legal[totals.iter().position(|&t| t == best).unwrap_or(0)],
    }
}
