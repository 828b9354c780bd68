//! The subcommands of `bete`, one module each. `run` dispatches and turns each subcommand's
//! outcome into the process exit status.

pub mod bot;
pub mod common;
pub mod demo;
pub mod play;
pub mod record;
pub mod replay;
pub mod simulate;
pub mod tables;
pub mod watch;

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
    /// Run a built-in strategy as a bot at one or more tables.
    Bot(bot::Args),
    /// Watch a table live as a spectator.
    Watch(watch::Args),
    /// Sit down at a table and play against house bots from the keyboard.
    Play(play::Args),
    /// List the tables of a server.
    Tables(tables::Args),
    /// Save the game record of a finished table.
    Record(record::Args),
    /// Start a server in this process and show a whole match between house bots.
    Demo(demo::Args),
}

/// Runs one parsed command line and returns the exit status.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Bot(args) => network(bot::run(args)),
        Command::Watch(args) => network(watch::run(args)),
        Command::Play(args) => network(play::run(args)),
        Command::Tables(args) => network(tables::run(args)),
        Command::Record(args) => network(record::run(args)),
        Command::Demo(args) => network(demo::run(args)),
    }
}

/// Runs a network subcommand on a tokio runtime and prints its error, which says what to do.
fn network(command: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(command);
    // A pending read of the keyboard (bete play) would otherwise keep the process alive.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
