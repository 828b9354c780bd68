//! A private casual table's invitation code: what JoinTable needs to take a seat there (its
//! creator needs none).
//!
//! The code is derived, not stored: SHA-256 over a fixed label, the table's seed and its id,
//! cut to 128 bits. The seed is secret until the match is over (only the finished record
//! reveals it) and drawn from 256 random bits unless the creator chose it (then the creator,
//! who knows it, is the one who holds the code anyway), so the code cannot be guessed, each
//! table has its own, and every node of a cluster and every restart agree on it without a
//! column in either store. Nothing about the seed can be learnt from the code (SHA-256 is
//! one-way), and the label keeps it apart from the seed's published commitment.

use sha2::{Digest as _, Sha256};

use crate::store::Visibility;
use bete_base::status::ServerError;
use bete_table::TableMeta;

/// Domain separation from every other hash of the seed.
const LABEL: &[u8] = b"bete.v1 invitation code\0";

/// The invitation code of a private casual table; `None` for a listed or a ladder table
/// (ladder tables are seated by their scheduler only).
pub fn code_for(meta: &TableMeta) -> Option<String> {
    (meta.visibility == Visibility::Private && meta.ladder.is_none())
        .then(|| derive(&meta.seed.0, &meta.id))
}

fn derive(seed: &[u8; 32], table_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(LABEL);
    h.update(seed);
    h.update(table_id.as_bytes());
    crate::auth::hex(&h.finalize()[..16])
}

/// Whether `bot` may take a seat at the table with `given` as its invitation code: always at a
/// listed table or a ladder table (the scheduler's own checks apply there), at a private casual
/// table only its creator without a code, anyone else with the right one.
pub fn check_join(meta: &TableMeta, bot: &str, given: &str) -> Result<(), ServerError> {
    let Some(code) = code_for(meta) else {
        return Ok(());
    };
    if bot == meta.created_by {
        return Ok(());
    }
    if given.is_empty() {
        return Err(ServerError::InvitationRequired);
    }
    // Compared in constant time over hashes of equal length: a mismatch tells nothing about
    // where it is.
    let (a, b) = (
        Sha256::digest(code.as_bytes()),
        Sha256::digest(given.as_bytes()),
    );
    if a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        != 0
    {
        return Err(ServerError::InvitationWrong);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_differ_by_seed_and_table_and_are_32_hex_digits() {
        let a = derive(&[1; 32], "t_1");
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, derive(&[1; 32], "t_1"));
        assert_ne!(a, derive(&[2; 32], "t_1"));
        assert_ne!(a, derive(&[1; 32], "t_2"));
    }
}
