//! Engine benchmarks: random playouts of whole deals per ruleset (deal, bidding or exchange,
//! five tricks, settlement), and `legal_actions` and `apply` on their own.
//!
//!     cargo bench -p bete-rules --bench engine
//!
//! A playout keeps one match going: when it ends, the next match starts with a fresh seed (the
//! cost of starting it is counted). Every action is drawn uniformly from `legal_actions_into`
//! with a reused buffer, and applied with `apply_into` with a reused event buffer, as a server
//! or a simulator does. Throughput is reported in deals per second.
//!
//! `playout_deal/*` measures the simulation fast path instead: `Game::play_out_deal` on a
//! `Game::new_playout` match (no events, no record, explicit decks shuffled by the bench).
//! `simulated_deal/*` leaves the deck to the engine too (`Game::play_random_deck`) and draws
//! from PCG32 instead of ChaCha8.

use std::hint::black_box;

use bete_rules::event::Event;
use bete_rules::{Action, Config, Decks, Game, RulesetId, Seat, Seed, Setup};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// One match after another, played by uniformly random legal actions.
struct Playout {
    ruleset: RulesetId,
    seats: u8,
    config: Config,
    game: Game,
    matches: u64,
    rng: ChaCha8Rng,
    legal: Vec<Action>,
    events: Vec<Event>,
}

fn seed_of(n: u64) -> Seed {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&n.to_le_bytes());
    s[8] = 0xbe;
    Seed(s)
}

impl Playout {
    fn new(ruleset: RulesetId, seats: u8) -> Playout {
        let config = Config::defaults(ruleset, seats);
        let game = Playout::start(ruleset, seats, &config, 0);
        Playout {
            ruleset,
            seats,
            config,
            game,
            matches: 0,
            rng: ChaCha8Rng::seed_from_u64(1),
            legal: Vec::with_capacity(64),
            events: Vec::with_capacity(16),
        }
    }

    fn start(ruleset: RulesetId, seats: u8, config: &Config, n: u64) -> Game {
        let setup = Setup {
            ruleset,
            config: config.clone(),
            seats,
            first_dealer: Seat(0),
            decks: Decks::Seed(seed_of(n)),
        };
        Game::new(setup).expect("valid setup").0
    }

    /// Plays the current deal to its settlement; starts the next match if it ended.
    fn deal(&mut self) {
        let d = self.game.deal_index();
        while let Some(seat) = self.game.to_act() {
            if self.game.deal_index() != d {
                return;
            }
            self.game.legal_actions_into(seat, &mut self.legal);
            let pick = (self.rng.next_u64() % self.legal.len() as u64) as usize;
            self.events.clear();
            let applied = self
                .game
                .apply_into(seat, self.legal[pick], &mut self.events);
            debug_assert!(applied.is_ok());
        }
        // The match is over.
        self.matches += 1;
        self.game = Playout::start(self.ruleset, self.seats, &self.config, self.matches);
    }

    /// Plays until a card is to be played in trick `trick` of some deal (for the micro benches).
    fn until_trick(&mut self, trick: u8) -> Seat {
        loop {
            if let (bete_rules::Phase::Trick { trick: t }, Some(seat)) =
                (self.game.phase(), self.game.to_act())
                && t == trick
            {
                return seat;
            }
            let seat = self.game.to_act().expect("a seat to act");
            self.game.legal_actions_into(seat, &mut self.legal);
            let pick = (self.rng.next_u64() % self.legal.len() as u64) as usize;
            self.events.clear();
            let _ = self
                .game
                .apply_into(seat, self.legal[pick], &mut self.events);
        }
    }
}

fn tables() -> Vec<(RulesetId, u8)> {
    vec![
        (RulesetId::Bete, 5),
        (RulesetId::Bete, 3),
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
    ]
}

fn playouts(c: &mut Criterion) {
    deal_group(c, "random_deal", Playout::new, Playout::deal);
}

/// The simulation fast path: a `Game::new_playout` match (no events, no record), each deal's
/// deck a permutation drawn by the bench (a multiply-shift Fisher–Yates on the same ChaCha8
/// stream, so no seeded SHA-256 shuffle) and given with `play_deck`, then `play_out_deal`.
struct FastPlayout {
    setup: Setup,
    game: Game,
    deck: Vec<bete_rules::Card>,
    rng: ChaCha8Rng,
}

impl FastPlayout {
    fn new(ruleset: RulesetId, seats: u8) -> FastPlayout {
        let setup = explicit_setup(ruleset, seats);
        let game = Game::new_playout(setup.clone()).expect("valid setup");
        FastPlayout {
            deck: game.pack().to_vec(),
            setup,
            game,
            rng: ChaCha8Rng::seed_from_u64(1),
        }
    }

    /// Shuffles, deals and plays one deal; starts a new match when one ends.
    fn deal(&mut self) {
        if self.game.is_over() {
            self.game = Game::new_playout(self.setup.clone()).expect("valid setup");
        }
        for i in (1..self.deck.len()).rev() {
            let j = (u64::from(self.rng.next_u32()) * (i as u64 + 1)) >> 32;
            self.deck.swap(i, j as usize);
        }
        let dealt = self.game.play_deck(&self.deck);
        debug_assert!(dealt.is_ok());
        self.game.play_out_deal(&mut self.rng);
    }
}

fn fast_playouts(c: &mut Criterion) {
    deal_group(c, "playout_deal", FastPlayout::new, FastPlayout::deal);
}

/// A match of the ruleset's default config whose decks are given one by one.
fn explicit_setup(ruleset: RulesetId, seats: u8) -> Setup {
    Setup {
        ruleset,
        config: Config::defaults(ruleset, seats),
        seats,
        first_dealer: Seat(0),
        decks: Decks::Explicit(Vec::new()),
    }
}

/// One benchmark a table: `deal` plays one whole deal on what `make` built for the table.
fn deal_group<P>(c: &mut Criterion, name: &str, make: fn(RulesetId, u8) -> P, deal: fn(&mut P)) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(1));
    for (r, n) in tables() {
        let mut p = make(r, n);
        g.bench_function(format!("{r}/{n}"), |b| b.iter(|| deal(&mut p)));
    }
    g.finish();
}

fn micro(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    for (r, n) in [(RulesetId::Bete, 5), (RulesetId::BesteBoer, 5)] {
        let mut p = Playout::new(r, n);
        let seat = p.until_trick(2);
        let game = p.game.clone();
        let mut legal = Vec::with_capacity(64);
        g.bench_function(format!("legal_actions/{r}/{n}"), |b| {
            b.iter(|| {
                game.legal_actions_into(black_box(seat), &mut legal);
                black_box(legal.len())
            })
        });
        game.legal_actions_into(seat, &mut legal);
        let action = legal[0];
        let mut events = Vec::with_capacity(16);
        g.bench_function(format!("apply_card/{r}/{n}"), |b| {
            b.iter_batched_ref(
                || game.clone(),
                |g| {
                    events.clear();
                    black_box(g.apply_into(seat, action, &mut events).is_ok())
                },
                BatchSize::SmallInput,
            )
        });
        let wrong = Seat((seat.0 + 1) % n);
        g.bench_function(format!("apply_refused/{r}/{n}"), |b| {
            let mut g2 = game.clone();
            b.iter(|| {
                events.clear();
                black_box(g2.apply_into(wrong, action, &mut events).is_err())
            })
        });
    }
    g.finish();
}

/// The whole simulation in the engine, as a Monte-Carlo bot runs it: `play_random_deck`
/// shuffles and deals, `play_out_deal` plays, one small fast generator (PCG32) for both.
struct Simulation {
    setup: Setup,
    game: Game,
    rng: rand_pcg::Pcg32,
}

impl Simulation {
    fn new(ruleset: RulesetId, seats: u8) -> Simulation {
        let setup = explicit_setup(ruleset, seats);
        Simulation {
            game: Game::new_playout(setup.clone()).expect("valid setup"),
            setup,
            rng: rand_pcg::Pcg32::seed_from_u64(1),
        }
    }

    /// Deals and plays one deal; starts a new match when one ends.
    fn deal(&mut self) {
        if self.game.is_over() {
            self.game = Game::new_playout(self.setup.clone()).expect("valid setup");
        }
        let dealt = self.game.play_random_deck(&mut self.rng);
        debug_assert!(dealt.is_ok());
        self.game.play_out_deal(&mut self.rng);
    }
}

fn simulations(c: &mut Criterion) {
    deal_group(c, "simulated_deal", Simulation::new, Simulation::deal);
}

criterion_group!(benches, playouts, fast_playouts, simulations, micro);
criterion_main!(benches);
