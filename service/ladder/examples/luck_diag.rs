//! Diagnostic: per table of 2 heuristic + 2 random (seats by lot), the heuristic-minus-random
//! net difference, raw and luck-adjusted: mean, sd, signal/noise; and the share of tables
//! whose places put both heuristics above both randoms.
#![allow(clippy::unwrap_used)] // a measurement tool: a failure should stop it loudly
use bete_ladder::{default_ladders, luck, places};
use bete_rules::bots::{Bots, Policy};
use bete_rules::{Decks, Game, Seat, Seed, Setup};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ruleset = args.get(1).map_or("bete", String::as_str);
    let tables: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(300);
    let spec = default_ladders()
        .into_iter()
        .find(|l| l.ruleset.id() == ruleset)
        .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // Relative to luck::WEIGHT: 0 = raw nets, 1 = the ladder's correction, 2 = weight 1 at luck/2.
    let betas = [0.0, 0.5, 1.0, 1.5, 2.0];
    let mut diffs: Vec<Vec<f64>> = vec![Vec::new(); betas.len()];
    let mut right = vec![0u64; betas.len()];
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
        let (mut game, _) = Game::new(setup.clone()).unwrap();
        s[31] = 1;
        Bots::new(&pol, 4, &Seed(s)).play(&mut game, None).unwrap();
        let l = luck::table_luck(&setup, game.log(), &s).unwrap();
        for (b, beta) in betas.iter().enumerate() {
            let adj: Vec<f64> = (0..4)
                .map(|i| game.balances()[i] as f64 - beta * l[i])
                .collect();
            let h: f64 = (0..4)
                .filter(|&i| pol[i] == Policy::Heuristic)
                .map(|i| adj[i])
                .sum();
            let r: f64 = (0..4)
                .filter(|&i| pol[i] == Policy::Random)
                .map(|i| adj[i])
                .sum();
            diffs[b].push((h - r) / 2.0);
            let p = places(&adj);
            let hmax = (0..4)
                .filter(|&i| pol[i] == Policy::Heuristic)
                .map(|i| p[i])
                .max()
                .unwrap();
            let rmin = (0..4)
                .filter(|&i| pol[i] == Policy::Random)
                .map(|i| p[i])
                .min()
                .unwrap();
            right[b] += u64::from(hmax < rmin);
        }
    }
    for (b, beta) in betas.iter().enumerate() {
        let (m, half) = luck::mean_ci95(&diffs[b]);
        let n = diffs[b].len() as f64;
        let sd = half / 1.96 * n.sqrt();
        println!(
            "{ruleset} beta {beta}: H-R mean {m:.2} sd {sd:.2} snr {:.3}; HHRR order {:.0} %",
            m / sd,
            100.0 * right[b] as f64 / n
        );
    }
}
