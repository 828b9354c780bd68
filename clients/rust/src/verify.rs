//! Provable deals: checks a finished record against the commitment its table published.
//!
//! A table publishes `seed_sha256` (SHA-256 of its 32 seed bytes) before the first deal and
//! its finished record reveals the seed. [`verify`] checks that the record parses, that it has
//! a seed, that the seed hashes to the commitment, that every deck the record lists is the
//! seeded shuffle of RULES.md 11.5 (deal by deal, so a report names each one), and that the
//! record replays. Parsing a record alone already refuses a listed deck that is not the seed's;
//! here the decks are taken out first so that every deal gets its own verdict.

use bete_rules::Seed;
use bete_rules::record::{Record, replay};
use serde_json::Value;
use thiserror::Error;

/// How one deal's deck compares with the seed's shuffle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeckCheck {
    /// The record lists the deck and it is the seed's.
    Matches,
    /// The record lists no deck: the replay derives it from the seed, so it is the seed's.
    Derived,
    /// The listed deck differs from the seed's, first at `position` (0 = top of the pack).
    Differs {
        position: usize,
        got: String,
        expected: String,
    },
    /// The listed deck has `got` cards where the seed's has `expected`.
    Length { got: usize, expected: usize },
}

impl DeckCheck {
    /// Whether the deal's deck is the seed's.
    pub fn ok(&self) -> bool {
        matches!(self, DeckCheck::Matches | DeckCheck::Derived)
    }
}

impl std::fmt::Display for DeckCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeckCheck::Matches => write!(f, "listed deck is the seed's shuffle"),
            DeckCheck::Derived => write!(f, "no deck listed; the replay deals the seed's shuffle"),
            DeckCheck::Differs {
                position,
                got,
                expected,
            } => write!(
                f,
                "listed deck is NOT the seed's shuffle (position {position}: {got} instead of {expected})"
            ),
            DeckCheck::Length { got, expected } => write!(
                f,
                "listed deck is NOT the seed's shuffle ({got} cards instead of {expected})"
            ),
        }
    }
}

/// What [`verify`] found about a well-formed, seeded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verification {
    /// The seed the record reveals (64 hex digits).
    pub seed: String,
    /// SHA-256 of the seed's 32 bytes, lower-case hex.
    pub commitment: String,
    /// The commitment it was checked against, when one was given.
    pub expected: Option<String>,
    /// Each deal's deck, in deal order.
    pub deals: Vec<DeckCheck>,
    /// Why the record does not replay, when its decks and commitment held but the replay did
    /// not (checked only then: with a foreign deck the actions cannot be expected to fit).
    pub replay_error: Option<String>,
}

impl Verification {
    /// Whether the seed hashes to the commitment (`None` when no commitment was given).
    pub fn commitment_ok(&self) -> Option<bool> {
        self.expected.as_ref().map(|e| *e == self.commitment)
    }

    /// Whether every deal's deck is the seed's.
    pub fn decks_ok(&self) -> bool {
        self.deals.iter().all(DeckCheck::ok)
    }

    /// Everything checked holds: the exit status 0 of `bete verify`.
    pub fn verified(&self) -> bool {
        self.commitment_ok() != Some(false) && self.decks_ok() && self.replay_error.is_none()
    }

    /// The exit status of `bete verify`: 0 verified, 1 a commitment or deck mismatch, 2 a
    /// record that does not replay (malformed).
    pub fn exit_code(&self) -> u8 {
        if self.commitment_ok() == Some(false) || !self.decks_ok() {
            1
        } else if self.replay_error.is_some() {
            2
        } else {
            0
        }
    }
}

/// Why a record could not be verified at all.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// Exit status 2.
    #[error("malformed record: {0}")]
    Malformed(String),
    /// Exit status 1: the decks were chosen by the table's creator, not drawn from a seed.
    #[error(
        "the record has no seed: its decks were given explicitly, so there is nothing to check them against"
    )]
    NoSeed,
}

impl VerifyError {
    /// The exit status of `bete verify` for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            VerifyError::Malformed(_) => 2,
            VerifyError::NoSeed => 1,
        }
    }
}

/// Parses a commitment: 64 hexadecimal digits, either case (compared in lower case).
pub fn parse_commitment(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(text.to_ascii_lowercase())
    } else {
        Err(format!(
            "a commitment is 64 hexadecimal digits (SHA-256), got {:?}",
            crate::render::escape(text)
        ))
    }
}

/// Checks a `bete-record/1` text against `commitment` (when given). See the module docs.
pub fn verify(text: &str, commitment: Option<&str>) -> Result<Verification, VerifyError> {
    let malformed = |e: &dyn std::fmt::Display| VerifyError::Malformed(e.to_string());
    let mut value: Value = serde_json::from_str(text)
        .map_err(|e| VerifyError::Malformed(format!("not valid JSON: {e}")))?;
    if value.get("seed").is_none() {
        // Tell a malformed record from a well-formed one without a seed.
        return match Record::from_value(value) {
            Err(e) => Err(malformed(&e)),
            Ok(_) => Err(VerifyError::NoSeed),
        };
    }
    let listed = take_decks(&mut value)?;
    // Without its decks, parsing derives every deal's deck from the seed.
    let record = Record::from_value(value).map_err(|e| malformed(&e))?;
    let seed: Seed = record
        .seed
        .ok_or_else(|| VerifyError::Malformed("the seed did not parse".into()))?;
    let deals = record
        .decks
        .iter()
        .zip(&listed)
        .map(|(derived, listed)| compare(derived, listed.as_deref()))
        .collect();
    let mut verification = Verification {
        seed: seed.to_string(),
        commitment: seed.commitment(),
        expected: commitment.map(str::to_ascii_lowercase),
        deals,
        replay_error: None,
    };
    if verification.exit_code() == 0
        && let Err(e) = replay(&record)
    {
        verification.replay_error = Some(e.to_string());
    }
    Ok(verification)
}

/// Removes each deal's `deck` from the record, returning them in deal order.
fn take_decks(value: &mut Value) -> Result<Vec<Option<Vec<String>>>, VerifyError> {
    let Some(deals) = value.get_mut("deals").and_then(Value::as_array_mut) else {
        // Record parsing names the missing or mistyped field.
        return Ok(Vec::new());
    };
    deals
        .iter_mut()
        .enumerate()
        .map(|(k, deal)| {
            let Some(deck) = deal.as_object_mut().and_then(|d| d.remove("deck")) else {
                return Ok(None);
            };
            let cards = deck.as_array().and_then(|cards| {
                cards
                    .iter()
                    .map(|c| c.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            });
            cards.map(Some).ok_or_else(|| {
                VerifyError::Malformed(format!(
                    "wrong structure: deal {k}: deck must be an array of card codes"
                ))
            })
        })
        .collect()
}

fn compare(derived: &[bete_rules::Card], listed: Option<&[String]>) -> DeckCheck {
    let Some(listed) = listed else {
        return DeckCheck::Derived;
    };
    let expected: Vec<String> = derived.iter().map(ToString::to_string).collect();
    if let Some(position) = listed.iter().zip(&expected).position(|(a, b)| a != b) {
        return DeckCheck::Differs {
            position,
            got: crate::render::escape(&listed[position]),
            expected: expected[position].clone(),
        };
    }
    if listed.len() != expected.len() {
        return DeckCheck::Length {
            got: listed.len(),
            expected: expected.len(),
        };
    }
    DeckCheck::Matches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::simulate;
    use bete_rules::RulesetId;
    use bete_rules::bots::Policy;

    const SEED: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn record(with_decks: bool) -> (String, String) {
        let args = simulate::Args {
            ruleset: RulesetId::BesteBoer,
            seats: 4,
            config: Vec::new(),
            seed: Some(SEED.parse().expect("seed")),
            deals: Some(4),
            rounds: None,
            bots: vec![Policy::Heuristic],
            first_dealer: 0,
            with_decks,
            out: None,
        };
        let record = simulate::record(&args).expect("simulated");
        let commitment = record.seed.expect("seeded").commitment();
        (record.to_json(), commitment)
    }

    fn edit(text: &str, change: impl FnOnce(&mut Value)) -> String {
        let mut value: Value = serde_json::from_str(text).expect("JSON");
        change(&mut value);
        value.to_string()
    }

    #[test]
    fn a_record_with_its_true_commitment_verifies() {
        for with_decks in [false, true] {
            let (text, commitment) = record(with_decks);
            let v = verify(&text, Some(&commitment)).expect("verifies");
            assert_eq!(v.seed, SEED);
            assert_eq!(v.commitment_ok(), Some(true));
            assert_eq!(v.deals.len(), 4);
            let each = if with_decks {
                DeckCheck::Matches
            } else {
                DeckCheck::Derived
            };
            assert!(v.deals.iter().all(|d| *d == each), "{:?}", v.deals);
            assert!(v.verified());
            assert_eq!(v.exit_code(), 0);
        }
    }

    #[test]
    fn the_commitment_is_the_sha256_of_the_seed_bytes() {
        // sha256 of the bytes 00..1f, computed independently with Python: hashlib.sha256(bytes(range(32))).
        let (text, _) = record(false);
        let v = verify(&text, None).expect("parses");
        assert_eq!(
            v.commitment,
            "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
        );
        assert_eq!(v.commitment_ok(), None);
        assert_eq!(v.exit_code(), 0);
    }

    #[test]
    fn a_wrong_commitment_fails() {
        let (text, commitment) = record(true);
        let mut wrong = commitment.into_bytes();
        wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
        let wrong = String::from_utf8(wrong).expect("hex");
        let v = verify(&text, Some(&wrong)).expect("parses");
        assert_eq!(v.commitment_ok(), Some(false));
        assert!(v.decks_ok());
        assert!(!v.verified());
        assert_eq!(v.exit_code(), 1);
    }

    #[test]
    fn a_changed_seed_fails_against_the_commitment() {
        for with_decks in [false, true] {
            let (text, commitment) = record(with_decks);
            let other = "ff".repeat(32);
            let changed = edit(&text, |v| v["seed"] = Value::String(other.clone()));
            let v = verify(&changed, Some(&commitment)).expect("parses");
            assert_eq!(v.commitment_ok(), Some(false));
            assert_eq!(v.exit_code(), 1);
            if with_decks {
                // The listed decks are the old seed's, not the new one's.
                assert!(!v.deals[0].ok(), "{:?}", v.deals[0]);
            }
        }
    }

    #[test]
    fn a_changed_deck_fails_and_names_its_deal() {
        let (text, commitment) = record(true);
        let changed = edit(&text, |v| {
            let deck = v["deals"][2]["deck"].as_array_mut().expect("deck");
            deck.swap(0, 5);
        });
        let v = verify(&changed, Some(&commitment)).expect("parses");
        assert_eq!(v.commitment_ok(), Some(true));
        assert!(v.deals[0].ok() && v.deals[1].ok() && v.deals[3].ok());
        assert!(
            matches!(v.deals[2], DeckCheck::Differs { position: 0, .. }),
            "{:?}",
            v.deals[2]
        );
        assert_eq!(v.exit_code(), 1);
        // Parsing alone refuses it too: the check is not only ours.
        assert!(Record::from_json(&changed).is_err());
    }

    #[test]
    fn a_short_deck_fails() {
        let (text, commitment) = record(true);
        let changed = edit(&text, |v| {
            v["deals"][1]["deck"].as_array_mut().expect("deck").pop();
        });
        let v = verify(&changed, Some(&commitment)).expect("parses");
        assert!(
            matches!(v.deals[1], DeckCheck::Length { .. }),
            "{:?}",
            v.deals[1]
        );
        assert_eq!(v.exit_code(), 1);
    }

    #[test]
    fn a_record_that_does_not_replay_is_malformed() {
        let (text, commitment) = record(false);
        let changed = edit(&text, |v| {
            let actions = v["deals"][0]["actions"].as_array_mut().expect("actions");
            actions.truncate(actions.len() / 2);
        });
        let v = verify(&changed, Some(&commitment)).expect("parses");
        assert!(v.replay_error.is_some());
        assert_eq!(v.exit_code(), 2);
    }

    #[test]
    fn malformed_and_seedless_records_are_told_apart() {
        let e = verify("{not json", None).expect_err("malformed");
        assert_eq!(e.exit_code(), 2);
        let e = verify(r#"{"format":"other/1"}"#, None).expect_err("malformed");
        assert_eq!(e.exit_code(), 2, "{e}");
        let (text, _) = record(true);
        let seedless = edit(&text, |v| {
            v.as_object_mut().expect("object").remove("seed");
        });
        assert_eq!(verify(&seedless, None), Err(VerifyError::NoSeed));
        let bad_deck = edit(&text, |v| v["deals"][0]["deck"] = Value::from(7));
        assert_eq!(
            verify(&bad_deck, None).expect_err("malformed").exit_code(),
            2
        );
    }

    #[test]
    fn commitments_parse_in_either_case() {
        let upper = "AB".repeat(32);
        assert_eq!(parse_commitment(&upper), Ok("ab".repeat(32)));
        assert!(parse_commitment("abc").is_err());
        assert!(parse_commitment(&"zz".repeat(32)).is_err());
    }
}
