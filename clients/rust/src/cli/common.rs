//! Options and helpers the network subcommands share.

use std::path::PathBuf;

use crate::{Client, TlsOptions, pb};
use anyhow::Context as _;

/// Where the server is and who we are.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The server's address: `host:port` or `http://host:port`; `https://...` connects over TLS.
    #[arg(long, env = "BETE_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// A bot token from RegisterBot. Commands that play register a new bot for the run without
    /// one; the public reads (tables, watch, record, verify, ladder) send it only when given.
    #[arg(long, env = "BETE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// How to connect over TLS.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsArgs {
    /// Connect over TLS even if --server says http:// (an https:// address always does).
    #[arg(long, env = "BETE_TLS")]
    pub tls: bool,
    /// PEM certificate of the CA to trust instead of the system's (a private CA). Implies --tls.
    #[arg(long, env = "BETE_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// PEM client certificate, for a server that asks for one (a bot farm's). Implies --tls.
    #[arg(long, env = "BETE_CLIENT_CERT", requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// The PEM private key of --client-cert.
    #[arg(long, env = "BETE_CLIENT_KEY", requires = "client_cert")]
    pub client_key: Option<PathBuf>,
    /// The name the server's certificate must carry, when --server names it otherwise (by IP).
    #[arg(long, env = "BETE_TLS_DOMAIN")]
    pub tls_domain: Option<String>,
}

impl TlsArgs {
    /// The TLS options to dial `server` with; `None`: plaintext.
    pub fn options(&self, server: &str) -> anyhow::Result<Option<TlsOptions>> {
        let wanted = self.tls
            || server.starts_with("https://")
            || self.ca_cert.is_some()
            || self.client_cert.is_some()
            || self.tls_domain.is_some();
        if !wanted {
            return Ok(None);
        }
        let read =
            |p: &PathBuf| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
        Ok(Some(TlsOptions {
            ca_cert: self.ca_cert.as_ref().map(read).transpose()?,
            identity: match (&self.client_cert, &self.client_key) {
                (Some(c), Some(k)) => Some((read(c)?, read(k)?)),
                _ => None,
            },
            domain: self.tls_domain.clone(),
        }))
    }
}

impl ServerArgs {
    /// Connects and authenticates (registering a bot named `name` when no token was given).
    pub async fn connect(&self, name: &str) -> anyhow::Result<Client> {
        let client = self.dial().await?;
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
        let client = self.dial().await?;
        if let Some(token) = &self.token {
            client.set_token(token).context("check --token")?;
        }
        Ok(client)
    }
}

impl ServerArgs {
    /// Dials the server (over TLS as the options say), without authenticating.
    pub async fn dial(&self) -> anyhow::Result<Client> {
        dial(&self.server, &self.tls).await
    }
}

/// Dials `server`, saying what to do when nothing answers there.
pub async fn dial(server: &str, tls: &TlsArgs) -> anyhow::Result<Client> {
    let options = tls.options(server)?;
    Client::connect_with(server, options.as_ref())
        .await
        .with_context(|| {
            super::named(&format!(
                "start a server with `bete-server`, or try `bete demo` (server: {server})"
            ))
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
            "unknown ruleset {text:?}; use one of bete, bete-ace-high, beast, beste-boer, lanterlui, bester-bube, mouche, mistigri, loo, rams"
        )),
        Some(r) => Ok(r),
    }
}

/// The think time per decision asked for `search` house bots (the server caps it at a quarter
/// of the table's deadline).
pub const HOUSE_SEARCH_BUDGET_MS: u32 = 50;

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
                search_budget_ms: if policy == pb::HouseBotPolicy::Search {
                    HOUSE_SEARCH_BUDGET_MS
                } else {
                    0
                },
            })
            .collect(),
        ..Default::default()
    }
}
