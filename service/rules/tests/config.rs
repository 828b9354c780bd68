//! Section 10: every key, its rulesets, JSON type, allowed values and default.

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use bete_rules::config::{AnteRule, BeteGrowth, ContreRule, DealPattern, keys};
use bete_rules::{Config, ConfigError, RulesetId};
use serde_json::{Map, Value, json};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().expect("an object").clone()
}

#[test]
fn defaults_match_section_10() {
    let c = Config::defaults(RulesetId::Bete, 5);
    assert_eq!(c.fiche_value, 5);
    assert_eq!(c.max_curieuse, 1);
    assert_eq!(c.rounds, 2);
    assert_eq!(c.max_extra_deals, 10);
    assert_eq!(c.contre, ContreRule::ModelA);
    assert_eq!(Config::defaults(RulesetId::Beast, 3).max_extra_deals, 6);
    assert_eq!(
        Config::defaults(RulesetId::Lanterlui, 4).bete_growth,
        BeteGrowth::Pot
    );
    assert_eq!(
        Config::defaults(RulesetId::BesteBoer, 4).bete_growth,
        BeteGrowth::Plus5
    );
    // Empty JSON gives the defaults.
    assert_eq!(
        Config::from_json(RulesetId::Bete, 5, &Map::new()).unwrap(),
        c
    );
}

#[test]
fn to_json_lists_every_key_of_the_ruleset() {
    for r in RulesetId::ALL {
        let c = Config::defaults(r, 4);
        let m = c.to_json(r);
        let got: Vec<&str> = m.keys().map(String::as_str).collect();
        let mut want = keys(r).to_vec();
        want.sort();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        assert_eq!(got_sorted, want, "{r}");
        // And it reads back to the same config.
        assert_eq!(Config::from_json(r, 4, &m).unwrap(), c, "{r}");
    }
    let m = Config::defaults(RulesetId::Bete, 5).to_json(RulesetId::Bete);
    assert_eq!(m["win_rule"], json!("strict"));
    assert_eq!(m["contre"], json!("model_A"));
    assert_eq!(m["deal_pattern"], json!("3+2"));
    assert_eq!(m["must_head_in_suit"], json!(true));
    assert_eq!(m["max_extra_deals"], json!(10));
}

#[test]
fn valid_values_are_read() {
    let c = Config::from_json(
        RulesetId::BeteAceHigh,
        4,
        &obj(
            json!({"fiche_value": 10, "ante_rule": "literal", "deal_pattern": "2+1+2",
                    "contre": "disabled", "max_curieuse": 3, "rounds": 1, "max_extra_deals": 0}),
        ),
    )
    .unwrap();
    assert_eq!(c.fiche_value, 10);
    assert_eq!(c.ante_rule, AnteRule::Literal);
    assert_eq!(c.deal_pattern, DealPattern::TwoOneTwo);
    assert_eq!(c.contre, ContreRule::Disabled);
    assert_eq!(c.max_curieuse, 3);
    assert_eq!(c.max_extra_deals, 0);
}

#[test]
fn key_of_another_ruleset_is_an_error_naming_it() {
    let e = Config::from_json(RulesetId::Beast, 4, &obj(json!({"fiche_value": 5}))).unwrap_err();
    assert!(matches!(&e, ConfigError::UnknownKey { key, .. } if key == "fiche_value"));
    let msg = e.to_string();
    assert!(
        msg.contains("fiche_value") && msg.contains("deal_pattern"),
        "{msg}"
    );
    assert!(Config::from_json(RulesetId::Bete, 4, &obj(json!({"bete_growth": "pot"}))).is_err());
    assert!(
        Config::from_json(RulesetId::BesteBoer, 4, &obj(json!({"follow_suit": true}))).is_err()
    );
    assert!(
        Config::from_json(
            RulesetId::Beast,
            4,
            &obj(json!({"enforce_legality": "strict"}))
        )
        .is_err()
    );
    assert!(Config::from_json(RulesetId::Bete, 4, &obj(json!({"bete.fiche_value": 5}))).is_err());
}

#[test]
fn informative_rows_are_errors() {
    for k in ["deck", "top_pot", "direction"] {
        let e = Config::from_json(RulesetId::BeteAceHigh, 5, &obj(json!({k: "x"}))).unwrap_err();
        assert!(
            matches!(&e, ConfigError::Informative { key, .. } if key == k),
            "{k}: {e}"
        );
    }
}

#[test]
fn wrong_type_or_value_names_the_allowed_values() {
    let cases: &[(RulesetId, Value, &str)] = &[
        (RulesetId::Bete, json!({"fiche_value": 7}), "5, 10"),
        (RulesetId::Bete, json!({"fiche_value": "5"}), "5, 10"),
        (
            RulesetId::Bete,
            json!({"win_rule": "Strict"}),
            "\"strict\", \"plurality\"",
        ),
        (
            RulesetId::Bete,
            json!({"must_head_in_suit": "true"}),
            "true, false",
        ),
        (RulesetId::Bete, json!({"max_curieuse": 4}), "0, 1, 2, 3"),
        (
            RulesetId::Bete,
            json!({"contre": "model_a"}),
            "\"model_A\", \"disabled\"",
        ),
        (
            RulesetId::Beast,
            json!({"deal_pattern": "2+2+1"}),
            "\"3+2\", \"2+3\"",
        ),
        (
            RulesetId::Lanterlui,
            json!({"bete_growth": "plus5_per_bete"}),
            "\"pot\", \"plus5\"",
        ),
        (RulesetId::Lanterlui, json!({"muss_max_pot": 15}), "5, 10"),
        (
            RulesetId::BesterBube,
            json!({"per_trick": 1}),
            "\"fifth\", \"one\"",
        ),
        (RulesetId::Bete, json!({"rounds": 0}), "1 or more"),
        (RulesetId::Bete, json!({"rounds": 1.5}), "1 or more"),
        (RulesetId::Bete, json!({"max_extra_deals": -1}), "0 or more"),
    ];
    for (r, v, allowed) in cases {
        let e = Config::from_json(*r, 4, &obj(v.clone())).unwrap_err();
        let key = v.as_object().unwrap().keys().next().unwrap().clone();
        match &e {
            ConfigError::BadValue {
                key: k, allowed: a, ..
            } => {
                assert_eq!(k, &key);
                assert!(a.contains(allowed), "{e}");
            }
            other => panic!("{v}: {other}"),
        }
        assert!(e.to_string().contains(&key));
    }
}

#[test]
fn seat_counts() {
    let none = Map::new();
    assert!(Config::from_json(RulesetId::Bete, 3, &none).is_ok());
    assert!(Config::from_json(RulesetId::Bete, 7, &none).is_ok());
    assert!(matches!(
        Config::from_json(RulesetId::Bete, 8, &none),
        Err(ConfigError::Seats { .. })
    ));
    let e = Config::from_json(RulesetId::Bete, 2, &none).unwrap_err();
    assert!(e.to_string().contains("two_players"), "{e}");
    let two = obj(json!({"two_players": true}));
    assert!(Config::from_json(RulesetId::Bete, 2, &two).is_ok());
    assert!(Config::from_json(RulesetId::BeteAceHigh, 2, &two).is_ok());
    assert!(Config::from_json(RulesetId::Beast, 6, &none).is_err());
    assert!(Config::from_json(RulesetId::Beast, 2, &none).is_err());
    assert!(Config::from_json(RulesetId::BesteBoer, 7, &none).is_err());
    assert!(Config::from_json(RulesetId::BesterBube, 6, &none).is_ok());
    assert!(Config::from_json(RulesetId::Lanterlui, 7, &none).is_ok());
}

#[test]
fn pairs_read_json_or_plain_strings() {
    let p = |k: &str, v: &str| (k.to_string(), v.to_string());
    let c = Config::from_pairs(
        RulesetId::Bete,
        5,
        &[
            p("fiche_value", "10"),
            p("win_rule", "plurality"),
            p("deal_pattern", "2+3"),
            p("queue_order", "\"largest_first\""),
            p("must_head_in_suit", "false"),
        ],
    )
    .unwrap();
    assert_eq!(c.fiche_value, 10);
    assert_eq!(c.deal_pattern, DealPattern::TwoThree);
    assert!(!c.must_head_in_suit);
    assert!(Config::from_pairs(RulesetId::Bete, 5, &[p("fiche_value", "ten")]).is_err());
    assert!(Config::from_pairs(RulesetId::Bete, 5, &[p("nope", "1")]).is_err());
}

/// The engine follows section 10 as written: any `rounds` of 1 or more and any
/// `max_extra_deals`, so a record of a long match replays. (The server bounds what a table may
/// ask for: service/server/src/config.rs `MAX_ROUNDS`, `MAX_EXTRA_DEALS`.)
#[test]
fn the_engine_takes_any_match_length_section_10_allows() {
    let c = Config::from_json(
        RulesetId::Bete,
        4,
        &obj(json!({"rounds": 4294967295u64, "max_extra_deals": 4294967295u64})),
    )
    .unwrap();
    assert_eq!((c.rounds, c.max_extra_deals), (u32::MAX, u32::MAX));
}
