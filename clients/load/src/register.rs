//! Registering the harness's bots. On a server with open signup each is registered without an
//! account; on a hosted one (open signup off) under the accounts of `--account-tokens`. An
//! account keeps its bots for ever (at most 100), so a bot of the same name and version left by
//! an earlier run is reused: its token is rotated (the old one revoked) instead of a new bot
//! registered, and a load test can be run again and again with the same accounts.

use std::collections::HashMap;
use std::path::Path;

use bete_api::pb;
use bete_api::pb::account_service_client::AccountServiceClient;
use bete_api::pb::bot_service_client::BotServiceClient;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;

use crate::LoadError;
use crate::shard::Shard;

/// The version the harness registers its bots with (the server's default).
const VERSION: &str = "1";

/// One account the shard registers bots under.
#[derive(Debug)]
struct Account {
    auth: AsciiMetadataValue,
    /// Its bots of version [`VERSION`] by name, from ListAccountBots.
    bots: HashMap<String, String>,
}

/// Where the shard's bots come from.
#[derive(Debug, Default)]
pub struct Registrar {
    accounts: Vec<Account>,
}

/// The tokens of `--account-tokens`: one a line, blank lines and `#` comments skipped.
pub fn read_tokens(path: &Path) -> Result<Vec<String>, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::Options(format!("--account-tokens {}: {e}", path.display())))?;
    let tokens: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if tokens.is_empty() {
        return Err(LoadError::Options(format!(
            "--account-tokens {}: no token in it (one a line)",
            path.display()
        )));
    }
    Ok(tokens)
}

/// The tokens shard `shard` uses: those numbered ≡ I mod N when there are at least N, else
/// token I mod the count (shards then share accounts; their bots' names still differ).
pub fn shard_tokens(tokens: &[String], shard: Shard) -> Vec<String> {
    let n = shard.count as usize;
    if tokens.len() >= n {
        tokens
            .iter()
            .skip(shard.index as usize)
            .step_by(n)
            .cloned()
            .collect()
    } else {
        vec![tokens[shard.index as usize % tokens.len()].clone()]
    }
}

fn bearer(token: &str) -> Result<AsciiMetadataValue, LoadError> {
    format!("Bearer {token}")
        .parse()
        .map_err(|_| LoadError::Options("--account-tokens: a token is not valid metadata".into()))
}

fn request<T>(message: T, auth: &AsciiMetadataValue) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut().insert("authorization", auth.clone());
    r
}

impl Registrar {
    /// Without accounts when `tokens` is empty; else lists each account's bots on `channel`.
    pub async fn new(tokens: &[String], channel: &Channel) -> Result<Registrar, LoadError> {
        let mut accounts = Vec::new();
        for (i, token) in tokens.iter().enumerate() {
            let auth = bearer(token)?;
            let listed = AccountServiceClient::new(channel.clone())
                .list_account_bots(request(pb::ListAccountBotsRequest {}, &auth))
                .await
                .map_err(|s| {
                    LoadError::Setup(format!("ListAccountBots with account token {i}: {s}"))
                })?
                .into_inner();
            let bots = listed
                .bots
                .into_iter()
                .filter(|b| b.version == VERSION)
                .map(|b| (b.name, b.bot_id))
                .collect();
            accounts.push(Account { auth, bots });
        }
        Ok(Registrar { accounts })
    }

    /// Registers (or reuses) bot `name` through `channel`; `i` picks its account. Returns its
    /// id and token.
    pub async fn bot(
        &self,
        i: usize,
        name: String,
        channel: Channel,
    ) -> Result<(String, String), LoadError> {
        let account = (!self.accounts.is_empty()).then(|| &self.accounts[i % self.accounts.len()]);
        if let Some(a) = account
            && let Some(id) = a.bots.get(&name)
        {
            let r = BotServiceClient::new(channel)
                .rotate_bot_token(request(
                    pb::RotateBotTokenRequest { bot_id: id.clone() },
                    &a.auth,
                ))
                .await
                .map_err(|s| LoadError::Setup(format!("RotateBotToken of {name}: {s}")))?
                .into_inner();
            return Ok((r.bot_id, r.token));
        }
        let message = pb::RegisterBotRequest {
            name,
            owner: "bete-load".into(),
            version: VERSION.into(),
        };
        let req = match account {
            Some(a) => request(message, &a.auth),
            None => tonic::Request::new(message),
        };
        let r = BotServiceClient::new(channel)
            .register_bot(req)
            .await
            .map_err(|s| LoadError::Setup(format!("RegisterBot: {s}")))?
            .into_inner();
        Ok((r.bot_id, r.token))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_shard_takes_its_tokens() {
        let t: Vec<String> = (0..7).map(|i| format!("t{i}")).collect();
        assert_eq!(shard_tokens(&t, Shard { index: 1, count: 3 }), ["t1", "t4"]);
        assert_eq!(
            shard_tokens(&t, Shard { index: 0, count: 3 }),
            ["t0", "t3", "t6"]
        );
        assert_eq!(shard_tokens(&t[..2], Shard { index: 2, count: 3 }), ["t0"]);
        assert_eq!(shard_tokens(&t[..1], Shard::default()), ["t0"]);
    }

    #[test]
    fn token_files_skip_comments_and_refuse_emptiness() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tokens");
        std::fs::write(&f, "# accounts of the load test\n\nabc\n  def  \n").unwrap();
        assert_eq!(read_tokens(&f).unwrap(), ["abc", "def"]);
        std::fs::write(&f, "# none\n").unwrap();
        assert!(
            read_tokens(&f)
                .unwrap_err()
                .to_string()
                .contains("no token")
        );
    }
}
