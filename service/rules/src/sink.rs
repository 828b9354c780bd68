//! Where a family's events go.
//!
//! A server needs every event (`Vec<Event>`, through `Game::apply_into`); a simulation or a
//! Monte-Carlo bot needs none (`Discard`, through `Game::play`). The families are generic over
//! the sink, so one implementation of the rules serves both, and with `Discard` the compiler
//! drops the events' construction altogether.

use crate::event::Event;

pub(crate) trait Sink {
    /// Adds the event `make` builds; a sink that keeps nothing never calls it, so nothing of
    /// the event is built.
    fn emit(&mut self, make: impl FnOnce() -> Event);
}

impl Sink for Vec<Event> {
    #[inline(always)]
    fn emit(&mut self, make: impl FnOnce() -> Event) {
        self.push(make());
    }
}

/// Throws every event away (a playout).
pub(crate) struct Discard;

impl Sink for Discard {
    #[inline(always)]
    fn emit(&mut self, _make: impl FnOnce() -> Event) {}
}
