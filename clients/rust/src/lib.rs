//! # bete-client
//!
//! The reference client of the bete game service and the `bete` command line:
//! - [`Client`]: a typed async wrapper over the `bete.v1` gRPC stubs (bearer token, idempotent
//!   retried actions, self-resuming table watches), errors as [`Error`] with the server's reason;
//! - [`Bot`] and [`Runner`]: write `decide`, and the runner plays any number of tables on one
//!   connection;
//! - [`render`]: the terminal view of a table used by `bete watch`, `bete play` and `bete demo`;
//! - [`verify`]: checks a record's seed against its table's commitment and its decks;
//! - [`cli`]: the subcommands (the offline `simulate` and `replay` need only the rules engine).

pub mod action_stream;
pub mod board;
pub mod bot;
pub mod cli;
pub mod client;
pub mod error;
pub mod house;
pub mod render;
pub mod runner;
pub mod trace;
pub mod verify;

pub use action_stream::ActionStream;
pub use bete_api::pb;
pub use bot::{Bot, FirstLegalBot, RandomBot, Strategy};
pub use client::{Backoff, Client, Registered, Submitted, TableWatch, TlsOptions, WatchItem};
pub use error::{Error, Result, RpcError};
pub use runner::{MatchResult, Notice, RunReport, Runner, SubmitVia};
