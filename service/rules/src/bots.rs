//! The two house-bot policies, as pure functions of one seat's [`View`] (0.4 item 18): they
//! never see anything a seat may not know.
//!
//! - [`random_action`]: uniform over the legal actions, drawn from a seeded RNG.
//! - [`heuristic_action`]: plays each ruleset sensibly: bids on strong hands, drops weak ones
//!   where dropping is allowed, exchanges low non-trumps, keeps the bowers for the obligations
//!   of tricks 1–2, and wins tricks cheaply (the lowest winning card, else the lowest card).

mod heuristic;
mod search;
mod strength;

use std::fmt;
use std::str::FromStr;

use rand_chacha::rand_core::RngCore;
use thiserror::Error;

use crate::action::Action;
use crate::view::View;

pub use heuristic::heuristic_action;
pub use search::{
    ActionValues, Budget, DEFAULT_PLAYOUTS, MAX_PLAYOUTS, MIN_PLAYOUTS, search_action,
    search_action_within, search_values,
};
pub use strength::CardOrder;

/// A uniformly random legal action. Falls back to `Action::Pass` only when the view offers no
/// legal action at all (the seat is not to act), which callers never ask for.
pub fn random_action(view: &View, rng: &mut impl RngCore) -> Action {
    let n = view.legal_actions.len();
    if n == 0 {
        return Action::Pass;
    }
    view.legal_actions[uniform_below(rng, n as u32) as usize]
}

/// A uniform integer in `0..bound` (bound ≥ 1), by rejection so that no value is favoured.
fn uniform_below(rng: &mut impl RngCore, bound: u32) -> u32 {
    let limit = u32::MAX - (u32::MAX % bound);
    loop {
        let x = rng.next_u32();
        if x < limit {
            return x % bound;
        }
    }
}

/// A house-bot policy, as named on the command line: `random`, `heuristic`, or `search`
/// with a playout budget per decision (`search` = `search:800`; `search:N` for N in
/// 1..=1,000,000).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    Random,
    Heuristic,
    /// Determinized Monte-Carlo search with this many playouts per decision.
    Search(u32),
}

impl Policy {
    pub const ALL: [Policy; 3] = [
        Policy::Random,
        Policy::Heuristic,
        Policy::Search(DEFAULT_PLAYOUTS),
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::Heuristic => "heuristic",
            Policy::Search(_) => "search",
        }
    }

    /// This policy's action for the seat whose view this is, at a table with the default
    /// config of the view's ruleset (see `choose_in`). `rng` is unused by `Heuristic`.
    pub fn choose(self, view: &View, rng: &mut impl RngCore) -> Action {
        let config = crate::Config::defaults(view.ruleset, view.seats);
        self.choose_in(view, &config, &crate::determinize::Seen::default(), rng)
    }

    /// This policy's action for the seat whose view this is, at a table with `config`;
    /// `seen` is what the seat remembers of its own moves this deal (used by `Search`).
    pub fn choose_in(
        self,
        view: &View,
        config: &crate::Config,
        seen: &crate::determinize::Seen,
        rng: &mut impl RngCore,
    ) -> Action {
        match self {
            Policy::Random => random_action(view, rng),
            Policy::Heuristic => heuristic_action(view),
            Policy::Search(playouts) => search_action(view, config, seen, playouts, rng),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Search(n) if *n != DEFAULT_PLAYOUTS => write!(f, "search:{n}"),
            p => f.write_str(p.name()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error(
    "unknown bot policy {0:?} (expected random, heuristic, search, or search:N with N playouts per decision, 1 to 1000000)"
)]
pub struct ParsePolicyError(pub String);

impl FromStr for Policy {
    type Err = ParsePolicyError;
    fn from_str(s: &str) -> Result<Policy, ParsePolicyError> {
        let bad = || ParsePolicyError(s.to_string());
        if let Some((name, budget)) = s.split_once(':') {
            if !name.eq_ignore_ascii_case("search") {
                return Err(bad());
            }
            let n: u32 = budget.parse().map_err(|_| bad())?;
            return (MIN_PLAYOUTS..=MAX_PLAYOUTS)
                .contains(&n)
                .then_some(Policy::Search(n))
                .ok_or_else(bad);
        }
        Policy::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(bad)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn policy_names_round_trip() {
        for p in Policy::ALL {
            assert_eq!(p.name().parse::<Policy>(), Ok(p));
        }
        assert_eq!("Heuristic".parse::<Policy>(), Ok(Policy::Heuristic));
        assert!("greedy".parse::<Policy>().is_err());
        assert_eq!("search:40".parse::<Policy>(), Ok(Policy::Search(40)));
        assert_eq!(Policy::Search(40).to_string(), "search:40");
        assert_eq!(
            "search".parse::<Policy>(),
            Ok(Policy::Search(DEFAULT_PLAYOUTS))
        );
        for bad in [
            "search:0",
            "search:1000001",
            "search:",
            "search:x",
            "random:5",
        ] {
            assert!(bad.parse::<Policy>().is_err(), "{bad}");
        }
    }

    #[test]
    fn uniform_below_covers_the_range_evenly() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[uniform_below(&mut rng, 5) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}

/// The RNG of one house bot: ChaCha8 keyed by SHA-256 of a domain tag, the match seed and the
/// seat, so that a seeded simulation is reproducible and no two seats share a stream.
pub fn bot_rng(seed: &crate::Seed, seat: crate::Seat) -> rand_chacha::ChaCha8Rng {
    use rand_chacha::rand_core::SeedableRng;
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"bete-bots/1");
    h.update(seed.0);
    h.update([seat.0]);
    rand_chacha::ChaCha8Rng::from_seed(h.finalize().into())
}

/// House bots for every seat of a table: a policy and an RNG each.
#[derive(Clone, Debug)]
pub struct Bots {
    seats: Vec<(Policy, rand_chacha::ChaCha8Rng)>,
    /// What each seat saw of its own moves this deal (for `search`).
    seen: Vec<crate::determinize::Seen>,
    /// The deal the events seen last belong to.
    deal: u32,
}

impl Bots {
    /// `policies[i]` plays seat i; a shorter list repeats (one policy plays every seat).
    pub fn new(policies: &[Policy], seats: u8, seed: &crate::Seed) -> Bots {
        Bots {
            seats: (0..seats)
                .map(|i| {
                    let p = if policies.is_empty() {
                        Policy::Random
                    } else {
                        policies[i as usize % policies.len()]
                    };
                    (p, bot_rng(seed, crate::Seat(i)))
                })
                .collect(),
            seen: vec![crate::determinize::Seen::default(); seats as usize],
            deal: 0,
        }
    }

    /// Takes in the private events a match emitted, so that each bot remembers its own
    /// exchanges and discards as a seat would.
    pub fn observe(&mut self, events: &[crate::Event]) {
        for e in events {
            if let crate::PublicEvent::DealStarted(ds) = &e.public {
                self.deal = ds.deal;
            }
            for (s, p) in &e.private {
                if let Some(seen) = self.seen.get_mut(s.index()) {
                    seen.observe(self.deal, p);
                }
            }
        }
    }

    /// The bot of the seat to act chooses from that seat's view, at a table with the
    /// default config (see `choose_in`).
    pub fn choose(&mut self, view: &View) -> Action {
        let config = crate::Config::defaults(view.ruleset, view.seats);
        self.choose_in(view, &config)
    }

    /// The bot of the seat to act chooses from that seat's view at a table with `config`.
    pub fn choose_in(&mut self, view: &View, config: &crate::Config) -> Action {
        let crate::Viewer::Seat(s) = view.viewer else {
            return Action::Pass;
        };
        let seen = self.seen.get(s.index()).cloned().unwrap_or_default();
        match self.seats.get_mut(s.index()) {
            Some((p, rng)) => p.choose_in(view, config, &seen, rng),
            None => Action::Pass,
        }
    }

    /// Plays until the match is over, or until deal `stop_at_deal` has started (with
    /// `Some(d)`, exactly deals 0..d are played). Each bot sees only its own view.
    pub fn play(
        &mut self,
        game: &mut crate::Game,
        stop_at_deal: Option<u32>,
    ) -> Result<(), crate::ActionError> {
        while let Some(seat) = game.to_act() {
            if stop_at_deal.is_some_and(|d| game.deal_index() >= d) {
                break;
            }
            let view = game.view(crate::Viewer::Seat(seat));
            let config = game.setup().config.clone();
            let action = self.choose_in(&view, &config);
            let events = game.apply(seat, action)?;
            self.observe(&events);
        }
        Ok(())
    }
}
