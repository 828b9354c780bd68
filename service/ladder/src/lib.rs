//! # bete-ladder
//!
//! The decisions of a bot-vs-bot ladder, as functions of plain data, like the rules engine:
//! what a ladder is ([`spec`]), how a finished match moves ratings ([`rating`]), which entrants
//! meet next ([`pairing`]) and who sits where in each table of a duplicate set ([`duplicate`]).
//! The server feeds them (a bot came online, a table finished) and carries out their answers
//! (create these tables, seat these bots, store these ratings); nothing here does I/O, reads a
//! clock or draws from a global RNG, so every decision is testable without a server and a
//! stored history can be replayed to the same ratings.

pub mod crosstable;
pub mod duplicate;
pub mod luck;
pub mod pairing;
pub mod rating;
pub mod spec;
pub mod strikes;

pub use pairing::{Candidate, Pool, choose_group};
pub use rating::{Rating, places, update};
pub use spec::{LadderSpec, SpecError, default_ladders, parse_ladders};
pub use strikes::{StrikeWindow, past_limit};
