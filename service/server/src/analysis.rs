//! A finished match's decisions as the `search` policy sees them (ReplayService.AnalyseTable):
//! for each decision with a choice, what search would play from the deciding seat's own
//! knowledge, and the estimated jetons the move played cost. Pure computation, bounded by a
//! clock; the service runs it off the async workers and keeps the answer per table.

use std::time::{Duration, Instant};

use bete_api::convert;
use bete_api::pb;
use bete_rules::bots::{Budget, DEFAULT_PLAYOUTS, search_values};
use bete_rules::record::Record;
use bete_rules::{Action, Event, Game, PublicEvent, Seat, Seen, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

use bete_base::status::ServerError;

/// The whole analysis's time when the caller names none, and the most it may ask for.
pub const DEFAULT_BUDGET_MS: u32 = 5_000;
pub const MAX_BUDGET_MS: u32 = 20_000;

/// Analyses the record `text` within `budget`.
pub fn analyse(text: &str, budget: Duration) -> Result<pb::AnalyseTableResponse, ServerError> {
    let bad = |e: &dyn std::fmt::Display| ServerError::BadRecord(e.to_string());
    let started = Instant::now();
    let until = started + budget;
    let record = Record::from_json(text).map_err(|e| bad(&e))?;
    let config = record.config.clone();
    let (mut game, first) = Game::new(record.setup()).map_err(|e| bad(&e))?;
    let seats = usize::from(game.seats());
    // What each seat saw of its own moves in the current deal, as a bot at that seat did.
    let mut seen = vec![Seen::default(); seats];
    let mut deal = 0u32;
    let observe = |events: &[Event], seen: &mut [Seen], deal: &mut u32| {
        for e in events {
            if let PublicEvent::DealStarted(ds) = &e.public {
                *deal = ds.deal;
            }
            for (s, p) in &e.private {
                if let Some(mine) = seen.get_mut(s.index()) {
                    mine.observe(*deal, p);
                }
            }
        }
    };
    observe(&first, &mut seen, &mut deal);
    let actions: Vec<(Seat, Action, bool)> = record
        .json
        .deals
        .iter()
        .flat_map(|d| d.actions.iter())
        .map(|a| {
            let action: Action = a.action.parse().map_err(|e| bad(&e))?;
            let seat = u8::try_from(a.seat)
                .map(Seat)
                .map_err(|_| ServerError::BadRecord(format!("seat {} out of range", a.seat)))?;
            Ok((seat, action, a.auto))
        })
        .collect::<Result<_, ServerError>>()?;
    // The same samples for the same record: the analysis of a table does not change by asking.
    let mut rng = ChaCha8Rng::seed_from_u64(0x6265_7465);
    let mut decisions = Vec::new();
    let mut complete = true;
    for (i, &(seat, action, auto)) in actions.iter().enumerate() {
        let view = game.view(Viewer::Seat(seat));
        if view.legal_actions.len() > 1 && !auto {
            let now = Instant::now();
            if now >= until {
                complete = false;
            } else {
                // The time left, shared evenly by the decisions left (at most the policy's
                // default playouts each).
                let left = (actions.len() - i).max(1) as u32;
                let share = (until - now) / left;
                let budget = Budget {
                    playouts: DEFAULT_PLAYOUTS,
                    until: Some(now + share),
                };
                let who = seen.get(seat.index()).cloned().unwrap_or_default();
                if let Some(v) = search_values(&view, &config, &who, budget, &mut rng) {
                    decisions.push(pb::DecisionAnalysis {
                        step: i as u32 + 1,
                        seat: u32::from(seat.0),
                        played: Some(convert::action_to_pb(action)),
                        best: Some(convert::action_to_pb(v.best)),
                        cost: (v.cost(action) * 100.0).round() / 100.0,
                        samples: v.samples,
                    });
                }
            }
        }
        let events = game
            .apply_recorded(seat, action, auto)
            .map_err(|e| bad(&e))?;
        observe(&events, &mut seen, &mut deal);
    }
    Ok(pb::AnalyseTableResponse {
        decisions,
        complete,
        budget_ms: u32::try_from(budget.as_millis()).unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bete_rules::bots::{Bots, Policy};
    use bete_rules::{Decks, RulesetId, Seed, Setup};

    /// A short Bête match played by heuristic bots, as its record.
    fn a_record() -> String {
        let seed = Seed([7; 32]);
        let setup = Setup {
            ruleset: RulesetId::Bete,
            config: bete_rules::Config::defaults(RulesetId::Bete, 3),
            seats: 3,
            first_dealer: Seat(0),
            decks: Decks::Seed(seed),
        };
        let (mut game, first) = Game::new(setup).expect("a game");
        let mut bots = Bots::new(&[Policy::Heuristic], 3, &seed);
        bots.observe(&first);
        while let Some(s) = game.to_act() {
            let a = bots.choose(&game.view(Viewer::Seat(s)));
            let evs = game.apply(s, a).expect("a legal action");
            bots.observe(&evs);
        }
        Record::from_game(&game).to_json()
    }

    #[test]
    fn every_decision_with_a_choice_is_analysed_and_the_search_agrees_with_itself() {
        let text = a_record();
        let a = analyse(&text, Duration::from_secs(60)).expect("an analysis");
        assert!(a.complete);
        assert!(a.decisions.len() > 5, "{}", a.decisions.len());
        for d in &a.decisions {
            assert!(d.cost >= 0.0 && d.samples > 0, "{d:?}");
            if d.best == d.played {
                assert_eq!(d.cost, 0.0, "{d:?}");
            }
        }
        // The same record, the same analysis.
        assert_eq!(analyse(&text, Duration::from_secs(60)).expect("again"), a);
    }

    #[test]
    fn a_spent_budget_leaves_the_rest_out() {
        let a = analyse(&a_record(), Duration::ZERO).expect("an analysis");
        assert!(!a.complete);
        assert!(a.decisions.is_empty());
    }

    #[test]
    fn a_bad_record_is_refused() {
        assert!(matches!(
            analyse("{}", Duration::from_secs(1)),
            Err(ServerError::BadRecord(_))
        ));
    }
}
