//! The subcommands of `bete`, one module each. `run` dispatches and turns each subcommand's
//! outcome into the process exit status.

pub mod admin;
pub mod bot;
pub mod common;
pub mod demo;
pub mod ladder;
pub mod ladder_bot;
pub mod play;
pub mod record;
pub mod replay;
pub mod simulate;
pub mod tables;
pub mod token;
pub mod verify;
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
    /// Run a built-in strategy as a bot at one or more tables, or on a ladder.
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
    /// The ladders of a server: list them, their leaderboards, their matches.
    Ladder(ladder::Args),
    /// Check a record's seed against its table's commitment and every deck against the seed.
    Verify(verify::Args),
    /// Operator commands (stop a table); they need the server's admin token.
    Admin(admin::Args),
    /// Replace a bot's token with a new one (the old one is revoked at once).
    RotateToken(token::Args),
}

/// How the person at the keyboard runs `bete`, for hints that name a command that works on their
/// machine: `cargo run -p bete-client --` under `cargo run` (which sets `CARGO_PKG_NAME` for the
/// program it runs), the path they typed when they ran a built binary by its path, else `bete`
/// (installed with `cargo install --path clients/rust`).
pub fn invoked_as() -> &'static str {
    static INVOKED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    INVOKED.get_or_init(|| {
        let argv0 = std::env::args_os().next().unwrap_or_default();
        invocation(
            std::env::var_os("CARGO_PKG_NAME").as_deref(),
            &argv0.to_string_lossy(),
        )
    })
}

fn invocation(cargo_package: Option<&std::ffi::OsStr>, argv0: &str) -> String {
    if cargo_package.is_some_and(|p| p == "bete-client") {
        "cargo run -p bete-client --".to_string()
    } else if argv0.contains('/') {
        argv0.to_string()
    } else {
        "bete".to_string()
    }
}

/// `text` with every quoted `` `bete ...` `` command (and `` `bete-server` ``) written the way
/// this person runs them.
pub fn named(text: &str) -> String {
    let bete = invoked_as();
    let server = if bete.starts_with("cargo run") {
        "cargo run --release -p bete-server"
    } else {
        "bete-server"
    };
    text.replace("`bete-server`", &format!("`{server}`"))
        .replace("`bete ", &format!("`{bete} "))
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
        Command::Ladder(args) => network(ladder::run(args)),
        Command::Verify(args) => verify::run(args),
        Command::Admin(args) => network(admin::run(args)),
        Command::RotateToken(args) => network(token::run(args)),
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
        // The shell's convention for a program stopped by Ctrl-C (128 + SIGINT).
        Err(e) if e.is::<play::Interrupted>() => ExitCode::from(130),
        Err(e) => {
            // Server messages can carry names and ids others chose.
            eprintln!(
                "error: {}",
                named(&crate::render::escape(&format!("{e:#}")))
            );
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bete").chain(args.iter().copied()))
    }

    #[test]
    fn hints_name_the_command_as_it_was_run() {
        let cargo = Some(std::ffi::OsStr::new("bete-client"));
        assert_eq!(
            invocation(cargo, "/x/target/debug/bete"),
            "cargo run -p bete-client --"
        );
        assert_eq!(
            invocation(None, "./target/debug/bete"),
            "./target/debug/bete"
        );
        assert_eq!(invocation(None, "bete"), "bete");
        let other = Some(std::ffi::OsStr::new("bete-server"));
        assert_eq!(invocation(other, "bete"), "bete");
    }

    #[test]
    fn bot_on_a_ladder_parses() {
        let cli = parse(&[
            "bot",
            "--ladder",
            "bete-4",
            "--strategy",
            "random",
            "--name",
            "r",
            "--capacity",
            "2",
            "--matches",
            "3",
        ])
        .expect("parses");
        let Command::Bot(args) = cli.command else {
            panic!("not bot: {cli:?}");
        };
        assert_eq!(args.ladder.as_deref(), Some("bete-4"));
        assert_eq!(args.strategy, crate::Strategy::Random);
        assert_eq!(args.capacity, 2);
        assert_eq!(args.matches, Some(3));
        assert_eq!(args.name, "r");
    }

    #[test]
    fn ladder_only_options_need_a_ladder_and_table_options_refuse_one() {
        assert!(parse(&["bot", "--capacity", "2"]).is_err());
        assert!(parse(&["bot", "--ladder", "bete-4", "--join", "T"]).is_err());
        assert!(parse(&["bot", "--ladder", "bete-4", "--ruleset", "beast"]).is_err());
        assert!(parse(&["bot", "--ladder", "bete-4", "--tables", "2"]).is_err());
        // The plain bot is unchanged.
        let cli = parse(&["bot", "--tables", "2"]).expect("parses");
        assert!(matches!(cli.command, Command::Bot(a) if a.ladder.is_none() && a.tables == 2));
    }

    #[test]
    fn ladder_subcommands_parse() {
        for args in [
            &["ladder", "list"][..],
            &["ladder", "list", "--json"],
            &["ladder", "standings", "beste-boer-4"],
            &["ladder", "standings", "beste-boer-4", "--json"],
            &["ladder", "matches", "bete-4", "--bot", "B", "--json"],
            &["ladder", "matches", "bete-4", "--server", "http://x:1"],
        ] {
            assert!(parse(args).is_ok(), "{args:?}");
        }
        assert!(parse(&["ladder", "standings"]).is_err(), "needs a ladder");
        assert!(parse(&["ladder", "rank", "bete-4"]).is_err());
    }

    #[test]
    fn verify_takes_a_record_or_a_table() {
        let hex = "ab".repeat(32);
        assert!(parse(&["verify", "r.json"]).is_ok());
        assert!(parse(&["verify", "r.json", "--commitment", &hex]).is_ok());
        assert!(parse(&["verify", "--table", "T"]).is_ok());
        assert!(parse(&["verify"]).is_err(), "a record or --table");
        assert!(parse(&["verify", "r.json", "--table", "T"]).is_err());
        assert!(parse(&["verify", "--table", "T", "--commitment", &hex]).is_err());
        assert!(parse(&["verify", "r.json", "--commitment", "abc"]).is_err());
    }
}
