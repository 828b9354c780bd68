//! `bete simulate`: plays a match with the house bots and writes its record.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use bete_rules::bots::{Bots, Policy};
use bete_rules::record::Record;
use bete_rules::{Config, Decks, Game, RulesetId, Seat, Seed, Setup};

const EXAMPLE: &str = "\
Examples:
  bete simulate --ruleset bete --seats 5 --bots heuristic,random --out match.json
  bete simulate --ruleset beast --seats 4 --bots search:800,heuristic --deals 8
  bete simulate --ruleset lanterlui --seats 4 --config four_card_flush=true --deals 3
  bete simulate --ruleset bester-bube --seats 3 --seed 000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f --rounds 1";

/// Play a match with the house bots and write its game record (bete-record/1).
#[derive(Debug, clap::Args)]
#[command(after_help = EXAMPLE)]
pub struct Args {
    /// Ruleset id: bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams.
    #[arg(long)]
    pub ruleset: RulesetId,
    /// Number of seats (each ruleset allows its own range; bete takes 2 only with two_players=true).
    #[arg(long)]
    pub seats: u8,
    /// A config key of the ruleset as key=value; repeat for several keys.
    #[arg(long = "config", value_name = "KEY=VALUE", value_parser = parse_pair)]
    pub config: Vec<(String, String)>,
    /// Match seed, 64 hexadecimal digits (default: a fresh random seed, written in the record).
    #[arg(long)]
    pub seed: Option<Seed>,
    /// Stop after this many deals, even if the match is not over.
    #[arg(long, conflicts_with = "rounds")]
    pub deals: Option<u32>,
    /// Number of rounds (every seat deals once a round); overrides the config's `rounds`.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// House-bot policy per seat, comma-separated (random, heuristic, search, or search:N with N
    /// playouts per decision, 1 to 1000000); a shorter list repeats.
    #[arg(long, value_delimiter = ',', default_value = "heuristic")]
    pub bots: Vec<Policy>,
    /// The seat that deals first.
    #[arg(long, default_value_t = 0)]
    pub first_dealer: u8,
    /// Also write every deal's deck (the seed alone determines them).
    #[arg(long)]
    pub with_decks: bool,
    /// Write the record here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

pub fn run(args: Args) -> ExitCode {
    match simulate(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bete simulate: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Plays the match and returns its record.
pub fn record(args: &Args) -> Result<Record> {
    let mut pairs = args.config.clone();
    if let Some(r) = args.rounds {
        pairs.retain(|(k, _)| k != "rounds");
        pairs.push(("rounds".to_string(), r.to_string()));
    }
    let config = Config::from_pairs(args.ruleset, args.seats, &pairs)
        .map_err(|e| anyhow!("config error: {e}"))?;
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let setup = Setup {
        ruleset: args.ruleset,
        config,
        seats: args.seats,
        first_dealer: Seat(args.first_dealer),
        decks: Decks::Seed(seed),
    };
    let (mut game, _) = Game::new(setup).map_err(|e| anyhow!("{e}"))?;
    let mut bots = Bots::new(&args.bots, args.seats, &seed);
    bots.play(&mut game, args.deals)
        .map_err(|e| anyhow!("a house bot chose an illegal action (engine bug): {e}"))?;
    let mut record = Record::from_game(&game);
    if let Some(d) = args.deals {
        record.truncate_deals(d as usize);
        // Recompute the balances of exactly those deals (the next deal's antes included,
        // 11.4), so the record still checks itself.
        let replayed = bete_rules::record::replay(&record).map_err(|e| anyhow!("{e}"))?;
        record.json.balances = Some(replayed.balances().to_vec());
    }
    if args.with_decks {
        record.include_decks();
    }
    Ok(record)
}

fn simulate(args: Args) -> Result<()> {
    let record = record(&args)?;
    let mut text = record.to_json_pretty();
    text.push('\n');
    match &args.out {
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            // Say what the file holds and what to do with it; the record itself went to the file.
            let json = &record.json;
            eprintln!(
                "wrote {}: a {} match of {} seats, {} deals{} (seed {}); replay it with `{} replay {}`",
                path.display(),
                json.ruleset,
                json.seats,
                json.deals.len(),
                if args.deals.is_some() {
                    ", cut short by --deals"
                } else {
                    ""
                },
                json.seed.as_deref().unwrap_or("none"),
                super::invoked_as(),
                path.display()
            );
        }
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("cannot write to standard output")?,
    }
    Ok(())
}

/// A seed nobody chose: the standard library's per-process random hasher keys, the clock and
/// the process id, mixed through SHA-256. Only used when no `--seed` is given; the seed is
/// written into the record, so the match still replays.
fn fresh_seed() -> Seed {
    use sha2::{Digest, Sha256};
    use std::hash::{BuildHasher, Hasher};
    let mut h = Sha256::new();
    for i in 0..4u64 {
        let mut s = std::collections::hash_map::RandomState::new().build_hasher();
        s.write_u64(i);
        h.update(s.finish().to_le_bytes());
    }
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.update(t.as_nanos().to_le_bytes());
    }
    h.update(std::process::id().to_le_bytes());
    Seed(h.finalize().into())
}
