//! What one viewer may know: a seat's own view or a spectator's public view (0.4 item 18).

use crate::action::Action;
use crate::card::{Card, Suit};
use crate::cardset::CardSet;
use crate::ruleset::RulesetId;
use crate::seat::Seat;

/// Who is looking.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    Seat(Seat),
    Spectator,
}

/// Everything on the table that is not a seat's balance. Fields a ruleset does not use are 0
/// or empty. All amounts in jetons except `fiches`, which counts fiches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pools {
    /// Bête: the deal pot beside the dish. Exchange family: the pot.
    pub pot: i64,
    /// Bête: fiches in the dish (each worth `fiche_value`).
    pub fiches: i64,
    /// Bête: N, deals since the deal pot was last won, counting the current one (1.8).
    pub deals_since_won: u32,
    /// Bête: the King (Ace-high: Ace) pool.
    pub king_pool: i64,
    /// Bête: the bête staked on this deal (B31); Bester Bube `successive_fifo`: none.
    pub staked_bete: Option<i64>,
    /// Bête, Bester Bube `successive_fifo`: waiting bêtes, oldest first.
    pub bete_queue: Vec<i64>,
    /// Beast: the King, Play and Triolet heaps.
    pub heaps: [i64; 3],
    /// Beste Boer / Lanterlui: the bête streak k - 1 of 0.4 item 10.
    pub bete_streak: u32,
    /// Bête: the jetons one fiche is worth (the `fiche_value` key); 0 where there is no dish.
    pub fiche_value: i64,
}

impl Pools {
    /// Everything on the table in jetons, fiches at their own `fiche_value`: with the seats'
    /// balances it sums to zero (11.4).
    pub fn on_table(&self) -> i64 {
        self.pot
            + self.fiches * self.fiche_value
            + self.king_pool
            + self.staked_bete.unwrap_or(0)
            + self.bete_queue.iter().sum::<i64>()
            + self.heaps.iter().sum::<i64>()
    }
}

/// Where the match stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Explicit-deck match waiting for the next deal's deck ([`crate::Game::provide_deck`]).
    AwaitingDeck,
    /// Bête: play / pass / contre.
    Bidding,
    /// Exchange family: round 1 or 2 of drop / stand / exchange.
    Exchange { round: u8 },
    /// The dealer's `discard`.
    DealerDiscard,
    /// Lanterlui: dropped seats answer `challenge` or `decline`.
    Challenge,
    /// Trick `trick` (0-based) is being played.
    Trick { trick: u8 },
    /// The match is over.
    MatchOver,
}

/// A seat's public state in the current deal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeatPublic {
    pub seat: Seat,
    /// Net jetons.
    pub balance: i64,
    /// Cards in hand now.
    pub hand_len: u8,
    pub tricks: u8,
    /// Bête: declared (`play`).
    pub declarer: bool,
    /// Bête: said `contre`.
    pub contrer: bool,
    /// Exchange family: dropped out of this deal.
    pub dropped: bool,
    /// Exchange family: cards exchanged per round (round 1, round 2).
    pub exchanged: [u8; 2],
    /// The seat's last spoken action this deal (bid, drop, stand, exchange, challenge).
    pub last_spoke: Option<Action>,
}

/// One card in a trick as the viewer may see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PlayedCard {
    FaceUp(Card),
    /// Led face down; `Some` only for the seat that led it (and after settlement).
    FaceDown(Option<Card>),
}

/// A trick, complete or in progress.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrickView {
    pub leader: Seat,
    pub cards: Vec<(Seat, PlayedCard)>,
    pub winner: Option<Seat>,
}

/// A viewer's whole view of the table. Built only from what the viewer may know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub viewer: Viewer,
    pub ruleset: RulesetId,
    pub seats: u8,
    /// Index of the current deal (0-based).
    pub deal: u32,
    pub dealer: Seat,
    pub phase: Phase,
    pub to_act: Option<Seat>,
    /// The viewer's own hand (seats only).
    pub hand: Option<CardSet>,
    pub turn_up: Option<Card>,
    /// Bête: turn-ups put aside by a Curieuse, oldest first.
    pub set_aside_turn_ups: Vec<Card>,
    pub trump: Option<Suit>,
    /// Cards left in the talon.
    pub talon_len: u8,
    /// Exchange family: this deal is a Muss.
    pub muss: bool,
    /// Exchange family: the dealer has taken up the turn-up.
    pub turn_up_taken: bool,
    pub seat_states: Vec<SeatPublic>,
    /// Tricks of this deal, the current one last.
    pub tricks: Vec<TrickView>,
    pub pools: Pools,
    /// The viewer's legal actions, when the viewer is the seat to act; otherwise empty.
    pub legal_actions: Vec<Action>,
    pub match_over: bool,
    /// Trick play: the seat whose card holds the current trick so far (public: a face-down
    /// card's power is the same for every card); `None` before its first card.
    pub trick_holder: Option<Seat>,
}
