//! Every outbound message of the server is built here, from one recipient's view.
//!
//! Engine events and views go through `bete_api::convert` (which goes through
//! `bete_rules::Event::project` / `Game::view`), so a seat sees only its own cards and a
//! spectator only public facts plus the `Reveal` of settled deals.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bete_api::convert;
use bete_api::pb;
use bete_rules::{Seat, Viewer};
use prost::Message;
use prost::bytes::Bytes;

use crate::{Body, HousePolicy, SeatInfo, Snapshot, TableEvent, TableMeta, TableStatus};
use bete_store::{Occupant, TableState, Visibility};

fn system_time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

pub fn timestamp(ms: i64) -> prost_types::Timestamp {
    convert::timestamp(system_time(ms))
}

/// A stored house policy as the API shows it: the policy and a search's budget (ms).
pub fn policy_to_pb(policy: &str) -> (pb::HouseBotPolicy, u32) {
    match HousePolicy::parse(policy) {
        Some(HousePolicy::Random) => (pb::HouseBotPolicy::Random, 0),
        Some(HousePolicy::Heuristic) => (pb::HouseBotPolicy::Heuristic, 0),
        Some(HousePolicy::Search { budget_ms }) => (pb::HouseBotPolicy::Search, budget_ms),
        None => (pb::HouseBotPolicy::Unspecified, 0),
    }
}

pub fn state_to_pb(state: TableState) -> pb::TableState {
    match state {
        TableState::Waiting => pb::TableState::Waiting,
        TableState::Playing => pb::TableState::Playing,
        TableState::Finished => pb::TableState::Finished,
    }
}

fn visibility_to_pb(v: Visibility) -> pb::Visibility {
    match v {
        Visibility::Listed => pb::Visibility::Listed,
        Visibility::Private => pb::Visibility::Private,
    }
}

fn seat_to_pb(seat: u8, s: &SeatInfo) -> pb::TableSeat {
    let (occupant, bot_id, (policy, search_budget_ms)) = match &s.occupant {
        Occupant::Empty => (
            pb::OccupantKind::Empty,
            String::new(),
            (pb::HouseBotPolicy::Unspecified, 0),
        ),
        Occupant::Bot(b) => (
            pb::OccupantKind::Bot,
            b.clone(),
            (pb::HouseBotPolicy::Unspecified, 0),
        ),
        Occupant::House(p) => (pb::OccupantKind::HouseBot, String::new(), policy_to_pb(p)),
    };
    pb::TableSeat {
        seat: u32::from(seat),
        occupant: occupant.into(),
        bot_id,
        bot_name: s.name.clone(),
        policy: policy.into(),
        strikes: s.strikes,
        search_budget_ms,
    }
}

/// A table's public description.
pub fn table_to_pb(t: &TableStatus) -> pb::Table {
    let m = &t.meta;
    pb::Table {
        table_id: m.id.clone(),
        ruleset: convert::ruleset_to_pb(m.ruleset).into(),
        seat_count: u32::from(m.seats),
        config: m.config_pairs().into_iter().collect(),
        state: state_to_pb(t.state).into(),
        seats: t
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| seat_to_pb(i as u8, s))
            .collect(),
        decision_deadline_ms: u32::try_from(m.deadline_ms).unwrap_or(u32::MAX),
        visibility: visibility_to_pb(t.visibility).into(),
        last_seq: t.last_seq,
        created_by: m.created_by.clone(),
        created_at: Some(timestamp(m.created_at_ms)),
        first_dealer: u32::from(m.first_dealer),
        ladder_id: m
            .ladder
            .as_ref()
            .map(|l| l.ladder_id.clone())
            .unwrap_or_default(),
        ladder_match_id: m
            .ladder
            .as_ref()
            .map(|l| l.match_id.clone())
            .unwrap_or_default(),
        seed_sha256: m.seed.commitment(),
        seed_chosen: m.seed_chosen,
        fiche_value: if m.ruleset.is_bete_family() {
            m.config.fiche_value
        } else {
            0
        },
    }
}

/// A viewer's snapshot as a `SeatView`.
pub fn snapshot_to_pb(meta: &TableMeta, snap: &Snapshot) -> pb::SeatView {
    match &snap.view {
        Some(view) => {
            convert::view_to_pb(&meta.id, snap.seq, view, snap.deadline_ms.map(system_time))
        }
        None => convert::awaiting_players_view(
            &meta.id,
            snap.seq,
            meta.ruleset,
            meta.seats,
            Seat(meta.first_dealer),
            snap.viewer,
        ),
    }
}

/// WatchBot's request to act, as the bytes of its `WatchBotResponse` (what [`snapshot_to_pb`]
/// inside a `DecisionRequest` would encode to, written without building the message), or `None`
/// for a snapshot without a game (then the message is built as usual).
pub fn decision_bytes(meta: &TableMeta, snap: &Snapshot) -> Option<Vec<u8>> {
    let view = snap.view.as_ref()?;
    let mut buf = Vec::with_capacity(512);
    convert::encode_watch_bot_decision(
        &mut buf,
        &meta.id,
        snap.seq,
        view,
        snap.deadline_ms.map(system_time),
    );
    Some(buf)
}

/// One table event as `viewer` may see it.
pub fn event_to_pb(meta: &TableMeta, e: &TableEvent, viewer: Viewer) -> pb::Event {
    stamped(meta, e, |ev, stamp| convert::project(ev, viewer, stamp))
}

/// Whether `viewer` receives `e` exactly as [`public_event_bytes`] encodes it: it sees no
/// private part and no reveal of it. Table events are the same for every recipient.
pub fn sees_only_public(e: &TableEvent, viewer: Viewer) -> bool {
    match &e.body {
        Body::Game(ev) => convert::sees_only_public(ev, viewer),
        _ => true,
    }
}

/// `e` as every viewer for whom [`sees_only_public`] holds receives it, encoded once so those
/// recipients share the bytes. Built from the public part alone.
pub fn public_event_bytes(meta: &TableMeta, e: &TableEvent) -> Bytes {
    let event = stamped(meta, e, convert::project_public);
    Bytes::from(event.encode_to_vec())
}

/// `e` with the table's stamp; `game` projects an engine event.
fn stamped(
    meta: &TableMeta,
    e: &TableEvent,
    game: impl FnOnce(&bete_rules::Event, &convert::EventStamp<'_>) -> pb::Event,
) -> pb::Event {
    let stamp = convert::EventStamp {
        table_id: &meta.id,
        seats: meta.seats,
        seq: e.seq,
        auto: e.auto,
        time: system_time(e.time_ms),
    };
    use pb::event::Body as B;
    let body = match &e.body {
        Body::Game(ev) => return game(ev, &stamp),
        Body::SeatTaken {
            seat,
            occupant,
            name,
        } => {
            let s = seat_to_pb(
                *seat,
                &SeatInfo {
                    occupant: occupant.clone(),
                    name: name.clone(),
                    strikes: 0,
                },
            );
            B::SeatTaken(pb::SeatTaken {
                seat: s.seat,
                occupant: s.occupant,
                bot_id: s.bot_id,
                bot_name: s.bot_name,
                policy: s.policy,
            })
        }
        Body::SeatLeft { seat, bot } => B::SeatLeft(pb::SeatLeft {
            seat: u32::from(*seat),
            bot_id: bot.clone(),
        }),
        Body::MatchStarted => B::MatchStarted(pb::MatchStarted {
            ruleset: convert::ruleset_to_pb(meta.ruleset).into(),
            seats: u32::from(meta.seats),
            config: meta.config_pairs().into_iter().collect(),
            first_dealer: u32::from(meta.first_dealer),
        }),
        Body::StrikeCounted { seat, strikes } => B::StrikeCounted(pb::StrikeCounted {
            seat: u32::from(*seat),
            strikes: *strikes,
        }),
    };
    convert::table_event(&stamp, body)
}
