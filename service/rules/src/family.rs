//! The seam between the match (game.rs) and the three families of rules.
//!
//! The match owns what every ruleset shares: dealer rotation, the ledger, the record, deck
//! sourcing. A family owns one deal at a time plus everything it carries between deals (pools,
//! queues, streaks) and settles its own deals. Variants inside a family differ only by the
//! ruleset id and the config (scalachess style: override what differs, share the rest).
//!
//! - `bete::BeteTable`: `bete`, `bete-ace-high` (section 1–2)
//! - `beast::BeastTable`: `beast` (section 3)
//! - `exchange::ExchangeTable`: `beste-boer`, `lanterlui`, `bester-bube` (sections 4–6)

use crate::action::Action;
use crate::card::Card;
use crate::config::Config;
use crate::event::Amounts;
use crate::game::ActionError;
use crate::game::LoggedAction;
use crate::playout::uniform_index;
use crate::ruleset::RulesetId;
use crate::seat::Seat;
use crate::sink::{Discard, Sink};
use crate::view::{Phase, Pools, View, Viewer};
use rand_chacha::rand_core::RngCore;

/// What a family may read and change of the match while it runs a deal.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub ruleset: RulesetId,
    pub config: &'a Config,
    pub seats: u8,
    /// Index of the current deal, from 0.
    pub deal: u32,
    pub dealer: Seat,
    /// Net jetons per seat. Every payment between a seat and the table goes through here, so
    /// balances + `Family::pools().on_table()` is zero after every step (the conservation test).
    pub balances: &'a mut Amounts,
}

impl Ctx<'_> {
    /// R of 0.4 item 17: `rounds` × seats.
    pub fn regular_deals(&self) -> u32 {
        // Saturating: any `rounds` a config allows must not overflow (a huge value only means "never").
        self.config.rounds.saturating_mul(self.seats as u32)
    }

    /// Whether the settlement of the current deal is the match's last one (0.4 item 17),
    /// given the ruleset's end test evaluated on the state after this settlement.
    pub fn is_last_settlement(&self, end_test_holds: bool) -> bool {
        let n = self.deal + 1; // deals counted from 1
        let r = self.regular_deals();
        n >= r.saturating_add(self.config.max_extra_deals) || (n >= r && end_test_holds)
    }
}

/// One family of rules. Implementations must leave their state unchanged when `apply` fails.
pub(crate) trait Family: std::fmt::Debug + Clone {
    /// Nothing on the table yet; the first deal's antes come from `take_antes`.
    fn new(ruleset: RulesetId, config: &Config, seats: u8) -> Self;

    /// The start of a deal before the cards (0.4 item 2): antes, the dealer's stake, re-antes,
    /// heap refills, a queued bête drawn into the pot. Returns what each seat paid.
    fn take_antes(&mut self, ctx: &mut Ctx) -> Amounts;

    /// Deal `deck` (already checked to be a permutation of the pack) and begin the deal. Emits
    /// `DealStarted` (each hand as a private part) and anything that follows without an action
    /// (a Lanterlui flush in a Muss settles the deal here).
    fn deal(&mut self, ctx: &mut Ctx, deck: &[Card], paid: Amounts, out: &mut impl Sink);

    /// The seat to act, if the deal is waiting for one.
    fn to_act(&self) -> Option<Seat>;

    fn phase(&self) -> Phase;

    /// Appends every legal action of `seat` (nothing if it is not to act). Any order.
    fn legal_actions_into(&self, seat: Seat, out: &mut Vec<Action>);

    /// Applies one action of the seat to act; on error the state is unchanged. When the deal
    /// ends, settles it (0.4 item 16), emits `DealSettled` (with the spectators' `Reveal`),
    /// and, if `Ctx::is_last_settlement`, returns every stake on the table and emits
    /// `MatchEnded` (0.4 item 17).
    fn apply(
        &mut self,
        ctx: &mut Ctx,
        seat: Seat,
        action: Action,
        out: &mut impl Sink,
    ) -> Result<(), ActionError>;

    /// The current deal is settled (the match then starts the next one, unless it is over).
    fn deal_settled(&self) -> bool;

    /// The last settlement happened and the stakes went back.
    fn match_over(&self) -> bool;

    /// Everything on the table now.
    fn pools(&self) -> Pools;

    /// Fills the ruleset-specific parts of `view` for `viewer` (hands only the viewer's own).
    fn fill_view(&self, viewer: Viewer, view: &mut View);

    /// Appends the summary of the deal just settled (called once per settlement).
    fn record_summary(&self, log: &mut crate::summary::SummaryLog);

    /// Plays the current deal to its settlement with uniformly random legal actions (one
    /// `uniform_index` draw over `legal_actions_into`'s order per action), without events,
    /// appending each action to `log` when the match keeps its record. A family may override
    /// this with a faster loop that draws the same actions (tests/properties.rs).
    fn play_out(
        &mut self,
        ctx: &mut Ctx,
        rng: &mut impl RngCore,
        mut log: Option<&mut Vec<LoggedAction>>,
    ) {
        let mut legal = Vec::with_capacity(64);
        while !self.deal_settled() {
            let Some(seat) = self.to_act() else { break };
            legal.clear();
            self.legal_actions_into(seat, &mut legal);
            if legal.is_empty() {
                break;
            }
            let action = legal[uniform_index(rng, legal.len())];
            // A legal action always applies (the property tests check that `apply` succeeds
            // exactly for `legal_actions`); should it ever not, stop rather than loop.
            if self.apply(ctx, seat, action, &mut Discard).is_err() {
                debug_assert!(false, "a legal action was refused");
                break;
            }
            if let Some(log) = log.as_deref_mut() {
                log.push(LoggedAction {
                    seat,
                    action,
                    auto: false,
                });
            }
        }
    }

    /// Lenient mode: whether `action` of `seat` would stand as a revoke (0.4 item 19). The safe
    /// action on a timeout avoids revokes whenever another legal action exists.
    fn is_revoke(&self, _seat: Seat, _action: Action) -> bool {
        false
    }

    /// Determinization (`crate::determinize`): takes what a seat's view shows of the state
    /// carried between deals (pools, queues, streaks; the Muss flag) into this state, which
    /// was built from a fresh match. Called after the antes and again after the replay. A
    /// family that does not implement it leaves its own values, and the sample's view then
    /// differs from the seat's, so determinization refuses it rather than guess.
    fn restore_carried(&mut self, _view: &View) {}

    /// The seat's hand now (what its view shows as `hand`).
    fn hand(&self, seat: Seat) -> crate::cardset::CardSet;

    /// Determinization: what a seat's cards imply is probed by giving it a hypothetical hand
    /// (and its real one back); returns the hand it replaces. A family without it gives no
    /// such hints, which only makes sampling slower.
    fn set_hand(&mut self, _seat: Seat, hand: crate::cardset::CardSet) -> crate::cardset::CardSet {
        hand
    }
}
