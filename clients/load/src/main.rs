//! `bete-load`: parse flags, run the bounded load test, print a summary, write the report.

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

fn main() -> anyhow::Result<()> {
    let opts = bete_load::Options::parse();
    let command = std::env::args()
        .map(|a| quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
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
    if let Some(path) = &opts.report {
        report
            .write(path)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("report: {}", path.display());
    }
    Ok(())
}
