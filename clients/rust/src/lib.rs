//! # bete-client
//!
//! The reference client of the bete game service and the `bete` command line. For now it holds
//! the offline subcommands (`simulate`, `replay`), which need only the rules engine.

pub mod cli;
