//! `bete-load`: parse flags, run the bounded load test, print a summary, write the report.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;

/// Quotes an argument for the recorded command line when a shell would need it.
fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Writes the report where `--report` says (`-`: stdout) and names the file on stderr.
fn write_report(report: &bete_load::Report, path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = path {
        report
            .write(path)
            .with_context(|| format!("writing {}", path.display()))?;
        if path != Path::new("-") {
            eprintln!("report: {}", path.display());
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let opts = bete_load::Options::parse();
    let command = std::env::args()
        .map(|a| quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(bete_load::cli::Command::Merge(m)) = &opts.command {
        let inputs = bete_load::merge::read_all(&m.reports)?;
        let report = bete_load::merge::merge(&inputs, command)?;
        eprintln!("{}", report.summary());
        return write_report(&report, m.report.as_deref());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // The outer bound: whatever happens inside, the harness ends by itself.
    let bound = opts.setup_timeout * 2
        + opts.duration
        + opts.drain
        + opts.ceiling_duration
        + Duration::from_secs(60);
    let report = runtime
        .block_on(async { tokio::time::timeout(bound, bete_load::run(&opts, command)).await })
        .map_err(|_| {
            anyhow::anyhow!("the run exceeded its bound of {bound:?} and was stopped")
        })??;
    // Dropping the runtime cancels any leftover task instead of waiting for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    eprintln!("{}", report.summary());
    write_report(&report, opts.report.as_deref())
}
