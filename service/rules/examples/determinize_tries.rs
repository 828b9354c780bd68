//! How many proposals a determinized sample takes, by ruleset and trick, over random
//! mid-deal views (docs/benchmarks.md):
//!
//!     cargo run --release -p bete-rules --example determinize_tries
use bete_rules::determinize::{Determinizer, Seen};
use bete_rules::playout::uniform_index;
use bete_rules::{Config, Decks, Game, Phase, RulesetId, Seat, Seed, Setup, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

fn main() {
    println!("| ruleset | seats | phase | views | proposals per sample (mean) | max |");
    println!("|---|---|---|---|---|---|");
    for r in RulesetId::ALL {
        let n = if matches!(
            r,
            RulesetId::Bete | RulesetId::BeteAceHigh | RulesetId::Lanterlui
        ) {
            5
        } else {
            4
        };
        let mut by_phase: std::collections::BTreeMap<String, (u64, u64, u32)> = Default::default();
        for k in 0..300u64 {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&k.to_le_bytes());
            let setup = Setup {
                ruleset: r,
                config: Config::defaults(r, n),
                seats: n,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed(seed)),
            };
            let Ok((mut g, _)) = Game::new(setup) else {
                return;
            };
            let mut rng = ChaCha8Rng::seed_from_u64(k);
            while let Some(s) = g.to_act() {
                if g.deal_index() > 0 {
                    break;
                }
                let view = g.view(Viewer::Seat(s));
                let key = match g.phase() {
                    Phase::Trick { trick } => format!("trick {}", trick + 1),
                    Phase::Bidding => "bidding".into(),
                    _ => "exchange".into(),
                };
                if let Ok(d) = Determinizer::new(&view, &Config::defaults(r, n), &Seen::default()) {
                    for _ in 0..5 {
                        if let Ok((_, t)) = d.sample_counted(&mut rng) {
                            let e = by_phase.entry(key.clone()).or_default();
                            e.0 += 1;
                            e.1 += u64::from(t);
                            e.2 = e.2.max(t);
                        }
                    }
                }
                let legal = g.legal_actions(s);
                let a = legal[uniform_index(&mut rng, legal.len())];
                if g.play(s, a).is_err() {
                    break;
                }
            }
        }
        for (p, (views, tries, max)) in by_phase {
            println!(
                "| {r} | {n} | {p} | {views} | {:.2} | {max} |",
                tries as f64 / views as f64
            );
        }
    }
}
