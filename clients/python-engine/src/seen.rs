//! What a seat saw of its own moves in the deal (`bete_rules::Seen`), from the `bete.v1.Event`s
//! it received: its dealt hand, the cards it set aside and drew, the dealer's discard. A view no
//! longer shows them once its hand has changed; with them, a sample never gives another seat a
//! card the seat set aside or discarded.

use bete_api::convert::card_from_pb;
use bete_api::pb;
use bete_rules::{CardSet, Seat, Seen, View};
use prost::Message as _;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors;

/// The seat's memory of the view's deal from its events, in the order received (events of other
/// deals, and other seats' events, which carry no private cards, are passed over).
pub fn from_events(view: &View, me: Seat, events: &Bound<'_, PyAny>) -> PyResult<Seen> {
    let mut seen = Seen {
        deal: Some(view.deal),
        ..Seen::default()
    };
    let mut in_deal = false;
    for (i, obj) in events.try_iter()?.enumerate() {
        let event = decode(&obj?, i)?;
        let bad = |e: bete_api::convert::FieldError| errors::bad_view(format!("events[{i}].{e}"));
        let cards = |codes: &[String], field: &str| {
            codes
                .iter()
                .map(|c| card_from_pb(c, field))
                .collect::<Result<CardSet, _>>()
                .map_err(bad)
        };
        match event.body {
            Some(pb::event::Body::DealStarted(d)) => {
                in_deal = d.deal == view.deal;
                if in_deal {
                    seen = Seen {
                        deal: Some(view.deal),
                        dealt: (!d.hand.is_empty())
                            .then(|| cards(&d.hand, "deal_started.hand"))
                            .transpose()?,
                        ..Seen::default()
                    };
                }
            }
            Some(pb::event::Body::Exchanged(x))
                if in_deal && x.seat == u32::from(me.0) && !x.set_aside.is_empty() =>
            {
                let pair = (
                    cards(&x.set_aside, "exchanged.set_aside")?,
                    cards(&x.drawn, "exchanged.drawn")?,
                );
                if let Some(slot) = seen.exchanges.iter_mut().find(|e| e.is_none()) {
                    *slot = Some(pair);
                }
            }
            Some(pb::event::Body::TookTurnUp(t))
                if in_deal && t.seat == u32::from(me.0) && !t.discarded.is_empty() =>
            {
                seen.discarded =
                    Some(card_from_pb(&t.discarded, "took_turn_up.discarded").map_err(bad)?);
            }
            _ => {}
        }
    }
    Ok(seen)
}

/// A `bete.v1.Event`: the message (anything with `SerializeToString()`) or its bytes.
fn decode(obj: &Bound<'_, PyAny>, i: usize) -> PyResult<pb::Event> {
    let bytes = match obj.downcast::<PyBytes>() {
        Ok(b) => b.as_bytes().to_vec(),
        Err(_) if obj.hasattr("SerializeToString")? => obj
            .call_method0("SerializeToString")?
            .downcast::<PyBytes>()?
            .as_bytes()
            .to_vec(),
        Err(_) => {
            return Err(errors::bad_view(format!(
                "events[{i}]: expected a bete.v1.Event or its serialized bytes, got {}",
                obj.get_type().name()?
            )));
        }
    };
    pb::Event::decode(bytes.as_slice())
        .map_err(|e| errors::bad_view(format!("events[{i}]: not a bete.v1.Event: {e}")))
}
