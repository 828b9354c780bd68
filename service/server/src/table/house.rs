//! House bots: the engine's policies, run inside the table actor when their seat is to act.

use bete_rules::bots::Policy;
use bete_rules::{Action, Game, Seat, Viewer};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The RNG of a table's random house bots. Its choices are logged as actions, so it need not
/// be reproducible.
pub fn rng() -> ChaCha8Rng {
    ChaCha8Rng::from_seed(rand::random())
}

/// The policy's action for `seat`, from that seat's own view only.
pub fn choose(policy: &str, game: &Game, seat: Seat, rng: &mut ChaCha8Rng) -> Option<Action> {
    let policy: Policy = policy.parse().ok()?;
    let view = game.view(Viewer::Seat(seat));
    if view.legal_actions.is_empty() {
        return None;
    }
    let seen = bete_rules::determinize::Seen::default();
    Some(policy.choose_in(&view, &game.setup().config, &seen, rng))
}
