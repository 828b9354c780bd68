//! The server's safe action for a timed-out seat (game.rs `safe_action`).
#![allow(clippy::unwrap_used)]

use bete_rules::{Config, Decks, Game, RulesetId, Seat, Setup};
use serde_json::json;

fn game(ruleset: RulesetId, seats: u8, lenient: bool, seed: &str) -> Game {
    let mut map = serde_json::Map::new();
    if lenient {
        map.insert("enforce_legality".into(), json!("lenient"));
    }
    map.insert("rounds".into(), json!(1));
    let setup = Setup {
        ruleset,
        config: Config::from_json(ruleset, seats, &map).unwrap(),
        seats,
        first_dealer: Seat(0),
        decks: Decks::Seed(seed.parse().unwrap()),
    };
    Game::new(setup).unwrap().0
}

/// In lenient mode a card that breaks a duty of play is legal but costs a bête. A seat whose
/// time ran out must never be made to revoke: driven only by timeouts, a lenient match plays
/// exactly like the strict one on the same seed.
#[test]
fn lenient_timeouts_never_revoke() {
    for ruleset in [
        RulesetId::Bete,
        RulesetId::BeteAceHigh,
        RulesetId::BesteBoer,
        RulesetId::Lanterlui,
        RulesetId::BesterBube,
    ] {
        for (seats, seed) in [(3, "11"), (4, "a7"), (5, "3c")] {
            let seed = seed.repeat(32);
            let mut strict = game(ruleset, seats, false, &seed);
            let mut lenient = game(ruleset, seats, true, &seed);
            let mut steps = 0;
            while let Some(seat) = strict.to_act() {
                assert_eq!(
                    lenient.to_act(),
                    Some(seat),
                    "{ruleset} {seats}: diverged at step {steps}"
                );
                let (a, _) = strict.apply_timeout(seat).unwrap();
                let (b, _) = lenient.apply_timeout(seat).unwrap();
                assert_eq!(a, b, "{ruleset} {seats}: step {steps}");
                steps += 1;
            }
            assert!(lenient.is_over() && strict.is_over());
            assert_eq!(strict.balances(), lenient.balances(), "{ruleset} {seats}");
            assert!(
                lenient
                    .log()
                    .iter()
                    .all(|d| d.actions.iter().all(|a| a.auto))
            );
        }
    }
}

/// The safe action never volunteers: with a choice it passes, stands or declines.
#[test]
fn safe_action_prefers_pass_and_stand() {
    let g = game(RulesetId::Bete, 5, false, &"00".repeat(32));
    let s = g.to_act().unwrap();
    assert_eq!(g.safe_action(s).unwrap().to_string(), "pass");
    let g = game(RulesetId::BesteBoer, 4, false, &"00".repeat(32));
    let s = g.to_act().unwrap();
    assert_eq!(g.safe_action(s).unwrap().to_string(), "stand");
}
