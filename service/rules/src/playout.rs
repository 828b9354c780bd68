//! Random playouts: the rest of a deal played with uniformly random legal actions, without
//! events. This is what a simulation of millions of deals or a Monte-Carlo bot runs; see
//! [`crate::Game::play_out_deal`].
//!
//! Every family gets the general loop (`Family::play_out`'s default: list the legal actions,
//! draw one, apply it); Bête overrides it with a loop over card masks that draws exactly the
//! same actions from the same random numbers (tests/properties.rs checks both against each other
//! action by action).

use rand_chacha::rand_core::RngCore;

/// A uniform index in `0..n` (n ≥ 1) from one 32-bit draw, by Lemire's multiply-and-shift
/// with rejection (no value is favoured, and no division unless a draw lands in the rare
/// rejection zone). Every action of a playout takes exactly one draw when nothing is rejected,
/// even a forced one (n = 1), so two playouts from the same state and seed stay in step.
#[inline]
pub fn uniform_index(rng: &mut impl RngCore, n: usize) -> usize {
    debug_assert!(n >= 1 && n <= u32::MAX as usize);
    let n = n as u32;
    let mut m = u64::from(rng.next_u32()) * u64::from(n);
    if (m as u32) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u32) < threshold {
            m = u64::from(rng.next_u32()) * u64::from(n);
        }
    }
    (m >> 32) as usize
}
