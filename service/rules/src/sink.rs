//! Where a family's events go.
//!
//! A server needs every event (`Vec<Event>`, through `Game::apply_into`); a simulation or a
//! Monte-Carlo bot needs none (`Discard`, through `Game::play`). The families are generic over
//! the sink, so one implementation of the rules serves both, and with `Discard` the compiler
//! drops the events' construction altogether.

use crate::event::Event;

pub(crate) trait Sink {
    /// Whether events are kept. Code that does extra work only to build an event (boxing a
    /// payload, copying the deck for the reveal) checks `keep()` first.
    const KEEP: bool;

    /// Adds the event `make` builds; a sink that keeps nothing never calls it, so nothing of
    /// the event is built.
    fn emit(&mut self, make: impl FnOnce() -> Event);

    #[inline(always)]
    fn keep(&self) -> bool {
        Self::KEEP
    }
}

impl Sink for Vec<Event> {
    const KEEP: bool = true;

    #[inline(always)]
    fn emit(&mut self, make: impl FnOnce() -> Event) {
        self.push(make());
    }
}

/// Throws every event away (a playout).
pub(crate) struct Discard;

impl Sink for Discard {
    const KEEP: bool = false;

    #[inline(always)]
    fn emit(&mut self, _make: impl FnOnce() -> Event) {}
}
