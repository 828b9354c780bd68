//! Random playouts without criterion, reporting deals per second of wall time and per second of
//! CPU time (from /proc/self/schedstat), so a figure stays meaningful on a shared, busy machine.
//!
//!     cargo run --release -p bete-rules --example playout [DEALS] [TABLE] [MODE]
//!
//! TABLE (e.g. `bete/5`) plays one table only (handy under `valgrind --tool=callgrind`).
//! MODE:
//! - `seeded` (default): the seeded deck of RULES.md 11.5; every action listed with
//!   `legal_actions_into`, drawn, and applied with `apply_into` (events, record, summaries),
//!   as a server does;
//! - `explicit`: the same, but every deal gets an explicit deck shuffled by a cheap xorshift
//!   Fisher–Yates (`Decks::Explicit` + `Game::provide_deck_from`), to show what the engine
//!   costs without the SHA-256 + ChaCha20 shuffle;
//! - `playout`: explicit decks, a `Game::new_playout` match (no record) and `Game::play`
//!   (no events), actions still listed and drawn one at a time by this harness;
//! - `fast`: explicit decks given with `play_deck`, then `Game::play_out_deal` plays each
//!   deal to its settlement (the simulation fast path; ChaCha8 draws);
//! - `random`: the whole simulation in the engine, as a Monte-Carlo bot would run it:
//!   `Game::play_random_deck` shuffles and deals, `Game::play_out_deal` plays, both drawing
//!   from one small fast generator (PCG32, `rand_pcg`) instead of ChaCha8.

use bete_rules::event::Event;
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// Nanoseconds this process has run on a CPU (Linux); None elsewhere.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// A cheap deck source for `explicit` mode (not the seeded shuffle of 11.5).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn shuffle(&mut self, deck: &mut [bete_rules::Card]) {
        for i in (1..deck.len()).rev() {
            // Multiply-shift instead of `%`: a division per card would cost more than the
            // engine's work on it. (The tiny bias of skipping rejection does not matter for a
            // benchmark's decks.)
            let j = (((self.next() >> 32) * (i as u64 + 1)) >> 32) as usize;
            deck.swap(i, j);
        }
    }
}

fn run(ruleset: RulesetId, seats: u8, min_deals: u64, mode: &str) -> (u64, f64, Option<f64>) {
    if mode == "random" {
        return run_random(ruleset, seats, min_deals);
    }
    let explicit = mode != "seeded";
    let lean = mode == "playout" || mode == "fast";
    let fast = mode == "fast";
    let config = Config::defaults(ruleset, seats);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut legal: Vec<Action> = Vec::with_capacity(64);
    let mut events: Vec<Event> = Vec::with_capacity(64);
    let (mut deals, mut m) = (0u64, 0u64);
    let mut shuffler = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut deck = Vec::new();
    let cpu0 = cpu_ns();
    let t = std::time::Instant::now();
    while deals < min_deals {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&m.to_le_bytes());
        m += 1;
        let setup = Setup {
            ruleset,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: if explicit {
                Decks::Explicit(Vec::new())
            } else {
                Decks::Seed(Seed(s))
            },
        };
        let mut g = if lean {
            Game::new_playout(setup).expect("setup")
        } else {
            Game::new(setup).expect("setup").0
        };
        if deck.is_empty() {
            deck = g.pack().to_vec();
        }
        loop {
            if explicit && g.phase() == bete_rules::Phase::AwaitingDeck {
                shuffler.shuffle(&mut deck);
                if lean {
                    g.play_deck(&deck).expect("a permutation of the pack");
                    deals += 1;
                } else {
                    events.clear();
                    g.provide_deck_from(&deck, &mut events)
                        .expect("a permutation of the pack");
                }
            }
            if fast {
                if !g.play_out_deal(&mut rng) {
                    break;
                }
                continue;
            }
            let Some(seat) = g.to_act() else { break };
            g.legal_actions_into(seat, &mut legal);
            let a = legal[(rng.next_u64() % legal.len() as u64) as usize];
            if lean {
                g.play(seat, a).expect("legal action");
            } else {
                events.clear();
                g.apply_into(seat, a, &mut events).expect("legal action");
            }
        }
        deals += g.log().len() as u64;
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_ns()) {
        (Some(a), Some(b)) => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    (deals, deals as f64 / wall, cpu.map(|c| deals as f64 / c))
}

/// `random` mode: `play_random_deck` + `play_out_deal` on `new_playout` matches, one PCG32.
fn run_random(ruleset: RulesetId, seats: u8, min_deals: u64) -> (u64, f64, Option<f64>) {
    let config = Config::defaults(ruleset, seats);
    let mut rng = rand_pcg::Pcg32::seed_from_u64(1);
    let mut deals = 0u64;
    let cpu0 = cpu_ns();
    let t = std::time::Instant::now();
    while deals < min_deals {
        let setup = Setup {
            ruleset,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Explicit(Vec::new()),
        };
        let mut g = Game::new_playout(setup).expect("setup");
        while g.play_random_deck(&mut rng).is_ok() {
            g.play_out_deal(&mut rng);
            deals += 1;
        }
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_ns()) {
        (Some(a), Some(b)) => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    (deals, deals as f64 / wall, cpu.map(|c| deals as f64 / c))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let only = args.get(2).filter(|t| t.as_str() != "all");
    let mode = args.get(3).map_or("seeded", |m| m.as_str());
    println!("| table | deals | deals/s (wall) | deals/s (CPU time) | µs per deal (CPU) |");
    println!("|---|---|---|---|---|");
    for (r, s) in [
        (RulesetId::Bete, 5),
        (RulesetId::BeteAceHigh, 5),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 5),
        (RulesetId::Lanterlui, 5),
        (RulesetId::BesterBube, 4),
        (RulesetId::Mouche, 4),
        (RulesetId::Mistigri, 4),
        (RulesetId::Loo, 5),
        (RulesetId::Loo, 10),
        (RulesetId::Rams, 4),
    ] {
        if only.is_some_and(|t| *t != format!("{r}/{s}")) {
            continue;
        }
        let (deals, wall, cpu) = run(r, s, n, mode);
        let cpu = cpu.unwrap_or(f64::NAN);
        println!(
            "| {r}/{s} | {deals} | {wall:.0} | {cpu:.0} | {:.2} |",
            1e6 / cpu
        );
    }
}
