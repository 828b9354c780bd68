//! Bot identity: bearer tokens, stored only as SHA-256 hashes.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use governor::clock::{Clock as _, DefaultClock};

use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;

use crate::store::{BotRow, Store};
use bete_base::shutdown::{Shutdown, Stopped};
use bete_base::status::ServerError;

/// A fresh bearer token: 32 random bytes as hex, with a recognisable prefix.
pub fn new_token() -> String {
    format!("bete_{}", hex(&rand::random::<[u8; 32]>()))
}

/// A fresh bot id.
pub fn new_bot_id() -> String {
    format!("b_{}", hex(&rand::random::<[u8; 8]>()))
}

pub use bete_base::ids::hex;

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
/// Failed authentications per client address (IPv6: per /64): a GCRA budget, and the time
/// until which an address that spent it is refused before any lookup. A token found in the
/// cache is never held: the address's clients with good tokens go on while a brute force from
/// the same address is refused (see `authenticate`).
#[derive(Debug)]
struct Failures {
    budget: governor::DefaultKeyedRateLimiter<IpAddr>,
    blocked: Mutex<HashMap<IpAddr, Instant>>,
}

/// The refusal of a call from an address that spent its budget of failed authentications.
fn failures_spent(retry_after: std::time::Duration) -> ServerError {
    ServerError::BudgetExhausted {
        budget: "auth_failures_per_address",
        what: "too many failed authentications from your address",
        retry_after: retry_after.max(std::time::Duration::from_millis(1)),
    }
}

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
    /// `None`: failed authentications are not limited.
    failures: Option<Failures>,
}

impl Auth {
    pub fn new(store: Arc<dyn Store>, admin_token: Option<String>) -> Auth {
        Auth::with_failure_budget(store, admin_token, crate::limits::Rate::OFF)
    }

    /// With at most `failures` failed authentications per client address (a rate and burst).
    pub fn with_failure_budget(
        store: Arc<dyn Store>,
        admin_token: Option<String>,
        failures: crate::limits::Rate,
    ) -> Auth {
        Auth {
            failures: failures.quota().map(|q| Failures {
                budget: governor::RateLimiter::keyed(q),
                blocked: Mutex::new(HashMap::new()),
            }),
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

    /// Whether the bearer token is the operator's admin token (compared as in
    /// [`Auth::require_admin`]).
    pub fn is_admin(&self, md: &MetadataMap) -> bool {
        self.admin_token.is_some() && self.require_admin(md).is_ok()
    }

    pub async fn authenticate(
        &self,
        md: &MetadataMap,
        peer: Option<IpAddr>,
    ) -> Result<Arc<BotRow>, ServerError> {
        let token = bearer(md).map_err(|e| self.failed(peer, e))?;
        let hash = token_hash(token);
        if let Some(bot) = self.cache.read().ok().and_then(|c| c.get(&hash).cloned()) {
            return Ok(bot);
        }
        // Past the cache: an address that spent its failures is refused before the lookup.
        self.not_blocked(peer)?;
        let Some(bot) = self.store.bot_by_token_hash(hash.clone()).await? else {
            let e = if self.store.token_revoked(hash).await? {
                ServerError::TokenRevoked
            } else {
                ServerError::Unauthenticated("unknown token: register with BotService.RegisterBot")
            };
            return Err(self.failed(peer, e));
        };
        self.remember(bot.clone());
        Ok(Arc::new(bot))
    }

    /// Refuses a call from `peer` while it is blocked for failed authentications.
    pub fn not_blocked(&self, peer: Option<IpAddr>) -> Result<(), ServerError> {
        let Some(f) = &self.failures else {
            return Ok(());
        };
        let key = failure_key(peer);
        let mut blocked = f.blocked.lock().unwrap_or_else(|e| e.into_inner());
        match blocked.get(&key) {
            Some(until) if *until > Instant::now() => Err(failures_spent(
                until.saturating_duration_since(Instant::now()),
            )),
            Some(_) => {
                blocked.remove(&key);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Counts a failed authentication of `peer`: `e` itself while the address has budget left,
    /// else the refusal that names the budget (and the address is blocked until it refills).
    pub fn failed(&self, peer: Option<IpAddr>, e: ServerError) -> ServerError {
        let Some(f) = &self.failures else { return e };
        let key = failure_key(peer);
        match f.budget.check_key(&key) {
            Ok(()) => e,
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                let mut blocked = f.blocked.lock().unwrap_or_else(|e| e.into_inner());
                // Bounded: entries of addresses no longer blocked are dropped as it grows.
                if blocked.len() >= 4096 {
                    let now = Instant::now();
                    blocked.retain(|_, until| *until > now);
                }
                blocked.insert(key, Instant::now() + wait);
                failures_spent(wait)
            }
        }
    }

    /// Drops the failure state of addresses gone quiet (called every minute).
    pub fn shrink(&self) {
        if let Some(f) = &self.failures {
            f.budget.retain_recent();
            f.budget.shrink_to_fit();
            let now = Instant::now();
            f.blocked
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|_, until| *until > now);
        }
    }
}

/// The token of `authorization: Bearer <token>`.
/// The key of an address's failure budget: its connection share's (IPv6 by /64); a call
/// without an address (not over TCP) shares one key.
fn failure_key(peer: Option<IpAddr>) -> IpAddr {
    crate::conn::share_key(peer.unwrap_or(IpAddr::from([0, 0, 0, 0])))
}

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
