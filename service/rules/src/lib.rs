//! # bete-rules
//!
//! The rules engine for the five-trick games of the Bête family, exactly as `RULES.md` states
//! them. Pure: no I/O, no async, no clock, no global RNG.
//!
//! Two ways to drive a [`Game`]:
//!
//! - **Action by action**, as the server does: [`Game::legal_actions`], then [`Game::apply`],
//!   which returns typed events with a public part and per-seat private parts, and
//!   [`Game::view`] for what one seat or a spectator may see.
//! - **Whole deals at random**, for simulations and Monte-Carlo bots: a match that keeps no
//!   record ([`Game::new_playout`], or [`Game::playout`] to copy a live one), a random deck
//!   dealt by the engine ([`Game::play_random_deck`]) and the deal played to its settlement
//!   with uniformly random legal actions ([`Game::play_out_deal`]), from the caller's
//!   generator:
//!
//! ```
//! use bete_rules::{Config, Decks, Game, RulesetId, Seat, Setup};
//! use rand_chacha::{ChaCha8Rng, rand_core::SeedableRng};
//!
//! let setup = Setup {
//!     ruleset: RulesetId::Bete,
//!     config: Config::defaults(RulesetId::Bete, 5),
//!     seats: 5,
//!     first_dealer: Seat(0),
//!     decks: Decks::Explicit(Vec::new()),
//! };
//! let mut game = Game::new_playout(setup)?;
//! let mut rng = ChaCha8Rng::seed_from_u64(7);
//! let mut deals = 0;
//! while game.play_random_deck(&mut rng).is_ok() {
//!     game.play_out_deal(&mut rng);
//!     deals += 1;
//! }
//! // The match ran to its end, and every jeton is still on the table or with a seat.
//! assert!(game.is_over() && deals >= 10);
//! assert_eq!(game.balances().iter().sum::<i64>() + game.on_table(), 0);
//! # Ok::<(), bete_rules::game::SetupError>(())
//! ```

pub mod action;
pub mod card;
pub mod cardset;
pub mod seat;
pub mod shuffle;

pub use action::{Action, ParseActionError};
pub use card::{Card, ParseCardError, Rank, Suit};
pub use cardset::CardSet;
pub use seat::Seat;
pub use shuffle::{Seed, deck_order};
pub mod beast;
pub mod bete;
pub mod bots;
pub mod config;
pub mod deal;
pub mod determinize;
pub mod event;
pub mod exchange;
mod family;
pub mod game;
pub mod playout;
pub mod pool;
pub mod record;
pub mod ruleset;
mod sink;
mod summary;
mod trick;
pub mod view;

pub use config::{Config, ConfigError};
pub use determinize::{DeterminizeError, Determinizer, Seen, determinize};
pub use event::{
    DealStart, Event, PrivateEvent, Privates, Projected, PublicEvent, Reveal, Settlement,
};
pub use game::{
    ActionError, DealLog, DealSummary, Decks, Game, LoggedAction, Setup, SetupError, pack,
};
pub use ruleset::{MAX_SEATS, RULES_VERSION, RulesetId};
pub use view::{Phase, Pools, View, Viewer};
