//! `bete replay`: replays a game record and prints the state it describes.

use std::fmt::Write as _;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use bete_rules::record::{Report, replay_json};

const EXAMPLE: &str = "\
Output: one line per deal (its dealer, who declared or stayed, tricks per seat, the outcome, the
pools won, the bêtes made, the net change per seat), then the balances. With --json: one JSON
object with balances (net jetons per seat), on_table, match_over, deal and deals (per deal:
declarer or stayers, tricks per seat, who won which pool, bêtes made), for scripts.

Exit status: 0 replayed; 1 an illegal action, with the line
  illegal action at deal D, action A (seat S): REASON
on standard error (D and A counted from 0); 2 a malformed record (the message names what is wrong).

Examples:
  bete replay match.json
  bete replay match.json --json
  bete simulate --ruleset beast --seats 4 | bete replay -";

/// Replay a game record (bete-record/1), checking every action, and print the resulting state.
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLE)]
pub struct Args {
    /// The record file, or - for standard input.
    pub file: PathBuf,
    /// Print the result as one JSON object instead of readable lines.
    #[arg(long)]
    pub json: bool,
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
            let report = Report::of(&game);
            if args.json {
                println!("{}", report.to_json());
            } else {
                print!("{}", lines(&report));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// The report as readable lines: a heading, one line per settled deal, the balances.
pub fn lines(report: &Report) -> String {
    let mut out = String::new();
    let played = report.deals.len();
    let state = if report.match_over {
        format!("match over after {played} deals")
    } else {
        format!(
            "{played} deals settled, deal {} under way, {} jetons on the table",
            report.deal + 1,
            report.on_table
        )
    };
    let _ = writeln!(out, "{}, {} seats: {state}", report.ruleset, report.seats);
    for d in &report.deals {
        let _ = write!(out, "deal {:>2}  dealer {}", d.deal + 1, d.dealer);
        if let Some(s) = d.declarer {
            let _ = write!(out, "  declarer {s}");
        }
        if let Some(s) = d.contrer {
            let _ = write!(out, "  contrer {s}");
        }
        if !d.stayers.is_empty() && d.declarer.is_none() {
            let _ = write!(out, "  in: {}", joined(&d.stayers, " "));
        }
        let _ = write!(
            out,
            "  tricks {}  {}",
            joined(&d.tricks, "-"),
            d.outcome.replace('_', " ")
        );
        for p in &d.pools_won {
            let _ = write!(out, "; {} pool {} to seat {}", p.pool, p.amount, p.seat);
        }
        for b in &d.betes {
            let _ = write!(out, "; bête {} by seat {}", b.amount, b.seat);
        }
        let net: Vec<String> = d.net.iter().map(|n| format!("{n:+}")).collect();
        let _ = writeln!(out, "; net {}", net.join(" "));
    }
    let balances: Vec<String> = report
        .balances
        .iter()
        .enumerate()
        .map(|(seat, b)| format!("seat {seat} {b:+}"))
        .collect();
    let _ = writeln!(out, "balances: {}", balances.join(", "));
    out
}

fn joined<T: std::fmt::Display>(items: &[T], sep: &str) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(sep)
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
