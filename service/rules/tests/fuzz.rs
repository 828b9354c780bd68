//! Fuzz targets for what comes from outside: record files, action texts, and arbitrary action
//! sequences against `apply`. Under `cargo test` each runs its committed corpus
//! (`tests/__fuzz__/<target>/corpus`) and a bounded number of generated inputs on a stable
//! toolchain; with a nightly one, `cargo bolero test -p bete-rules --test fuzz <target>` runs
//! the same target under libFuzzer.
#![allow(clippy::unwrap_used)]

use std::str::FromStr;

use bete_rules::record::{Record, replay_json};
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup, pack};

/// Any bytes as a record: parsing and replaying answer with an error or a state, never a
/// panic; a record that parses writes back to one that parses to the same match.
#[test]
fn records_never_panic() {
    bolero::check!()
        .with_max_len(8 * 1024)
        .for_each(|bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes);
            if let Ok(record) = Record::from_json(&text) {
                let again = Record::from_json(&record.to_json()).unwrap();
                assert_eq!(again, record);
            }
            let _ = replay_json(&text);
        });
}

/// Any text as an action: refused with an error or parsed; a parsed action prints to a text
/// that parses back to it.
#[test]
fn action_texts_round_trip() {
    bolero::check!().with_max_len(256).for_each(|bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(a) = Action::from_str(&text) {
            assert_eq!(Action::from_str(&a.to_string()), Ok(a), "{text:?}");
        }
    });
}

/// One step of a fuzzed match: which seat tries what.
#[derive(Clone, Copy, Debug, bolero::TypeGenerator)]
struct Step {
    /// Try a legal action of the seat to act (most steps), else anything.
    legal: bool,
    seat: u8,
    pick: u16,
}

/// A match driven by arbitrary steps: every refused action leaves the game exactly as it was,
/// chips are conserved after every accepted one, and nothing panics.
#[test]
fn arbitrary_actions_keep_the_game_sound() {
    bolero::check!()
        .with_type::<(u8, u8, [u8; 32], Vec<Step>)>()
        .for_each(|(r, seats, seed, steps)| {
            let ruleset = RulesetId::ALL[usize::from(*r) % RulesetId::ALL.len()];
            let (lo, hi) = ruleset.seat_range();
            let seats = lo.max(3) + seats % (hi - lo.max(3) + 1);
            let mut config = Config::defaults(ruleset, seats);
            config.rounds = 1;
            let setup = Setup {
                ruleset,
                config: config.clone(),
                seats,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed(*seed)),
            };
            let Ok((mut game, _)) = Game::new(setup) else {
                return;
            };
            let cards = pack(ruleset, &config, seats);
            for step in steps.iter().take(400) {
                if game.is_over() {
                    break;
                }
                let seat = match (step.legal, game.to_act()) {
                    (true, Some(s)) => s,
                    _ => Seat(step.seat % seats),
                };
                let legal = game.legal_actions(seat);
                let action = if step.legal && !legal.is_empty() {
                    legal[usize::from(step.pick) % legal.len()]
                } else {
                    // Any card of the pack, or any action some seat may take now.
                    let card = cards[usize::from(step.pick) % cards.len()];
                    let texts = [
                        format!("card {card}"),
                        "play".into(),
                        "pass".into(),
                        "stand".into(),
                        "drop".into(),
                        format!("discard {card}"),
                        format!("exchange {card}"),
                        "contre".into(),
                        "challenge".into(),
                        "decline".into(),
                        format!("hidden {card}"),
                    ];
                    match Action::from_str(&texts[usize::from(step.pick / 7) % texts.len()]) {
                        Ok(a) => a,
                        Err(_) => continue,
                    }
                };
                let before = format!("{game:?}");
                match game.apply(seat, action) {
                    Ok(_) => {
                        assert!(
                            legal.contains(&action),
                            "{action} applied but not listed as legal"
                        );
                        let sum: i64 = game.balances().iter().sum();
                        assert_eq!(sum + game.on_table(), 0, "chips not conserved");
                    }
                    Err(_) => {
                        assert!(
                            !legal.contains(&action),
                            "{action} listed as legal but refused"
                        );
                        assert_eq!(
                            format!("{game:?}"),
                            before,
                            "a refused action changed the game"
                        );
                    }
                }
            }
        });
}
