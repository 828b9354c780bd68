//! Bot identity: bearer tokens, stored only as SHA-256 hashes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;

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

/// Resolves `authorization: Bearer <token>` to a bot, with a cache of known tokens.
#[derive(Debug)]
pub struct Auth {
    store: Arc<dyn Store>,
    cache: RwLock<HashMap<String, Arc<BotRow>>>,
}

impl Auth {
    pub fn new(store: Arc<dyn Store>) -> Auth {
        Auth {
            store,
            cache: RwLock::new(HashMap::new()),
        }
    }

    pub fn remember(&self, bot: BotRow) {
        if let Ok(mut c) = self.cache.write() {
            c.insert(bot.token_hash.clone(), Arc::new(bot));
        }
    }

    pub async fn authenticate(&self, md: &MetadataMap) -> Result<Arc<BotRow>, ServerError> {
        let value = md.get("authorization").ok_or(ServerError::Unauthenticated(
            "missing authorization metadata: send `authorization: Bearer <token>`",
        ))?;
        let value = value
            .to_str()
            .map_err(|_| ServerError::Unauthenticated("authorization metadata is not ASCII"))?;
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or(ServerError::Unauthenticated(
                "authorization must be `Bearer <token>`",
            ))?;
        let hash = token_hash(token);
        if let Some(bot) = self.cache.read().ok().and_then(|c| c.get(&hash).cloned()) {
            return Ok(bot);
        }
        let bot = self
            .store
            .bot_by_token_hash(hash)
            .await?
            .ok_or(ServerError::Unauthenticated(
                "unknown token: register with BotService.RegisterBot",
            ))?;
        self.remember(bot.clone());
        Ok(Arc::new(bot))
    }
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
