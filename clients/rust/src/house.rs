//! The house policies of the rules crate (`bete_rules::bots`) as client-side [`Bot`]s.
//!
//! They decide on a `bete_rules::View`, so the seat's protobuf view is converted back into one
//! first ([`view_from_pb`]). The server built that view for this seat only, so the policy sees
//! exactly what the seat may know.

use bete_api::convert::{
    action_from_pb, action_to_pb, card_from_pb, ruleset_from_pb, suit_from_pb,
};
use bete_api::pb;
use bete_rules::bots::Policy;
use bete_rules::view::{Phase, PlayedCard, Pools, SeatPublic, TrickView, View, Viewer};
use bete_rules::{CardSet, Seat};
use rand::SeedableRng as _;

use crate::bot::Bot;

/// A bot playing one of the rules crate's house policies.
#[derive(Debug)]
pub struct HouseBot {
    policy: Policy,
    rng: rand_chacha::ChaCha8Rng,
}

impl HouseBot {
    /// The `heuristic` house policy.
    pub fn heuristic() -> Self {
        Self::new(Policy::Heuristic)
    }

    /// The `random` house policy.
    pub fn random() -> Self {
        Self::new(Policy::Random)
    }

    /// A bot for `policy`, its randomness seeded from the OS.
    pub fn new(policy: Policy) -> Self {
        HouseBot {
            policy,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(rand::random()),
        }
    }
}

impl Bot for HouseBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        match view_from_pb(view) {
            Some(rules_view) => action_to_pb(self.policy.choose(&rules_view, &mut self.rng)),
            // A view this client cannot read (a newer server): any legal action is still legal.
            None => view.legal_actions.first().cloned().unwrap_or_default(),
        }
    }
}

/// Rebuilds the rules crate's view from a seat's protobuf view; `None` if a field does not
/// parse (a protocol mismatch).
pub fn view_from_pb(v: &pb::SeatView) -> Option<View> {
    let card = |code: &str| card_from_pb(code, "card").ok();
    let seat = |n: u32| u8::try_from(n).ok().map(Seat);
    let phase = match pb::Phase::try_from(v.phase).ok()? {
        pb::Phase::AwaitingDeck | pb::Phase::AwaitingPlayers | pb::Phase::Unspecified => {
            Phase::AwaitingDeck
        }
        pb::Phase::Bidding => Phase::Bidding,
        pb::Phase::Exchange => Phase::Exchange {
            round: u8::try_from(v.exchange_round).ok()?,
        },
        pb::Phase::DealerDiscard => Phase::DealerDiscard,
        pb::Phase::Challenge => Phase::Challenge,
        pb::Phase::Trick => Phase::Trick {
            trick: u8::try_from(v.trick_index).ok()?,
        },
        pb::Phase::MatchOver => Phase::MatchOver,
    };
    let hand: Option<CardSet> = match v.viewer_seat {
        Some(_) => Some(
            v.hand
                .iter()
                .map(|c| card(c))
                .collect::<Option<CardSet>>()?,
        ),
        None => None,
    };
    let seat_states = v
        .seat_states
        .iter()
        .map(|s| {
            Some(SeatPublic {
                seat: seat(s.seat)?,
                balance: s.balance,
                hand_len: u8::try_from(s.hand_len).ok()?,
                tricks: u8::try_from(s.tricks).ok()?,
                declarer: s.declarer,
                contrer: s.contrer,
                dropped: s.dropped,
                exchanged: [
                    s.exchanged
                        .first()
                        .and_then(|&n| u8::try_from(n).ok())
                        .unwrap_or(0),
                    s.exchanged
                        .get(1)
                        .and_then(|&n| u8::try_from(n).ok())
                        .unwrap_or(0),
                ],
                // Another seat's exchange carries no cards: the engine's view shows it as an
                // exchange of the empty set (determinization compares views exactly).
                last_spoke: s.last_spoke.as_ref().and_then(|a| {
                    if a.kind == pb::ActionKind::Exchange as i32 && a.cards.is_empty() {
                        Some(bete_rules::Action::Exchange(CardSet::EMPTY))
                    } else {
                        action_from_pb(a, "last_spoke").ok()
                    }
                }),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let tricks = v
        .tricks
        .iter()
        .map(|t| {
            let cards = t
                .plays
                .iter()
                .map(|p| {
                    let c = if p.card.is_empty() {
                        None
                    } else {
                        Some(card(&p.card)?)
                    };
                    let played = match (p.face_down, c) {
                        (true, c) => PlayedCard::FaceDown(c),
                        (false, Some(c)) => PlayedCard::FaceUp(c),
                        (false, None) => return None,
                    };
                    Some((seat(p.seat)?, played))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(TrickView {
                leader: seat(t.leader)?,
                cards,
                winner: t.winner.and_then(seat),
            })
        })
        .collect::<Option<Vec<_>>>()?;
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
    Some(View {
        viewer: match v.viewer_seat {
            Some(s) => Viewer::Seat(seat(s)?),
            None => Viewer::Spectator,
        },
        ruleset: ruleset_from_pb(v.ruleset, "ruleset").ok()?,
        seats: u8::try_from(v.seats).ok()?,
        deal: v.deal,
        dealer: seat(v.dealer)?,
        phase,
        to_act: match v.to_act {
            Some(s) => Some(seat(s)?),
            None => None,
        },
        hand,
        turn_up: if v.turn_up.is_empty() {
            None
        } else {
            Some(card(&v.turn_up)?)
        },
        set_aside_turn_ups: v
            .set_aside_turn_ups
            .iter()
            .map(|c| card(c))
            .collect::<Option<Vec<_>>>()?,
        trump: suit_from_pb(v.trump, "trump").ok(),
        talon_len: u8::try_from(v.talon_len).ok()?,
        muss: v.muss,
        turn_up_taken: v.turn_up_taken,
        seat_states,
        tricks,
        pools,
        legal_actions: v
            .legal_actions
            .iter()
            .map(|a| action_from_pb(a, "legal_actions").ok())
            .collect::<Option<Vec<_>>>()?,
        match_over: v.match_over,
    })
}
