//! Every action of the shared game records in `tests/vectors/` survives the trip text → engine →
//! protobuf bytes → engine → text unchanged, as the Python and Go suites check for their stubs.

use std::path::Path;

use bete_api::convert::{action_from_pb, action_to_pb};
use bete_api::pb;
use bete_rules::Action;
use prost::Message;

fn round_trip(text: &str) -> Result<(), String> {
    let action: Action = text.parse().map_err(|e| format!("{text:?}: {e}"))?;
    let bytes = action_to_pb(action).encode_to_vec();
    let decoded = pb::Action::decode(bytes.as_slice()).map_err(|e| format!("{text:?}: {e}"))?;
    if decoded.text != action.to_string() {
        return Err(format!("{text:?}: text came back as {:?}", decoded.text));
    }
    let back = action_from_pb(&decoded, "action").map_err(|e| format!("{text:?}: {e}"))?;
    if back != action {
        return Err(format!("{text:?}: came back as {back}"));
    }
    Ok(())
}

#[test]
fn every_verb_round_trips_through_protobuf_bytes() {
    for text in [
        "pass",
        "play",
        "contre",
        "drop",
        "stand",
        "exchange 7H 8C",
        "exchange AS KS QS JS TS",
        "discard 9S",
        "challenge",
        "decline",
        "card KS",
        "hidden 2D",
    ] {
        round_trip(text).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn every_action_of_the_shared_vectors_round_trips() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut actions = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Ok(record) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if record["format"] != "bete-record/1" {
            continue;
        }
        for deal in record["deals"].as_array().into_iter().flatten() {
            for a in deal["actions"].as_array().into_iter().flatten() {
                let Some(text) = a["action"].as_str() else {
                    continue;
                };
                // Vectors of illegal input may hold unparsable text on purpose; only actions
                // the engine reads must round-trip.
                if text.parse::<Action>().is_ok() {
                    round_trip(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    actions += 1;
                }
            }
        }
    }
    eprintln!("round-tripped {actions} actions from {}", dir.display());
}
