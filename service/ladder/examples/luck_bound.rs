//! How much of a table's result the cards decide at all: for tables of two `heuristic` and two
//! `random` entrants (seats by lot), the spread of the heuristics-minus-randoms net difference,
//! and the spread left when the decks and seating are held fixed and only the bots' own random
//! draws change (8 replays of each table with other bot seeds). No correction computed from
//! the cards alone can leave less spread than that (Var(X − c(cards)) ≥ E[Var(X | cards)]),
//! so (total / left)² bounds the factor of tables any such correction can save.
//!
//!     cargo run --release -p bete-ladder --example luck_bound [RULESET] [TABLES]
#![allow(clippy::unwrap_used)] // a measurement tool: a failure should stop it loudly
use bete_ladder::{default_ladders, luck};
use bete_rules::bots::{Bots, Policy};
use bete_rules::{Decks, Game, Seat, Seed, Setup};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ruleset = args.get(1).map_or("bete", String::as_str);
    let tables: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let spec = default_ladders()
        .into_iter()
        .find(|l| l.ruleset.id() == ruleset)
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let m = 8;
    let (mut within, mut all, mut adjusted) = (0.0, Vec::new(), Vec::new());
    for t in 0..tables {
        let mut pol = [
            Policy::Heuristic,
            Policy::Heuristic,
            Policy::Random,
            Policy::Random,
        ];
        pol.shuffle(&mut rng);
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&t.to_le_bytes());
        let setup = Setup {
            ruleset: spec.ruleset,
            config: spec.config.clone(),
            seats: 4,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed(s)),
        };
        let mut ds = Vec::new();
        for k in 0..m {
            let (mut game, _) = Game::new(setup.clone()).unwrap();
            let mut b = s;
            b[31] = 1 + k as u8;
            Bots::new(&pol, 4, &Seed(b)).play(&mut game, None).unwrap();
            let h: i64 = (0..4)
                .filter(|&i| pol[i] == Policy::Heuristic)
                .map(|i| game.balances()[i])
                .sum();
            let r: i64 = (0..4)
                .filter(|&i| pol[i] == Policy::Random)
                .map(|i| game.balances()[i])
                .sum();
            ds.push((h - r) as f64 / 2.0);
            if k == 0 {
                let l = luck::table_luck(&setup, game.log(), &b).unwrap();
                let adj = luck::adjusted(game.balances(), &l);
                let side = |p: Policy| (0..4).filter(|&i| pol[i] == p).map(|i| adj[i]).sum::<f64>();
                adjusted.push((side(Policy::Heuristic) - side(Policy::Random)) / 2.0);
            }
        }
        let mean = ds.iter().sum::<f64>() / m as f64;
        within += ds.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
        all.push(ds[0]);
    }
    let mean = all.iter().sum::<f64>() / all.len() as f64;
    let var = all.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (all.len() - 1) as f64;
    let (adj_mean, half) = luck::mean_ci95(&adjusted);
    let adj_sd = half / 1.96 * (adjusted.len() as f64).sqrt();
    let left = (within / tables as f64).sqrt();
    println!(
        "{ruleset}: H-R mean {mean:.1}, sd {:.1}; luck-adjusted mean {adj_mean:.1}, sd {adj_sd:.1}; \
         sd left given the cards {left:.1}: any correction from the cards saves at most {:.2}x the tables",
        var.sqrt(),
        var / (left * left)
    );
}
