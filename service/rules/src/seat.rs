//! Seats, numbered 0..n-1 in the direction of play (RULES.md 11.2).

use std::fmt;

/// A seat at the table. Seat `i + 1 (mod n)` acts after seat `i`, whatever the direction of play.
#[derive(
    Copy,
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(transparent)]
pub struct Seat(pub u8);

impl Seat {
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The next seat in play order at a table of `n` seats.
    pub const fn next(self, n: u8) -> Seat {
        // A compare instead of `% n`: this runs on every action, and a division is the
        // slowest instruction in a playout.
        if self.0 + 1 >= n {
            Seat(0)
        } else {
            Seat(self.0 + 1)
        }
    }

    /// The seat `k` places after this one in play order.
    pub const fn offset(self, k: u8, n: u8) -> Seat {
        Seat(((self.0 as u16 + k as u16) % n as u16) as u8)
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
