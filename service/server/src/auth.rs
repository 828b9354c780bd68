//! Bot identity: bearer tokens, stored only as SHA-256 hashes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;

use crate::shutdown::{Shutdown, Stopped};
use crate::status::ServerError;
use crate::store::{BotRow, Store};

/// A fresh bearer token: 32 random bytes as hex, with a recognisable prefix.
pub fn new_token() -> String {
    format!("bete_{}", hex(&rand::random::<[u8; 32]>()))
}

/// A fresh bot id.
pub fn new_bot_id() -> String {
    format!("b_{}", hex(&rand::random::<[u8; 8]>()))
}

pub fn hex(bytes: &[u8]) -> String {
    // By table, not `write!`: every call hashes its token, and formatting cost as much as SHA-256.
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The stored form of a token.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// How long a revoked token's signal is kept after the rotation: far longer than a stream takes
/// from its token check to listening for the signal (streams take the signal right after the
/// check).
const REVOKED_KEPT: std::time::Duration = std::time::Duration::from_secs(60);

/// The revocation signals by token hash, pruned as they grow: without it every token that ever
/// opened a stream would stay for the life of the process.
#[derive(Debug)]
struct Revocations {
    signals: HashMap<String, (Shutdown, Option<std::time::Instant>)>,
    /// The size at which the next pruning pass runs (twice what survived the last one), so
    /// pruning costs O(1) a call amortized.
    prune_at: usize,
}

impl Default for Revocations {
    fn default() -> Revocations {
        Revocations {
            signals: HashMap::new(),
            prune_at: 1024,
        }
    }
}

impl Revocations {
    fn signal(&mut self, token_hash: &str) -> &Shutdown {
        if self.signals.len() >= self.prune_at {
            self.signals.retain(|_, (s, revoked)| {
                s.is_awaited() || revoked.is_some_and(|at| at.elapsed() < REVOKED_KEPT)
            });
            self.prune_at = (2 * self.signals.len()).max(1024);
        }
        &self
            .signals
            .entry(token_hash.to_string())
            .or_insert_with(|| (Shutdown::new(), None))
            .0
    }

    fn revoke(&mut self, token_hash: &str) {
        let (s, revoked) = self
            .signals
            .entry(token_hash.to_string())
            .or_insert_with(|| (Shutdown::new(), None));
        s.cancel();
        *revoked = Some(std::time::Instant::now());
    }
}

/// Resolves `authorization: Bearer <token>` to a bot, with a cache of known tokens.
#[derive(Debug)]
pub struct Auth {
    store: Arc<dyn Store>,
    cache: RwLock<HashMap<String, Arc<BotRow>>>,
    /// The operator's token (`--admin-token`); `None`: nothing administrative is reachable.
    admin_token: Option<String>,
    /// By token hash, for the tokens that opened a stream or were revoked: the signal that ends
    /// the streams opened with the token when it is revoked. A revoked token's entry stays
    /// (cancelled) for [`REVOKED_KEPT`], so a stream set up in the same instant as the
    /// rotation still ends. Entries nobody awaits are pruned as the map grows.
    revocations: Mutex<Revocations>,
    /// One rotation at a time: each replaces the hash current when it runs, in the store and
    /// here, so two racing rotations cannot leave a revoked token in the cache.
    rotating: tokio::sync::Mutex<()>,
}

impl Auth {
    pub fn new(store: Arc<dyn Store>, admin_token: Option<String>) -> Auth {
        Auth {
            store,
            cache: RwLock::new(HashMap::new()),
            admin_token,
            revocations: Mutex::new(Revocations::default()),
            rotating: tokio::sync::Mutex::new(()),
        }
    }

    /// Resolves when the token of `token_hash` is revoked (at once if it already was): streams
    /// opened with that token end then, with TOKEN_REVOKED.
    pub fn revocation(&self, token_hash: &str) -> Stopped {
        match self.revocations.lock() {
            Ok(mut r) => r.signal(token_hash).stopped(),
            // Poisoned only by a panic while inserting; the stream then just lacks the signal
            // (its next call is still refused by the store's hash).
            Err(_) => Shutdown::new().stopped(),
        }
    }

    /// Replaces the bot's token with a new one and revokes the old: durable first, then the
    /// old token leaves the cache and its streams are ended. Returns the new token.
    pub async fn rotate(&self, bot_id: &str) -> Result<String, ServerError> {
        let _one = self.rotating.lock().await;
        let bot = self
            .store
            .bot(bot_id.to_string())
            .await?
            .ok_or_else(|| ServerError::BotNotFound(bot_id.to_string()))?;
        let token = new_token();
        let hash = token_hash(&token);
        self.store
            .rotate_bot_token(bot.id.clone(), hash.clone(), crate::now_ms())
            .await?;
        if let Ok(mut c) = self.cache.write() {
            c.remove(&bot.token_hash);
        }
        self.remember(BotRow {
            token_hash: hash,
            ..bot.clone()
        });
        if let Ok(mut r) = self.revocations.lock() {
            r.revoke(&bot.token_hash);
        }
        Ok(token)
    }

    pub fn remember(&self, bot: BotRow) {
        if let Ok(mut c) = self.cache.write() {
            c.insert(bot.token_hash.clone(), Arc::new(bot));
        }
    }

    /// Checks `authorization: Bearer <admin token>` against the operator's token (in constant
    /// time, so the comparison leaks nothing of the secret).
    pub fn require_admin(&self, md: &MetadataMap) -> Result<(), ServerError> {
        let Some(admin) = self.admin_token.as_deref() else {
            return Err(ServerError::AdminRequired(
                "this server has no admin token (--admin-token), so no call can act as the operator",
            ));
        };
        let given = bearer(md).map_err(|_| {
            ServerError::AdminRequired(
                "send the operator's admin token as `authorization: Bearer <token>`",
            )
        })?;
        // Compare hashes: equal length, and a mismatch reveals nothing about where it is.
        let (a, b) = (
            Sha256::digest(admin.as_bytes()),
            Sha256::digest(given.as_bytes()),
        );
        if a.iter()
            .zip(b.iter())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            != 0
        {
            return Err(ServerError::AdminRequired("the admin token is wrong"));
        }
        Ok(())
    }

    pub async fn authenticate(&self, md: &MetadataMap) -> Result<Arc<BotRow>, ServerError> {
        let token = bearer(md)?;
        let hash = token_hash(token);
        if let Some(bot) = self.cache.read().ok().and_then(|c| c.get(&hash).cloned()) {
            return Ok(bot);
        }
        let Some(bot) = self.store.bot_by_token_hash(hash.clone()).await? else {
            return Err(if self.store.token_revoked(hash).await? {
                ServerError::TokenRevoked
            } else {
                ServerError::Unauthenticated("unknown token: register with BotService.RegisterBot")
            });
        };
        self.remember(bot.clone());
        Ok(Arc::new(bot))
    }
}

/// The token of `authorization: Bearer <token>`.
pub fn bearer(md: &MetadataMap) -> Result<&str, ServerError> {
    let value = md.get("authorization").ok_or(ServerError::Unauthenticated(
        "missing authorization metadata: send `authorization: Bearer <token>`",
    ))?;
    let value = value
        .to_str()
        .map_err(|_| ServerError::Unauthenticated("authorization metadata is not ASCII"))?;
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(ServerError::Unauthenticated(
            "authorization must be `Bearer <token>`",
        ))
}

#[cfg(test)]
mod tests {
    /// Stored token hashes are lowercase two-digit hex; the table must write exactly that.
    #[test]
    fn hex_is_lowercase_two_digits_per_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let want: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::hex(&all), want);
    }
}

#[cfg(test)]
mod revocation_tests {
    use super::*;

    #[test]
    fn signals_nobody_awaits_are_pruned_and_fresh_revocations_kept() {
        let mut r = Revocations::default();
        let held = r.signal("held").stopped();
        r.revoke("revoked");
        for i in 0..2_000 {
            drop(r.signal(&format!("gone-{i}")).stopped());
        }
        // Pruned at 1,024 entries: what is left is the awaited one, the fresh revocation and
        // the entries made since.
        assert!(r.signals.len() < 1_100, "{}", r.signals.len());
        assert!(r.signals.contains_key("held"));
        assert!(
            r.signals
                .get("revoked")
                .is_some_and(|(s, _)| s.is_cancelled())
        );
        drop(held);
    }
}
