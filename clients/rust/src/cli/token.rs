//! `bete rotate-token`: replace a bot's token (BotService.RotateBotToken).

use anyhow::Context as _;

use super::common::ServerArgs;
use crate::render;

/// Replace a bot's token with a new one; the old one is revoked at once.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The new token is printed alone on standard output (store it: it is shown only once).\n\nExamples:\n  BETE_ACCOUNT_TOKEN=beteacct_... bete rotate-token b_0123abcd     # a bot of an account\n  BETE_TOKEN=bete_... bete rotate-token b_0123abcd                 # a bot without an account"
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// The token of the bot's account. Without it, --token (the bot's own token) is used,
    /// which only a bot registered without an account may do.
    #[arg(long, env = "BETE_ACCOUNT_TOKEN", hide_env_values = true)]
    account_token: Option<String>,
    /// The bot whose token is replaced.
    bot_id: String,
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.server.dial().await?;
    if args.account_token.is_none() {
        let token = args
            .server
            .token
            .as_deref()
            .context("give the bot's account token (--account-token) or its own (--token)")?;
        client.set_token(token).context("check --token")?;
    }
    let token = client
        .rotate_token(&args.bot_id, args.account_token.as_deref())
        .await?;
    eprintln!(
        "bot {}: new token below; the old one is revoked (its streams have ended)",
        render::escape(&args.bot_id)
    );
    println!("{token}");
    Ok(())
}
