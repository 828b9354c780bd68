//! Property tests over random matches of all six rulesets, every allowed seat count, random
//! configs, random seeds and random legal play:
//!
//! - `apply` succeeds exactly for the actions `legal_actions` lists, and a refused action leaves
//!   the game unchanged (every view, the log, the ledger);
//! - chips are conserved: balances plus everything on the table is zero after every step;
//! - no view shows a card hidden from its viewer (checked against the hands the private events
//!   gave each seat), and a seat's view differs from the spectator's only by its own secrets;
//! - replaying the record of a match gives the same state and balances;
//! - the same seed (and bot seeds) gives the same match.
//!
//! Matches are kept short (`rounds = 1`, few extra deals) so the suite runs well under a
//! minute in a debug build.

use bete_rules::bots::{Policy, bot_rng};
use bete_rules::event::Event;
use bete_rules::playout::uniform_index;
use bete_rules::record::{Record, replay_json};
use bete_rules::view::PlayedCard;
use bete_rules::{
    Action, Card, CardSet, Config, Decks, Game, PrivateEvent, PublicEvent, RulesetId, Seat, Seed,
    Setup, View, Viewer, pack,
};
use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

/// Config alternatives a test may switch on, per ruleset (section 10).
fn alternatives(r: RulesetId) -> &'static [(&'static str, &'static str)] {
    match r {
        RulesetId::Bete | RulesetId::BeteAceHigh => &[
            ("contre", "disabled"),
            ("win_rule", "plurality"),
            ("max_curieuse", "3"),
            ("max_curieuse", "0"),
            ("queue_order", "largest_first"),
            ("ante_rule", "literal"),
            ("fiche_value", "10"),
            ("deal_pattern", "2+1+2"),
            ("must_head_in_suit", "false"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Beast => &[("deal_pattern", "2+3")],
        RulesetId::BesteBoer => &[
            ("bete_growth", "pot"),
            ("bete_growth", "plus5_per_bete"),
            ("follow_after_trick2", "true"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Lanterlui => &[
            ("bete_growth", "plus5"),
            ("follow_suit", "false"),
            ("four_card_flush", "true"),
            ("short_pack", "true"),
            ("muss_max_pot", "10"),
            ("forced_after_muss", "true"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::BesterBube => &[
            ("follow_suit", "false"),
            ("per_trick", "one"),
            ("bete_payoff", "successive_fifo"),
            ("enforce_legality", "lenient"),
        ],
        RulesetId::Mouche => &[
            ("pack_rule", "sequential"),
            ("dealer_ante", "per_seat"),
            ("deal_pattern", "2+3"),
            ("dealt_mouche_penalty", "others_pay"),
            ("exchanged_mouche", "false"),
            ("mouche_payoff", "queue_largest_first"),
            ("must_head_in_suit", "false"),
        ],
        RulesetId::Mistigri => &[
            ("pack_rule", "sequential"),
            ("dealer_ante", "per_seat"),
            ("dealt_mouche_penalty", "others_pay"),
            ("mouche_payoff", "queue_largest_first"),
            ("mistigri_laws", "free"),
            ("mistigri_flush", "trump_only"),
            ("must_head_in_suit", "false"),
        ],
        RulesetId::Loo => &[
            ("deal_pattern", "3+2"),
            ("pam", "trump_jack"),
            ("pam_laws", "trump"),
            ("pam_be_civil", "false"),
            ("ace_lead", "none"),
            ("loo_amount", "unlimited"),
            ("loo_amount", "mixed"),
            ("loo_limit", "10"),
            ("flush_rule", "pcg"),
            ("must_head_in_suit", "false"),
        ],
        RulesetId::Rams => &[
            ("deal_pattern", "2+3"),
            ("ranking", "ecarte"),
            ("rams_penalty", "pool"),
            ("general_stake", "0"),
            ("undertrump", "free"),
            ("drop_requires_widow_taken", "true"),
            ("must_head_in_suit", "false"),
        ],
    }
}

/// A random table: ruleset, seat count, config, seed, first dealer, and who plays how.
#[derive(Clone, Debug)]
struct Table {
    setup: Setup,
    /// Per seat: heuristic (true) or random (false).
    heuristic: Vec<bool>,
    /// Seed of the random players.
    play_seed: u64,
}

fn table_strategy() -> impl Strategy<Value = Table> {
    (
        0..RulesetId::ALL.len(),
        any::<u8>(),
        any::<u32>(),
        any::<[u8; 32]>(),
        any::<u8>(),
        any::<u8>(),
        any::<u64>(),
    )
        .prop_map(
            |(ri, seat_pick, alt_bits, seed, dealer_pick, bots, play_seed)| {
                let ruleset = RulesetId::ALL[ri];
                let (lo, hi) = ruleset.seat_range();
                let mut pairs: Vec<(String, String)> = vec![
                    ("rounds".into(), "1".into()),
                    ("max_extra_deals".into(), "2".into()),
                ];
                for (i, (k, v)) in alternatives(ruleset).iter().enumerate() {
                    // Each alternative is on with probability 1/4, on two bits of its own (at
                    // most 16 alternatives), so most configs stay close to the defaults while
                    // every combination can occur.
                    if (alt_bits >> (i * 2)) & 3 == 0 {
                        pairs.push((k.to_string(), v.to_string()));
                    }
                }
                // Bête's two-seat game (B1, A7) joins the seat counts 3..=7.
                let two = ruleset.is_bete_family() && seat_pick % 8 == 0;
                let seats = if two {
                    pairs.push(("two_players".into(), "true".into()));
                    2
                } else {
                    lo + seat_pick % (hi - lo + 1)
                };
                let config = Config::from_pairs(ruleset, seats, &pairs).expect("valid config");
                Table {
                    setup: Setup {
                        ruleset,
                        config,
                        seats,
                        first_dealer: Seat(dealer_pick % seats),
                        decks: Decks::Seed(Seed(seed)),
                    },
                    heuristic: (0..seats).map(|i| bots >> (i % 8) & 1 == 1).collect(),
                    play_seed,
                }
            },
        )
}

/// The players of a table: heuristic or uniformly random, each from its own view.
struct Players {
    heuristic: Vec<bool>,
    rng: ChaCha8Rng,
}

impl Players {
    fn new(t: &Table) -> Players {
        Players {
            heuristic: t.heuristic.clone(),
            rng: ChaCha8Rng::seed_from_u64(t.play_seed),
        }
    }

    fn choose(&mut self, view: &View) -> Action {
        let Viewer::Seat(s) = view.viewer else {
            unreachable!()
        };
        if self.heuristic[s.index()] {
            Policy::Heuristic.choose(view, &mut self.rng)
        } else {
            Policy::Random.choose(view, &mut self.rng)
        }
    }
}

/// Everything observable of a game, to check that a refused action changed nothing.
#[derive(Debug, PartialEq)]
struct Snapshot {
    views: Vec<View>,
    log: Vec<bete_rules::DealLog>,
    balances: Vec<i64>,
    on_table: i64,
    summaries: Vec<bete_rules::DealSummary>,
}

fn snapshot(g: &Game) -> Snapshot {
    let mut views: Vec<View> = (0..g.seats())
        .map(|s| g.view(Viewer::Seat(Seat(s))))
        .collect();
    views.push(g.view(Viewer::Spectator));
    Snapshot {
        views,
        log: g.log().to_vec(),
        balances: g.balances().to_vec(),
        on_table: g.on_table(),
        summaries: g.summaries().to_vec(),
    }
}

/// Every action a seat could try now: every verb, every card of the pack with each card verb,
/// and a handful of exchanges (legal ones and random subsets of hand and pack).
fn candidates(g: &Game, seat: Seat, legal: &[Action], rng: &mut ChaCha8Rng) -> Vec<Action> {
    let mut v = Action::WORDS.to_vec();
    let pack: Vec<Card> = g.pack().to_vec();
    for &c in &pack {
        v.push(Action::Card(c));
        v.push(Action::Hidden(c));
        v.push(Action::Discard(c));
    }
    // Cards outside the pack are never legal either.
    for s in ["2S", "3H", "6D", "7C"] {
        let c: Card = s.parse().expect("card");
        if !pack.contains(&c) {
            v.push(Action::Card(c));
        }
    }
    v.extend(
        legal
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Exchange(_))),
    );
    let hand = g.view(Viewer::Seat(seat)).hand.unwrap_or_default();
    let hand_cards: Vec<Card> = hand.iter().collect();
    for _ in 0..6 {
        let mut set = CardSet::EMPTY;
        let n = 1 + rng.next_u32() as usize % 5;
        for _ in 0..n {
            if !hand_cards.is_empty() && !rng.next_u32().is_multiple_of(4) {
                set.insert(hand_cards[rng.next_u32() as usize % hand_cards.len()]);
            } else {
                set.insert(pack[rng.next_u32() as usize % pack.len()]);
            }
        }
        v.push(Action::Exchange(set));
    }
    v.push(Action::Exchange(hand));
    v
}

/// The hands each seat holds, tracked from the private parts of the events only.
struct Hands(Vec<CardSet>);

impl Hands {
    fn track(&mut self, events: &[Event]) {
        for e in events {
            // The dealer takes up the turn-up before he discards (he may discard it).
            if let PublicEvent::TookTurnUp { seat, turn_up } = &e.public {
                self.0[seat.index()].insert(*turn_up);
            }
            for (s, p) in &e.private {
                let h = &mut self.0[s.index()];
                match p {
                    PrivateEvent::Hand(cards) => *h = *cards,
                    PrivateEvent::Exchange { set_aside, drawn } => {
                        *h = h.minus(*set_aside).union(*drawn)
                    }
                    PrivateEvent::Discarded(c) => h.remove(*c),
                    PrivateEvent::HiddenCard(c) => h.remove(*c),
                }
            }
            if let PublicEvent::CardPlayed { seat, card } = &e.public {
                self.0[seat.index()].remove(*card);
            }
        }
    }
}

/// A seat's own secrets in another seat's or a spectator's view would be a leak: the cards it
/// set aside or discarded.
fn leaks_secret_of(action: Option<Action>) -> bool {
    match action {
        Some(Action::Exchange(set)) => !set.is_empty(),
        Some(Action::Discard(_)) => true,
        _ => false,
    }
}

/// What a seat's view shows beyond the spectator's: its hand, legal actions, its own
/// face-down lead and its own last action. Removing those must give the spectator's view.
fn public_part(view: &View, deal_settled: bool) -> View {
    let mut v = view.clone();
    if let Viewer::Seat(me) = view.viewer {
        v.viewer = Viewer::Spectator;
        v.hand = None;
        v.legal_actions.clear();
        for t in &mut v.tricks {
            for (s, p) in &mut t.cards {
                if *s == me && !deal_settled && matches!(p, PlayedCard::FaceDown(_)) {
                    *p = PlayedCard::FaceDown(None);
                }
            }
        }
        // Others learn that it exchanged (and how many cards), not which; and that the
        // dealer took up the turn-up, not what he discarded.
        let own = &mut v.seat_states[me.index()].last_spoke;
        match *own {
            Some(Action::Exchange(_)) => *own = Some(Action::Exchange(CardSet::EMPTY)),
            Some(Action::Discard(_)) => *own = None,
            _ => {}
        }
    }
    v
}

fn check_views(g: &Game, hands: &Hands) -> Result<(), TestCaseError> {
    let spectator = g.view(Viewer::Spectator);
    prop_assert_eq!(spectator.hand, None);
    prop_assert!(spectator.legal_actions.is_empty());
    let over = g.is_over();
    for st in &spectator.seat_states {
        prop_assert!(
            !leaks_secret_of(st.last_spoke),
            "spectator sees {:?} of seat {}",
            st.last_spoke,
            st.seat
        );
    }
    if !over {
        for t in &spectator.tricks {
            for (s, p) in &t.cards {
                prop_assert!(
                    !matches!(p, PlayedCard::FaceDown(Some(_))),
                    "spectator sees seat {}'s face-down card mid-deal",
                    s
                );
            }
        }
    }
    for i in 0..g.seats() {
        let me = Seat(i);
        let view = g.view(Viewer::Seat(me));
        if !over {
            prop_assert_eq!(
                view.hand,
                Some(hands.0[me.index()]),
                "seat {} sees a hand that is not its own",
                me
            );
        }
        if g.to_act() != Some(me) {
            prop_assert!(
                view.legal_actions.is_empty(),
                "seat {} has legal actions out of turn",
                me
            );
        }
        for st in &view.seat_states {
            if st.seat != me {
                prop_assert!(
                    !leaks_secret_of(st.last_spoke),
                    "seat {} sees {:?} of seat {}",
                    me,
                    st.last_spoke,
                    st.seat
                );
            }
        }
        if !over {
            for t in &view.tricks {
                for (s, p) in &t.cards {
                    prop_assert!(
                        *s == me || !matches!(p, PlayedCard::FaceDown(Some(_))),
                        "seat {} sees seat {}'s face-down card",
                        me,
                        s
                    );
                }
            }
        }
        prop_assert_eq!(
            public_part(&view, over),
            public_part(&spectator, over),
            "seat {}'s view shows more than its own secrets",
            me
        );
    }
    Ok(())
}

fn conserved(g: &Game) -> Result<(), TestCaseError> {
    let sum: i64 = g.balances().iter().sum();
    prop_assert_eq!(
        sum + g.on_table(),
        0,
        "balances {:?} + on_table {}",
        g.balances(),
        g.on_table()
    );
    if g.is_over() {
        prop_assert_eq!(g.on_table(), 0);
    }
    Ok(())
}

/// Plays a whole match with the table's players; `each` runs before every action.
fn play(
    t: &Table,
    mut each: impl FnMut(&mut Game, Seat, &[Event]) -> Result<(), TestCaseError>,
) -> Result<Game, TestCaseError> {
    let (mut g, mut events) = Game::new(t.setup.clone()).expect("setup");
    let mut players = Players::new(t);
    let mut steps = 0;
    while let Some(seat) = g.to_act() {
        each(&mut g, seat, &events)?;
        let view = g.view(Viewer::Seat(seat));
        let a = players.choose(&view);
        events = g
            .apply(seat, a)
            .map_err(|e| TestCaseError::fail(format!("legal {a} refused: {e}")))?;
        steps += 1;
        prop_assert!(steps < 20_000, "match does not end");
    }
    prop_assert!(
        g.is_over(),
        "no seat to act but the match is not over: {:?}",
        g.phase()
    );
    Ok(g)
}

/// The general random loop: list the legal actions, draw one with `uniform_index`, apply it
/// (with its events) — what `Game::play_out_deal` must reproduce. Plays one deal.
fn general_deal(g: &mut Game, rng: &mut impl RngCore) -> Result<(), TestCaseError> {
    let deal = g.deal_index();
    while let Some(seat) = g.to_act() {
        if g.deal_index() != deal {
            break;
        }
        let legal = g.legal_actions(seat);
        let a = legal[uniform_index(rng, legal.len())];
        g.apply(seat, a)
            .map_err(|e| TestCaseError::fail(format!("legal {a} refused: {e}")))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The playout fast path (`play_out_deal`, Bête's own loop over card masks, the general
    /// loop for the other families) draws exactly the actions the general loop draws from the
    /// same random numbers, deal by deal: the same log, views, balances, pools and summaries.
    /// A `playout()` copy and a `new_playout` match (no record, no events) reach the same
    /// state too.
    #[test]
    fn play_out_deal_matches_the_general_loop(t in table_strategy()) {
        let mut fast = Game::new(t.setup.clone()).expect("setup").0;
        let mut general = fast.clone();
        let mut lean = Game::new_playout(t.setup.clone()).expect("setup");
        prop_assert!(!lean.is_recorded() && lean.log().is_empty());
        let mut rng_fast = ChaCha8Rng::seed_from_u64(t.play_seed);
        let mut rng_general = rng_fast.clone();
        let mut rng_lean = rng_fast.clone();
        let mut deals = 0;
        while !fast.is_over() {
            // Halfway through the match, continue the lean game from a copy of the live one.
            if deals == 2 {
                lean = fast.playout();
                rng_lean = rng_fast.clone();
                prop_assert!(lean.log().is_empty() && lean.summaries().is_empty());
            }
            prop_assert!(fast.play_out_deal(&mut rng_fast));
            general_deal(&mut general, &mut rng_general)?;
            prop_assert!(lean.play_out_deal(&mut rng_lean));
            prop_assert_eq!(snapshot(&fast), snapshot(&general), "after deal {}", deals);
            prop_assert_eq!(lean.balances(), fast.balances());
            prop_assert_eq!(lean.pools(), fast.pools());
            prop_assert_eq!(lean.to_act(), fast.to_act());
            deals += 1;
        }
        prop_assert!(general.is_over() && lean.is_over());
        prop_assert!(!fast.play_out_deal(&mut rng_fast), "nothing to play once the match is over");
        prop_assert!(lean.log().is_empty() && lean.summaries().is_empty());
        // The fast path's log replays like any record.
        let r = replay_json(&Record::from_game(&fast).to_json())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(r.balances(), fast.balances());
    }

    /// `play_random_deck` deals exactly what its documentation says: the pack shuffled by
    /// Fisher–Yates (for `i` from `n - 1` down to 1, swap `deck[i]` with
    /// `deck[uniform_index(i + 1)]`), given to `play_deck`. Deal by deal, a match fed that way and a match fed by hand reach the same
    /// state (log with its decks, views, balances, summaries); a match that deals its own
    /// decks, or is over, has no deck to take.
    #[test]
    fn play_random_deck_is_the_documented_shuffle(t in table_strategy()) {
        let mut setup = t.setup.clone();
        setup.decks = Decks::Explicit(Vec::new());
        let mut random = Game::new(setup).expect("setup").0;
        let mut by_hand = random.clone();
        let mut rng_random = ChaCha8Rng::seed_from_u64(t.play_seed);
        let mut rng_by_hand = rng_random.clone();
        let mut deals = 0;
        while !random.is_over() {
            let deal = random.deal_index() as usize;
            prop_assert!(random.play_random_deck(&mut rng_random).is_ok());
            let mut deck = by_hand.pack().to_vec();
            for i in (1..deck.len()).rev() {
                deck.swap(i, uniform_index(&mut rng_by_hand, i + 1));
            }
            prop_assert!(by_hand.play_deck(&deck).is_ok());
            prop_assert_eq!(&random.log()[deal].deck, &deck);
            if random.to_act().is_some() {
                prop_assert!(random.play_random_deck(&mut rng_random).is_err(), "one deck a deal");
            }
            // A deal may also settle as it is dealt, the next then waiting for its deck.
            let played = random.play_out_deal(&mut rng_random);
            prop_assert_eq!(played, by_hand.play_out_deal(&mut rng_by_hand));
            prop_assert_eq!(snapshot(&random), snapshot(&by_hand), "after deal {}", deals);
            deals += 1;
        }
        prop_assert!(random.play_random_deck(&mut rng_random).is_err(), "the match is over");
        let mut seeded = Game::new(t.setup.clone()).expect("setup").0;
        prop_assert!(seeded.play_random_deck(&mut rng_random).is_err(), "seeded decks");
    }

    /// `play` (no events) leaves the game exactly as `apply` does: a match re-driven through
    /// `play` with the actions of one driven through `apply` ends in the same state.
    #[test]
    fn play_matches_apply(t in table_strategy()) {
        let g = play(&t, |_, _, _| Ok(()))?;
        let mut quiet = Game::new(t.setup.clone()).expect("setup").0;
        for d in g.log() {
            for a in &d.actions {
                quiet.play(a.seat, a.action).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
        }
        prop_assert_eq!(snapshot(&quiet), snapshot(&g));
    }

    /// `apply` succeeds exactly for the listed legal actions; a refused action (by the seat to
    /// act, or any legal action by another seat) changes nothing.
    #[test]
    fn apply_succeeds_exactly_for_legal_actions(t in table_strategy()) {
        let mut rng = ChaCha8Rng::seed_from_u64(t.play_seed ^ 0x5eed);
        play(&t, |g, seat, _| {
            let legal = g.legal_actions(seat);
            prop_assert!(!legal.is_empty(), "seat {} to act with no legal action", seat);
            let before = snapshot(g);
            let mut tried_illegal = 0;
            for a in candidates(g, seat, &legal, &mut rng) {
                if legal.contains(&a) {
                    let mut c = g.clone();
                    prop_assert!(c.apply(seat, a).is_ok(), "legal {} refused", a);
                } else {
                    prop_assert!(g.apply(seat, a).is_err(), "{} is not legal but was applied", a);
                    tried_illegal += 1;
                    // A full comparison after a few refusals per step (the rest only assert Err).
                    if tried_illegal % 40 == 1 {
                        prop_assert_eq!(&snapshot(g), &before, "refused {} changed the game", a);
                    }
                }
            }
            for other in (0..g.seats()).map(Seat).filter(|&s| s != seat) {
                prop_assert!(g.legal_actions(other).is_empty());
                prop_assert!(g.apply(other, legal[0]).is_err(), "seat {} played out of turn", other);
            }
            prop_assert!(g.apply(Seat(g.seats()), legal[0]).is_err());
            prop_assert_eq!(&snapshot(g), &before);
            Ok(())
        })?;
    }

    /// Chips are conserved after every action, and no view shows a card hidden from it.
    #[test]
    fn chips_conserved_and_views_hide_cards(t in table_strategy()) {
        let mut hands = Hands(vec![CardSet::EMPTY; t.setup.seats as usize]);
        let g = play(&t, |g, _, events| {
            hands.track(events);
            conserved(g)?;
            check_views(g, &hands)
        })?;
        conserved(&g)?;
        check_views(&g, &hands)?;
        // Once the match is over every deal has a summary and nothing waits.
        prop_assert_eq!(g.summaries().len(), g.log().len());
    }

    /// Replaying a match's record gives the same state; the same seed gives the same match.
    #[test]
    fn replay_and_determinism(t in table_strategy(), cut in any::<u16>()) {
        let g = play(&t, |_, _, _| Ok(()))?;
        let text = Record::from_game(&g).to_json();
        let r = replay_json(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(snapshot(&r), snapshot(&g));
        prop_assert!(r.is_over());

        // The pretty form and a record with every deck replay the same.
        let mut rec = Record::from_game(&g);
        rec.include_decks();
        let r2 = replay_json(&rec.to_json_pretty()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(snapshot(&r2), snapshot(&g));

        // Explicit decks instead of the seed: the same match.
        let mut explicit = t.clone();
        explicit.setup.decks = Decks::Explicit(g.log().iter().map(|d| d.deck.clone()).collect());
        let e = play(&explicit, |_, _, _| Ok(()))?;
        prop_assert_eq!(e.log(), g.log());
        prop_assert_eq!(e.balances(), g.balances());
        let er = replay_json(&Record::from_game(&e).to_json()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(er.balances(), g.balances());

        // A record cut in the middle replays to the state the live match had at that point.
        let total: usize = g.log().iter().map(|d| d.actions.len()).sum();
        let stop = cut as usize % (total + 1);
        let mut live = Game::new(t.setup.clone()).expect("setup").0;
        let mut n = 0;
        'deals: for d in g.log() {
            for a in &d.actions {
                if n == stop {
                    break 'deals;
                }
                live.apply(a.seat, a.action).map_err(|e| TestCaseError::fail(e.to_string()))?;
                n += 1;
            }
        }
        let cut_record = Record::from_game(&live).to_json();
        let cr = replay_json(&cut_record).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(snapshot(&cr), snapshot(&live));

        // Same seed, same players: the same match, action for action.
        let again = play(&t, |_, _, _| Ok(()))?;
        prop_assert_eq!(again.log(), g.log());
        prop_assert_eq!(again.balances(), g.balances());
        prop_assert_eq!(again.summaries(), g.summaries());
    }
}

/// The seeded decks are those of RULES.md 11.5 for every deal of a seeded match.
#[test]
fn seeded_match_uses_the_documented_shuffle() {
    let seed: Seed = "0".repeat(64).parse().expect("seed");
    let config = Config::defaults(RulesetId::Bete, 5);
    let setup = Setup {
        ruleset: RulesetId::Bete,
        config: config.clone(),
        seats: 5,
        first_dealer: Seat(0),
        decks: Decks::Seed(seed),
    };
    let (mut g, _) = Game::new(setup).expect("setup");
    let mut bots = bete_rules::bots::Bots::new(&[Policy::Random], 5, &seed);
    bots.play(&mut g, None).expect("legal play");
    let p = pack(RulesetId::Bete, &config, 5);
    for (k, d) in g.log().iter().enumerate() {
        assert_eq!(d.deck, bete_rules::deck_order(&seed, k as u64, &p));
    }
    let first: Vec<String> = g.log()[0].deck.iter().map(Card::to_string).collect();
    assert_eq!(
        first.join(" "),
        "TD 8C JC AS KS 8S 9C AD 8D KC 7H KD 7C TH AH TC QC QS 8H 7D QD QH JD 9H 7S 9D AC KH JS TS 9S JH"
    );
    // Bot streams differ per seat.
    let mut a = bot_rng(&seed, Seat(0));
    let mut b = bot_rng(&seed, Seat(1));
    assert_ne!(a.next_u64(), b.next_u64());
}

/// Every ruleset at every seat count it allows, once each (the random cases above pick tables at
/// random; this sweep makes sure none is missed): conservation, views and replay.
#[test]
fn every_ruleset_and_seat_count_once() {
    for ruleset in RulesetId::ALL {
        let (lo, hi) = ruleset.seat_range();
        let two = if ruleset.is_bete_family() {
            Some(2)
        } else {
            None
        };
        for seats in two.into_iter().chain(lo..=hi) {
            let mut pairs = vec![("rounds".to_string(), "1".to_string())];
            if seats == 2 {
                pairs.push(("two_players".into(), "true".into()));
            }
            let t = Table {
                setup: Setup {
                    ruleset,
                    config: Config::from_pairs(ruleset, seats, &pairs).expect("config"),
                    seats,
                    first_dealer: Seat(seats - 1),
                    decks: Decks::Seed(Seed([seats; 32])),
                },
                heuristic: (0..seats).map(|i| i % 2 == 0).collect(),
                play_seed: u64::from(seats),
            };
            let mut hands = Hands(vec![CardSet::EMPTY; seats as usize]);
            let g = play(&t, |g, _, events| {
                hands.track(events);
                conserved(g)?;
                check_views(g, &hands)
            })
            .unwrap_or_else(|e| panic!("{ruleset}/{seats}: {e}"));
            let r = replay_json(&Record::from_game(&g).to_json())
                .unwrap_or_else(|e| panic!("{ruleset}/{seats}: {e}"));
            assert_eq!(snapshot(&r), snapshot(&g), "{ruleset}/{seats}");
        }
    }
}

/// `play_random_deck` gives every card every deck position equally often: the counts of
/// (card, position) over 32,000 random 5-seat Bête decks pass a chi-square test. Every deck
/// fixes the card and the position totals, so it has (32 - 1)² = 961 degrees of freedom: mean
/// about 992, standard deviation about 44; the bound of 1,300 is seven deviations above. A
/// classic off-by-one (Sattolo's cycle, `uniform_index(i)`) never leaves a card in place and
/// scores about 34,000.
#[test]
fn random_decks_are_uniform() {
    let setup = |first| Setup {
        ruleset: RulesetId::Bete,
        config: bete_rules::Config::defaults(RulesetId::Bete, 5),
        seats: 5,
        first_dealer: Seat(first),
        decks: Decks::Explicit(Vec::new()),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut game = Game::new(setup(0)).expect("setup").0;
    let pack = game.pack().to_vec();
    let n = pack.len();
    let mut counts = vec![0u32; n * n];
    let decks = 32_000;
    for _ in 0..decks {
        if game.is_over() {
            game = Game::new(setup(0)).expect("setup").0;
        }
        game.play_random_deck(&mut rng)
            .expect("a deal waits for its deck");
        let deck = &game.log().last().expect("a deal").deck;
        for (position, card) in deck.iter().enumerate() {
            let c = pack
                .iter()
                .position(|p| p == card)
                .expect("a card of the pack");
            counts[c * n + position] += 1;
        }
        assert!(game.play_out_deal(&mut rng));
    }
    let expected = f64::from(decks) / n as f64;
    let chi2: f64 = counts
        .iter()
        .map(|&o| (f64::from(o) - expected).powi(2) / expected)
        .sum();
    println!("chi-square over {} cells: {chi2:.0}", n * n);
    assert!(chi2 < 1_300.0, "chi-square {chi2:.0} over {} cells", n * n);
}

proptest! {
    // More cases than the other properties: a wrong resumption shows only when the trick
    // stopped in has a particular shape (e.g. a trump winning it and a void follower to come).
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A playout may start anywhere in a deal (a Monte-Carlo bot's position: mid-bidding, or
    /// mid-trick after some followers): from there `play_out_deal` still draws exactly the
    /// actions of the general loop, and a copy made there ends the deal as the live match does.
    /// (Only Bête and Ace-high have a loop of their own; the other families run the general one.)
    #[test]
    fn play_out_deal_from_mid_deal_matches_the_general_loop(
        t in table_strategy().prop_filter("Bête's own loop", |t| t.setup.ruleset.is_bete_family()),
        stops in proptest::collection::vec(0usize..40, 1..4),
    ) {
        mid_deal_playouts(&t.setup, t.play_seed, &stops)?;
    }
}

/// Plays a match of `setup` deal by deal: the first `stops[d]` actions of deal `d` the general
/// way, then `play_out_deal` from there, against the general loop from the same draws (and a
/// `playout()` copy made there).
fn mid_deal_playouts(setup: &Setup, play_seed: u64, stops: &[usize]) -> Result<(), TestCaseError> {
    let mut fast = Game::new(setup.clone()).expect("setup").0;
    let mut general = fast.clone();
    let mut rng_fast = ChaCha8Rng::seed_from_u64(play_seed);
    let mut rng_general = rng_fast.clone();
    for (deals, &stop) in stops.iter().enumerate() {
        if fast.is_over() {
            break;
        }
        // The first `stop` actions of the deal the general way, on both.
        let deal = fast.deal_index();
        for _ in 0..stop {
            let Some(seat) = fast.to_act() else { break };
            if fast.deal_index() != deal {
                break;
            }
            let legal = fast.legal_actions(seat);
            let k = uniform_index(&mut rng_fast, legal.len());
            prop_assert_eq!(uniform_index(&mut rng_general, legal.len()), k);
            fast.apply(seat, legal[k]).expect("a legal action");
            general.apply(seat, legal[k]).expect("a legal action");
        }
        if fast.deal_index() != deal || fast.to_act().is_none() {
            continue;
        }
        let mut copy = fast.playout();
        let mut rng_copy = rng_fast.clone();
        prop_assert!(fast.play_out_deal(&mut rng_fast));
        prop_assert!(copy.play_out_deal(&mut rng_copy));
        general_deal(&mut general, &mut rng_general)?;
        prop_assert_eq!(snapshot(&fast), snapshot(&general), "after deal {}", deals);
        prop_assert_eq!(copy.balances(), fast.balances());
        prop_assert_eq!(copy.pools(), fast.pools());
        prop_assert_eq!(copy.to_act(), fast.to_act());
        // The draws stay in step too.
        prop_assert_eq!(rng_fast.next_u32(), rng_general.next_u32());
    }
    Ok(())
}

/// Every Bête and Ace-high table shape the fast playout must follow, not left to chance: seat
/// counts (two_players included), contre, heading, the win rule, strict and lenient legality,
/// the number of Curieuses and the deal pattern, each combination over a few deals cut at
/// different points (mid-bidding, mid-trick) and played out against the general loop.
#[test]
fn play_out_deal_matches_the_general_loop_in_every_bete_shape() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut shapes = 0;
    for ruleset in [RulesetId::Bete, RulesetId::BeteAceHigh] {
        for seats in [2u8, 3, 5, 7] {
            for bits in 0..64u32 {
                let mut pairs: Vec<(String, String)> = vec![
                    ("rounds".into(), "1".into()),
                    ("max_extra_deals".into(), "1".into()),
                ];
                let mut set = |k: &str, v: &str| pairs.push((k.into(), v.into()));
                if seats == 2 {
                    set("two_players", "true");
                }
                if bits & 1 != 0 {
                    set("contre", "disabled");
                }
                if bits & 2 != 0 {
                    set("must_head_in_suit", "false");
                }
                if bits & 4 != 0 {
                    set("win_rule", "plurality");
                }
                if bits & 8 != 0 {
                    set("enforce_legality", "lenient");
                }
                match bits >> 4 {
                    0 => set("max_curieuse", "0"),
                    1 => set("deal_pattern", "2+1+2"),
                    2 => set("max_curieuse", "3"),
                    _ => {}
                }
                let config = Config::from_pairs(ruleset, seats, &pairs).expect("valid config");
                let setup = Setup {
                    ruleset,
                    config,
                    seats,
                    first_dealer: Seat((next() % u64::from(seats)) as u8),
                    decks: Decks::Seed(Seed([shapes as u8; 32])),
                };
                let stops: Vec<usize> = (0..3).map(|_| (next() % 40) as usize).collect();
                if let Err(e) = mid_deal_playouts(&setup, next(), &stops) {
                    panic!("{ruleset}/{seats} {pairs:?}, stops {stops:?}: {e}");
                }
                shapes += 1;
            }
        }
    }
    assert_eq!(shapes, 2 * 4 * 64);
}

/// A generator that always draws 1: `uniform_index` then always gives 0 (1 is the smallest draw
/// it never rejects, for any n), so every random choice takes the first legal action: Pass in
/// every bidding round (the all-pass of B18 after the Curieuse), the lowest legal card.
struct FirstChoice;

impl RngCore for FirstChoice {
    fn next_u32(&mut self) -> u32 {
        1
    }
    fn next_u64(&mut self) -> u64 {
        1
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(1);
    }
}

/// A playout whose bidding settles the deal (everyone passes, also after the Curieuse) plays no
/// trick, exactly as the general loop: deal by deal over a whole match of every Bête-family
/// table shape, with events and without.
#[test]
fn play_out_deal_when_everyone_passes() {
    for ruleset in [RulesetId::Bete, RulesetId::BeteAceHigh] {
        for seats in 3..=7 {
            let config = Config::defaults(ruleset, seats);
            let setup = Setup {
                ruleset,
                config,
                seats,
                first_dealer: Seat(0),
                decks: Decks::Seed(Seed([7; 32])),
            };
            let mut fast = Game::new(setup.clone()).expect("setup").0;
            let mut general = fast.clone();
            let mut lean = Game::new_playout(setup).expect("setup");
            let mut deals = 0;
            // Bounded, so that a playout that never ends the match fails instead of hanging.
            while !fast.is_over() && deals < 100 {
                assert!(fast.play_out_deal(&mut FirstChoice));
                assert!(lean.play_out_deal(&mut FirstChoice));
                general_deal(&mut general, &mut FirstChoice).expect("legal actions");
                assert_eq!(
                    snapshot(&fast),
                    snapshot(&general),
                    "{ruleset} {seats}, deal {deals}"
                );
                assert_eq!(lean.balances(), fast.balances());
                let summary = fast.summaries().pop().expect("a settled deal");
                assert!(
                    summary.declarer.is_none(),
                    "every deal is all-pass: {summary:?}"
                );
                deals += 1;
            }
            assert!(
                fast.is_over() && general.is_over(),
                "{ruleset} {seats}: {deals} deals"
            );
        }
    }
}

/// `View::trick_holder` in every ruleset and seat count: set exactly while the current trick
/// has cards, the same for every viewer (it is public), one of the seats that played to the
/// trick, moved only by the card just played, and the seat the trick goes to: the `TrickWon`
/// winner is the holder before the last card or the last card's seat.
#[test]
fn the_trick_holder_is_who_the_trick_goes_to_so_far() {
    for ruleset in RulesetId::ALL {
        let (lo, hi) = ruleset.seat_range();
        for seats in lo..=hi {
            let pairs = vec![("rounds".to_string(), "1".to_string())];
            let t = Table {
                setup: Setup {
                    ruleset,
                    config: Config::from_pairs(ruleset, seats, &pairs).expect("config"),
                    seats,
                    first_dealer: Seat(0),
                    decks: Decks::Seed(Seed([seats + 40; 32])),
                },
                heuristic: (0..seats).map(|i| i % 2 == 1).collect(),
                play_seed: u64::from(seats) + 7,
            };
            let mut before: Option<Seat> = None;
            let mut last_actor: Option<Seat> = None;
            let mut checked = 0;
            play(&t, |g, seat, events| {
                let v = g.view(Viewer::Spectator);
                for e in events {
                    if let PublicEvent::TrickWon { winner, .. } = e.public {
                        prop_assert!(
                            Some(winner) == last_actor || Some(winner) == before,
                            "trick won by {winner:?}: held by {before:?}, last card {last_actor:?}"
                        );
                        checked += 1;
                    }
                }
                let current = v
                    .tricks
                    .last()
                    .filter(|t| t.winner.is_none() && !t.cards.is_empty());
                match (current, v.trick_holder) {
                    (Some(tr), Some(h)) => {
                        prop_assert!(tr.cards.iter().any(|(s, _)| *s == h), "{h:?} played");
                        if let Some(b) = before.filter(|_| tr.cards.len() > 1) {
                            prop_assert!(Some(h) == last_actor || h == b, "moved by the last card");
                        }
                    }
                    (None, None) => {}
                    (c, h) => prop_assert!(false, "holder {h:?} for current trick {c:?}"),
                }
                let seat_view = g.view(Viewer::Seat(seat));
                prop_assert_eq!(seat_view.trick_holder, v.trick_holder, "public");
                before = v.trick_holder;
                last_actor = Some(seat);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{ruleset}/{seats}: {e}"));
            assert!(checked > 0, "{ruleset}/{seats}: no trick was won");
        }
    }
}
