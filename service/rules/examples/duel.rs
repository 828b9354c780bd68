//! The duel of docs/benchmarks.md: one `search` seat against `heuristic` in every other seat,
//! the search seat rotated match by match, in every ruleset; prints the mean jetons per deal
//! of the search seat with a 95 % confidence interval (by symmetry an all-heuristic table
//! gives every seat 0, so a positive mean is the margin over `heuristic`).
//!
//! ```text
//! cargo run --release -p bete-rules --example duel -- PLAYOUTS DEALS SECONDS [RULESET...]
//! cargo run --release -p bete-rules --example duel -- oracle DEALS SECONDS [RULESET...]
//! cargo run --release -p bete-rules --example duel -- heuristic DEALS SECONDS [RULESET...]
//! ```
//!
//! Two estimates of the same margin are printed. The plain one is the search seat's mean per
//! deal over the matches. The paired one (duplicate bridge's design, common random numbers)
//! plays every match a second time with `heuristic` in the search seat, every deck and every
//! other seat the same, and averages the difference of that seat's two results per deal: the
//! luck of the deal (the cards, the King, the Triolet) is in both and cancels, so its interval
//! is narrower. `heuristic` in the search seat (the third command) must give exactly 0 paired.
//!
//! Each ruleset stops at DEALS deals or after SECONDS seconds, whichever comes first, and says
//! how many deals it played. Matches use the default config and `rounds = 2`. The time per
//! decision is given twice: wall clock, and the searching thread's own CPU time (Linux
//! `/proc/thread-self/schedstat`), which is what the decision costs on an idle core even when
//! the machine is shared.
//!
//! `oracle` replaces the search seat by a cheat that sees every hand: it tries each legal
//! action on the true deal and plays the deal out with the heuristic for every seat, taking
//! the best. No honest policy can expect to do much better than that, so its margin over
//! `heuristic` is a ceiling of what there is to gain in a ruleset.

use std::time::Instant;

use bete_rules::bots::{Bots, Policy, heuristic_action};
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup, Viewer};

/// Nanoseconds this thread has run on a CPU (0 where the kernel does not say).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The cheat of the module notes: the best action on the true deal, heuristic playouts.
fn oracle_action(game: &Game, seat: Seat) -> Action {
    let view = game.view(Viewer::Seat(seat));
    let now = game.balances()[seat.index()];
    let deal = game.deal_index();
    let mut best = (i64::MIN, heuristic_action(&view));
    for &a in &view.legal_actions {
        let mut g = game.playout();
        if g.play(seat, a).is_err() {
            continue;
        }
        while let Some(s) = g.to_act() {
            if g.deal_index() != deal {
                break;
            }
            let h = heuristic_action(&g.view(Viewer::Seat(s)));
            if g.play(s, h).is_err() {
                break;
            }
        }
        let score = g.settled_balances()[seat.index()] - now;
        if score > best.0 {
            best = (score, a);
        }
    }
    best.1
}

fn seats_of(r: RulesetId) -> u8 {
    match r {
        RulesetId::Bete | RulesetId::BeteAceHigh | RulesetId::Lanterlui => 5,
        _ => 4,
    }
}

/// What one match gave the seat under test: its balance at the end, the deals played, and
/// the decisions it made with a choice (count, wall seconds, CPU nanoseconds).
struct MatchResult {
    balance: i64,
    deals: u64,
    decisions: u64,
    wall: f64,
    cpu_ns: u64,
}

/// Plays one seeded match of `r` with `policies` (one per seat); `seat` is the seat under test,
/// which the oracle plays instead of its policy when `oracle` is set.
fn play_match(
    r: RulesetId,
    n: u8,
    seed: &Seed,
    policies: &[Policy],
    seat: Seat,
    oracle: bool,
) -> Option<MatchResult> {
    let setup = Setup {
        ruleset: r,
        config: Config::defaults(r, n),
        seats: n,
        first_dealer: Seat(0),
        decks: Decks::Seed(*seed),
    };
    let (mut game, _) = Game::new(setup).ok()?;
    let mut bots = Bots::new(policies, n, seed);
    let config = game.setup().config.clone();
    let mut out = MatchResult {
        balance: 0,
        deals: 0,
        decisions: 0,
        wall: 0.0,
        cpu_ns: 0,
    };
    while let Some(s) = game.to_act() {
        let view = game.view(Viewer::Seat(s));
        let t = Instant::now();
        let c = thread_cpu_ns();
        let a = if oracle && s == seat {
            oracle_action(&game, s)
        } else {
            bots.choose_in(&view, &config)
        };
        if s == seat && view.legal_actions.len() > 1 {
            out.wall += t.elapsed().as_secs_f64();
            out.cpu_ns += thread_cpu_ns().saturating_sub(c);
            out.decisions += 1;
        }
        let events = game.apply(s, a).ok()?;
        bots.observe(&events);
    }
    out.deals = game.deal_index() as u64 + 1;
    out.balance = game.balances()[seat.index()];
    Some(out)
}

/// Mean and half-width of the 95 % interval of the mean (normal approximation).
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let k = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / k.max(1.0);
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
    (mean, 1.96 * (var / k.max(1.0)).sqrt())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let mode = args.first().map(String::as_str).unwrap_or("");
    let oracle = mode == "oracle";
    // `heuristic` in the search seat: the sanity check of the paired estimator (exactly 0).
    let control = mode == "heuristic";
    let playouts = num(0, 300) as u32;
    let max_deals = num(1, 2_000);
    let seconds = num(2, 600) as f64;
    let rulesets: Vec<RulesetId> = if args.len() > 3 {
        args[3..].iter().filter_map(|a| a.parse().ok()).collect()
    } else {
        RulesetId::ALL.to_vec()
    };
    println!(
        "| ruleset | seats | playouts/decision | deals | matches | search jetons/deal | 95 % CI | paired jetons/deal | paired 95 % CI | ms/decision (wall) | ms/decision (CPU) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rulesets {
        let n = seats_of(r);
        let start = Instant::now();
        let (mut deals, mut decisions, mut search_time, mut cpu_ns) = (0u64, 0u64, 0f64, 0u64);
        let mut per_match: Vec<f64> = Vec::new();
        let mut paired: Vec<f64> = Vec::new();
        let mut m = 0u64;
        while deals < max_deals && start.elapsed().as_secs_f64() < seconds {
            let searcher = Seat((m % n as u64) as u8);
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&m.to_le_bytes());
            bytes[8] = r as u8;
            let seed = Seed(bytes);
            let tested = if control {
                Policy::Heuristic
            } else {
                Policy::Search(playouts)
            };
            let policies: Vec<Policy> = (0..n)
                .map(|s| {
                    if Seat(s) == searcher {
                        tested
                    } else {
                        Policy::Heuristic
                    }
                })
                .collect();
            let Some(got) = play_match(r, n, &seed, &policies, searcher, oracle) else {
                return;
            };
            // The duplicate of this match: the same decks (a deal's deck depends only on the
            // seed and the deal's index) and the same heuristic seats, with `heuristic` in the
            // searcher's seat; `heuristic` is a pure function of the view.
            let Some(base) = play_match(r, n, &seed, &[Policy::Heuristic], searcher, false) else {
                return;
            };
            deals += got.deals;
            decisions += got.decisions;
            search_time += got.wall;
            cpu_ns += got.cpu_ns;
            let mine = got.balance as f64 / got.deals as f64;
            per_match.push(mine);
            paired.push(mine - base.balance as f64 / base.deals as f64);
            m += 1;
        }
        let (mean, half) = mean_ci(&per_match);
        let (pmean, phalf) = mean_ci(&paired);
        let budget = if oracle || control {
            mode.to_string()
        } else {
            playouts.to_string()
        };
        println!(
            "| {r} | {n} | {budget} | {deals} | {m} | {mean:+.3} | [{:+.3}, {:+.3}] | {pmean:+.3} | [{:+.3}, {:+.3}] | {:.2} | {:.2} |",
            mean - half,
            mean + half,
            pmean - phalf,
            pmean + phalf,
            1000.0 * search_time / decisions.max(1) as f64,
            cpu_ns as f64 / 1e6 / decisions.max(1) as f64
        );
    }
}
