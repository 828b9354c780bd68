//! How much duplicate sets and the luck correction help a ladder rank bots: in many seeded
//! ladders of two `heuristic` and two `random` entrants (4 seats, the default ladder's match of
//! 8 deals), after how many tables are both heuristics ranked above both randoms (by
//! mu − 3 sigma) in 95 % of the ladders? Four modes on the same games: single tables (random
//! seating each match), duplicate sets (4 tables, one seed, every rotation), and each of them
//! rated on luck-adjusted nets (`bete_ladder::luck`). Prints, per mode, the share of ladders
//! ranked right after some match counts, the first count that reaches 95 %, the CPU the luck
//! correction took per table, and last one line per mode, `95%: MODE TABLES` (TABLES the tables
//! played when 95 % of the ladders are first ranked right, or `none`).
//!
//! The ladders advance match by match together; the luck correction stops being computed once
//! the adjusted mode has reached 95 % (the raw mode plays on alone, to its own 95 % or
//! MAX_MATCHES).
//!
//!     cargo run --release -p bete-ladder --example duplicate_value [RULESET] [LADDERS] [MAX_MATCHES]

use std::time::{Duration, Instant};

use bete_ladder::{LadderSpec, Rating, default_ladders, duplicate, luck, update};
use bete_rules::bots::{Bots, Policy};
use bete_rules::{Decks, Game, Seat, Seed, Setup};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

const ENTRANTS: [Policy; 4] = [
    Policy::Heuristic,
    Policy::Heuristic,
    Policy::Random,
    Policy::Random,
];

/// CPU time of this (single) thread so far, from Linux's schedstat (nanoseconds on a CPU),
/// so that the luck correction's cost is not inflated by other processes on a shared machine;
/// the wall clock where it cannot be read.
fn cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(
            || START.get_or_init(Instant::now).elapsed(),
            Duration::from_nanos,
        )
}

/// One table: nets by seat, and the seats' luck when asked for.
fn table(
    spec: &LadderSpec,
    seed: Seed,
    policies: &[Policy],
    bot_seed: Seed,
    with_luck: bool,
    luck_time: &mut Duration,
) -> (Vec<i64>, Vec<f64>) {
    let setup = Setup {
        ruleset: spec.ruleset,
        config: spec.config.clone(),
        seats: spec.seats,
        first_dealer: Seat(0),
        decks: Decks::Seed(seed),
    };
    let (mut game, _) = Game::new(setup.clone()).expect("setup");
    Bots::new(policies, spec.seats, &bot_seed)
        .play(&mut game, None)
        .expect("legal play");
    let luck = if with_luck {
        let t = cpu_time();
        let l = luck::table_luck(&setup, game.log(), &bot_seed.0).expect("the record replays");
        *luck_time += cpu_time().saturating_sub(t);
        l
    } else {
        vec![0.0; usize::from(spec.seats)]
    };
    (game.balances().to_vec(), luck)
}

/// Whether both heuristics (entrants 0, 1) stand above both randoms (2, 3).
fn ranked_right(r: &[Rating]) -> bool {
    let c: Vec<f64> = r.iter().map(Rating::conservative).collect();
    c[0].min(c[1]) > c[2].max(c[3])
}

/// One seeded ladder, rated twice on the same games: on raw and on luck-adjusted nets.
struct Ladder {
    seed: u64,
    rng: ChaCha8Rng,
    raw: Vec<Rating>,
    adjusted: Vec<Rating>,
}

impl Ladder {
    fn new(seed: u64, sets: bool) -> Ladder {
        Ladder {
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed ^ if sets { 0x5e75 } else { 0 }),
            raw: vec![Rating::default(); 4],
            adjusted: vec![Rating::default(); 4],
        }
    }

    /// Plays match `m` and rates it; returns (raw ranked right, adjusted ranked right).
    fn play(
        &mut self,
        spec: &LadderSpec,
        sets: bool,
        m: usize,
        with_luck: bool,
        luck_time: &mut Duration,
    ) -> (bool, bool) {
        let n = usize::from(spec.seats);
        let mut order: Vec<usize> = (0..4).collect();
        order.shuffle(&mut self.rng);
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&self.seed.to_le_bytes());
        s[8..16].copy_from_slice(&(m as u64).to_le_bytes());
        s[16] = u8::from(sets);
        let seed = Seed(s);
        let rotations = duplicate::tables_in_match(sets, n);
        let mut nets_by_table = Vec::new();
        let mut luck_by_table = vec![0.0; n];
        for r in 0..rotations {
            let policies: Vec<Policy> = (0..n)
                .map(|seat| ENTRANTS[order[duplicate::entrant_at(seat, r, n)]])
                .collect();
            let mut b = s;
            b[31] = r as u8 + 1;
            let (nets, luck) = table(spec, seed, &policies, Seed(b), with_luck, luck_time);
            nets_by_table.push(nets);
            for (seat, l) in luck.iter().enumerate() {
                luck_by_table[duplicate::entrant_at(seat, r, n)] += l;
            }
        }
        let by_position = duplicate::totals(&nets_by_table, n);
        let adjusted_by_position = luck::adjusted(&by_position, &luck_by_table);
        let mut nets = vec![0i64; 4];
        let mut adjusted = vec![0.0; 4];
        for (pos, &e) in order.iter().enumerate() {
            nets[e] = by_position[pos];
            adjusted[e] = adjusted_by_position[pos];
        }
        self.raw = update(&self.raw, &nets);
        if with_luck {
            self.adjusted = update(&self.adjusted, &adjusted);
        }
        (ranked_right(&self.raw), ranked_right(&self.adjusted))
    }
}

/// The first match count (1-based) at which 95 % of the ladders were ranked right.
fn first_95(right: &[u64], ladders: u64) -> Option<usize> {
    right
        .iter()
        .position(|&r| r as f64 / ladders as f64 >= 0.95)
        .map(|i| i + 1)
}

fn shares(right: &[u64], ladders: u64) -> String {
    [1, 2, 3, 5, 8, 12, 16, 20, 30, 40, 80, 160]
        .iter()
        .filter(|&&m| m <= right.len())
        .map(|&m| format!("{m}: {:.0} %", 100.0 * right[m - 1] as f64 / ladders as f64))
        .collect::<Vec<_>>()
        .join(", ")
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
        "{ruleset}, 4 seats, {} deals a table, {ladders} seeded ladders, 2 heuristic + 2 random entrants; {}",
        spec.deals_per_match,
        luck::REFERENCE
    );
    let mut last = Vec::new();
    for sets in [false, true] {
        let tables = duplicate::tables_in_match(sets, usize::from(spec.seats));
        let mut all: Vec<Ladder> = (0..ladders).map(|l| Ladder::new(l, sets)).collect();
        let (mut raw, mut adj) = (Vec::new(), Vec::new());
        let mut luck_time = Duration::ZERO;
        let mut luck_tables = 0u64;
        for m in 0..max {
            let with_luck = first_95(&adj, ladders).is_none();
            if first_95(&raw, ladders).is_some() && !with_luck {
                break;
            }
            let (mut r, mut a) = (0, 0);
            for l in &mut all {
                let (x, y) = l.play(&spec, sets, m, with_luck, &mut luck_time);
                r += u64::from(x);
                a += u64::from(y);
            }
            if with_luck {
                luck_tables += ladders * tables as u64;
                adj.push(a);
            }
            raw.push(r);
        }
        for (name, right) in [("", &raw), ("-adjusted", &adj)] {
            let mode = format!("{}{name}", if sets { "sets" } else { "single" });
            println!("{mode}: ranked right after {}", shares(right, ladders));
            let first = first_95(right, ladders);
            match first {
                Some(m) => println!(
                    "  95 % of ladders ranked right after {m} matches = {} tables = {} deals",
                    m * tables,
                    m * tables * spec.deals_per_match as usize
                ),
                None => println!("  not 95 % within {} matches", right.len()),
            }
            last.push(format!(
                "95%: {mode} {}",
                first.map_or("none".to_string(), |m| (m * tables).to_string())
            ));
        }
        if luck_tables > 0 {
            println!(
                "  luck correction: {:.1} ms of CPU a table ({luck_tables} tables)",
                luck_time.as_secs_f64() * 1e3 / luck_tables as f64
            );
        }
    }
    // single, sets, single-adjusted, sets-adjusted.
    for i in [0, 2, 1, 3] {
        println!("{}", last[i]);
    }
}
