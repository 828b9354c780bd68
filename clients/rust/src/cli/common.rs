//! Options and helpers the network subcommands share.

use crate::{Client, pb};
use anyhow::Context as _;

/// Where the server is and who we are.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The server's address.
    #[arg(long, env = "BETE_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// A bot token from RegisterBot. Without one, a new bot is registered for this run.
    #[arg(long, env = "BETE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl ServerArgs {
    /// Connects and authenticates (registering a bot named `name` when no token was given).
    pub async fn connect(&self, name: &str) -> anyhow::Result<Client> {
        let client = dial(&self.server).await?;
        client
            .authenticate(self.token.as_deref(), name)
            .await
            .context("could not authenticate; check --token or omit it to register a new bot")?;
        Ok(client)
    }
}

impl ServerArgs {
    /// Connects for public reads: uses --token when given, never registers a bot.
    pub async fn connect_public(&self) -> anyhow::Result<Client> {
        let client = dial(&self.server).await?;
        if let Some(token) = &self.token {
            client.set_token(token).context("check --token")?;
        }
        Ok(client)
    }
}

/// Dials `server`, saying what to do when nothing answers there.
pub async fn dial(server: &str) -> anyhow::Result<Client> {
    Client::connect(server).await.with_context(|| {
        format!("start a server with `bete-server`, or try `bete demo` (server: {server})")
    })
}

/// Parses a ruleset's text id ("bete", "beste-boer", ...).
pub fn parse_ruleset(text: &str) -> Result<pb::Ruleset, String> {
    let name = format!(
        "RULESET_{}",
        text.trim().to_ascii_uppercase().replace('-', "_")
    );
    match pb::Ruleset::from_str_name(&name) {
        Some(pb::Ruleset::Unspecified) | None => Err(format!(
            "unknown ruleset {text:?}; use one of bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube"
        )),
        Some(r) => Ok(r),
    }
}

/// A new table for `ruleset` with `seats` seats whose seats other than 0 are house bots.
pub fn house_table(
    ruleset: pb::Ruleset,
    seats: u32,
    policy: pb::HouseBotPolicy,
    deadline_ms: u32,
) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: ruleset as i32,
        seats,
        decision_deadline_ms: deadline_ms,
        house_bots: (1..seats)
            .map(|seat| pb::HouseBotSeat {
                seat,
                policy: policy as i32,
            })
            .collect(),
        ..Default::default()
    }
}
