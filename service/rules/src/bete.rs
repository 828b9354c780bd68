//! Placeholder: being written (see family.rs for the contract).

use crate::action::Action;
use crate::card::Card;
use crate::config::Config;
use crate::event::{Amounts, Event};
use crate::family::{Ctx, Family};
use crate::game::{ActionError, DealSummary};
use crate::ruleset::RulesetId;
use crate::seat::Seat;
use crate::view::{Phase, Pools, View, Viewer};

#[derive(Clone, Debug)]
pub struct BeteTable {}

impl Family for BeteTable {
    fn new(_ruleset: RulesetId, _config: &Config, _seats: u8) -> Self {
        todo!()
    }
    fn take_antes(&mut self, _ctx: &mut Ctx) -> Amounts {
        todo!()
    }
    fn deal(&mut self, _ctx: &mut Ctx, _deck: &[Card], _paid: Amounts, _out: &mut Vec<Event>) {
        todo!()
    }
    fn to_act(&self) -> Option<Seat> {
        todo!()
    }
    fn phase(&self) -> Phase {
        todo!()
    }
    fn legal_actions_into(&self, _seat: Seat, _out: &mut Vec<Action>) {
        todo!()
    }
    fn apply(&mut self, _ctx: &mut Ctx, _seat: Seat, _action: Action, _out: &mut Vec<Event>) -> Result<(), ActionError> {
        todo!()
    }
    fn deal_settled(&self) -> bool {
        todo!()
    }
    fn match_over(&self) -> bool {
        todo!()
    }
    fn pools(&self) -> Pools {
        todo!()
    }
    fn fill_view(&self, _viewer: Viewer, _view: &mut View) {
        todo!()
    }
    fn summary(&self) -> Option<DealSummary> {
        todo!()
    }
}
