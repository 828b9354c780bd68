//! # bete-rules
//!
//! The rules engine for the five-trick games of the Bête family, exactly as `RULES.md` states
//! them. Pure: no I/O, no async, no clock, no global RNG.

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
pub mod event;
pub mod exchange;
mod family;
pub mod game;
pub mod playout;
pub mod record;
pub mod ruleset;
mod sink;
mod summary;
mod trick;
pub mod view;

pub use config::{Config, ConfigError};
pub use event::{
    DealStart, Event, PrivateEvent, Privates, Projected, PublicEvent, Reveal, Settlement,
};
pub use game::{
    ActionError, DealLog, DealSummary, Decks, Game, LoggedAction, Setup, SetupError, pack,
};
pub use ruleset::{MAX_SEATS, RULES_VERSION, RulesetId};
pub use view::{Phase, Pools, View, Viewer};
