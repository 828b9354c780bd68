//! The subcommands of `bete`, one module each. `run` dispatches and turns each subcommand's
//! outcome into the process exit status.

pub mod replay;
pub mod simulate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The command line of the bete game service.
#[derive(Debug, Parser)]
#[command(name = "bete", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Simulate(simulate::Args),
    Replay(replay::Args),
}

/// Runs one parsed command line and returns the exit status.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Replay(args) => replay::run(args),
    }
}
