//! Shared helpers for the Part II rule tests (Mouche, Mistigri, Loo, Rams): decks stacked in
//! the deal order of section 19 (Rams's widow just before the dealer's packet).
#![allow(dead_code)]

use bete_rules::deal::cards;
use bete_rules::event::PublicEvent;
use bete_rules::{Card, CardSet, Config, Event, RulesetId, Seat, pack};

pub fn card(s: &str) -> Card {
    s.parse().expect("card")
}

/// A deck that deals `hands` (seat order), Rams's `widow` (empty string elsewhere), then
/// `turn_up`, then `talon` on top of the talon, then the rest of the pack in canonical order.
#[allow(clippy::too_many_arguments)]
pub fn deck(
    rs: RulesetId,
    cfg: &Config,
    seats: u8,
    dealer: u8,
    hands: &[&str],
    widow: &str,
    turn_up: &str,
    talon: &str,
) -> Vec<Card> {
    let p = pack(rs, cfg, seats);
    assert_eq!(hands.len(), seats as usize, "one hand per seat");
    let mut rest: Vec<Vec<Card>> = hands.iter().map(|h| cards(h).iter().collect()).collect();
    let mut widow: Vec<Card> = cards(widow).iter().collect();
    let mut used = CardSet::EMPTY;
    let mut deck = Vec::new();
    let mut take = |c: Card, deck: &mut Vec<Card>| {
        assert!(p.contains(&c), "{c} is not in the pack");
        assert!(!used.contains(c), "{c} used twice");
        used.insert(c);
        deck.push(c);
    };
    let dealer = Seat(dealer);
    for &packet in cfg.deal_pattern.packets() {
        for k in 1..=seats {
            let seat = dealer.offset(k, seats);
            if rs == RulesetId::Rams && seat == dealer {
                for _ in 0..packet {
                    let c = widow.remove(0);
                    take(c, &mut deck);
                }
            }
            for _ in 0..packet {
                let c = rest[seat.index()].remove(0);
                take(c, &mut deck);
            }
        }
    }
    take(card(turn_up), &mut deck);
    for t in talon.split_whitespace() {
        take(card(t), &mut deck);
    }
    for &c in &p {
        if !used.contains(c) {
            deck.push(c);
        }
    }
    deck
}

/// The `FlushShown` events among `events`: (seat, cards) in order.
pub fn shown(events: &[Event]) -> Vec<(u8, CardSet)> {
    events
        .iter()
        .filter_map(|e| match &e.public {
            PublicEvent::FlushShown { seat, cards } => Some((seat.0, *cards)),
            _ => None,
        })
        .collect()
}

/// Plays the first legal card for whoever is to act until the deal is settled.
pub fn first_cards_to_the_end(g: &mut bete_rules::Game) -> Vec<Event> {
    let deal = g.deal_index();
    let mut all = Vec::new();
    while g.deal_index() == deal && !g.is_over() {
        let s = g.to_act().expect("someone to act");
        let a = g.legal_actions(s)[0];
        all.extend(g.apply(s, a).expect("legal"));
    }
    all
}
