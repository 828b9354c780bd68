//! Actions and their text notation (RULES.md 11.3).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use crate::card::{Card, ParseCardError};
use crate::cardset::CardSet;

/// One turn's decision. `Copy` and allocation-free: an exchange is a card mask, because the
/// order of the listed cards does not matter (0.4 item 6).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Bête: decline to declare.
    Pass,
    /// Bête: *je joue*, become the declarer.
    Play,
    /// Bête: double against the declarer (B15).
    Contre,
    /// Dutch and German games: drop out of this deal (round 1 only, not in a Muss).
    Drop,
    /// Stay in and exchange nothing this turn.
    Stand,
    /// Stay in; set these cards aside and draw as many from the talon.
    Exchange(CardSet),
    /// Dealer after his round-2 turn: take up the turn-up and discard this card.
    Discard(Card),
    /// Lanterlui: a dropped seat plays against the dealer (0.4 item 9).
    Challenge,
    /// Lanterlui: a dropped seat lets the dealer take the pot.
    Decline,
    /// Play this card face up to the current trick.
    Card(Card),
    /// Lead this card face down, calling "Trumpf!" (A23).
    Hidden(Card),
    /// Rams: give up the hand and take the widow (RA6).
    Widow,
    /// Rams: announce General Rams, undertaking to win all five tricks (RA6).
    General,
}

impl Action {
    /// The actions that are a bare word, without cards.
    pub const WORDS: [Action; 9] = [
        Action::Pass,
        Action::Play,
        Action::Contre,
        Action::Drop,
        Action::Stand,
        Action::Challenge,
        Action::Decline,
        Action::Widow,
        Action::General,
    ];

    /// The text of RULES.md 11.3, exactly as `Display` writes it, built without the formatting
    /// machinery: a server writes one for every legal action of every decision.
    pub fn text(&self) -> String {
        match self {
            Action::Discard(c) | Action::Card(c) | Action::Hidden(c) => {
                let verb = self.verb();
                let mut s = String::with_capacity(verb.len() + 3);
                s.push_str(verb);
                s.push(' ');
                c.push_code(&mut s);
                s
            }
            Action::Exchange(_) => self.to_string(),
            other => other.verb().to_string(),
        }
    }

    /// The verb of the text form.
    pub const fn verb(&self) -> &'static str {
        match self {
            Action::Pass => "pass",
            Action::Play => "play",
            Action::Contre => "contre",
            Action::Drop => "drop",
            Action::Stand => "stand",
            Action::Exchange(_) => "exchange",
            Action::Discard(_) => "discard",
            Action::Challenge => "challenge",
            Action::Decline => "decline",
            Action::Card(_) => "card",
            Action::Hidden(_) => "hidden",
            Action::Widow => "widow",
            Action::General => "general",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Exchange(cards) => write!(f, "exchange {cards}"),
            Action::Discard(c) | Action::Card(c) | Action::Hidden(c) => {
                write!(f, "{} {c}", self.verb())
            }
            other => f.write_str(other.verb()),
        }
    }
}

/// Why an action's text does not parse. Each variant names the offending token.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ParseActionError {
    #[error("empty action")]
    Empty,
    #[error(
        "unknown verb {0:?} (expected pass, play, contre, drop, stand, exchange, discard, challenge, decline, card, hidden, widow or general)"
    )]
    UnknownVerb(String),
    #[error(transparent)]
    Card(#[from] ParseCardError),
    #[error("{verb} takes {expected}, got {got}")]
    Arity {
        verb: &'static str,
        expected: &'static str,
        got: usize,
    },
    #[error("exchange lists {0} twice")]
    Duplicate(Card),
    #[error("actions are single-space separated with nothing before or after: {0:?}")]
    Spacing(String),
}

impl FromStr for Action {
    type Err = ParseActionError;

    fn from_str(s: &str) -> Result<Action, ParseActionError> {
        if s.is_empty() {
            return Err(ParseActionError::Empty);
        }
        let tokens: Vec<&str> = s.split(' ').collect();
        if tokens.iter().any(|t| t.is_empty()) || s.chars().any(|c| c.is_whitespace() && c != ' ') {
            return Err(ParseActionError::Spacing(s.to_string()));
        }
        let verb = tokens[0].to_ascii_lowercase();
        let args = &tokens[1..];
        let none = |a: Action, verb: &'static str| {
            if args.is_empty() {
                Ok(a)
            } else {
                Err(ParseActionError::Arity {
                    verb,
                    expected: "no card",
                    got: args.len(),
                })
            }
        };
        let one = |verb: &'static str| -> Result<Card, ParseActionError> {
            if args.len() != 1 {
                return Err(ParseActionError::Arity {
                    verb,
                    expected: "exactly one card",
                    got: args.len(),
                });
            }
            Ok(args[0].parse()?)
        };
        if let Some(&word) = Action::WORDS.iter().find(|a| a.verb() == verb) {
            return none(word, word.verb());
        }
        match verb.as_str() {
            "discard" => Ok(Action::Discard(one("discard")?)),
            "card" => Ok(Action::Card(one("card")?)),
            "hidden" => Ok(Action::Hidden(one("hidden")?)),
            "exchange" => {
                if args.is_empty() || args.len() > 5 {
                    return Err(ParseActionError::Arity {
                        verb: "exchange",
                        expected: "one to five cards",
                        got: args.len(),
                    });
                }
                let mut set = CardSet::EMPTY;
                for t in args {
                    let c: Card = t.parse()?;
                    if set.contains(c) {
                        return Err(ParseActionError::Duplicate(c));
                    }
                    set.insert(c);
                }
                Ok(Action::Exchange(set))
            }
            _ => Err(ParseActionError::UnknownVerb(tokens[0].to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` is exactly `Display`, for every card action of every card, every word and
    /// exchanges.
    #[test]
    fn text_is_display() {
        for c in Card::all() {
            let mut code = String::new();
            c.push_code(&mut code);
            assert_eq!(code, c.to_string());
            for a in [Action::Card(c), Action::Discard(c), Action::Hidden(c)] {
                assert_eq!(a.text(), a.to_string());
            }
        }
        let two: CardSet = Card::all().step_by(9).take(2).collect();
        for a in Action::WORDS
            .into_iter()
            .chain([Action::Exchange(two), Action::Exchange(CardSet::EMPTY)])
        {
            assert_eq!(a.text(), a.to_string());
        }
        assert_eq!(Card::all().count(), 52);
    }

    #[test]
    fn round_trip_and_case() {
        for (input, out) in [
            ("PASS", "pass"),
            ("Card ks", "card KS"),
            ("exchange 8c 7h", "exchange 7H 8C"),
            ("hidden 7h", "hidden 7H"),
            ("discard 9S", "discard 9S"),
            ("challenge", "challenge"),
            ("WIDOW", "widow"),
            ("General", "general"),
        ] {
            let a: Action = input.parse().unwrap();
            assert_eq!(a.to_string(), out);
            assert_eq!(out.parse::<Action>().unwrap(), a);
        }
    }

    #[test]
    fn bad_actions() {
        assert_eq!("".parse::<Action>(), Err(ParseActionError::Empty));
        assert!(
            matches!("bid".parse::<Action>(), Err(ParseActionError::UnknownVerb(v)) if v == "bid")
        );
        assert!(matches!(
            "exchange".parse::<Action>(),
            Err(ParseActionError::Arity { .. })
        ));
        assert!(matches!(
            "card KS QS".parse::<Action>(),
            Err(ParseActionError::Arity { .. })
        ));
        assert!(
            matches!("card ZZ".parse::<Action>(), Err(ParseActionError::Card(e)) if e.token == "ZZ")
        );
        assert!(matches!(
            "card  KS".parse::<Action>(),
            Err(ParseActionError::Spacing(_))
        ));
        assert!(matches!(
            " pass".parse::<Action>(),
            Err(ParseActionError::Spacing(_))
        ));
        assert!(matches!(
            "exchange 7H 7h".parse::<Action>(),
            Err(ParseActionError::Duplicate(_))
        ));
        assert!(matches!(
            "pass KS".parse::<Action>(),
            Err(ParseActionError::Arity { .. })
        ));
    }
}
