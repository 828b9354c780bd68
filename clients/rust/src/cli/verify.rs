//! `bete verify`: checks a finished record's seed against its table's commitment and every
//! deck against the seeded shuffle (see [`crate::verify`]).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::render::escape;
use crate::verify::{VerifyError, parse_commitment, verify};

use super::common::ServerArgs;

/// Exit status when the record could not be fetched or read (nothing was checked).
const UNCHECKED: u8 = 3;

/// Check that a record's decks were fixed before the match: the seed it reveals hashes to the
/// commitment its table published (seed_sha256), and every deal's deck is that seed's shuffle
/// (RULES.md 11.5).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 verified; 1 the commitment or a deck does not match (or the record has no seed); 2 a malformed record (does not parse or replay); 3 the record could not be read or fetched.\n\nExamples:\n  bete verify --table TABLE_ID\n  bete record TABLE_ID --out match.json && bete verify match.json --commitment SEED_SHA256"
)]
pub struct Args {
    /// A `bete-record/1` file ("-" for standard input).
    #[arg(required_unless_present = "table", conflicts_with = "table")]
    record: Option<PathBuf>,
    /// The commitment to check the seed against: the table's seed_sha256 (64 hex digits).
    /// Without it only the decks are checked and the seed's hash is printed.
    #[arg(long, value_parser = parse_commitment, conflicts_with = "table")]
    commitment: Option<String>,
    /// Fetch the table's commitment and its finished record from the server and check them.
    #[arg(long, value_name = "TABLE_ID")]
    table: Option<String>,
    /// The server (with --table). No token is needed: a finished listed table, and a ladder
    /// table once its match is rated, are public; --token, if given, is sent.
    #[command(flatten)]
    server: ServerArgs,
}

/// Runs the subcommand.
pub fn run(args: Args) -> ExitCode {
    let (text, commitment) = match fetch(&args) {
        Ok(found) => found,
        Err(e) => {
            eprintln!("error: {}", escape(&format!("{e:#}")));
            return ExitCode::from(UNCHECKED);
        }
    };
    let v = match verify(&text, commitment.as_deref()) {
        Ok(v) => v,
        Err(e @ VerifyError::Malformed(_)) => {
            eprintln!("bete verify: {}", escape(&e.to_string()));
            return ExitCode::from(e.exit_code());
        }
        Err(e @ VerifyError::NoSeed) => {
            eprintln!("NOT VERIFIED: {e}");
            return ExitCode::from(e.exit_code());
        }
    };
    println!("seed:          {}", v.seed);
    println!("sha256(seed):  {}", v.commitment);
    match (&v.expected, v.commitment_ok()) {
        (Some(expected), Some(true)) => println!("commitment:    {expected} (matches)"),
        (Some(expected), _) => println!("commitment:    {expected} (DOES NOT MATCH)"),
        (None, _) => println!(
            "commitment:    none given; compare sha256(seed) with the table's seed_sha256, or use --table"
        ),
    }
    // Deals counted from 0, as the record's `deals[k]`, SeatView.deal and DealStarted.deal.
    for (k, deal) in v.deals.iter().enumerate() {
        println!("deal {k:>3}: {deal}");
    }
    let code = v.exit_code();
    match code {
        0 => println!(
            "verified: {}every deal's deck is the seed's shuffle (RULES.md 11.5) and the record replays",
            if v.expected.is_some() {
                "the seed matches the commitment, "
            } else {
                ""
            }
        ),
        1 => {
            let mut why = Vec::new();
            if v.commitment_ok() == Some(false) {
                why.push("the seed does not hash to the commitment".to_string());
            }
            let bad: Vec<String> = v
                .deals
                .iter()
                .enumerate()
                .filter(|(_, d)| !d.ok())
                .map(|(k, _)| k.to_string())
                .collect();
            if !bad.is_empty() {
                why.push(format!(
                    "the deck of deal {} is not the seed's shuffle (deals counted from 0, as \
                     the record's `deals[k]`)",
                    bad.join(", ")
                ));
            }
            eprintln!("NOT VERIFIED: {}", why.join("; "));
        }
        _ => eprintln!(
            "bete verify: malformed record: it does not replay: {}",
            escape(v.replay_error.as_deref().unwrap_or_default())
        ),
    }
    ExitCode::from(code)
}

/// The record's text and the commitment to check it against.
fn fetch(args: &Args) -> anyhow::Result<(String, Option<String>)> {
    use anyhow::Context as _;
    if let Some(table) = &args.table {
        let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
        return runtime.block_on(fetch_table(&args.server, table));
    }
    let path = args
        .record
        .as_ref()
        .context("give a RECORD file or --table TABLE_ID")?;
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    Ok((text, args.commitment.clone()))
}

async fn fetch_table(
    server: &ServerArgs,
    table_id: &str,
) -> anyhow::Result<(String, Option<String>)> {
    use anyhow::Context as _;
    let client = server.connect_public().await?;
    let table = client
        .get_table(table_id)
        .await
        .with_context(|| format!("cannot get table {}", escape(table_id)))?;
    let commitment = parse_commitment(&table.seed_sha256).map_err(|_| {
        anyhow::anyhow!(
            "table {} published no seed commitment (seed_sha256 {:?}); nothing to check against",
            escape(table_id),
            escape(&table.seed_sha256)
        )
    })?;
    println!("table:         {}", escape(table_id));
    if !table.ladder_id.is_empty() {
        println!("ladder:        {}", escape(&table.ladder_id));
    }
    if table.seed_chosen {
        println!(
            "note:          the table's creator chose this seed, so the creator could know every deck (never rated)"
        );
    }
    let record = client.get_game_record(table_id).await.with_context(|| {
        format!(
            "cannot get the record of table {} (a ladder table's record is given once its match is rated)",
            escape(table_id)
        )
    })?;
    Ok((record, Some(commitment)))
}
