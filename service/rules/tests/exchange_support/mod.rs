//! Shared helpers for the exchange-family rule tests (Beste Boer, Lanterlui, Bester Bube).
#![allow(dead_code)]

use bete_rules::config::DealPattern;
use bete_rules::deal::{cards, stack_deck};
use bete_rules::event::PublicEvent;
use bete_rules::game::Decks;
use bete_rules::{
    Action, ActionError, Card, CardSet, Config, Event, Game, RulesetId, Seat, Seed, Setup, pack,
};

pub fn card(s: &str) -> Card {
    s.parse().expect("card")
}

/// A deck that deals `hands` (seat order), then `turn_up`, then `talon` on top of the talon.
pub fn deck(
    rs: RulesetId,
    cfg: &Config,
    seats: u8,
    dealer: u8,
    hands: &[&str],
    turn_up: &str,
    talon: &str,
) -> Vec<Card> {
    let p = pack(rs, cfg, seats);
    let hands: Vec<CardSet> = hands.iter().map(|h| cards(h)).collect();
    let talon: Vec<Card> = talon.split_whitespace().map(card).collect();
    stack_deck(
        &p,
        seats,
        Seat(dealer),
        DealPattern::ThreeTwo,
        &hands,
        card(turn_up),
        &talon,
    )
}

/// A deck where `winner` holds `strong` and every other seat gets the rest of the pack in
/// canonical order (turn-up first).
pub fn deck_with(
    rs: RulesetId,
    cfg: &Config,
    seats: u8,
    dealer: u8,
    winner: u8,
    strong: &str,
    turn_up: &str,
) -> Vec<Card> {
    let p = pack(rs, cfg, seats);
    let strong = cards(strong);
    let mut rest: Vec<Card> = p
        .iter()
        .copied()
        .filter(|c| !strong.contains(*c) && *c != card(turn_up))
        .collect();
    let mut hands = Vec::new();
    for s in 0..seats {
        if s == winner {
            hands.push(strong);
        } else {
            hands.push(rest.drain(..5).collect());
        }
    }
    stack_deck(
        &p,
        seats,
        Seat(dealer),
        DealPattern::ThreeTwo,
        &hands,
        card(turn_up),
        &[],
    )
}

pub fn config(rs: RulesetId, seats: u8, f: impl FnOnce(&mut Config)) -> Config {
    let mut c = Config::defaults(rs, seats);
    f(&mut c);
    c
}

pub fn game(
    rs: RulesetId,
    cfg: Config,
    seats: u8,
    first_dealer: u8,
    decks: Vec<Vec<Card>>,
) -> Game {
    let (g, _) = Game::new(Setup {
        ruleset: rs,
        config: cfg,
        seats,
        first_dealer: Seat(first_dealer),
        decks: Decks::Explicit(decks),
    })
    .expect("setup");
    assert_conserved(&g);
    g
}

pub fn seeded(rs: RulesetId, cfg: Config, seats: u8, seed_byte: u8) -> Game {
    let (g, _) = Game::new(Setup {
        ruleset: rs,
        config: cfg,
        seats,
        first_dealer: Seat(0),
        decks: Decks::Seed(Seed([seed_byte; 32])),
    })
    .expect("setup");
    g
}

pub fn assert_conserved(g: &Game) {
    let sum: i64 = g.balances().iter().sum();
    assert_eq!(
        sum + g.on_table(),
        0,
        "balances {:?} + on_table {} != 0",
        g.balances(),
        g.on_table()
    );
}

/// Applies "seat action" steps separated by commas; panics on any error. Returns the events.
pub fn run(g: &mut Game, script: &str) -> Vec<Event> {
    let mut all = Vec::new();
    for step in script.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (seat, action) = step.split_once(' ').expect("seat action");
        let seat = Seat(seat.parse().expect("seat"));
        let action: Action = action.parse().expect("action");
        let legal = g.legal_actions(seat);
        match g.apply(seat, action) {
            Ok(ev) => {
                assert!(
                    legal.contains(&action),
                    "{action} applied but not in legal_actions {legal:?}"
                );
                all.extend(ev);
            }
            Err(e) => panic!("step {step:?} failed: {e} (legal: {})", show(&legal)),
        }
        assert_conserved(g);
    }
    all
}

/// Applies one action that must fail; checks the game is unchanged and the action is not legal.
pub fn refuse(g: &mut Game, seat: u8, action: &str) -> ActionError {
    let action: Action = action.parse().expect("action");
    let before_view = g.view(bete_rules::Viewer::Seat(Seat(seat)));
    let before_bal = g.balances().to_vec();
    let e = g.apply(Seat(seat), action).expect_err("must be refused");
    assert!(
        !g.legal_actions(Seat(seat)).contains(&action),
        "{action} refused but legal"
    );
    assert_eq!(
        g.view(bete_rules::Viewer::Seat(Seat(seat))),
        before_view,
        "state changed on error"
    );
    assert_eq!(g.balances(), &before_bal[..]);
    e
}

pub fn show(actions: &[Action]) -> String {
    let mut v: Vec<String> = actions.iter().map(|a| a.to_string()).collect();
    v.sort();
    v.join(", ")
}

/// The legal actions of a seat as sorted text.
pub fn legal(g: &Game, seat: u8) -> String {
    show(&g.legal_actions(Seat(seat)))
}

/// Plays the safe action for whoever is to act until deal `deal` starts (or the match ends).
pub fn play_until_deal(g: &mut Game, deal: u32) -> Vec<Event> {
    let mut all = Vec::new();
    while g.deal_index() < deal && !g.is_over() {
        let s = g.to_act().expect("someone to act");
        let a = g.safe_action(s).expect("a safe action");
        all.extend(g.apply(s, a).expect("safe action applies"));
        assert_conserved(g);
    }
    all
}

/// The payload of the `DealSettled` event among `events`.
pub fn settled(events: &[Event]) -> &bete_rules::Settlement {
    events
        .iter()
        .find_map(|e| match &e.public {
            PublicEvent::DealSettled(s) => Some(&**s),
            _ => None,
        })
        .expect("a DealSettled event")
}

pub fn net_of(events: &[Event]) -> Vec<i64> {
    settled(events).net.to_vec()
}

pub fn betes_of(events: &[Event]) -> Vec<i64> {
    settled(events).betes.to_vec()
}

/// Checks that `apply` succeeds exactly for the actions in `legal_actions`, on a clone, for a
/// broad set of candidate actions; then plays a pseudo-random legal one. Plays whole matches.
pub fn check_legal_agrees(mut g: Game, steps: usize, mut rng: u64) -> Game {
    let pack: Vec<Card> = g.pack().to_vec();
    for _ in 0..steps {
        if g.is_over() {
            break;
        }
        let Some(seat) = g.to_act() else { break };
        let legal = g.legal_actions(seat);
        assert!(!legal.is_empty(), "no legal action for the seat to act");
        let mut candidates: Vec<Action> = vec![
            Action::Stand,
            Action::Drop,
            Action::Challenge,
            Action::Decline,
            Action::Pass,
            Action::Play,
        ];
        for &c in &pack {
            candidates.push(Action::Card(c));
            candidates.push(Action::Hidden(c));
            candidates.push(Action::Discard(c));
        }
        let hand = g
            .view(bete_rules::Viewer::Seat(seat))
            .hand
            .unwrap_or_default();
        let hv: Vec<u64> = hand.iter().map(|c| 1u64 << c.bit()).collect();
        for mask in 1u32..(1 << hv.len()) {
            let bits = hv
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .fold(0, |a, (_, b)| a | b);
            candidates.push(Action::Exchange(CardSet(bits)));
        }
        candidates.extend(legal.iter().copied());
        for a in candidates {
            let mut h = g.clone();
            let ok = h.apply(seat, a).is_ok();
            assert_eq!(
                ok,
                legal.contains(&a),
                "apply({a}) = {ok} but legal_actions says {}",
                legal.contains(&a)
            );
        }
        // another seat may never act
        let other = Seat((seat.0 + 1) % g.seats());
        assert!(g.clone().apply(other, legal[0]).is_err());
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let a = legal[(rng % legal.len() as u64) as usize];
        g.apply(seat, a).expect("legal applies");
        assert_conserved(&g);
    }
    g
}
