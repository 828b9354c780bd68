//! An engine event as the message one recipient may receive.
//!
//! Every event goes through [`bete_rules::Event::project`] first, so a seat's private part
//! (its hand, its exchange, its discard, its face-down lead) reaches only that seat, and the
//! `Reveal` of a settled deal reaches only spectators.

use std::time::SystemTime;

use bete_rules::event::Projected;
use bete_rules::event::{BidderResult, DealResult};
use bete_rules::{Event, MAX_SEATS, PrivateEvent, PublicEvent, Reveal, Viewer};

use super::cards::{action_to_pb, card_to_pb, cards_to_pb, suit_to_pb};
use super::timestamp;
use super::view::pools_to_pb;
use crate::pb;
use crate::pb::event::Body;

/// What the table adds to an engine event: where and when it happened, its place in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventStamp<'a> {
    pub table_id: &'a str,
    /// The table's seat count: per-seat lists are cut to it.
    pub seats: u8,
    /// The event's sequence number in the table's log.
    pub seq: u64,
    /// The server played this action for a seat that timed out.
    pub auto: bool,
    /// When the server recorded the event.
    pub time: SystemTime,
}

/// `event` as `viewer` may see it.
pub fn project(event: &Event, viewer: Viewer, stamp: &EventStamp<'_>) -> pb::Event {
    project_seen(event.project(viewer), stamp)
}

/// Whether `viewer` sees nothing of `event` beyond its public part (no private part, no
/// reveal). Every such viewer receives the same message, [`project_public`], so its encoding
/// may be shared among them.
pub fn sees_only_public(event: &Event, viewer: Viewer) -> bool {
    let seen = event.project(viewer);
    seen.private.is_none() && seen.reveal.is_none()
}

/// `event` as a viewer who sees only its public part receives it: built from the public part
/// alone, so it cannot carry a hand, an exchange, a hidden card or a reveal.
pub fn project_public(event: &Event, stamp: &EventStamp<'_>) -> pb::Event {
    project_seen(
        Projected {
            public: &event.public,
            private: None,
            reveal: None,
        },
        stamp,
    )
}

fn project_seen(seen: Projected<'_>, stamp: &EventStamp<'_>) -> pb::Event {
    let n = usize::from(stamp.seats).min(MAX_SEATS);
    let amounts = |a: &[i64; MAX_SEATS]| a[..n].to_vec();
    let body = match seen.public {
        PublicEvent::DealStarted(d) => Body::DealStarted(pb::DealStarted {
            deal: d.deal,
            dealer: u32::from(d.dealer.0),
            paid: amounts(&d.paid),
            turn_up: card_to_pb(d.turn_up),
            trump: suit_to_pb(d.trump).into(),
            muss: d.muss,
            pools: Some(pools_to_pb(&d.pools)),
            hand: match seen.private {
                Some(PrivateEvent::Hand(hand)) => cards_to_pb(*hand),
                _ => Vec::new(),
            },
        }),
        PublicEvent::Spoke { seat, action } => Body::Spoke(pb::Spoke {
            seat: u32::from(seat.0),
            action: Some(action_to_pb(*action)),
        }),
        PublicEvent::Curieuse {
            set_aside,
            turn_up,
            trump,
            paid,
        } => Body::Curieuse(pb::Curieuse {
            set_aside: card_to_pb(*set_aside),
            turn_up: card_to_pb(*turn_up),
            trump: suit_to_pb(*trump).into(),
            paid: amounts(paid),
        }),
        PublicEvent::Exchanged { seat, count } => {
            let (set_aside, drawn) = match seen.private {
                Some(PrivateEvent::Exchange { set_aside, drawn }) => {
                    (cards_to_pb(*set_aside), cards_to_pb(*drawn))
                }
                _ => (Vec::new(), Vec::new()),
            };
            Body::Exchanged(pb::Exchanged {
                seat: u32::from(seat.0),
                count: u32::from(*count),
                set_aside,
                drawn,
            })
        }
        PublicEvent::TookTurnUp { seat, turn_up } => Body::TookTurnUp(pb::TookTurnUp {
            seat: u32::from(seat.0),
            turn_up: card_to_pb(*turn_up),
            discarded: match seen.private {
                Some(PrivateEvent::Discarded(c)) => card_to_pb(*c),
                _ => String::new(),
            },
        }),
        PublicEvent::FlushShown { seat, cards } => Body::FlushShown(pb::FlushShown {
            seat: u32::from(seat.0),
            cards: cards_to_pb(*cards),
        }),
        PublicEvent::CardPlayed { seat, card } => Body::CardPlayed(pb::CardPlayed {
            seat: u32::from(seat.0),
            card: card_to_pb(*card),
        }),
        PublicEvent::HiddenLead { seat } => Body::HiddenLead(pb::HiddenLead {
            seat: u32::from(seat.0),
            card: match seen.private {
                Some(PrivateEvent::HiddenCard(c)) => card_to_pb(*c),
                _ => String::new(),
            },
        }),
        PublicEvent::TrickWon { trick, winner } => Body::TrickWon(pb::TrickWon {
            trick: u32::from(*trick),
            winner: u32::from(winner.0),
        }),
        PublicEvent::DealSettled(s) => Body::DealSettled(pb::DealSettled {
            deal: s.deal,
            result: Some(deal_result_to_pb(&s.result)),
            tricks: s.tricks[..n].iter().map(|&t| u32::from(t)).collect(),
            net: amounts(&s.net),
            betes: amounts(&s.betes),
            hidden_revealed: cards_to_pb(s.hidden_revealed),
            pools: Some(pools_to_pb(&s.pools)),
            balances: amounts(&s.balances),
            revealed: seen.reveal.map(|r| reveal_to_pb(r, n)),
        }),
        PublicEvent::MatchEnded { returned, balances } => Body::MatchEnded(pb::MatchEnded {
            returned: amounts(returned),
            balances: amounts(balances),
        }),
    };
    table_event(stamp, body)
}

/// A table-level event (`SeatTaken`, `SeatLeft`, `MatchStarted`, `StrikeCounted`), which is the
/// same for every recipient, stamped like an engine event.
pub fn table_event(stamp: &EventStamp<'_>, body: Body) -> pb::Event {
    pb::Event {
        seq: stamp.seq,
        table_id: stamp.table_id.to_string(),
        time: Some(timestamp(stamp.time)),
        auto: stamp.auto,
        body: Some(body),
    }
}

fn deal_result_to_pb(result: &DealResult) -> pb::DealResult {
    use pb::deal_result::Outcome;
    let seat = |s: bete_rules::Seat| u32::from(s.0);
    let outcome = match result {
        DealResult::Bidders {
            declarer,
            declarer_result,
            contrer,
        } => Outcome::Bidders(pb::BiddersResult {
            declarer: seat(*declarer),
            declarer_outcome: bidder_outcome(*declarer_result).into(),
            contrer: contrer.map(|(s, _)| seat(s)),
            contrer_outcome: contrer
                .map(|(_, r)| bidder_outcome(r))
                .unwrap_or(pb::BidderOutcome::Unspecified)
                .into(),
        }),
        DealResult::AllPassed => Outcome::AllPassed(pb::AllPassedResult {}),
        DealResult::Heaps {
            king,
            play,
            triolet,
        } => Outcome::Heaps(pb::HeapsResult {
            king: king.map(seat),
            play: play.map(seat),
            triolet: triolet.map(seat),
        }),
        DealResult::Played { stayers } => Outcome::Played(pb::PlayedResult {
            stayers: stayers.iter().map(seat).collect(),
        }),
        DealResult::LoneStayer(s) => Outcome::LoneStayer(pb::LoneStayerResult { seat: seat(*s) }),
        DealResult::Carried => Outcome::Carried(pb::CarriedResult {}),
        DealResult::Flush { seat: s, dealt } => Outcome::Flush(pb::FlushResult {
            seat: seat(*s),
            dealt: *dealt,
        }),
        DealResult::DealerTakesPot(s) => {
            Outcome::DealerTakesPot(pb::DealerTakesPotResult { seat: seat(*s) })
        }
    };
    pb::DealResult {
        outcome: Some(outcome),
    }
}

fn bidder_outcome(r: BidderResult) -> pb::BidderOutcome {
    match r {
        BidderResult::Win { vole: false } => pb::BidderOutcome::Win,
        BidderResult::Win { vole: true } => pb::BidderOutcome::WinVole,
        BidderResult::Null => pb::BidderOutcome::Null,
        BidderResult::Lose { devole: false } => pb::BidderOutcome::Lose,
        BidderResult::Lose { devole: true } => pb::BidderOutcome::LoseDevole,
    }
}

fn reveal_to_pb(r: &Reveal, seats: usize) -> pb::DealRevealed {
    pb::DealRevealed {
        deal: r.deal,
        hands: r.hands[..seats]
            .iter()
            .enumerate()
            .map(|(i, &hand)| pb::SeatCards {
                // `seats` is at most MAX_SEATS (10), so the index fits a u32.
                seat: i as u32,
                cards: cards_to_pb(hand),
            })
            .collect(),
        deck: r.deck.iter().copied().map(card_to_pb).collect(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bete_rules::event::SeatSet;
    use bete_rules::{Card, CardSet, DealStart, Pools, Seat, Settlement, Suit};
    use std::time::Duration;

    fn card(s: &str) -> Card {
        s.parse().unwrap()
    }

    fn set(cards: &[&str]) -> CardSet {
        let mut s = CardSet::EMPTY;
        for c in cards {
            s.insert(card(c));
        }
        s
    }

    fn stamp() -> EventStamp<'static> {
        EventStamp {
            table_id: "tbl",
            seats: 3,
            seq: 42,
            auto: false,
            time: SystemTime::UNIX_EPOCH + Duration::from_millis(1_500),
        }
    }

    const HANDS: [&[&str]; 3] = [
        &["AS", "KS", "QS", "JS", "TS"],
        &["AH", "KH", "QH", "JH", "TH"],
        &["AD", "KD", "QD", "JD", "TD"],
    ];

    fn deal_started() -> Event {
        let mut paid = [0; MAX_SEATS];
        paid[..3].copy_from_slice(&[1, 1, 2]);
        Event {
            public: PublicEvent::DealStarted(Box::new(DealStart {
                deal: 0,
                dealer: Seat(0),
                paid,
                turn_up: card("7C"),
                trump: Suit::Clubs,
                muss: false,
                pools: Pools {
                    pot: 4,
                    ..Pools::default()
                },
            })),
            private: (0..3u8)
                .map(|i| (Seat(i), PrivateEvent::Hand(set(HANDS[i as usize]))))
                .collect(),
            reveal: None,
        }
    }

    fn body(e: pb::Event) -> Body {
        e.body.expect("every projected event has a body")
    }

    #[test]
    fn a_seat_sees_only_its_own_hand_and_a_spectator_none() {
        let e = deal_started();
        for i in 0..3u8 {
            let p = project(&e, Viewer::Seat(Seat(i)), &stamp());
            assert_eq!((p.seq, p.table_id.as_str(), p.auto), (42, "tbl", false));
            assert_eq!(
                p.time,
                Some(prost_types::Timestamp {
                    seconds: 1,
                    nanos: 500_000_000
                })
            );
            let Body::DealStarted(d) = body(p) else {
                panic!("not DealStarted")
            };
            let mut want: Vec<String> = set(HANDS[i as usize])
                .iter()
                .map(|c| c.to_string())
                .collect();
            want.sort();
            let mut got = d.hand.clone();
            got.sort();
            assert_eq!(got, want, "seat {i} must see exactly its own hand");
            for (j, other) in HANDS.iter().enumerate() {
                if j != i as usize {
                    assert!(other.iter().all(|c| !d.hand.contains(&c.to_string())));
                }
            }
            assert_eq!(d.paid, vec![1, 1, 2]);
            assert_eq!(d.turn_up, "7C");
            assert_eq!(d.trump, pb::Suit::Clubs as i32);
            assert_eq!(d.pools.unwrap().pot, 4);
        }
        let Body::DealStarted(d) = body(project(&e, Viewer::Spectator, &stamp())) else {
            panic!("not DealStarted")
        };
        assert!(d.hand.is_empty(), "a spectator sees no hand");
        assert_eq!(d.turn_up, "7C");
    }

    #[test]
    fn private_parts_of_exchange_discard_and_hidden_lead_reach_only_their_seat() {
        let exchanged = Event {
            public: PublicEvent::Exchanged {
                seat: Seat(1),
                count: 2,
            },
            private: vec![(
                Seat(1),
                PrivateEvent::Exchange {
                    set_aside: set(&["2S", "3S"]),
                    drawn: set(&["AC", "KC"]),
                },
            )]
            .into(),
            reveal: None,
        };
        let Body::Exchanged(own) = body(project(&exchanged, Viewer::Seat(Seat(1)), &stamp()))
        else {
            panic!()
        };
        assert_eq!((own.seat, own.count), (1, 2));
        assert_eq!(own.set_aside, vec!["2S", "3S"]);
        assert_eq!(own.drawn, vec!["KC", "AC"]);
        for viewer in [
            Viewer::Seat(Seat(0)),
            Viewer::Seat(Seat(2)),
            Viewer::Spectator,
        ] {
            let Body::Exchanged(x) = body(project(&exchanged, viewer, &stamp())) else {
                panic!()
            };
            assert_eq!(x.count, 2);
            assert!(
                x.set_aside.is_empty() && x.drawn.is_empty(),
                "{viewer:?} saw the exchange"
            );
        }

        let took = Event {
            public: PublicEvent::TookTurnUp {
                seat: Seat(0),
                turn_up: card("7C"),
            },
            private: vec![(Seat(0), PrivateEvent::Discarded(card("8H")))].into(),
            reveal: None,
        };
        let Body::TookTurnUp(t) = body(project(&took, Viewer::Seat(Seat(0)), &stamp())) else {
            panic!()
        };
        assert_eq!((t.turn_up.as_str(), t.discarded.as_str()), ("7C", "8H"));
        let Body::TookTurnUp(t) = body(project(&took, Viewer::Seat(Seat(2)), &stamp())) else {
            panic!()
        };
        assert_eq!((t.turn_up.as_str(), t.discarded.as_str()), ("7C", ""));

        let hidden = Event {
            public: PublicEvent::HiddenLead { seat: Seat(2) },
            private: vec![(Seat(2), PrivateEvent::HiddenCard(card("9D")))].into(),
            reveal: None,
        };
        let Body::HiddenLead(h) = body(project(&hidden, Viewer::Seat(Seat(2)), &stamp())) else {
            panic!()
        };
        assert_eq!((h.seat, h.card.as_str()), (2, "9D"));
        for viewer in [Viewer::Seat(Seat(0)), Viewer::Spectator] {
            let Body::HiddenLead(h) = body(project(&hidden, viewer, &stamp())) else {
                panic!()
            };
            assert_eq!((h.seat, h.card.as_str()), (2, ""));
        }
    }

    fn settled() -> Event {
        let mut net = [0; MAX_SEATS];
        net[..3].copy_from_slice(&[5, -2, -3]);
        let mut hands = [CardSet::EMPTY; MAX_SEATS];
        for i in 0..3 {
            hands[i] = set(HANDS[i]);
        }
        Event {
            public: PublicEvent::DealSettled(Box::new(Settlement {
                deal: 0,
                result: DealResult::Bidders {
                    declarer: Seat(0),
                    declarer_result: BidderResult::Win { vole: true },
                    contrer: Some((Seat(2), BidderResult::Lose { devole: false })),
                },
                tricks: [5, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                net,
                betes: [0; MAX_SEATS],
                hidden_revealed: set(&["9D"]),
                pools: Pools::default(),
                balances: net,
            })),
            private: Default::default(),
            reveal: Some(Box::new(Reveal {
                deal: 0,
                hands,
                deck: vec![card("AS"), card("AH"), card("AD")],
            })),
        }
    }

    #[test]
    fn a_settled_deal_is_revealed_to_spectators_only() {
        let e = settled();
        let Body::DealSettled(s) = body(project(&e, Viewer::Spectator, &stamp())) else {
            panic!()
        };
        assert_eq!(
            s.tricks,
            vec![5, 0, 0],
            "per-seat lists are cut to the seat count"
        );
        assert_eq!(s.net, vec![5, -2, -3]);
        assert_eq!(s.balances, vec![5, -2, -3]);
        assert_eq!(s.hidden_revealed, vec!["9D"]);
        let r = s.revealed.expect("spectators get the reveal");
        assert_eq!(r.hands.len(), 3);
        assert_eq!(r.hands[1].seat, 1);
        assert_eq!(r.hands[1].cards.len(), 5);
        assert_eq!(r.deck, vec!["AS", "AH", "AD"]);
        let Some(pb::deal_result::Outcome::Bidders(b)) = s.result.unwrap().outcome else {
            panic!()
        };
        assert_eq!(b.declarer, 0);
        assert_eq!(b.declarer_outcome, pb::BidderOutcome::WinVole as i32);
        assert_eq!(b.contrer, Some(2));
        assert_eq!(b.contrer_outcome, pb::BidderOutcome::Lose as i32);

        for i in 0..3u8 {
            let Body::DealSettled(s) = body(project(&e, Viewer::Seat(Seat(i)), &stamp())) else {
                panic!()
            };
            assert!(s.revealed.is_none(), "seat {i} must not see the reveal");
            assert_eq!(s.net, vec![5, -2, -3]);
        }
    }

    #[test]
    fn outcomes_of_every_family() {
        let cases = [
            (DealResult::AllPassed, "AllPassed"),
            (
                DealResult::Heaps {
                    king: Some(Seat(1)),
                    play: None,
                    triolet: Some(Seat(2)),
                },
                "Heaps",
            ),
            (
                DealResult::Played {
                    stayers: SeatSet(0b101),
                },
                "Played",
            ),
            (DealResult::LoneStayer(Seat(2)), "LoneStayer"),
            (DealResult::Carried, "Carried"),
            (
                DealResult::Flush {
                    seat: Seat(1),
                    dealt: true,
                },
                "Flush",
            ),
            (DealResult::DealerTakesPot(Seat(0)), "DealerTakesPot"),
        ];
        for (r, name) in cases {
            let o = deal_result_to_pb(&r).outcome.unwrap();
            assert!(format!("{o:?}").starts_with(name), "{o:?}");
        }
        let Some(pb::deal_result::Outcome::Played(p)) = deal_result_to_pb(&DealResult::Played {
            stayers: SeatSet(0b101),
        })
        .outcome
        else {
            panic!()
        };
        assert_eq!(p.stayers, vec![0, 2]);
        let Some(pb::deal_result::Outcome::Heaps(h)) = deal_result_to_pb(&DealResult::Heaps {
            king: Some(Seat(1)),
            play: None,
            triolet: Some(Seat(2)),
        })
        .outcome
        else {
            panic!()
        };
        assert_eq!((h.king, h.play, h.triolet), (Some(1), None, Some(2)));
    }

    #[test]
    fn public_events_and_auto_flag() {
        let spoke = Event::public(PublicEvent::Spoke {
            seat: Seat(1),
            action: bete_rules::Action::Drop,
        });
        let mut st = stamp();
        st.auto = true;
        let p = project(&spoke, Viewer::Seat(Seat(0)), &st);
        assert!(p.auto);
        let Body::Spoke(s) = body(p) else { panic!() };
        assert_eq!((s.seat, s.action.unwrap().text.as_str()), (1, "drop"));

        let played = Event::public(PublicEvent::CardPlayed {
            seat: Seat(2),
            card: card("TH"),
        });
        let Body::CardPlayed(c) = body(project(&played, Viewer::Spectator, &stamp())) else {
            panic!()
        };
        assert_eq!((c.seat, c.card.as_str()), (2, "TH"));

        let mut returned = [0; MAX_SEATS];
        returned[2] = 7;
        let ended = Event::public(PublicEvent::MatchEnded {
            returned: Box::new(returned),
            balances: Box::new([1; MAX_SEATS]),
        });
        let Body::MatchEnded(m) = body(project(&ended, Viewer::Spectator, &stamp())) else {
            panic!()
        };
        assert_eq!((m.returned, m.balances), (vec![0, 0, 7], vec![1, 1, 1]));

        let t = table_event(
            &stamp(),
            Body::StrikeCounted(pb::StrikeCounted {
                seat: 1,
                strikes: 2,
            }),
        );
        assert_eq!(t.seq, 42);
        assert!(matches!(t.body, Some(Body::StrikeCounted(_))));
    }

    /// The shared public message is exactly what each viewer who sees only the public part
    /// would get, and no viewer with a private part or a reveal is counted among them.
    #[test]
    fn the_public_message_is_shared_only_by_viewers_who_see_nothing_more() {
        let viewers = [
            Viewer::Seat(Seat(0)),
            Viewer::Seat(Seat(1)),
            Viewer::Seat(Seat(2)),
            Viewer::Spectator,
        ];
        let hidden = Event {
            public: PublicEvent::HiddenLead { seat: Seat(2) },
            private: vec![(Seat(2), PrivateEvent::HiddenCard(card("9D")))].into(),
            reveal: None,
        };
        let played = Event::public(PublicEvent::CardPlayed {
            seat: Seat(2),
            card: card("TH"),
        });
        for event in [deal_started(), hidden, settled(), played] {
            let public = project_public(&event, &stamp());
            for viewer in viewers {
                let own = project(&event, viewer, &stamp());
                if sees_only_public(&event, viewer) {
                    assert_eq!(own, public, "{viewer:?} of {:?}", event.public);
                } else {
                    assert_ne!(own, public, "{viewer:?} of {:?}", event.public);
                }
            }
        }
        // Every seat holds a hand at the deal; only spectators see the settled deal's reveal.
        let dealt = deal_started();
        assert!(viewers[..3].iter().all(|&v| !sees_only_public(&dealt, v)));
        assert!(sees_only_public(&dealt, Viewer::Spectator));
        assert!(!sees_only_public(&settled(), Viewer::Spectator));
        assert!(sees_only_public(&settled(), Viewer::Seat(Seat(1))));
        let Body::HiddenLead(h) = body(project_public(
            &Event {
                public: PublicEvent::HiddenLead { seat: Seat(2) },
                private: vec![(Seat(2), PrivateEvent::HiddenCard(card("9D")))].into(),
                reveal: None,
            },
            &stamp(),
        )) else {
            panic!()
        };
        assert_eq!(
            h.card, "",
            "the public message never carries the hidden card"
        );
    }
}
