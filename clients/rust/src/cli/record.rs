//! `bete record`: save a finished table's game record.

use std::path::PathBuf;

use anyhow::Context as _;

use super::common::ServerArgs;

/// Save the game record (`bete-record/1` JSON) of a finished table.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  bete record --server http://127.0.0.1:50051 TABLE_ID --out match.json\n  bete replay match.json"
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// The table's id (see `bete tables`).
    table: String,
    /// Write the record here instead of to standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.server.connect_public().await?;
    let record = client.get_game_record(&args.table).await?;
    match args.out {
        Some(path) => {
            std::fs::write(&path, record.as_bytes())
                .with_context(|| format!("cannot write {}; pick another --out", path.display()))?;
            eprintln!(
                "record of table {} written to {}",
                args.table,
                path.display()
            );
        }
        None => println!("{record}"),
    }
    Ok(())
}
