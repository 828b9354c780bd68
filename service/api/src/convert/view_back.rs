//! A `pb::SeatView` received over gRPC back into the engine's `bete_rules::View`: what a bot
//! (the Rust client's house bots, the Python engine `bete-engine`) decides or searches on.
//!
//! The server built the message from the engine's view for one viewer, so the engine's view is
//! rebuilt field by field; a field that does not parse (a protocol mismatch) is an error naming
//! it.

use bete_rules::view::{PlayedCard, Pools, SeatPublic, TrickView};
use bete_rules::{Action, CardSet, Phase, Seat, View, Viewer};

use super::FieldError;
use super::cards::{action_from_pb, card_from_pb, ruleset_from_pb, suit_from_pb};
use crate::pb;

/// Rebuilds the engine's view from a viewer's protobuf view.
pub fn view_from_pb(v: &pb::SeatView) -> Result<View, FieldError> {
    let phase = match pb::Phase::try_from(v.phase)
        .map_err(|_| FieldError::new("phase", format!("unknown Phase number {}", v.phase)))?
    {
        pb::Phase::AwaitingDeck | pb::Phase::AwaitingPlayers | pb::Phase::Unspecified => {
            Phase::AwaitingDeck
        }
        pb::Phase::Bidding => Phase::Bidding,
        pb::Phase::Exchange => Phase::Exchange {
            round: small(v.exchange_round, "exchange_round")?,
        },
        pb::Phase::DealerDiscard => Phase::DealerDiscard,
        pb::Phase::Challenge => Phase::Challenge,
        pb::Phase::Trick => Phase::Trick {
            trick: small(v.trick_index, "trick_index")?,
        },
        pb::Phase::MatchOver => Phase::MatchOver,
    };
    let hand = match v.viewer_seat {
        Some(_) => Some(
            v.hand
                .iter()
                .enumerate()
                .map(|(i, c)| card_from_pb(c, &format!("hand[{i}]")))
                .collect::<Result<CardSet, _>>()?,
        ),
        None => None,
    };
    let seat_states = v
        .seat_states
        .iter()
        .enumerate()
        .map(|(i, s)| seat_state(s, i))
        .collect::<Result<Vec<_>, _>>()?;
    let tricks = v
        .tricks
        .iter()
        .enumerate()
        .map(|(i, t)| trick(t, i))
        .collect::<Result<Vec<_>, _>>()?;
    let p = v.pools.clone().unwrap_or_default();
    let pools = Pools {
        pot: p.pot,
        fiches: p.fiches,
        deals_since_won: p.deals_since_won,
        king_pool: p.king_pool,
        staked_bete: p.staked_bete,
        bete_queue: p.bete_queue,
        heaps: [p.heap_king, p.heap_play, p.heap_triolet],
        bete_streak: p.bete_streak,
        fiche_value: p.fiche_value,
    };
    Ok(View {
        viewer: match v.viewer_seat {
            Some(s) => Viewer::Seat(seat(s, "viewer_seat")?),
            None => Viewer::Spectator,
        },
        ruleset: ruleset_from_pb(v.ruleset, "ruleset")?,
        seats: small(v.seats, "seats")?,
        deal: v.deal,
        dealer: seat(v.dealer, "dealer")?,
        phase,
        to_act: v.to_act.map(|s| seat(s, "to_act")).transpose()?,
        hand,
        turn_up: if v.turn_up.is_empty() {
            None
        } else {
            Some(card_from_pb(&v.turn_up, "turn_up")?)
        },
        set_aside_turn_ups: v
            .set_aside_turn_ups
            .iter()
            .enumerate()
            .map(|(i, c)| card_from_pb(c, &format!("set_aside_turn_ups[{i}]")))
            .collect::<Result<Vec<_>, _>>()?,
        // UNSPECIFIED means no trump (yet).
        trump: suit_from_pb(v.trump, "trump").ok(),
        talon_len: small(v.talon_len, "talon_len")?,
        muss: v.muss,
        turn_up_taken: v.turn_up_taken,
        seat_states,
        tricks,
        pools,
        legal_actions: v
            .legal_actions
            .iter()
            .enumerate()
            .map(|(i, a)| action_from_pb(a, &format!("legal_actions[{i}]")))
            .collect::<Result<Vec<_>, _>>()?,
        match_over: v.match_over,
        trick_holder: v
            .trick_holder
            .map(|s| seat(s, "trick_holder"))
            .transpose()?,
    })
}

fn seat_state(s: &pb::SeatState, i: usize) -> Result<SeatPublic, FieldError> {
    let field = |name: &str| format!("seat_states[{i}].{name}");
    let exchanged = |round: usize| {
        s.exchanged
            .get(round)
            .map_or(Ok(0), |&n| small(n, &field(&format!("exchanged[{round}]"))))
    };
    Ok(SeatPublic {
        seat: seat(s.seat, &field("seat"))?,
        balance: s.balance,
        hand_len: small(s.hand_len, &field("hand_len"))?,
        tricks: small(s.tricks, &field("tricks"))?,
        declarer: s.declarer,
        contrer: s.contrer,
        dropped: s.dropped,
        exchanged: [exchanged(0)?, exchanged(1)?],
        // Another seat's exchange carries no cards: the engine's view shows it as an exchange
        // of the empty set (determinization compares views exactly).
        last_spoke: match &s.last_spoke {
            None => None,
            Some(a) if a.kind == pb::ActionKind::Exchange as i32 && a.cards.is_empty() => {
                Some(Action::Exchange(CardSet::EMPTY))
            }
            Some(a) => Some(action_from_pb(a, &field("last_spoke"))?),
        },
    })
}

fn trick(t: &pb::Trick, i: usize) -> Result<TrickView, FieldError> {
    let cards = t
        .plays
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let field = |name: &str| format!("tricks[{i}].plays[{j}].{name}");
            let card = if p.card.is_empty() {
                None
            } else {
                Some(card_from_pb(&p.card, &field("card"))?)
            };
            let played = match (p.face_down, card) {
                (true, c) => PlayedCard::FaceDown(c),
                (false, Some(c)) => PlayedCard::FaceUp(c),
                (false, None) => {
                    return Err(FieldError::new(
                        field("card"),
                        "is required for a card played face up",
                    ));
                }
            };
            Ok((seat(p.seat, &field("seat"))?, played))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TrickView {
        leader: seat(t.leader, &format!("tricks[{i}].leader"))?,
        cards,
        winner: t
            .winner
            .map(|w| seat(w, &format!("tricks[{i}].winner")))
            .transpose()?,
    })
}

/// A count or index the engine keeps in a byte.
fn small(n: u32, field: &str) -> Result<u8, FieldError> {
    u8::try_from(n).map_err(|_| FieldError::new(field, format!("{n} is out of range")))
}

fn seat(n: u32, field: &str) -> Result<Seat, FieldError> {
    small(n, field).map(Seat)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::convert::view_to_pb;
    use bete_rules::{Config, Decks, Game, RulesetId, Setup};

    /// Every seat's and the spectator's view of a live match of every ruleset, at its largest
    /// table, comes back exactly as the engine built it, in every phase two deals pass through.
    #[test]
    fn engine_views_round_trip_through_protobuf() {
        for ruleset in RulesetId::ALL {
            let (_, seats) = ruleset.seat_range();
            let setup = Setup {
                ruleset,
                config: Config::defaults(ruleset, seats),
                seats,
                first_dealer: Seat(0),
                decks: Decks::Seed(bete_rules::Seed([3; 32])),
            };
            let (mut game, _) = Game::new(setup).unwrap();
            let mut checked = 0;
            while let Some(to_act) = game.to_act()
                && game.deal_index() < 2
            {
                let viewers = (0..seats)
                    .map(|s| Viewer::Seat(Seat(s)))
                    .chain([Viewer::Spectator]);
                for viewer in viewers {
                    let view = game.view(viewer);
                    let pb = view_to_pb("t", 1, &view, None);
                    assert_eq!(view_from_pb(&pb).unwrap(), view, "{ruleset} {viewer:?}");
                    checked += 1;
                }
                let a = game.legal_actions(to_act)[0];
                game.apply(to_act, a).unwrap();
            }
            assert!(checked > 20);
        }
    }

    #[test]
    fn a_bad_field_is_named() {
        let mut pb = pb::SeatView {
            viewer_seat: Some(0),
            ruleset: pb::Ruleset::Bete as i32,
            seats: 5,
            hand: vec!["KS".into(), "ZZ".into()],
            ..Default::default()
        };
        let e = view_from_pb(&pb).unwrap_err();
        assert_eq!(e.field, "hand[1]");
        pb.hand.pop();
        pb.ruleset = 999;
        assert_eq!(view_from_pb(&pb).unwrap_err().field, "ruleset");
        pb.ruleset = pb::Ruleset::Bete as i32;
        pb.seats = 300;
        assert_eq!(
            view_from_pb(&pb).unwrap_err().to_string(),
            "seats: 300 is out of range"
        );
    }
}
