//! The duel of docs/benchmarks.md: one `search` seat against `heuristic` in every other seat,
//! the search seat rotated match by match, in every ruleset; prints the mean jetons per deal
//! of the search seat with a 95 % confidence interval (by symmetry an all-heuristic table
//! gives every seat 0, so a positive mean is the margin over `heuristic`).
//!
//! ```text
//! cargo run --release -p bete-rules --example duel -- PLAYOUTS DEALS SECONDS [RULESET...]
//! ```
//!
//! Each ruleset stops at DEALS deals or after SECONDS seconds, whichever comes first, and says
//! how many deals it played. Matches use the default config and `rounds = 2`.

use std::time::Instant;

use bete_rules::bots::{Bots, Policy};
use bete_rules::{Config, Decks, Game, RulesetId, Seat, Seed, Setup};

fn seats_of(r: RulesetId) -> u8 {
    match r {
        RulesetId::Bete | RulesetId::BeteAceHigh | RulesetId::Lanterlui => 5,
        _ => 4,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let playouts = num(0, 2_000) as u32;
    let max_deals = num(1, 2_000);
    let seconds = num(2, 600) as f64;
    let rulesets: Vec<RulesetId> = if args.len() > 3 {
        args[3..].iter().filter_map(|a| a.parse().ok()).collect()
    } else {
        RulesetId::ALL.to_vec()
    };
    println!(
        "| ruleset | seats | playouts/decision | deals | matches | search jetons/deal | 95 % CI | ms/decision |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in rulesets {
        let n = seats_of(r);
        let start = Instant::now();
        let (mut deals, mut decisions, mut search_time) = (0u64, 0u64, 0f64);
        let mut per_match: Vec<f64> = Vec::new();
        let mut m = 0u64;
        while deals < max_deals && start.elapsed().as_secs_f64() < seconds {
            let searcher = Seat((m % n as u64) as u8);
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&m.to_le_bytes());
            seed[8] = r as u8;
            let setup = Setup {
                ruleset: r,
                config: Config::defaults(r, n),
                seats: n,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed(seed)),
            };
            let Ok((mut game, _)) = Game::new(setup) else {
                return;
            };
            let policies: Vec<Policy> = (0..n)
                .map(|s| {
                    if Seat(s) == searcher {
                        Policy::Search(playouts)
                    } else {
                        Policy::Heuristic
                    }
                })
                .collect();
            let mut bots = Bots::new(&policies, n, &Seed(seed));
            let config = game.setup().config.clone();
            while let Some(s) = game.to_act() {
                let view = game.view(bete_rules::Viewer::Seat(s));
                let t = Instant::now();
                let a = bots.choose_in(&view, &config);
                if s == searcher && view.legal_actions.len() > 1 {
                    search_time += t.elapsed().as_secs_f64();
                    decisions += 1;
                }
                let Ok(events) = game.apply(s, a) else { return };
                bots.observe(&events);
            }
            let played = game.deal_index() as u64 + 1;
            deals += played;
            per_match.push(game.balances()[searcher.index()] as f64 / played as f64);
            m += 1;
        }
        let k = per_match.len() as f64;
        let mean = per_match.iter().sum::<f64>() / k;
        let var = per_match.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
        let half = 1.96 * (var / k).sqrt();
        println!(
            "| {r} | {n} | {playouts} | {deals} | {m} | {mean:+.3} | [{:+.3}, {:+.3}] | {:.2} |",
            mean - half,
            mean + half,
            1000.0 * search_time / decisions.max(1) as f64
        );
    }
}
