//! The table work the gRPC calls share (and forwarding reaches): checking a new table, a
//! finished table's record, a table's status, submitting an action.

use super::{Api, MAX_REQUEST_ID_CHARS, config_error, may_read, seats_not_allowed, table_id};
use crate::auth::{self};
use crate::config::{
    MAX_DEADLINE_MS, MAX_EXTRA_DEALS, MAX_ROUNDS, MAX_SEARCH_BUDGET_MS, MIN_DEADLINE_MS,
    MIN_SEARCH_BUDGET_MS,
};
use crate::now_ms;
use crate::store::{BotRow, Occupant, SeatRow, TableRow, TableState, Visibility};
use bete_api::convert::{self, FieldError};
use bete_api::pb;
use bete_base::status::{FieldViolation, ServerError};
use bete_rules::{Config, Seed};
use bete_store::fresh_seed;
use bete_table::HousePolicy;
use bete_table::{Command, SeatInfo, TableMeta, TableStatus};
use std::collections::HashSet;
use std::sync::Arc;

impl Api {
    pub(crate) fn check_create(
        &self,
        bot: &BotRow,
        req: pb::CreateTableRequest,
    ) -> Result<(TableRow, Vec<SeatRow>), ServerError> {
        let mut bad = Vec::new();
        let ruleset = convert::ruleset_from_pb(req.ruleset, "ruleset")
            .map_err(|e| bad.push(e))
            .ok();
        // A missing count is malformed (INVALID_ARGUMENT); any other count the ruleset does not
        // allow is BAD_CONFIG, from the ruleset's own check below, however large it is.
        let too_many = req.seats as usize > bete_rules::MAX_SEATS;
        let seats = match u8::try_from(req.seats) {
            Ok(0) => {
                bad.push(FieldError::new("seats", "is required"));
                None
            }
            Ok(n) if !too_many => Some(n),
            _ => None,
        };
        let deadline_ms = match u64::from(req.decision_deadline_ms) {
            0 => self.config.default_deadline_ms,
            ms if (MIN_DEADLINE_MS..=MAX_DEADLINE_MS).contains(&ms) => ms,
            ms => {
                bad.push(FieldError::new(
                    "decision_deadline_ms",
                    format!("{ms} is outside {MIN_DEADLINE_MS}..={MAX_DEADLINE_MS}"),
                ));
                0
            }
        };
        let visibility = match pb::Visibility::try_from(req.visibility) {
            Ok(pb::Visibility::Unspecified | pb::Visibility::Listed) => Visibility::Listed,
            Ok(pb::Visibility::Private) => Visibility::Private,
            Err(_) => {
                bad.push(FieldError::new(
                    "visibility",
                    format!("unknown Visibility number {}", req.visibility),
                ));
                Visibility::Listed
            }
        };
        let seed_chosen = !req.seed.is_empty();
        let seed = if !seed_chosen {
            fresh_seed()?
        } else {
            match req.seed.parse::<Seed>() {
                Ok(s) => s,
                Err(e) => {
                    bad.push(FieldError::new("seed", e.to_string()));
                    Seed([0; 32])
                }
            }
        };
        let n = seats.unwrap_or(u8::MAX);
        if seats.is_some() && req.first_dealer >= u32::from(n) {
            bad.push(FieldError::new(
                "first_dealer",
                format!("{} is not a seat of a {n}-seat table", req.first_dealer),
            ));
        }
        let mut house = vec![None; usize::from(seats.unwrap_or(0))];
        // A search budget out of bounds has a reason of its own, reported after malformed fields.
        let mut budget_bad = None;
        let mut seen = HashSet::new();
        // More entries than any table has seats: one violation, not one per entry.
        let house_bots = if req.house_bots.len() > bete_rules::MAX_SEATS {
            bad.push(FieldError::new(
                "house_bots",
                format!(
                    "has {} entries; a table has at most {} seats",
                    req.house_bots.len(),
                    bete_rules::MAX_SEATS
                ),
            ));
            &req.house_bots[..0]
        } else {
            &req.house_bots[..]
        };
        for (i, h) in house_bots.iter().enumerate() {
            if seats.is_some() && h.seat >= u32::from(n) {
                bad.push(FieldError::new(
                    format!("house_bots[{i}].seat"),
                    format!("{} is not a seat of a {n}-seat table", h.seat),
                ));
                continue;
            }
            if !seen.insert(h.seat) {
                bad.push(FieldError::new(
                    format!("house_bots[{i}].seat"),
                    format!("seat {} is listed twice", h.seat),
                ));
                continue;
            }
            let field = format!("house_bots[{i}].search_budget_ms");
            let policy = match pb::HouseBotPolicy::try_from(h.policy) {
                Ok(p @ (pb::HouseBotPolicy::Random | pb::HouseBotPolicy::Heuristic)) => {
                    if h.search_budget_ms != 0 {
                        budget_bad.get_or_insert(ServerError::SearchBudget {
                            field,
                            message: format!(
                                "is {} but the {} policy does not search (leave it 0)",
                                h.search_budget_ms,
                                p.as_str_name()
                            ),
                        });
                    }
                    if p == pb::HouseBotPolicy::Random {
                        HousePolicy::Random
                    } else {
                        HousePolicy::Heuristic
                    }
                }
                Ok(pb::HouseBotPolicy::Search) => {
                    let ms = h.search_budget_ms;
                    if !(MIN_SEARCH_BUDGET_MS..=MAX_SEARCH_BUDGET_MS).contains(&ms) {
                        budget_bad.get_or_insert(ServerError::SearchBudget {
                            field,
                            message: format!(
                                "{ms} is outside {MIN_SEARCH_BUDGET_MS}..={MAX_SEARCH_BUDGET_MS} \
                                 milliseconds per decision"
                            ),
                        });
                    }
                    HousePolicy::Search { budget_ms: ms }
                }
                Ok(pb::HouseBotPolicy::Unspecified) => {
                    bad.push(FieldError::new(
                        format!("house_bots[{i}].policy"),
                        "is required",
                    ));
                    continue;
                }
                Err(_) => {
                    bad.push(FieldError::new(
                        format!("house_bots[{i}].policy"),
                        format!("unknown HouseBotPolicy number {}", h.policy),
                    ));
                    continue;
                }
            };
            if let Some(slot) = house.get_mut(h.seat as usize) {
                *slot = Some(policy);
            }
        }
        if !bad.is_empty() {
            return Err(ServerError::InvalidArgument(
                bad.into_iter()
                    .map(|e| FieldViolation {
                        field: e.field,
                        description: e.description,
                    })
                    .collect(),
            ));
        }
        if let Some(e) = budget_bad {
            return Err(e);
        }
        if let (Some(ruleset), true) = (ruleset, too_many) {
            return Err(seats_not_allowed(ruleset, req.seats));
        }
        let (Some(ruleset), Some(seats)) = (ruleset, seats) else {
            return Err(ServerError::Internal("unreachable: checked above".into()));
        };
        let config = Config::from_json(ruleset, seats, &convert::config_from_pb(&req.config))
            .map_err(|e| config_error(&e))?;
        // The engine plays any match length section 10 allows; a table on this server may ask
        // for at most MAX_ROUNDS rounds and MAX_EXTRA_DEALS extra deals, so every match ends
        // (`rounds = 4294967295` with house bots in every seat played for ever).
        for (key, value, max) in [
            ("rounds", config.rounds, MAX_ROUNDS),
            ("max_extra_deals", config.max_extra_deals, MAX_EXTRA_DEALS),
        ] {
            if value > max {
                return Err(ServerError::BadConfig {
                    field: format!("config.{key}"),
                    message: format!(
                        "{key} is {value}: a table on this server takes at most {max}"
                    ),
                });
            }
        }
        let config_json = serde_json::Value::Object(config.to_json(ruleset)).to_string();
        let id = format!("t_{}", auth::hex(&rand::random::<[u8; 8]>()));
        let row = TableRow {
            id: id.clone(),
            ruleset: ruleset.id().to_string(),
            seats,
            config_json,
            seed: seed.to_string(),
            first_dealer: req.first_dealer as u8,
            deadline_ms,
            visibility,
            state: TableState::Waiting,
            last_seq: 0,
            created_by: bot.id.clone(),
            created_at_ms: now_ms(),
            seed_chosen,
            ladder: None,
        };
        let seat_rows = house
            .iter()
            .enumerate()
            .map(|(i, p)| SeatRow {
                seat: i as u8,
                occupant: match p {
                    Some(p) => Occupant::House(p.text()),
                    None => Occupant::Empty,
                },
                name: String::new(),
                strikes: 0,
            })
            .collect();
        Ok((row, seat_rows))
    }

    /// Finished table `id` and its record, if `bot` may read it.
    pub(crate) async fn finished_record(
        &self,
        bot: &BotRow,
        id: String,
    ) -> Result<(crate::store::StoredTable, String), ServerError> {
        let t = self
            .store
            .table(id.clone())
            .await?
            .ok_or_else(|| ServerError::TableNotFound(id.clone()))?;
        if !may_read(&t, bot) {
            return Err(ServerError::TablePrivate);
        }
        let mut record = match self.store.record(id).await? {
            Some(r) => r,
            // Finished without a record: closed before its match was over.
            None if t.table.state == TableState::Finished => {
                return Err(ServerError::TableClosed(
                    "closed before its match was over".into(),
                ));
            }
            None => return Err(ServerError::TableNotFinished),
        };
        if let Some(l) = &t.table.ladder {
            // A set's tables share their decks: no record (hence no seed) of one may reach
            // anyone while a later rotation can still be played.
            let rated = self
                .store
                .ladder_match(l.match_id.clone())
                .await?
                .is_some_and(|m| m.rated);
            if !rated {
                return Err(ServerError::TableNotFinished);
            }
            // Every deck listed, so `bete verify` checks each against the seed.
            if let Ok(mut r) = bete_rules::record::Record::from_json(&record) {
                r.include_decks();
                record = r.to_json();
            }
        }
        Ok((t, record))
    }

    pub(crate) async fn status(&self, id: &str) -> Result<TableStatus, ServerError> {
        self.tables.status(id).await
    }

    /// The one submit path of SubmitAction and of each SubmitActions request, after
    /// authentication: the request's checks, then the table actor, which answers once the
    /// action is durable (or with the stored result of an earlier request with this
    /// request_id). The seat is `bot`'s at the table, never a field of the request.
    pub(crate) async fn submit(
        &self,
        bot: &BotRow,
        req: pb::SubmitActionRequest,
    ) -> Result<pb::SubmitActionResponse, ServerError> {
        let id = table_id(&req.table_id)?;
        let action =
            convert::action_from_pb(convert::require(req.action.as_ref(), "action")?, "action")?;
        if req.request_id.chars().count() > MAX_REQUEST_ID_CHARS {
            return Err(ServerError::field(
                "request_id",
                "is longer than 64 characters",
            ));
        }
        let request_id = (!req.request_id.is_empty()).then_some(req.request_id);
        let expected_seq = req.expected_seq;
        let done = self
            .tables
            .call(&id, |reply| Command::Submit {
                bot: bot.id.clone(),
                action,
                expected_seq,
                request_id: request_id.clone(),
                reply,
            })
            .await??;
        Ok(pb::SubmitActionResponse {
            seq: done.seq,
            replayed: done.replayed,
        })
    }
}

pub(super) fn stored_status(t: &crate::store::StoredTable) -> Result<TableStatus, ServerError> {
    let meta = Arc::new(TableMeta::from_row(&t.table)?);
    let seats = (0..t.table.seats)
        .map(|i| match t.seats.iter().find(|s| s.seat == i) {
            Some(s) => SeatInfo {
                occupant: s.occupant.clone(),
                name: s.name.clone(),
                strikes: s.strikes,
            },
            None => SeatInfo {
                occupant: Occupant::Empty,
                name: String::new(),
                strikes: 0,
            },
        })
        .collect();
    Ok(TableStatus {
        meta,
        visibility: t.table.visibility,
        seats,
        state: t.table.state,
        last_seq: t.table.last_seq,
    })
}
