//! How much the `heuristic` house bot beats `random`, per ruleset: one heuristic seat against
//! random seats, over whole matches until at least `DEALS` deals were played (the heuristic
//! seat moves round the table from match to match). Prints mean net jetons per deal.
//!
//!     cargo run --release -p bete-rules --example bots_duel [DEALS]

use bete_rules::bots::{Bots, Policy};
use bete_rules::{Config, Decks, Game, RulesetId, Seat, Seed, Setup};

struct Tally {
    deals: u64,
    matches: u64,
    heuristic: i64,
    random: i64,
    random_seats: u64,
    /// Matches in which the watched seat finished strictly ahead of every other seat.
    top: u64,
    /// The watched seat's net jetons per deal, match by match (for the median).
    per_match: Vec<f64>,
}

fn duel(ruleset: RulesetId, seats: u8, min_deals: u64, with_heuristic: bool) -> Tally {
    let mut t = Tally {
        deals: 0,
        matches: 0,
        heuristic: 0,
        random: 0,
        random_seats: 0,
        top: 0,
        per_match: Vec::new(),
    };
    let mut m: u64 = 0;
    while t.deals < min_deals {
        let mut seed = [0x5au8; 32];
        seed[..8].copy_from_slice(&m.to_le_bytes());
        let seed = Seed(seed);
        let hero = (m % seats as u64) as usize;
        let policies: Vec<Policy> = (0..seats as usize)
            .map(|i| {
                if i == hero && with_heuristic {
                    Policy::Heuristic
                } else {
                    Policy::Random
                }
            })
            .collect();
        let setup = Setup {
            ruleset,
            config: Config::defaults(ruleset, seats),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Seed(seed),
        };
        let (mut game, _) = Game::new(setup).expect("setup");
        Bots::new(&policies, seats, &seed)
            .play(&mut game, None)
            .expect("legal play");
        let deals = game.log().len() as u64;
        t.deals += deals;
        t.matches += 1;
        let b = game.balances();
        if b.iter().enumerate().all(|(i, &x)| i == hero || x < b[hero]) {
            t.top += 1;
        }
        t.per_match.push(b[hero] as f64 / deals as f64);
        for (i, b) in game.balances().iter().enumerate() {
            if i == hero {
                t.heuristic += b;
            } else {
                t.random += b;
                t.random_seats += 1;
            }
        }
        m += 1;
    }
    t
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

fn main() {
    let min_deals: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    // An optional second argument keeps only these rulesets: `bots_duel 10000 loo,rams`.
    let only: Option<Vec<String>> = std::env::args()
        .nth(2)
        .map(|a| a.split(',').map(str::to_string).collect());
    println!(
        "| ruleset | seats | deals | heuristic seat: mean jetons/deal | each random seat: mean jetons/deal \
         | heuristic seat: median of match means | heuristic seat first in | all-random control: mean, first in |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (ruleset, seats) in [
        (RulesetId::Bete, 5),
        (RulesetId::BeteAceHigh, 5),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 4),
        (RulesetId::Lanterlui, 5),
        (RulesetId::BesterBube, 4),
        (RulesetId::Mouche, 4),
        (RulesetId::Mistigri, 4),
        (RulesetId::Loo, 5),
        (RulesetId::Loo, 10),
        (RulesetId::Rams, 4),
    ] {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|r| r == ruleset.id()))
        {
            continue;
        }
        let h = duel(ruleset, seats, min_deals, true);
        let base = duel(ruleset, seats, min_deals, false);
        let d = h.deals as f64;
        println!(
            "| {ruleset} | {seats} | {} | {:+.3} | {:+.3} | {:+.3} | {:.0}% of {} matches | {:+.3}, {:.0}% |",
            h.deals,
            h.heuristic as f64 / d,
            h.random as f64 / d / (seats as f64 - 1.0),
            median(&mut h.per_match.clone()),
            100.0 * h.top as f64 / h.matches as f64,
            h.matches,
            base.heuristic as f64 / base.deals as f64,
            100.0 * base.top as f64 / base.matches as f64,
        );
    }
}
