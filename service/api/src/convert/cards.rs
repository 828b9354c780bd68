//! Cards, suits, rulesets, seats and actions between the engine and protobuf.

use bete_rules::{Action, Card, CardSet, RulesetId, Seat, Suit};

use super::FieldError;
use crate::pb;

/// A card in RULES.md 11.2 notation (`"KS"`).
pub fn card_to_pb(card: Card) -> String {
    let mut s = String::with_capacity(2);
    card.push_code(&mut s);
    s
}

/// Every card of a set, in bit order (suit S, H, D, C, then rank 2 … A).
pub fn cards_to_pb(cards: CardSet) -> Vec<String> {
    cards.iter().map(card_to_pb).collect()
}

/// A card code from a request; `field` names it in the error (`action.cards[1]: not a card "ZZ"`).
pub fn card_from_pb(code: &str, field: &str) -> Result<Card, FieldError> {
    card_at(code, || field.to_string())
}

/// [`card_from_pb`] with the field's path built only for an error (the move path parses a card
/// per move, and formatting the path each time showed in its profile).
fn card_at(code: &str, field: impl FnOnce() -> String) -> Result<Card, FieldError> {
    code.parse().map_err(|_| {
        FieldError::new(
            field(),
            format!(
                "not a card {} (a rank 2-9, T, J, Q, K, A then a suit S, H, D, C, e.g. KS or TH)",
                quote(code)
            ),
        )
    })
}

/// Input quoted in an error, at most [`QUOTED_CHARS`] characters then `…`: an error (and a
/// SubmitActions answer buffered for a slow reader) stays small whatever the client sent.
pub(crate) fn quote(input: &str) -> String {
    match input.char_indices().nth(QUOTED_CHARS) {
        None => format!("{input:?}"),
        Some((cut, _)) => format!("{:?}", format!("{}…", &input[..cut])),
    }
}

/// How much of a bad input an error quotes.
pub(crate) const QUOTED_CHARS: usize = 16;

pub fn suit_to_pb(suit: Suit) -> pb::Suit {
    match suit {
        Suit::Spades => pb::Suit::Spades,
        Suit::Hearts => pb::Suit::Hearts,
        Suit::Diamonds => pb::Suit::Diamonds,
        Suit::Clubs => pb::Suit::Clubs,
    }
}

/// A suit from a request's enum number. UNSPECIFIED and unknown numbers are errors.
pub fn suit_from_pb(value: i32, field: &str) -> Result<Suit, FieldError> {
    match pb::Suit::try_from(value) {
        Ok(pb::Suit::Spades) => Ok(Suit::Spades),
        Ok(pb::Suit::Hearts) => Ok(Suit::Hearts),
        Ok(pb::Suit::Diamonds) => Ok(Suit::Diamonds),
        Ok(pb::Suit::Clubs) => Ok(Suit::Clubs),
        Ok(pb::Suit::Unspecified) => Err(FieldError::new(field, "is required (SUIT_UNSPECIFIED)")),
        Err(_) => Err(FieldError::new(
            field,
            format!("unknown Suit number {value}"),
        )),
    }
}

pub fn ruleset_to_pb(ruleset: RulesetId) -> pb::Ruleset {
    match ruleset {
        RulesetId::Bete => pb::Ruleset::Bete,
        RulesetId::BeteAceHigh => pb::Ruleset::BeteAceHigh,
        RulesetId::Beast => pb::Ruleset::Beast,
        RulesetId::BesteBoer => pb::Ruleset::BesteBoer,
        RulesetId::Lanterlui => pb::Ruleset::Lanterlui,
        RulesetId::BesterBube => pb::Ruleset::BesterBube,
        RulesetId::Mouche => pb::Ruleset::Mouche,
        RulesetId::Mistigri => pb::Ruleset::Mistigri,
        RulesetId::Loo => pb::Ruleset::Loo,
        RulesetId::Rams => pb::Ruleset::Rams,
    }
}

/// A ruleset from a request's enum number. UNSPECIFIED and unknown numbers are errors; a filter
/// that allows "any" checks for 0 before calling this.
pub fn ruleset_from_pb(value: i32, field: &str) -> Result<RulesetId, FieldError> {
    match pb::Ruleset::try_from(value) {
        Ok(pb::Ruleset::Bete) => Ok(RulesetId::Bete),
        Ok(pb::Ruleset::BeteAceHigh) => Ok(RulesetId::BeteAceHigh),
        Ok(pb::Ruleset::Beast) => Ok(RulesetId::Beast),
        Ok(pb::Ruleset::BesteBoer) => Ok(RulesetId::BesteBoer),
        Ok(pb::Ruleset::Lanterlui) => Ok(RulesetId::Lanterlui),
        Ok(pb::Ruleset::BesterBube) => Ok(RulesetId::BesterBube),
        Ok(pb::Ruleset::Mouche) => Ok(RulesetId::Mouche),
        Ok(pb::Ruleset::Mistigri) => Ok(RulesetId::Mistigri),
        Ok(pb::Ruleset::Loo) => Ok(RulesetId::Loo),
        Ok(pb::Ruleset::Rams) => Ok(RulesetId::Rams),
        Ok(pb::Ruleset::Unspecified) => {
            Err(FieldError::new(field, "is required (RULESET_UNSPECIFIED)"))
        }
        Err(_) => Err(FieldError::new(
            field,
            format!("unknown Ruleset number {value}"),
        )),
    }
}

/// A seat number from a request, checked against the table's seat count.
pub fn seat_from_pb(value: u32, seats: u8, field: &str) -> Result<Seat, FieldError> {
    match u8::try_from(value) {
        Ok(s) if s < seats => Ok(Seat(s)),
        _ => Err(FieldError::new(
            field,
            format!(
                "seat {value} is not a seat of this table (seats 0..{})",
                seats.saturating_sub(1)
            ),
        )),
    }
}

/// An action as the server sends it: kind, cards and the 11.3 text form.
pub fn action_to_pb(action: Action) -> pb::Action {
    let (kind, cards) = match action {
        Action::Pass => (pb::ActionKind::Pass, Vec::new()),
        Action::Play => (pb::ActionKind::Play, Vec::new()),
        Action::Contre => (pb::ActionKind::Contre, Vec::new()),
        Action::Drop => (pb::ActionKind::Drop, Vec::new()),
        Action::Stand => (pb::ActionKind::Stand, Vec::new()),
        Action::Exchange(set) => (pb::ActionKind::Exchange, cards_to_pb(set)),
        Action::Discard(c) => (pb::ActionKind::Discard, vec![card_to_pb(c)]),
        Action::Challenge => (pb::ActionKind::Challenge, Vec::new()),
        Action::Decline => (pb::ActionKind::Decline, Vec::new()),
        Action::Card(c) => (pb::ActionKind::Card, vec![card_to_pb(c)]),
        Action::Hidden(c) => (pb::ActionKind::Hidden, vec![card_to_pb(c)]),
        Action::Widow => (pb::ActionKind::Widow, Vec::new()),
        Action::General => (pb::ActionKind::General, Vec::new()),
    };
    pb::Action {
        kind: kind.into(),
        cards,
        text: action.text(),
    }
}

/// An action from a request. `field` is the path of the action in the request (`"action"`);
/// errors name the exact sub-field: `action.kind`, `action.cards`, `action.cards[i]`. The `text`
/// field is ignored: kind and cards are authoritative.
pub fn action_from_pb(action: &pb::Action, field: &str) -> Result<Action, FieldError> {
    let kind = pb::ActionKind::try_from(action.kind).map_err(|_| {
        FieldError::new(
            format!("{field}.kind"),
            format!("unknown ActionKind number {}", action.kind),
        )
    })?;
    // Built only for an error.
    let cards_field = || format!("{field}.cards");
    let verb = kind
        .as_str_name()
        .strip_prefix("ACTION_KIND_")
        .unwrap_or("");
    let no_cards = |a: Action| {
        if action.cards.is_empty() {
            Ok(a)
        } else {
            Err(FieldError::new(
                cards_field(),
                format!("{verb} takes no card, got {}", action.cards.len()),
            ))
        }
    };
    let one_card = || -> Result<Card, FieldError> {
        match action.cards.as_slice() {
            [code] => card_at(code, || format!("{}[0]", cards_field())),
            other => Err(FieldError::new(
                cards_field(),
                format!("{verb} takes exactly one card, got {}", other.len()),
            )),
        }
    };
    match kind {
        pb::ActionKind::Unspecified => Err(FieldError::new(
            format!("{field}.kind"),
            "is required (ACTION_KIND_UNSPECIFIED)",
        )),
        pb::ActionKind::Pass => no_cards(Action::Pass),
        pb::ActionKind::Play => no_cards(Action::Play),
        pb::ActionKind::Contre => no_cards(Action::Contre),
        pb::ActionKind::Drop => no_cards(Action::Drop),
        pb::ActionKind::Stand => no_cards(Action::Stand),
        pb::ActionKind::Challenge => no_cards(Action::Challenge),
        pb::ActionKind::Decline => no_cards(Action::Decline),
        pb::ActionKind::Widow => no_cards(Action::Widow),
        pb::ActionKind::General => no_cards(Action::General),
        pb::ActionKind::Discard => Ok(Action::Discard(one_card()?)),
        pb::ActionKind::Card => Ok(Action::Card(one_card()?)),
        pb::ActionKind::Hidden => Ok(Action::Hidden(one_card()?)),
        pb::ActionKind::Exchange => {
            let n = action.cards.len();
            if !(1..=5).contains(&n) {
                return Err(FieldError::new(
                    cards_field(),
                    format!(
                        "EXCHANGE takes one to five cards, got {n} (exchange nothing with STAND)"
                    ),
                ));
            }
            let mut set = CardSet::EMPTY;
            for (i, code) in action.cards.iter().enumerate() {
                let item = || format!("{}[{i}]", cards_field());
                let card = card_at(code, item)?;
                if set.contains(card) {
                    return Err(FieldError::new(item(), format!("{card} is listed twice")));
                }
                set.insert(card);
            }
            Ok(Action::Exchange(set))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bete_rules::Rank;

    fn pb_action(kind: pb::ActionKind, cards: &[&str]) -> pb::Action {
        pb::Action {
            kind: kind.into(),
            cards: cards.iter().map(|c| c.to_string()).collect(),
            text: String::new(),
        }
    }

    #[test]
    fn every_card_round_trips_through_its_code() {
        for s in Suit::ALL {
            for r in Rank::ALL {
                let c = Card::new(r, s);
                assert_eq!(card_from_pb(&card_to_pb(c), "card").unwrap(), c);
            }
        }
        assert_eq!(card_to_pb("th".parse().unwrap()), "TH");
    }

    /// A huge bad code is quoted cut to 16 characters, so the error stays small.
    #[test]
    fn bad_card_quotes_at_most_16_characters() {
        let huge = "Z".repeat(1 << 20);
        let e = card_from_pb(&huge, "action.cards[0]").unwrap_err();
        let quoted = format!("\"{}…\"", "Z".repeat(16));
        assert!(
            e.description.starts_with(&format!("not a card {quoted} (")),
            "{e}"
        );
        assert!(e.to_string().len() < 200, "{}", e.to_string().len());
        // Cut on a character boundary, not a byte.
        assert_eq!(quote(&"é".repeat(20)), format!("\"{}…\"", "é".repeat(16)));
        assert_eq!(quote(&"x".repeat(16)), format!("\"{}\"", "x".repeat(16)));
    }

    #[test]
    fn bad_card_names_field_and_token() {
        let e = card_from_pb("ZZ", "action.cards[1]").unwrap_err();
        assert_eq!(e.field, "action.cards[1]");
        assert!(e.description.starts_with("not a card \"ZZ\""), "{e}");
        assert!(
            e.to_string()
                .starts_with("action.cards[1]: not a card \"ZZ\"")
        );
    }

    #[test]
    fn suits_and_rulesets_round_trip_and_reject_unknown_numbers() {
        for s in Suit::ALL {
            assert_eq!(suit_from_pb(suit_to_pb(s).into(), "trump").unwrap(), s);
        }
        for r in RulesetId::ALL {
            assert_eq!(
                ruleset_from_pb(ruleset_to_pb(r).into(), "ruleset").unwrap(),
                r
            );
        }
        assert_eq!(suit_to_pb(Suit::Spades), pb::Suit::Spades);
        assert_eq!(
            ruleset_to_pb(RulesetId::BesterBube),
            pb::Ruleset::BesterBube
        );
        let e = ruleset_from_pb(99, "ruleset").unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.description.as_str()),
            ("ruleset", "unknown Ruleset number 99")
        );
        assert!(
            ruleset_from_pb(0, "ruleset")
                .unwrap_err()
                .description
                .contains("required")
        );
        assert!(
            suit_from_pb(7, "trump")
                .unwrap_err()
                .description
                .contains("unknown Suit number 7")
        );
        assert!(suit_from_pb(0, "trump").is_err());
    }

    #[test]
    fn every_action_round_trips_with_its_text() {
        let ks: Card = "KS".parse().unwrap();
        let mut ex = CardSet::EMPTY;
        ex.insert("8C".parse().unwrap());
        ex.insert("7H".parse().unwrap());
        let all = [
            Action::Pass,
            Action::Play,
            Action::Contre,
            Action::Drop,
            Action::Stand,
            Action::Exchange(ex),
            Action::Discard(ks),
            Action::Challenge,
            Action::Decline,
            Action::Card(ks),
            Action::Hidden(ks),
        ];
        for a in all {
            let p = action_to_pb(a);
            assert_eq!(p.text, a.to_string());
            assert_eq!(action_from_pb(&p, "action").unwrap(), a);
        }
        let p = action_to_pb(Action::Exchange(ex));
        assert_eq!(p.kind, pb::ActionKind::Exchange as i32);
        assert_eq!(p.cards, vec!["7H", "8C"]);
        assert_eq!(p.text, "exchange 7H 8C");
        assert_eq!(action_to_pb(Action::Card(ks)).text, "card KS");
    }

    #[test]
    fn action_input_is_case_insensitive_and_ignores_text() {
        let mut p = pb_action(pb::ActionKind::Card, &["ks"]);
        p.text = "pass".into();
        assert_eq!(
            action_from_pb(&p, "action").unwrap(),
            Action::Card("KS".parse().unwrap())
        );
    }

    #[test]
    fn bad_actions_name_the_field() {
        let cases: [(pb::Action, &str, &str); 8] = [
            (
                pb_action(pb::ActionKind::Exchange, &["7H", "ZZ"]),
                "action.cards[1]",
                "not a card \"ZZ\"",
            ),
            (
                pb_action(pb::ActionKind::Card, &["KS", "QS"]),
                "action.cards",
                "CARD takes exactly one card, got 2",
            ),
            (
                pb_action(pb::ActionKind::Discard, &[]),
                "action.cards",
                "DISCARD takes exactly one card, got 0",
            ),
            (
                pb_action(pb::ActionKind::Pass, &["KS"]),
                "action.cards",
                "PASS takes no card, got 1",
            ),
            (
                pb_action(pb::ActionKind::Exchange, &[]),
                "action.cards",
                "EXCHANGE takes one to five cards, got 0",
            ),
            (
                pb_action(
                    pb::ActionKind::Exchange,
                    &["7H", "8H", "9H", "TH", "JH", "QH"],
                ),
                "action.cards",
                "EXCHANGE takes one to five cards, got 6",
            ),
            (
                pb_action(pb::ActionKind::Exchange, &["7H", "7h"]),
                "action.cards[1]",
                "7H is listed twice",
            ),
            (
                pb_action(pb::ActionKind::Unspecified, &[]),
                "action.kind",
                "is required",
            ),
        ];
        for (p, field, desc) in cases {
            let e = action_from_pb(&p, "action").unwrap_err();
            assert_eq!(e.field, field, "{e}");
            assert!(e.description.starts_with(desc), "{e}");
        }
        let unknown = pb::Action {
            kind: 42,
            cards: vec![],
            text: String::new(),
        };
        let e = action_from_pb(&unknown, "action").unwrap_err();
        assert_eq!(e.to_string(), "action.kind: unknown ActionKind number 42");
    }

    #[test]
    fn seats_are_checked_against_the_table() {
        assert_eq!(seat_from_pb(2, 3, "seat").unwrap(), Seat(2));
        let e = seat_from_pb(3, 3, "seat").unwrap_err();
        assert_eq!(e.field, "seat");
        assert!(e.description.contains("seat 3 is not a seat"));
        assert!(seat_from_pb(300, 7, "seat").is_err());
    }
}
