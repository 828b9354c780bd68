//! Random playouts without criterion, reporting deals per second of wall time and per second of
//! CPU time (from /proc/self/schedstat), so a figure stays meaningful on a shared, busy machine.
//!
//!     cargo run --release -p bete-rules --example playout [DEALS]

use bete_rules::event::Event;
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// Nanoseconds this process has run on a CPU (Linux); None elsewhere.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn run(ruleset: RulesetId, seats: u8, min_deals: u64) -> (u64, f64, Option<f64>) {
    let config = Config::defaults(ruleset, seats);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut legal: Vec<Action> = Vec::with_capacity(64);
    let mut events: Vec<Event> = Vec::with_capacity(64);
    let (mut deals, mut m) = (0u64, 0u64);
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
            decks: Decks::Seed(Seed(s)),
        };
        let (mut g, _) = Game::new(setup).expect("setup");
        while let Some(seat) = g.to_act() {
            g.legal_actions_into(seat, &mut legal);
            let a = legal[(rng.next_u64() % legal.len() as u64) as usize];
            events.clear();
            g.apply_into(seat, a, &mut events).expect("legal action");
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

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    println!("| table | deals | deals/s (wall) | deals/s (CPU time) | µs per deal (CPU) |");
    println!("|---|---|---|---|---|");
    for (r, s) in [
        (RulesetId::Bete, 5),
        (RulesetId::BeteAceHigh, 5),
        (RulesetId::Beast, 4),
        (RulesetId::BesteBoer, 5),
        (RulesetId::Lanterlui, 5),
        (RulesetId::BesterBube, 4),
    ] {
        let (deals, wall, cpu) = run(r, s, n);
        let cpu = cpu.unwrap_or(f64::NAN);
        println!("| {r}/{s} | {deals} | {wall:.0} | {cpu:.0} | {:.2} |", 1e6 / cpu);
    }
}
