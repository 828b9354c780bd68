//! The table config as it travels (`map<string, string>`) and as the engine reads it (a JSON
//! object). A value is read as JSON if it parses (`"10"`, `"true"`, `"\"plurality\""`), else as
//! a plain string (`plurality`, `3+2`), the same rule as the command line's `--config k=v`.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// A request's config map as the JSON object `bete_rules::Config::from_json` reads.
pub fn config_from_pb(config: &HashMap<String, String>) -> Map<String, Value> {
    // Sorted so that error messages (the first bad key) do not depend on hash order.
    let mut keys: Vec<&String> = config.keys().collect();
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let v = &config[k];
            let value =
                serde_json::from_str::<Value>(v).unwrap_or_else(|_| Value::String(v.clone()));
            (k.clone(), value)
        })
        .collect()
}

/// An effective config (`bete_rules::Config::to_json`) as sent in `Table.config`: every value is
/// its JSON text, so strings keep their quotes and read back unchanged.
pub fn config_to_pb(config: &Map<String, Value>) -> HashMap<String, String> {
    config
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bete_rules::{Config, RulesetId};

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_are_json_when_they_parse_else_strings() {
        let m = config_from_pb(&map(&[
            ("fiche_value", "10"),
            ("two_players", "true"),
            ("win_rule", "\"plurality\""),
            ("ante_rule", "literal"),
            ("deal_pattern", "3+2"),
        ]));
        assert_eq!(m["fiche_value"], Value::from(10));
        assert_eq!(m["two_players"], Value::Bool(true));
        assert_eq!(m["win_rule"], Value::from("plurality"));
        assert_eq!(m["ante_rule"], Value::from("literal"));
        assert_eq!(m["deal_pattern"], Value::from("3+2"));
    }

    #[test]
    fn the_engine_accepts_both_spellings_and_round_trips_the_effective_config() {
        let plain = config_from_pb(&map(&[("win_rule", "plurality"), ("fiche_value", "10")]));
        let json = config_from_pb(&map(&[
            ("win_rule", "\"plurality\""),
            ("fiche_value", "10"),
        ]));
        let a = Config::from_json(RulesetId::Bete, 5, &plain).unwrap();
        let b = Config::from_json(RulesetId::Bete, 5, &json).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.fiche_value, 10);

        let effective = config_to_pb(&a.to_json(RulesetId::Bete));
        assert_eq!(effective["win_rule"], "\"plurality\"");
        assert_eq!(effective["fiche_value"], "10");
        let again = Config::from_json(RulesetId::Bete, 5, &config_from_pb(&effective)).unwrap();
        assert_eq!(again, a);
    }

    #[test]
    fn a_bad_value_still_reaches_the_engine_which_names_the_key() {
        let m = config_from_pb(&map(&[("win_rule", "sometimes")]));
        let e = Config::from_json(RulesetId::Bete, 5, &m).unwrap_err();
        assert!(e.to_string().contains("win_rule"), "{e}");
    }
}
