//! The one place where engine types become protobuf messages, always from one recipient's view,
//! and where protobuf input becomes engine types with an error naming the bad field.
//!
//! - [`cards`]: cards, suits, rulesets, seats and actions, both ways.
//! - [`view`]: `bete_rules::View` → [`pb::SeatView`](crate::pb::SeatView); [`view_back`] the
//!   other way, for bots that decide on a view they received.
//! - [`event`]: `bete_rules::Event` → [`pb::Event`](crate::pb::Event) for one recipient.
//! - [`config`]: the `map<string, string>` table config ↔ a JSON object.

pub mod cards;
pub mod config;
pub mod event;
pub mod view;
pub mod view_back;
pub mod view_wire;

use std::time::SystemTime;

use thiserror::Error;

pub use cards::{
    action_from_pb, action_to_pb, card_from_pb, card_to_pb, cards_to_pb, ruleset_from_pb,
    ruleset_to_pb, seat_from_pb, suit_from_pb, suit_to_pb,
};
pub use config::{config_from_pb, config_to_pb};
pub use event::{EventStamp, project, project_public, sees_only_public, table_event};
pub use view::{awaiting_players_view, view_to_pb};
pub use view_back::view_from_pb;
pub use view_wire::{encode_seat_view, encode_watch_bot_decision};

/// A request field that cannot become an engine value. `field` is the path of the bad field as a
/// `google.rpc.BadRequest.FieldViolation.field` (e.g. `action.cards[1]`), `description` says
/// what is wrong with it (e.g. `not a card "ZZ"`).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field}: {description}")]
pub struct FieldError {
    pub field: String,
    pub description: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            description: description.into(),
        }
    }
}

/// A message field that must be present (proto3 message fields are always optional on the wire).
pub fn require<'a, T>(value: Option<&'a T>, field: &str) -> Result<&'a T, FieldError> {
    value.ok_or_else(|| FieldError::new(field, "is required"))
}

/// A protobuf timestamp for a wall-clock time.
pub fn timestamp(time: SystemTime) -> prost_types::Timestamp {
    prost_types::Timestamp::from(time)
}
