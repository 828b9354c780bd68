//! `bete`: the command line of the bete game service. A thin dispatcher: each subcommand lives
//! in its own module under `cli/`.

use std::process::ExitCode;

use clap::Parser;

use bete_client::cli::{Cli, run};

fn main() -> ExitCode {
    run(Cli::parse())
}
