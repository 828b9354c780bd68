//! The [`Bot`] trait: what a bot author writes. A bot sees the protobuf [`pb::SeatView`] the
//! server sent (its hand, the public state, its legal actions) and returns one of
//! `view.legal_actions`. The runner does everything else.

use bete_api::pb;
use rand::SeedableRng as _;
use rand::seq::IndexedRandom as _;

/// A player for one seat at one table. The runner makes one bot per table it sits at.
pub trait Bot: Send {
    /// Called when it is this seat's turn; `view.legal_actions` is non-empty. Return one of them
    /// (unchanged). Returning anything else costs a round trip: the server refuses it and the
    /// runner plays the first legal action instead.
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action;

    /// A deal began; `deal.hand` holds this seat's dealt cards.
    fn on_deal_start(&mut self, _deal: &pb::DealStarted) {}

    /// A deal was settled: tricks, money moved, balances.
    fn on_deal_end(&mut self, _settled: &pb::DealSettled) {}

    /// The match is over: the final balances.
    fn on_match_end(&mut self, _ended: &pb::MatchEnded) {}
}

impl<B: Bot + ?Sized> Bot for Box<B> {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        (**self).decide(view)
    }
    fn on_deal_start(&mut self, deal: &pb::DealStarted) {
        (**self).on_deal_start(deal)
    }
    fn on_deal_end(&mut self, settled: &pb::DealSettled) {
        (**self).on_deal_end(settled)
    }
    fn on_match_end(&mut self, ended: &pb::MatchEnded) {
        (**self).on_match_end(ended)
    }
}

/// Picks uniformly at random among the legal actions (the `random` house policy).
#[derive(Debug)]
pub struct RandomBot {
    rng: rand::rngs::StdRng,
}

impl RandomBot {
    /// A bot seeded from the OS.
    pub fn new() -> Self {
        RandomBot {
            rng: rand::rngs::StdRng::from_os_rng(),
        }
    }

    /// A reproducible bot.
    pub fn seeded(seed: u64) -> Self {
        RandomBot {
            rng: rand::rngs::StdRng::seed_from_u64(seed),
        }
    }
}

impl Default for RandomBot {
    fn default() -> Self {
        Self::new()
    }
}

impl Bot for RandomBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        view.legal_actions
            .choose(&mut self.rng)
            .cloned()
            .unwrap_or_default()
    }
}

/// Always plays the first legal action: deterministic, for tests and reproducible tables.
#[derive(Debug, Default)]
pub struct FirstLegalBot;

impl Bot for FirstLegalBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        view.legal_actions.first().cloned().unwrap_or_default()
    }
}

/// The built-in strategies, by the names the command line uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// Uniformly random among the legal actions.
    Random,
    /// The house heuristic: bids, exchanges and plays by card strength.
    Heuristic,
    /// Always the first legal action.
    First,
    /// The engine's `search` policy (determinized Monte Carlo, 800 heuristic playouts a
    /// decision),
    /// assuming the ruleset's default config (a seat's view does not carry the table's).
    Search,
}

impl Strategy {
    /// A fresh bot playing this strategy.
    pub fn bot(self) -> Box<dyn Bot> {
        match self {
            Strategy::Random => Box::new(crate::house::HouseBot::random()),
            Strategy::Heuristic => Box::new(crate::house::HouseBot::heuristic()),
            Strategy::First => Box::new(FirstLegalBot),
            Strategy::Search => Box::new(crate::house::HouseBot::new(
                bete_rules::bots::Policy::Search(bete_rules::bots::DEFAULT_PLAYOUTS),
            )),
        }
    }

    /// The matching server-side house-bot policy (for seating house bots at created tables).
    pub fn house_policy(self) -> pb::HouseBotPolicy {
        match self {
            Strategy::Random | Strategy::First => pb::HouseBotPolicy::Random,
            Strategy::Heuristic => pb::HouseBotPolicy::Heuristic,
            Strategy::Search => pb::HouseBotPolicy::Search,
        }
    }
}
