//! `bete replay`: replays a game record and prints the state it describes.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use bete_rules::record::{Report, replay_json};

const EXAMPLE: &str = "\
Output: one JSON object with balances (net jetons per seat), on_table, match_over, deal and
deals (per deal: declarer or stayers, tricks per seat, who won which pool, bêtes made).

Exit status: 0 replayed; 1 an illegal action, with the line
  illegal action at deal D, action A (seat S): REASON
on standard error (D and A counted from 0); 2 a malformed record (the message names what is wrong).

Examples:
  bete replay match.json
  bete simulate --ruleset beast --seats 4 | bete replay -";

/// Replay a game record (bete-record/1), checking every action, and print the resulting state.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLE)]
pub struct Args {
    /// The record file, or - for standard input.
    pub file: PathBuf,
}

pub fn run(args: Args) -> ExitCode {
    let text = match read(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("malformed record: cannot read {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    match replay_json(&text) {
        Ok(game) => {
            println!("{}", Report::of(&game).to_json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn read(path: &PathBuf) -> std::io::Result<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        Ok(s)
    } else {
        std::fs::read_to_string(path)
    }
}
