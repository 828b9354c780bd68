//! The `search` policy: perfect-information Monte Carlo over determinized deals.
//!
//! Samples are drawn by [`crate::determinize::Determinizer`]; on each, every legal action is
//! tried and the deal played out to its settlement, and the action with the best mean jetons
//! for the seat (its balance at the settlement minus its balance now; in Beast plus an equal
//! share of what the settlement leaves on the table, see `score`) is chosen. Trying every
//! action on the same sample compares them on the same hidden cards, which removes most of the
//! sampling noise from the comparison.
//!
//! The playouts after the tried action follow the `heuristic` policy for every seat, the
//! searching seat's later moves included: in the exchange games a uniformly random playout
//! stands, drops and exchanges at random, a poor model of real opponents that made the search
//! misjudge whole hands. A heuristic playout costs more than a random one, so a budget buys
//! fewer of them.
//!
//! The budget is a number of playouts (reproducible from the seed: the duels of
//! docs/benchmarks.md) and optionally a clock deadline (the server's house bots, which must
//! answer in time); the search stops at whichever comes first. Under a clock a sample is
//! scored only if every action was played out on it; with no complete sample in time, the
//! heuristic answers.
//!
//! A view that cannot be determinized (one the sampler cannot reconcile, or a ruleset it does
//! not model) falls back to the heuristic rather than stall a table.

use std::time::Instant;

use rand_chacha::rand_core::RngCore;

use crate::action::Action;
use crate::config::Config;
use crate::determinize::{Determinizer, Seen};
use crate::game::Game;
use crate::ruleset::RulesetId;
use crate::view::{View, Viewer};

use super::heuristic_action;

/// The fewest and most playouts a decision may be given (a bound for tables and ladders).
pub const MIN_PLAYOUTS: u32 = 1;
pub const MAX_PLAYOUTS: u32 = 1_000_000;
/// The playouts of `search` without a budget: about 5 ms a decision in a release build on an
/// idle core (docs/benchmarks.md).
pub const DEFAULT_PLAYOUTS: u32 = 800;

/// How much a decision may spend: at most `playouts` playouts, and (if set) nothing after
/// `until`; at least one sample is always searched.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    pub playouts: u32,
    pub until: Option<Instant>,
}

impl Budget {
    /// A budget of playouts alone: the same seed gives the same action.
    pub const fn playouts(playouts: u32) -> Budget {
        Budget {
            playouts,
            until: None,
        }
    }
}

/// The search policy's action for the seat whose view this is, within `playouts` playouts.
pub fn search_action(
    view: &View,
    config: &Config,
    seen: &Seen,
    playouts: u32,
    rng: &mut impl RngCore,
) -> Action {
    search_action_within(view, config, seen, Budget::playouts(playouts), rng)
}

/// The search policy's action for the seat whose view this is, within `budget`.
pub fn search_action_within(
    view: &View,
    config: &Config,
    seen: &Seen,
    budget: Budget,
    rng: &mut impl RngCore,
) -> Action {
    let legal = &view.legal_actions;
    if legal.len() <= 1 {
        return legal.first().copied().unwrap_or(Action::Pass);
    }
    match values(view, config, seen, budget, rng) {
        Some(v) => v.best,
        None => heuristic_action(view),
    }
}

/// What the search thinks of every legal action of a decision: for analysis (a replay's marks),
/// the same search the policy runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionValues {
    /// The legal actions, in the view's order.
    pub actions: Vec<Action>,
    /// Each action's mean jetons for the seat at the deal's settlement (its balance then minus
    /// its balance now), over the same samples.
    pub mean_jetons: Vec<f64>,
    /// The action the search policy plays.
    pub best: Action,
    /// The samples every action was played out on.
    pub samples: u32,
}

impl ActionValues {
    /// The estimated jetons lost by playing `played` rather than the best action (0 for the
    /// best, or an action the search did not score).
    pub fn cost(&self, played: Action) -> f64 {
        let best = self
            .mean_jetons
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        match self.actions.iter().position(|&a| a == played) {
            Some(i) => (best - self.mean_jetons[i]).max(0.0),
            None => 0.0,
        }
    }
}

/// The search's values of every legal action of the seat whose view this is, within `budget`;
/// `None` when it cannot search (fewer than two legal actions, a spectator's view, a view the
/// sampler cannot reconcile, or no complete sample in time).
pub fn search_values(
    view: &View,
    config: &Config,
    seen: &Seen,
    budget: Budget,
    rng: &mut impl RngCore,
) -> Option<ActionValues> {
    if view.legal_actions.len() <= 1 {
        return None;
    }
    values(view, config, seen, budget, rng)
}

fn values(
    view: &View,
    config: &Config,
    seen: &Seen,
    budget: Budget,
    rng: &mut impl RngCore,
) -> Option<ActionValues> {
    let legal = &view.legal_actions;
    let Viewer::Seat(me) = view.viewer else {
        return None;
    };
    let d = Determinizer::new(view, config, seen).ok()?;
    let now = view.seat_states.get(me.index()).map_or(0, |s| s.balance);
    let carried_counts = view.ruleset == RulesetId::Beast;
    let samples = (budget.playouts / legal.len() as u32).max(1);
    let out_of_time = || budget.until.is_some_and(|t| Instant::now() >= t);
    let mut totals = vec![0i64; legal.len()];
    let mut this = vec![0i64; legal.len()];
    let mut complete = 0u32;
    'samples: for _ in 0..samples {
        if out_of_time() {
            break;
        }
        let sample = d.sample(rng).ok()?;
        for (i, &a) in legal.iter().enumerate() {
            // A sample cut short by the clock is dropped: every action must be scored on the
            // same samples.
            if i > 0 && out_of_time() {
                break 'samples;
            }
            let mut g = sample.playout();
            if g.play(me, a).is_err() {
                // Every sample shows the seat the same legal actions as its view.
                this[i] = i64::MIN / 2 / i64::from(samples);
                continue;
            }
            heuristic_playout(&mut g, view.deal);
            this[i] = score(&g, me, now, carried_counts);
        }
        for (t, x) in totals.iter_mut().zip(&this) {
            *t += x;
        }
        complete += 1;
    }
    if complete == 0 {
        return None;
    }
    // Ties go to the heuristic's choice if it is among the best, else to the first best.
    let best = totals.iter().copied().max().unwrap_or(0);
    let h = heuristic_action(view);
    let best = match legal.iter().position(|&a| a == h) {
        Some(i) if totals[i] == best => h,
        _ => legal[totals.iter().position(|&t| t == best).unwrap_or(0)],
    };
    // `score` counts jetons times the seat count.
    let per = f64::from(complete) * view.seat_states.len().max(1) as f64;
    Some(ActionValues {
        actions: legal.clone(),
        mean_jetons: totals.iter().map(|&t| t as f64 / per).collect(),
        best,
        samples: complete,
    })
}

/// A playout's worth to seat `me`, whose balance was `now`: its jetons won or lost at the
/// settlement, times the seat count. With `carried_counts`, what the settlement left on the
/// table is counted too at an equal share for every seat: in Beast a tie for most tricks
/// carries the Play heap to the next deal (BS6), which is not worth nothing, as an opponent
/// taking it would be, but about `1/n` of it to each seat alike (and at the match's end what
/// is left is shared out evenly, 0.4 item 17). The King and Triolet heaps carried by a sample
/// are the same whatever the seat plays, so they shift every action's score alike.
fn score(g: &Game, me: crate::Seat, now: i64, carried_counts: bool) -> i64 {
    let settled = g.settled_balances();
    let n = settled.len() as i64;
    let mine = (settled.get(me.index()).copied().unwrap_or(now) - now) * n;
    if carried_counts {
        // Balances and what is on the table sum to zero (11.4), and the next deal's antes are
        // not in `settled_balances`: what the settlement left on the table is minus their sum.
        mine - settled.iter().sum::<i64>()
    } else {
        mine
    }
}

/// Plays deal `deal` of `g` to its settlement, every seat following the heuristic from its
/// own view of the sample (the sample is the search's guess at the truth, so each seat plays
/// as it would holding those cards).
fn heuristic_playout(g: &mut Game, deal: u32) {
    while let Some(s) = g.to_act() {
        if g.deal_index() != deal {
            break;
        }
        let a = heuristic_action(&g.view(Viewer::Seat(s)));
        if g.play(s, a).is_err() {
            // The heuristic picks from the legal actions; should they ever disagree, the
            // engine's safe action keeps the playout going.
            match g.safe_action(s) {
                Some(safe) if g.play(s, safe).is_ok() => {}
                _ => break,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{Decks, Game, RulesetId, Seat, Seed, Setup};
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;

    /// A view of the first seat to act with a choice, in the first deal of a Beste Boer match.
    fn a_decision() -> (View, Config) {
        let config = Config::defaults(RulesetId::BesteBoer, 4);
        let setup = Setup {
            ruleset: RulesetId::BesteBoer,
            config: config.clone(),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed([9; 32])),
        };
        let (mut game, _) = Game::new(setup).unwrap();
        loop {
            let s = game.to_act().unwrap();
            let view = game.view(Viewer::Seat(s));
            if view.legal_actions.len() > 1 {
                return (view, config);
            }
            game.apply(s, view.legal_actions[0]).unwrap();
        }
    }

    /// Beast: a deal that ties for most tricks leaves the Play heap on the table, and the
    /// score counts it at an equal share for every seat (times the seat count: in full).
    #[test]
    fn a_beast_tie_for_most_tricks_is_worth_a_share_of_the_play_heap() {
        use crate::event::{DealResult, PublicEvent};
        let mut ties = 0;
        for k in 0..40u8 {
            let config = Config::defaults(RulesetId::Beast, 4);
            let setup = Setup {
                ruleset: RulesetId::Beast,
                config,
                seats: 4,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed([k; 32])),
            };
            let (mut game, _) = Game::new(setup).unwrap();
            let now = game.balances().to_vec();
            let play_heap = game.pools().heaps[1];
            let mut result = None;
            while game.deal_index() == 0 {
                let s = game.to_act().unwrap();
                let a = heuristic_action(&game.view(Viewer::Seat(s)));
                for e in game.apply(s, a).unwrap() {
                    if let PublicEvent::DealSettled(st) = e.public {
                        result = Some(st.result);
                    }
                }
            }
            let Some(DealResult::Heaps { play, .. }) = result else {
                panic!("no Beast settlement");
            };
            let settled = game.settled_balances().to_vec();
            let left: i64 = -settled.iter().sum::<i64>();
            for s in 0..4u8 {
                let gain = settled[s as usize] - now[s as usize];
                let seat = Seat(s);
                assert_eq!(score(&game, seat, now[s as usize], false), 4 * gain);
                assert_eq!(score(&game, seat, now[s as usize], true), 4 * gain + left);
            }
            if play.is_none() {
                ties += 1;
                assert!(left >= play_heap, "the tied Play heap stays on the table");
            } else {
                assert!(left <= game.pools().on_table());
            }
        }
        assert!(ties > 0, "some of 40 deals tie for most tricks");
    }

    #[test]
    fn a_playout_budget_is_reproducible_from_the_seed() {
        let (view, config) = a_decision();
        let pick = |seed: u64| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            search_action(&view, &config, &Seen::default(), 60, &mut rng)
        };
        assert_eq!(pick(1), pick(1));
        assert!(view.legal_actions.contains(&pick(2)));
    }

    /// The values the analysis reads are the policy's own: its pick is the best valued (no
    /// cost), every other action costs something or nothing, never less.
    #[test]
    fn the_values_agree_with_the_policy() {
        let (view, config) = a_decision();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let v = search_values(
            &view,
            &config,
            &Seen::default(),
            Budget::playouts(80),
            &mut rng,
        )
        .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let pick = search_action(&view, &config, &Seen::default(), 80, &mut rng);
        assert_eq!(v.best, pick);
        assert_eq!(v.actions, view.legal_actions);
        assert_eq!(v.samples, 80 / view.legal_actions.len() as u32);
        assert_eq!(v.cost(v.best), 0.0);
        assert!(v.actions.iter().all(|&a| v.cost(a) >= 0.0));
        // A single legal action leaves nothing to value.
        let mut one = view.clone();
        one.legal_actions.truncate(1);
        assert!(
            search_values(
                &one,
                &config,
                &Seen::default(),
                Budget::playouts(80),
                &mut rng
            )
            .is_none()
        );
    }

    #[test]
    fn a_clock_already_past_leaves_the_decision_to_the_heuristic() {
        let (view, config) = a_decision();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let budget = Budget {
            playouts: MAX_PLAYOUTS,
            until: Some(Instant::now()),
        };
        let a = search_action_within(&view, &config, &Seen::default(), budget, &mut rng);
        assert_eq!(a, heuristic_action(&view));
    }
}
