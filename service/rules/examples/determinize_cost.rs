//! The cost of a determinized playout against a random playout of the same deal, measured
//! the way `benches/determinize.rs` does but interleaved and as the best of 30 rounds, so that
//! other work on a shared machine weighs on both alike (docs/benchmarks.md):
//!
//!     cargo run --release -p bete-rules --example determinize_cost
use std::hint::black_box;
use std::time::Instant;

use bete_rules::determinize::{Determinizer, Seen};
use bete_rules::playout::uniform_index;
use bete_rules::{Config, Decks, Game, Phase, RulesetId, Seat, Seed, Setup, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The bench's decision: the start of trick 2 of the first deal, random play.
fn mid_deal(r: RulesetId, seats: u8) -> Option<Game> {
    let config = Config::defaults(r, seats);
    for k in 0u8..=255 {
        let setup = Setup {
            ruleset: r,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed([k; 32])),
        };
        let (mut g, _) = Game::new(setup).ok()?;
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(k));
        while let Some(s) = g.to_act() {
            if g.deal_index() > 0 {
                break;
            }
            if matches!(g.phase(), Phase::Trick { trick: 1 }) {
                return Some(g);
            }
            let legal = g.legal_actions(s);
            let a = legal[uniform_index(&mut rng, legal.len())];
            if g.play(s, a).is_err() {
                break;
            }
        }
    }
    None
}

fn main() {
    println!("| ruleset | seats | random playout | determinized playout | ratio | setup |");
    println!("|---|---|---|---|---|---|");
    for (r, n) in [
        (RulesetId::Bete, 5),
        (RulesetId::BeteAceHigh, 5),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 4),
        (RulesetId::Lanterlui, 5),
        (RulesetId::BesterBube, 4),
        (RulesetId::Mouche, 4),
        (RulesetId::Mistigri, 4),
        (RulesetId::Loo, 3),
        (RulesetId::Loo, 10),
        (RulesetId::Rams, 4),
    ] {
        let Some(game) = mid_deal(r, n) else { continue };
        let Some(me) = game.to_act() else { continue };
        let view = game.view(Viewer::Seat(me));
        let start = Instant::now();
        let Ok(d) = Determinizer::new(&view, &Config::defaults(r, n), &Seen::default()) else {
            continue;
        };
        let setup = start.elapsed().as_secs_f64();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (mut random, mut determinized) = (f64::MAX, f64::MAX);
        let k = 5_000;
        for _ in 0..30 {
            let t = Instant::now();
            for _ in 0..k {
                let mut p = game.playout();
                p.play_out_deal(&mut rng);
                black_box(p.settled_balances()[0]);
            }
            random = random.min(t.elapsed().as_secs_f64() / f64::from(k));
            let t = Instant::now();
            for _ in 0..k {
                let Ok(mut p) = d.sample(&mut rng) else {
                    return;
                };
                p.play_out_deal(&mut rng);
                black_box(p.settled_balances()[0]);
            }
            determinized = determinized.min(t.elapsed().as_secs_f64() / f64::from(k));
        }
        println!(
            "| {r} | {n} | {:.2} µs | {:.2} µs | {:.2}x | {:.0} µs |",
            random * 1e6,
            determinized * 1e6,
            determinized / random,
            setup * 1e6
        );
    }
}
