//! The house policies of the rules crate (`bete_rules::bots`) as client-side [`Bot`]s.
//!
//! They decide on a `bete_rules::View`, so the seat's protobuf view is converted back into one
//! first ([`view_from_pb`]). The server built that view for this seat only, so the policy sees
//! exactly what the seat may know.

use bete_api::convert::action_to_pb;
/// Shared with the Python engine: the one conversion of a received view back into the engine's.
pub use bete_api::convert::view_from_pb;
use bete_api::pb;
use bete_rules::bots::Policy;
use rand::SeedableRng as _;

use crate::bot::Bot;

/// A bot playing one of the rules crate's house policies.
#[derive(Debug)]
pub struct HouseBot {
    policy: Policy,
    rng: rand_chacha::ChaCha8Rng,
}

impl HouseBot {
    /// The `heuristic` house policy.
    pub fn heuristic() -> Self {
        Self::new(Policy::Heuristic)
    }

    /// The `random` house policy.
    pub fn random() -> Self {
        Self::new(Policy::Random)
    }

    /// A bot for `policy`, its randomness seeded from the OS.
    pub fn new(policy: Policy) -> Self {
        HouseBot {
            policy,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(rand::random()),
        }
    }
}

impl Bot for HouseBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        match view_from_pb(view) {
            Ok(rules_view) => action_to_pb(self.policy.choose(&rules_view, &mut self.rng)),
            // A view this client cannot read (a newer server): any legal action is still legal.
            Err(_) => view.legal_actions.first().cloned().unwrap_or_default(),
        }
    }
}
