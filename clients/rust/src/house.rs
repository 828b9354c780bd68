//! The server's house policies as client-side bots.

use bete_api::pb;

use crate::bot::Bot;

/// A house policy run in the client. Until the rules crate's policies are wired in, the
/// heuristic plays the first legal action.
#[derive(Debug)]
pub struct HouseBot {
    _private: (),
}

impl HouseBot {
    /// The heuristic house policy.
    pub fn heuristic() -> Self {
        HouseBot { _private: () }
    }
}

impl Bot for HouseBot {
    fn decide(&mut self, view: &pb::SeatView) -> pb::Action {
        view.legal_actions.first().cloned().unwrap_or_default()
    }
}
