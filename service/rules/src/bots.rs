//! The two house-bot policies, as pure functions of one seat's [`View`] (0.4 item 18): they
//! never see anything a seat may not know.
//!
//! - [`random_action`]: uniform over the legal actions, drawn from a seeded RNG.
//! - [`heuristic_action`]: plays each ruleset sensibly: bids on strong hands, drops weak ones
//!   where dropping is allowed, exchanges low non-trumps, keeps the bowers for the obligations
//!   of tricks 1–2, and wins tricks cheaply (the lowest winning card, else the lowest card).

mod heuristic;
mod strength;

use std::fmt;
use std::str::FromStr;

use rand_chacha::rand_core::RngCore;
use thiserror::Error;

use crate::action::Action;
use crate::view::View;

pub use heuristic::heuristic_action;
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

/// A house-bot policy, as named on the command line (`random`, `heuristic`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    Random,
    Heuristic,
}

impl Policy {
    pub const ALL: [Policy; 2] = [Policy::Random, Policy::Heuristic];

    pub const fn name(self) -> &'static str {
        match self {
            Policy::Random => "random",
            Policy::Heuristic => "heuristic",
        }
    }

    /// This policy's action for the seat whose view this is. `rng` is used only by `Random`.
    pub fn choose(self, view: &View, rng: &mut impl RngCore) -> Action {
        match self {
            Policy::Random => random_action(view, rng),
            Policy::Heuristic => heuristic_action(view),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown bot policy {0:?} (expected random or heuristic)")]
pub struct ParsePolicyError(pub String);

impl FromStr for Policy {
    type Err = ParsePolicyError;
    fn from_str(s: &str) -> Result<Policy, ParsePolicyError> {
        Policy::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParsePolicyError(s.to_string()))
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
        }
    }

    /// The bot of the seat to act chooses from that seat's view.
    pub fn choose(&mut self, view: &View) -> Action {
        let crate::Viewer::Seat(s) = view.viewer else {
            return Action::Pass;
        };
        match self.seats.get_mut(s.index()) {
            Some((p, rng)) => p.choose(view, rng),
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
            let action = self.choose(&view);
            game.apply(seat, action)?;
        }
        Ok(())
    }
}
