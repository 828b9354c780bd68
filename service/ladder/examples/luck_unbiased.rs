//! The luck correction has mean 0: over every deal of many seeded tables of two `heuristic`
//! and two `random` entrants (whose actions shape the carried pools, so the states the deals
//! start from), each seat's mean correction per deal with its 95 % interval.
//!
//!     cargo run --release -p bete-ladder --example luck_unbiased [RULESET] [TABLES] [SEED]

use bete_ladder::{default_ladders, luck};
use bete_rules::bots::{Bots, Policy};
use bete_rules::{Decks, Game, Seat, Seed, Setup};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ruleset = args.get(1).map_or("bete", String::as_str);
    let tables: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(500);
    let tag: u8 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(0x1c);
    let spec = default_ladders()
        .into_iter()
        .find(|l| l.ruleset.id() == ruleset)
        .expect("a ruleset id");
    let policies = [
        Policy::Heuristic,
        Policy::Random,
        Policy::Heuristic,
        Policy::Random,
    ];
    let mut per_seat: Vec<Vec<f64>> = vec![Vec::new(); 4];
    for t in 0..tables {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&t.to_le_bytes());
        s[8] = tag;
        let setup = Setup {
            ruleset: spec.ruleset,
            config: spec.config.clone(),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed(s)),
        };
        let (mut game, _) = Game::new(setup.clone()).expect("setup");
        s[31] = 1;
        Bots::new(&policies, 4, &Seed(s))
            .play(&mut game, None)
            .expect("legal play");
        for d in luck::deals_luck(&setup, game.log(), &s).expect("the record replays") {
            for (seat, c) in d.iter().enumerate() {
                per_seat[seat].push(*c);
            }
        }
    }
    let shown: Vec<String> = per_seat
        .iter()
        .enumerate()
        .map(|(seat, xs)| {
            let (m, h) = luck::mean_ci95(xs);
            let inside = if m.abs() <= h { "" } else { " (0 outside)" };
            format!("seat {seat} {m:+.2} ± {h:.2}{inside}")
        })
        .collect();
    println!(
        "{ruleset}: {} deals, mean correction per deal: {}",
        per_seat[0].len(),
        shown.join(", ")
    );
}
