//! Deck orders from a seed: the shuffle of `rules_version` 1 (RULES.md 11.5).
//!
//! Versioned and written out by hand (SHA-256 key, ChaCha20 keystream, Fisher–Yates with
//! rejection sampling) so a record replays bit-exactly in any language, years later. Never a
//! library shuffle, whose algorithm may change between releases.

use std::fmt;
use std::str::FromStr;

use rand_chacha::ChaCha20Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::card::Card;

/// A match seed: 32 bytes, written as 64 hexadecimal digits.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Seed(pub [u8; 32]);

#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("a seed is 64 hexadecimal digits, got {0:?}")]
pub struct ParseSeedError(pub String);

impl FromStr for Seed {
    type Err = ParseSeedError;
    fn from_str(s: &str) -> Result<Seed, ParseSeedError> {
        let err = || ParseSeedError(s.to_string());
        if s.len() != 64 || !s.is_ascii() {
            return Err(err());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| err())?;
        }
        Ok(Seed(out))
    }
}

impl Seed {
    /// The public commitment to this seed: lower-case hex SHA-256 of its 32 bytes. A server
    /// publishes it before the first deal and reveals the seed in the finished record, so
    /// anyone can check afterwards that the decks were fixed in advance (and that the seed
    /// was not chosen to suit one seat after the fact).
    pub fn commitment(&self) -> String {
        use sha2::{Digest, Sha256};
        Sha256::digest(self.0)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl fmt::Display for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seed({self})")
    }
}

/// Step 2: the ChaCha20 key of deal `k`.
pub fn deal_key(seed: &Seed, deal: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(seed.0);
    h.update(deal.to_be_bytes());
    h.finalize().into()
}

/// The deck order of deal `deal`: `pack` is the unshuffled pack in canonical order (step 1).
///
/// rand_chacha's ChaCha20 with stream 0 and word position 0 is the RFC 8439 keystream with an
/// all-zero nonce and block counter 0 for the first 2^32 blocks (far more than a shuffle reads);
/// the test vectors below pin this.
pub fn deck_order(seed: &Seed, deal: u64, pack: &[Card]) -> Vec<Card> {
    let mut rng = ChaCha20Rng::from_seed(deal_key(seed, deal));
    let mut a = pack.to_vec();
    for i in (1..a.len()).rev() {
        let bound = (i + 1) as u64;
        let limit = (1u64 << 32) - ((1u64 << 32) % bound);
        let x = loop {
            let x = rng.next_u32() as u64;
            if x < limit {
                break x;
            }
        };
        a.swap(i, (x % bound) as usize);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{Rank, Suit};

    fn pack(ranks: &[Rank]) -> Vec<Card> {
        Suit::ALL
            .iter()
            .flat_map(|&s| ranks.iter().map(move |&r| Card::new(r, s)))
            .collect()
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn deck_str(d: &[Card]) -> String {
        d.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn rules_11_5_vectors() {
        let zero: Seed = "0".repeat(64).parse().unwrap();
        let p32 = pack(&Rank::ALL[5..]);
        assert_eq!(
            hex(&deal_key(&zero, 0)),
            "2c34ce1df23b838c5abf2a7f6437cca3d3067ed509ff25f11df6b11b582b51eb"
        );
        let mut rng = ChaCha20Rng::from_seed(deal_key(&zero, 0));
        assert_eq!(rng.next_u32(), 0xf579bf2c);
        assert_eq!(
            deck_str(&deck_order(&zero, 0, &p32)),
            "TD 8C JC AS KS 8S 9C AD 8D KC 7H KD 7C TH AH TC QC QS 8H 7D QD QH JD 9H 7S 9D AC KH JS TS 9S JH"
        );
        assert_eq!(
            hex(&deal_key(&zero, 1)),
            "08e00266fff0aacc64974f22a53622a7dc458ac1b5fd446ae7c99a4a99a564e6"
        );
        assert_eq!(
            deck_str(&deck_order(&zero, 1, &p32)),
            "KC TC QD TD 9C QH 7C TS QC 9S 8H AD AC JS AS JH 7D 7S AH 8D 9D KS 8C 7H JD JC QS 9H TH KD KH 8S"
        );
        let s2: Seed = "0123456789abcdef".repeat(4).parse().unwrap();
        assert_eq!(
            hex(&deal_key(&s2, 0)),
            "95eeed9a15059919dc31d78813481c11cca743e8a4fbe6c75c34c56c253596ee"
        );
        assert_eq!(
            deck_str(&deck_order(&s2, 0, &pack(&Rank::ALL))),
            "4S TD 8S QS 9C 2S 9S 8C 3S JH 2H 3H TS QH 6S 3D 6D 9D JD 5H 7D KS AD 7S TC KD 2D AC 8D 7H 6H 4H 6C 4C 7C KH 5D 8H 4D 9H 3C TH AS 5C KC 2C JC JS 5S QD AH QC"
        );
    }

    #[test]
    fn seed_parsing() {
        assert!("AB".repeat(32).parse::<Seed>().is_ok());
        assert!("ab".repeat(31).parse::<Seed>().is_err());
        assert!("zz".repeat(32).parse::<Seed>().is_err());
        let s: Seed = "0123456789ABCDEF".repeat(4).parse().unwrap();
        assert_eq!(s.to_string(), "0123456789abcdef".repeat(4));
    }
}

#[cfg(test)]
mod commitment_tests {
    use super::Seed;

    /// SHA-256 of 32 zero bytes, a well-known value.
    #[test]
    fn the_commitment_is_sha256_of_the_seed_bytes() {
        assert_eq!(
            Seed([0; 32]).commitment(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_ne!(Seed([1; 32]).commitment(), Seed([0; 32]).commitment());
    }
}
