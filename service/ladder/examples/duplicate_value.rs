//! How much duplicate sets help a ladder rank bots: in many seeded ladders of two `heuristic`
//! and two `random` entrants (4 seats, the default ladder's match of 8 deals), after how many
//! rated matches are both heuristics ranked above both randoms (by mu - 3 sigma) in 95 % of the
//! ladders? Once with single tables (random seating each match), once with duplicate sets (4
//! tables, one seed, every rotation). Prints, per mode, the share of ladders ranked right after
//! each match count, and the first count that reaches 95 % in matches and in tables played.
//!
//!     cargo run --release -p bete-ladder --example duplicate_value [RULESET] [LADDERS] [MAX_MATCHES]

use bete_ladder::{Rating, default_ladders, duplicate, update};
use bete_rules::bots::{Bots, Policy};
use bete_rules::{Decks, Game, Seat, Seed, Setup};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Nets by seat of one table.
fn table(
    spec: &bete_ladder::LadderSpec,
    seed: Seed,
    policies: &[Policy],
    bot_seed: Seed,
) -> Vec<i64> {
    let setup = Setup {
        ruleset: spec.ruleset,
        config: spec.config.clone(),
        seats: spec.seats,
        first_dealer: Seat(0),
        decks: Decks::Seed(seed),
    };
    let (mut game, _) = Game::new(setup).expect("setup");
    Bots::new(policies, spec.seats, &bot_seed)
        .play(&mut game, None)
        .expect("legal play");
    game.balances().to_vec()
}

/// Whether both heuristics (entrants 0, 1) stand above both randoms (2, 3).
fn ranked_right(r: &[Rating]) -> bool {
    let c: Vec<f64> = r.iter().map(Rating::conservative).collect();
    c[0].min(c[1]) > c[2].max(c[3])
}

/// For one seeded ladder: after each match, whether it is ranked right.
fn ladder(
    spec: &bete_ladder::LadderSpec,
    sets: bool,
    ladder_seed: u64,
    matches: usize,
) -> Vec<bool> {
    let entrants = [
        Policy::Heuristic,
        Policy::Heuristic,
        Policy::Random,
        Policy::Random,
    ];
    let n = usize::from(spec.seats);
    let mut rng = ChaCha8Rng::seed_from_u64(ladder_seed ^ if sets { 0x5e75 } else { 0 });
    let mut ratings = vec![Rating::default(); 4];
    let mut out = Vec::with_capacity(matches);
    for m in 0..matches {
        let mut order: Vec<usize> = (0..4).collect();
        order.shuffle(&mut rng);
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&ladder_seed.to_le_bytes());
        s[8..16].copy_from_slice(&(m as u64).to_le_bytes());
        s[16] = u8::from(sets);
        let seed = Seed(s);
        let rotations = duplicate::tables_in_match(sets, n);
        let mut per_table = Vec::new();
        for r in 0..rotations {
            let policies: Vec<Policy> = (0..n)
                .map(|seat| entrants[order[duplicate::entrant_at(seat, r, n)]])
                .collect();
            let mut b = s;
            b[31] = r as u8 + 1;
            per_table.push(table(spec, seed, &policies, Seed(b)));
        }
        let by_position = duplicate::totals(&per_table, n);
        let mut nets = vec![0i64; 4];
        for (pos, &e) in order.iter().enumerate() {
            nets[e] = by_position[pos];
        }
        ratings = update(&ratings, &nets);
        out.push(ranked_right(&ratings));
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ruleset = args.get(1).map_or("bete", String::as_str);
    let ladders: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let max: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(40);
    let spec = default_ladders()
        .into_iter()
        .find(|l| l.ruleset.id() == ruleset)
        .expect("a ruleset id");
    println!(
        "{ruleset}, 4 seats, {} deals a table, {ladders} seeded ladders, 2 heuristic + 2 random entrants",
        spec.deals_per_match
    );
    for sets in [false, true] {
        let mut right = vec![0u64; max];
        for l in 0..ladders {
            for (m, ok) in ladder(&spec, sets, l, max).into_iter().enumerate() {
                right[m] += u64::from(ok);
            }
        }
        let share: Vec<f64> = right.iter().map(|&r| r as f64 / ladders as f64).collect();
        let tables = if sets { 4 } else { 1 };
        let first = share.iter().position(|&s| s >= 0.95);
        let shown: Vec<String> = [1, 2, 3, 5, 8, 12, 16, 20, 30, 40]
            .iter()
            .filter(|&&m| m <= max)
            .map(|&m| format!("{m}: {:.0} %", 100.0 * share[m - 1]))
            .collect();
        println!(
            "{}: ranked right after {}",
            if sets {
                "duplicate sets"
            } else {
                "single tables"
            },
            shown.join(", ")
        );
        match first {
            Some(i) => println!(
                "  95 % of ladders ranked right after {} matches = {} tables = {} deals",
                i + 1,
                (i + 1) * tables,
                (i + 1) * tables * spec.deals_per_match as usize
            ),
            None => println!("  not 95 % within {max} matches"),
        }
    }
}
