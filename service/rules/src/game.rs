//! The match: many deals, every pool carried between them, the ledger, and the API a server
//! drives: `legal_actions`, `apply`, `view`, outcomes.

use thiserror::Error;

use crate::card::Card;
use crate::config::{Config, ConfigError, PackRule};
use crate::ruleset::RulesetId;
use crate::seat::Seat;
use crate::shuffle::Seed;

/// Where each deal's deck order comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decks {
    /// Derived from the seed and the deal index (11.5).
    Seed(Seed),
    /// Given per deal; when they run out the match waits in `Phase::AwaitingDeck`.
    Explicit(Vec<Vec<Card>>),
}

/// Everything needed to start a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub ruleset: RulesetId,
    pub config: Config,
    pub seats: u8,
    pub first_dealer: Seat,
    pub decks: Decks,
}

/// Why a match cannot start or a deck is refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("first_dealer {0} is not a seat of this table")]
    FirstDealer(u8),
    #[error("deck of deal {deal} is not a permutation of the {pack_len}-card pack: {why}")]
    Deck {
        deal: u32,
        pack_len: usize,
        why: String,
    },
    #[error("no deck is awaited: {0}")]
    NoDeckAwaited(&'static str),
}

/// Why an action was refused. The state is unchanged whenever `apply` returns one.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ActionError {
    #[error("the match is over")]
    MatchOver,
    #[error("no deal is in progress (waiting for a deck)")]
    NoDeal,
    #[error("not your turn: seat {to_act} is to act")]
    NotYourTurn { to_act: Seat },
    #[error("seat {0} is not at this table")]
    NoSuchSeat(Seat),
    #[error("{action} is not an action of {ruleset}")]
    WrongRuleset {
        action: &'static str,
        ruleset: RulesetId,
    },
    #[error("{action} is not possible now ({phase})")]
    WrongPhase {
        action: &'static str,
        phase: &'static str,
    },
    #[error("{0} is not in your hand")]
    NotInHand(Card),
    #[error("must follow suit: {0}")]
    MustFollowSuit(String),
    #[error("must head the trick: {0}")]
    MustHead(String),
    #[error("must trump: {0}")]
    MustTrump(String),
    #[error("must overtrump: {0}")]
    MustOvertrump(String),
    #[error("must lead the bower: {0}")]
    MustLeadBower(String),
    #[error("must play the bower: {0}")]
    MustPlayBower(String),
    #[error("must lead a trump: {0}")]
    MustLeadTrump(String),
    #[error("must lead face down: holds no trump")]
    MustLeadHidden,
    #[error("a face-down lead is not allowed here: {0}")]
    HiddenNotAllowed(String),
    #[error("talon too short: {asked} cards asked, {left} left")]
    TalonTooShort { asked: u32, left: u32 },
    #[error("cannot drop: {0}")]
    CannotDrop(String),
    #[error("illegal: {0}")]
    Other(String),
}

/// A per-deal summary for replay output and the server (`bete replay` prints these).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DealSummary {
    pub deal: u32,
    pub dealer: u8,
    /// Bête: the declarer, if anyone declared.
    pub declarer: Option<u8>,
    /// Bête: the contrer.
    pub contrer: Option<u8>,
    /// Exchange family: the seats that stayed in (Beast: every seat).
    pub stayers: Vec<u8>,
    /// Tricks taken per seat.
    pub tricks: Vec<u8>,
    /// A short outcome word: "win", "vole", "null", "lose", "all_passed", "played",
    /// "lone_stayer", "carried", "flush", "dealer_takes_pot", "heaps".
    pub outcome: String,
    /// Which pool went to whom: e.g. {"pool": "king", "seat": 2, "amount": 5}.
    pub pools_won: Vec<PoolWon>,
    /// Bêtes made: {"seat": 1, "amount": 10}.
    pub betes: Vec<BeteMade>,
    /// Net change per seat by this deal's settlement.
    pub net: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PoolWon {
    pub pool: String,
    pub seat: u8,
    pub amount: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BeteMade {
    pub seat: u8,
    pub amount: i64,
}

use crate::card::{Rank, Suit};
use crate::event::{Amounts, Event};
use crate::family::{Ctx, Family};
use crate::ruleset::MAX_SEATS;
use crate::sink::{Discard, Sink};
use crate::summary::SummaryLog;
use crate::view::{Phase, SeatPublic, View, Viewer};
use crate::{Action, beast::BeastTable, bete::BeteTable, exchange::ExchangeTable, pool::PoolTable};
use rand_chacha::rand_core::RngCore;
use std::borrow::Cow;

/// The unshuffled pack of a ruleset for a seat count, in canonical order (11.5 step 1).
pub fn pack(ruleset: RulesetId, config: &Config, seats: u8) -> Vec<Card> {
    let lowest = match ruleset {
        RulesetId::Bete | RulesetId::BeteAceHigh => match seats {
            3 | 4 => Rank::Eight,
            6 | 7 => Rank::Six,
            _ => Rank::Seven, // 5 seats, and 2 with `two_players`
        },
        RulesetId::Beast => Rank::Two,
        RulesetId::BesteBoer | RulesetId::BesterBube => Rank::Seven,
        RulesetId::Lanterlui if config.short_pack && seats < 6 => Rank::Four,
        RulesetId::Lanterlui => Rank::Two,
        // MO2, A36, 19: by seat count and `pack_rule`.
        RulesetId::Mouche | RulesetId::Mistigri => match (config.pack_rule, seats) {
            (PackRule::Academie, 3) => Rank::Eight,
            (PackRule::Academie, 4) | (PackRule::Sequential, 4) => Rank::Six,
            (PackRule::Academie, 5) => Rank::Three,
            (PackRule::Academie, _) => Rank::Two,
            (PackRule::Sequential, 3) => Rank::Seven,
            (PackRule::Sequential, 5) => Rank::Five,
            (PackRule::Sequential, _) => Rank::Four,
        },
        RulesetId::Loo => Rank::Two,
        RulesetId::Rams => Rank::Seven,
    };
    Suit::ALL
        .iter()
        .flat_map(|&s| {
            Rank::ALL[lowest.index()..]
                .iter()
                .map(move |&r| Card::new(r, s))
        })
        .collect()
}

/// One action as the record keeps it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LoggedAction {
    pub seat: Seat,
    pub action: Action,
    /// Played by the server for a seat whose time ran out (11.3).
    pub auto: bool,
}

/// One deal as the record keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DealLog {
    pub dealer: Seat,
    /// Empty while the match waits for this deal's deck.
    pub deck: Vec<Card>,
    pub actions: Vec<LoggedAction>,
}

#[derive(Clone, Debug)]
enum Table {
    Bete(BeteTable),
    Beast(BeastTable),
    Exchange(ExchangeTable),
    Pool(PoolTable),
}

/// Calls the same `Family` method on whichever family the table is.
macro_rules! family {
    ($table:expr, $t:ident => $body:expr) => {
        match $table {
            Table::Bete($t) => $body,
            Table::Beast($t) => $body,
            Table::Exchange($t) => $body,
            Table::Pool($t) => $body,
        }
    };
}

/// A match of one ruleset: every deal from the first to the end-of-session rule.
#[derive(Clone, Debug)]
pub struct Game {
    setup: Setup,
    pack: Vec<Card>,
    balances: Amounts,
    deal: u32,
    dealer: Seat,
    table: Table,
    /// Antes of a deal whose deck has not arrived yet (explicit decks only).
    pending_antes: Option<Amounts>,
    log: Vec<DealLog>,
    summaries: SummaryLog,
    /// The pack as a set, to check explicit decks without rebuilding it.
    pack_set: crate::CardSet,
    /// `to_act()` and `is_over()`, refreshed after every step (they are asked several times
    /// per action, and each answer would otherwise dispatch to the family).
    to_act: Option<Seat>,
    over: bool,
    /// Whether the log and the summaries are kept. A playout copy (`Game::playout`) keeps
    /// neither: a search that plays thousands of deals from one position needs only the
    /// state, and copying or growing the record would dominate its cost.
    record: bool,
    /// The balances right after the last settlement, before the next deal's antes: what a
    /// search scores a deal by (`settled_balances`).
    settled: Amounts,
}

/// The order in which the server picks the safe action for a seat whose time ran out: the
/// first legal action by this key (documented in docs/rules-decisions.md). It never volunteers
/// to declare, contre, challenge or exchange.
fn safe_order(a: &Action) -> (u8, u64) {
    match a {
        Action::Pass => (0, 0),
        Action::Stand => (1, 0),
        Action::Decline => (2, 0),
        Action::Drop => (3, 0),
        Action::Discard(c) => (4, c.bit() as u64),
        Action::Card(c) => (5, c.bit() as u64),
        Action::Hidden(c) => (6, c.bit() as u64),
        Action::Play => (7, 0),
        Action::Contre => (8, 0),
        Action::Challenge => (9, 0),
        Action::Exchange(s) => (10, s.bits()),
        Action::Widow => (11, 0),
        Action::General => (12, 0),
    }
}

impl Game {
    /// Starts a match and deals its first deal (if the deck is at hand). Returns the events of
    /// the start (antes and `DealStarted`).
    pub fn new(setup: Setup) -> Result<(Game, Vec<Event>), SetupError> {
        let mut out = Vec::new();
        let game = Game::build(setup, true, &mut out)?;
        Ok((game, out))
    }

    /// Starts a match as a playout: no events, no record (see `play` and `playout`).
    pub fn new_playout(setup: Setup) -> Result<Game, SetupError> {
        Game::build(setup, false, &mut Discard)
    }

    fn build(setup: Setup, record: bool, out: &mut impl Sink) -> Result<Game, SetupError> {
        let (lo, hi) = setup.ruleset.seat_range();
        let two = setup.seats == 2 && setup.ruleset.is_bete_family() && setup.config.two_players;
        if !(two || (lo..=hi).contains(&setup.seats)) {
            return Err(SetupError::Config(ConfigError::Seats {
                ruleset: setup.ruleset,
                seats: setup.seats,
                allowed: if setup.ruleset.is_bete_family() {
                    format!("{lo}-{hi}, or 2 with two_players = true")
                } else {
                    format!("{lo}-{hi}")
                },
            }));
        }
        if setup.first_dealer.0 >= setup.seats {
            return Err(SetupError::FirstDealer(setup.first_dealer.0));
        }
        let pack = pack(setup.ruleset, &setup.config, setup.seats);
        if let Decks::Explicit(decks) = &setup.decks {
            let pack_set = pack.iter().copied().collect();
            for (i, d) in decks.iter().enumerate() {
                check_deck(&pack, pack_set, d, i as u32)?;
            }
        }
        let table = match setup.ruleset {
            RulesetId::Bete | RulesetId::BeteAceHigh => {
                Table::Bete(BeteTable::new(setup.ruleset, &setup.config, setup.seats))
            }
            RulesetId::Beast => {
                Table::Beast(BeastTable::new(setup.ruleset, &setup.config, setup.seats))
            }
            RulesetId::Mouche | RulesetId::Mistigri | RulesetId::Loo | RulesetId::Rams => {
                Table::Pool(PoolTable::new(setup.ruleset, &setup.config, setup.seats))
            }
            _ => Table::Exchange(ExchangeTable::new(
                setup.ruleset,
                &setup.config,
                setup.seats,
            )),
        };
        // Room for the regular deals (0.4 item 17), so a match rarely reallocates its records.
        let expected = if record {
            (setup.config.rounds.min(64) * setup.seats as u32) as usize + 1
        } else {
            0
        };
        let mut game = Game {
            dealer: setup.first_dealer,
            setup,
            pack: pack.clone(),
            balances: [0; MAX_SEATS],
            deal: 0,
            table,
            pending_antes: None,
            log: Vec::with_capacity(expected),
            summaries: SummaryLog::with_capacity(expected),
            pack_set: pack.iter().copied().collect(),
            to_act: None,
            over: false,
            record,
            settled: [0; MAX_SEATS],
        };
        game.start_deal(out);
        Ok(game)
    }

    fn ctx_parts(&mut self) -> (Ctx<'_>, &mut Table) {
        (
            Ctx {
                ruleset: self.setup.ruleset,
                config: &self.setup.config,
                seats: self.setup.seats,
                deal: self.deal,
                dealer: self.dealer,
                balances: &mut self.balances,
            },
            &mut self.table,
        )
    }

    /// Takes the antes of deal `self.deal` and deals it if its deck is at hand.
    fn start_deal(&mut self, out: &mut impl Sink) {
        let (mut ctx, table) = self.ctx_parts();
        let paid = family!(table, t => t.take_antes(&mut ctx));
        if self.record {
            self.log.push(DealLog {
                dealer: self.dealer,
                deck: Vec::new(),
                // Room for the longest deal, so that logging an action never reallocates: no
                // heap allocation per action.
                actions: Vec::with_capacity(self.max_actions()),
            });
        }
        let deck = match &self.setup.decks {
            Decks::Seed(seed) => Some(Cow::Owned(crate::shuffle::deck_order(
                seed,
                self.deal as u64,
                &self.pack,
            ))),
            Decks::Explicit(decks) => decks.get(self.deal as usize).cloned().map(Cow::Owned),
        };
        match deck {
            Some(deck) => self.deal_cards(deck, paid, out),
            None => {
                self.pending_antes = Some(paid);
                self.refresh();
            }
        }
    }

    fn deal_cards(&mut self, deck: Cow<'_, [Card]>, paid: Amounts, out: &mut impl Sink) {
        let (mut ctx, table) = self.ctx_parts();
        family!(table, t => t.deal(&mut ctx, &deck, paid, out));
        if self.record
            && let Some(last) = self.log.last_mut()
        {
            last.deck = deck.into_owned();
        }
        self.after_step(out);
    }

    /// After anything that may have settled a deal: collect its summary and start the next.
    #[inline]
    fn after_step(&mut self, out: &mut impl Sink) {
        // The common case (mid-deal): one dispatch; the match cannot be over mid-deal.
        let (settled, to_act) = family!(&self.table, t => (t.deal_settled(), t.to_act()));
        if !settled {
            self.over = false;
            self.to_act = if self.pending_antes.is_some() {
                None
            } else {
                to_act
            };
            return;
        }
        self.end_deal(out);
    }

    /// A deal was settled: record its summary and start the next deal, unless the match is over.
    #[cold]
    fn end_deal(&mut self, out: &mut impl Sink) {
        self.settled = self.balances;
        if self.record {
            family!(&self.table, t => t.record_summary(&mut self.summaries));
        }
        if family!(&self.table, t => t.match_over()) {
            self.refresh();
            return;
        }
        self.deal += 1;
        self.dealer = self.dealer.next(self.setup.seats);
        self.start_deal(out);
    }

    /// Recomputes the cached `to_act` and `is_over` after a step.
    fn refresh(&mut self) {
        self.over = family!(&self.table, t => t.match_over());
        self.to_act = if self.over || self.pending_antes.is_some() {
            None
        } else {
            family!(&self.table, t => t.to_act())
        };
    }

    /// The most actions a deal of this match can take. Bête: at most one bid a seat in each
    /// bidding round (the first and one per Curieuse), then five cards a seat; Beast: the five
    /// cards. The exchange family keeps the general bound (7 seats, three Curieuses: 28 + 35).
    fn max_actions(&self) -> usize {
        let n = self.setup.seats as usize;
        match self.setup.ruleset {
            RulesetId::Bete | RulesetId::BeteAceHigh => {
                n * (6 + self.setup.config.max_curieuse as usize)
            }
            RulesetId::Beast => 5 * n,
            // Part II: one declaration a seat, the dealer's discard, five cards a seat.
            r if r.is_pool_family() => 6 * n + 1,
            _ => 64,
        }
    }

    /// Gives an explicit-deck match the deck of the deal it waits for.
    pub fn provide_deck(&mut self, deck: Vec<Card>) -> Result<Vec<Event>, SetupError> {
        let paid = self.antes_awaiting_deck()?;
        check_deck(&self.pack, self.pack_set, &deck, self.deal)?;
        self.pending_antes = None;
        let mut out = Vec::new();
        self.deal_cards(Cow::Owned(deck), paid, &mut out);
        Ok(out)
    }

    /// Like `provide_deck`, from a borrowed deck and into a reused event buffer: the only
    /// allocation is the log's copy of the deck (for simulators that shuffle decks themselves).
    pub fn provide_deck_from(
        &mut self,
        deck: &[Card],
        out: &mut Vec<Event>,
    ) -> Result<(), SetupError> {
        self.provide_deck_to(deck, out)
    }

    /// Like `provide_deck_from` without building events (see `play`).
    pub fn play_deck(&mut self, deck: &[Card]) -> Result<(), SetupError> {
        self.provide_deck_to(deck, &mut Discard)
    }

    fn provide_deck_to(&mut self, deck: &[Card], out: &mut impl Sink) -> Result<(), SetupError> {
        let paid = self.antes_awaiting_deck()?;
        check_deck(&self.pack, self.pack_set, deck, self.deal)?;
        self.pending_antes = None;
        self.deal_cards(Cow::Borrowed(deck), paid, out);
        Ok(())
    }

    /// Deals the waiting deal a uniformly random deck, without events, as `play_deck` would
    /// deal it: the pack in canonical order, then a Fisher–Yates shuffle drawing from `rng`:
    /// for `i` from `n - 1` down to 1, `deck[i]` swaps with `deck[playout::uniform_index(rng,
    /// i + 1)]`. This is for simulations, which bring their own (fast) generator; a match's
    /// reproducible decks are `Decks::Seed`'s versioned shuffle (RULES.md 11.5).
    pub fn play_random_deck(&mut self, rng: &mut impl RngCore) -> Result<(), SetupError> {
        let paid = self.antes_awaiting_deck()?;
        // The largest pack is Beast's and Lanterlui's 52 cards (`pack`).
        debug_assert!(self.pack.len() <= 52);
        let n = self.pack.len().min(52);
        let mut deck = [Card::new(Rank::Two, Suit::Spades); 64];
        deck[..n].copy_from_slice(&self.pack[..n]);
        for i in (1..n).rev() {
            let j = crate::playout::uniform_index(rng, i + 1);
            // j ≤ i < 64: the masks change nothing and spare two bounds checks a card.
            deck.swap(i & 63, j & 63);
        }
        self.pending_antes = None;
        self.deal_cards(Cow::Borrowed(&deck[..n]), paid, &mut Discard);
        Ok(())
    }

    /// The antes paid for a deal that waits for its deck, or why no deck is awaited.
    fn antes_awaiting_deck(&self) -> Result<Amounts, SetupError> {
        self.pending_antes
            .ok_or(SetupError::NoDeckAwaited(if self.is_over() {
                "the match is over"
            } else {
                "the current deal already has its deck"
            }))
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn ruleset(&self) -> RulesetId {
        self.setup.ruleset
    }

    pub fn seats(&self) -> u8 {
        self.setup.seats
    }

    /// The unshuffled pack of this match.
    pub fn pack(&self) -> &[Card] {
        &self.pack
    }

    /// Index of the current deal (from 0).
    pub fn deal_index(&self) -> u32 {
        self.deal
    }

    pub fn dealer(&self) -> Seat {
        self.dealer
    }

    pub fn is_over(&self) -> bool {
        self.over
    }

    pub fn phase(&self) -> Phase {
        if self.is_over() {
            Phase::MatchOver
        } else if self.pending_antes.is_some() {
            Phase::AwaitingDeck
        } else {
            family!(&self.table, t => t.phase())
        }
    }

    pub fn to_act(&self) -> Option<Seat> {
        self.to_act
    }

    /// Net jetons per seat (fiches at `fiche_value`).
    pub fn balances(&self) -> &[i64] {
        &self.balances[..self.setup.seats as usize]
    }

    /// Everything still on the table, in jetons.
    pub fn on_table(&self) -> i64 {
        family!(&self.table, t => t.pools()).on_table()
    }

    pub fn pools(&self) -> crate::view::Pools {
        family!(&self.table, t => t.pools())
    }

    /// The deals so far, as the record keeps them.
    pub fn log(&self) -> &[DealLog] {
        &self.log
    }

    /// Summaries of every settled deal (built on request from a compact record).
    pub fn summaries(&self) -> Vec<DealSummary> {
        self.summaries.expand()
    }

    /// The seat's hand now, as its view shows it, without building the view (the research
    /// encodings name an exchange by positions in the hand).
    pub fn hand(&self, seat: Seat) -> crate::CardSet {
        family!(&self.table, t => t.hand(seat))
    }

    /// Every legal action of `seat` now (empty if it is not to act).
    pub fn legal_actions(&self, seat: Seat) -> Vec<Action> {
        let mut v = Vec::new();
        self.legal_actions_into(seat, &mut v);
        v
    }

    /// Like `legal_actions`, into a reused buffer (cleared first): no allocation once warm.
    pub fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>) {
        out.clear();
        if self.to_act == Some(seat) {
            family!(&self.table, t => t.legal_actions_into(seat, out));
        }
    }

    /// Applies `action` for `seat`. On error the game is unchanged.
    pub fn apply(&mut self, seat: Seat, action: Action) -> Result<Vec<Event>, ActionError> {
        let mut out = Vec::new();
        self.apply_into(seat, action, &mut out)?;
        Ok(out)
    }

    /// Like `apply`, appending events to a reused buffer.
    pub fn apply_into(
        &mut self,
        seat: Seat,
        action: Action,
        out: &mut Vec<Event>,
    ) -> Result<(), ActionError> {
        self.apply_logged(seat, action, false, out)
    }

    /// Applies `action` for `seat` without building events: for simulations and Monte-Carlo
    /// search, where nobody reads them. The same rules run as in `apply_into` (the families
    /// are generic over where events go); only the events are not made. On error the game is
    /// unchanged.
    #[inline]
    pub fn play(&mut self, seat: Seat, action: Action) -> Result<(), ActionError> {
        self.apply_logged(seat, action, false, &mut Discard)
    }

    /// Plays the current deal to its settlement with uniformly random legal actions drawn
    /// from `rng`, without events, then starts the next deal as `apply` would. Each action is
    /// the one a loop of `legal_actions` + `playout::uniform_index` + `apply` would pick from
    /// the same `rng` (tests/properties.rs), and is logged if the match keeps its record. Returns
    /// false (and does nothing) when no deal is waiting for an action: the match is over or
    /// waits for a deck. This is the engine's fast path for simulations and Monte-Carlo bots.
    pub fn play_out_deal(&mut self, rng: &mut impl RngCore) -> bool {
        if self.to_act.is_none() {
            return false;
        }
        let mut ctx = Ctx {
            ruleset: self.setup.ruleset,
            config: &self.setup.config,
            seats: self.setup.seats,
            deal: self.deal,
            dealer: self.dealer,
            balances: &mut self.balances,
        };
        let log = if self.record {
            self.log.last_mut().map(|d| &mut d.actions)
        } else {
            None
        };
        family!(&mut self.table, t => t.play_out(&mut ctx, rng, log));
        self.after_step(&mut Discard);
        true
    }

    /// A copy of this match for search: the same state and rules, without the record (`log()`
    /// and `summaries()` of the copy start and stay empty), so it is cheap to make and to play
    /// on with `play`.
    pub fn playout(&self) -> Game {
        Game {
            setup: self.setup.clone(),
            pack: self.pack.clone(),
            balances: self.balances,
            deal: self.deal,
            dealer: self.dealer,
            table: self.table.clone(),
            pending_antes: self.pending_antes,
            log: Vec::new(),
            summaries: SummaryLog::default(),
            pack_set: self.pack_set,
            to_act: self.to_act,
            over: self.over,
            record: false,
            settled: self.settled,
        }
    }

    /// Determinization: makes this fresh playout match (waiting for its first deck) stand at
    /// the view's deal with the view's balances and carried pools (see `Family::restore_carried`).
    /// Determinization: whether `action` would be legal for `seat` now if its hand were
    /// `hand` (its real hand is put back).
    pub(crate) fn legal_with_hand(
        &mut self,
        seat: Seat,
        hand: crate::CardSet,
        action: Action,
        buf: &mut Vec<Action>,
    ) -> bool {
        let real = family!(&mut self.table, t => t.set_hand(seat, hand));
        buf.clear();
        family!(&self.table, t => t.legal_actions_into(seat, buf));
        family!(&mut self.table, t => t.set_hand(seat, real));
        buf.contains(&action)
    }

    pub(crate) fn restore_carried(&mut self, view: &View) {
        self.deal = view.deal;
        for st in &view.seat_states {
            if let Some(b) = self.balances.get_mut(st.seat.index()) {
                *b = st.balance;
            }
        }
        family!(&mut self.table, t => t.restore_carried(view));
    }

    /// Each seat's balance right after the last settled deal, before the next deal's antes
    /// (zeros before the first settlement). A search scores a playout by it.
    pub fn settled_balances(&self) -> &[i64] {
        &self.settled[..self.setup.seats as usize]
    }

    /// Whether this match keeps its record (false for a `playout` copy).
    pub fn is_recorded(&self) -> bool {
        self.record
    }

    fn apply_logged(
        &mut self,
        seat: Seat,
        action: Action,
        auto: bool,
        out: &mut impl Sink,
    ) -> Result<(), ActionError> {
        // `to_act` is None when the match is over or waits for a deck, so this one test admits
        // exactly the actions the checks below would; they only pick the refusal.
        if self.to_act != Some(seat) {
            return Err(if self.over {
                ActionError::MatchOver
            } else if seat.0 >= self.setup.seats {
                ActionError::NoSuchSeat(seat)
            } else {
                match self.to_act {
                    Some(s) => ActionError::NotYourTurn { to_act: s },
                    None => ActionError::NoDeal,
                }
            });
        }
        let (mut ctx, table) = self.ctx_parts();
        family!(table, t => t.apply(&mut ctx, seat, action, out))?;
        if self.record
            && let Some(last) = self.log.last_mut()
        {
            last.actions.push(LoggedAction { seat, action, auto });
        }
        self.after_step(out);
        Ok(())
    }

    /// The action the server plays for a seat whose time ran out: the first legal action in
    /// the fixed order of `safe_order`.
    pub fn safe_action(&self, seat: Seat) -> Option<Action> {
        let legal = self.legal_actions(seat);
        // In lenient mode a legal card may be a revoke: never pick one when a clean action exists.
        let clean = legal
            .iter()
            .copied()
            .filter(|a| !family!(&self.table, t => t.is_revoke(seat, *a)))
            .min_by_key(safe_order);
        clean.or_else(|| legal.into_iter().min_by_key(safe_order))
    }

    /// Plays the safe action for the seat to act and records it as `auto`.
    pub fn apply_timeout(&mut self, seat: Seat) -> Result<(Action, Vec<Event>), ActionError> {
        let Some(action) = self.safe_action(seat) else {
            return Err(match self.to_act() {
                Some(s) => ActionError::NotYourTurn { to_act: s },
                None if self.is_over() => ActionError::MatchOver,
                None => ActionError::NoDeal,
            });
        };
        let mut out = Vec::new();
        self.apply_logged(seat, action, true, &mut out)?;
        Ok((action, out))
    }

    /// Replays an action from a record, keeping its `auto` flag.
    pub fn apply_recorded(
        &mut self,
        seat: Seat,
        action: Action,
        auto: bool,
    ) -> Result<Vec<Event>, ActionError> {
        let mut out = Vec::new();
        self.apply_logged(seat, action, auto, &mut out)?;
        Ok(out)
    }

    /// What `viewer` may know of the table now.
    pub fn view(&self, viewer: Viewer) -> View {
        let n = self.setup.seats;
        let mut view = View {
            viewer,
            ruleset: self.setup.ruleset,
            seats: n,
            deal: self.deal,
            dealer: self.dealer,
            phase: self.phase(),
            to_act: self.to_act(),
            hand: None,
            turn_up: None,
            set_aside_turn_ups: Vec::new(),
            trump: None,
            talon_len: 0,
            muss: false,
            turn_up_taken: false,
            seat_states: (0..n)
                .map(|i| SeatPublic {
                    seat: Seat(i),
                    balance: self.balances[i as usize],
                    ..SeatPublic::default()
                })
                .collect(),
            tricks: Vec::new(),
            pools: self.pools(),
            legal_actions: Vec::new(),
            match_over: self.is_over(),
            trick_holder: None,
        };
        if self.pending_antes.is_none() {
            family!(&self.table, t => t.fill_view(viewer, &mut view));
        }
        if let Viewer::Seat(s) = viewer {
            self.legal_actions_into(s, &mut view.legal_actions);
        }
        view
    }
}

fn check_deck(
    pack: &[Card],
    want: crate::CardSet,
    deck: &[Card],
    deal: u32,
) -> Result<(), SetupError> {
    let err = |why: String| SetupError::Deck {
        deal,
        pack_len: pack.len(),
        why,
    };
    if deck.len() != pack.len() {
        return Err(err(format!("it has {} cards", deck.len())));
    }
    // The common case in one pass without branches: as many cards as the pack and together
    // every card of it means each card exactly once. Only a bad deck takes the slow path,
    // which names the first wrong card.
    let all = deck.iter().fold(0u64, |m, c| m | 1u64 << c.bit());
    if all == want.bits() {
        return Ok(());
    }
    let mut seen = crate::CardSet::EMPTY;
    for &c in deck {
        if !want.contains(c) {
            return Err(err(format!("{c} is not in the pack")));
        }
        if seen.contains(c) {
            return Err(err(format!("{c} appears twice")));
        }
        seen.insert(c);
    }
    Ok(())
}
