//! A determinized playout from a mid-deal view against a random playout of the same deal:
//!
//!     cargo bench -p bete-rules --bench determinize
//!
//! For each ruleset a match is played with random legal actions to a decision in the middle of
//! its first deal (the second trick, or the buying rounds where the deal ends before); then
//! `random_playout` copies the true state (`Game::playout`) and plays the deal out, and
//! `determinized_playout` draws a sample from the seat's view (`Determinizer::sample`, built
//! once per decision as a search does) and plays that out.

use std::hint::black_box;

use bete_rules::determinize::{Determinizer, Seen};
use bete_rules::playout::uniform_index;
use bete_rules::{Config, Decks, Game, Phase, RulesetId, Seat, Seed, Setup, Viewer};
use criterion::{Criterion, criterion_group, criterion_main};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

fn mid_deal(r: RulesetId, seats: u8) -> Game {
    let config = Config::defaults(r, seats);
    for k in 0u8.. {
        let setup = Setup {
            ruleset: r,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Seed(Seed([k; 32])),
        };
        let Ok((mut g, _)) = Game::new(setup) else {
            break;
        };
        let mut rng = ChaCha8Rng::seed_from_u64(u64::from(k));
        while let Some(s) = g.to_act() {
            if g.deal_index() > 0 {
                break;
            }
            if matches!(g.phase(), Phase::Trick { trick: 1 }) {
                return g;
            }
            let legal = g.legal_actions(s);
            let a = legal[uniform_index(&mut rng, legal.len())];
            if g.play(s, a).is_err() {
                break;
            }
        }
    }
    unreachable!("some seed reaches trick 2")
}

fn playouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("mid_deal_playout");
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
        let game = mid_deal(r, n);
        let Some(me) = game.to_act() else { continue };
        let view = game.view(Viewer::Seat(me));
        let d = Determinizer::new(&view, &Config::defaults(r, n), &Seen::default())
            .expect("a live view determinizes");
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        g.bench_function(format!("random_playout/{r}/{n}"), |b| {
            b.iter(|| {
                let mut p = game.playout();
                p.play_out_deal(&mut rng);
                black_box(p.settled_balances()[0])
            })
        });
        g.bench_function(format!("determinized_playout/{r}/{n}"), |b| {
            b.iter(|| {
                let mut p = d.sample(&mut rng).expect("sample");
                p.play_out_deal(&mut rng);
                black_box(p.settled_balances()[0])
            })
        });
    }
    g.finish();
}

criterion_group!(benches, playouts);
criterion_main!(benches);
