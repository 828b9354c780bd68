//! Seeds of record: every deck of a table (and of a ladder match's tables) derives from the
//! seed stored with it, so it is drawn here, beside where it is kept, for the table service and
//! the ladder scheduler alike.

use bete_rules::Seed;

use crate::StoreError;

/// A seed from the operating system's CSPRNG: nobody, the server's own RNG state included,
/// can predict a deck before the table publishes its commitment.
pub fn fresh_seed() -> Result<Seed, StoreError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random(e.to_string()))?;
    Ok(Seed(bytes))
}
