//! `ReplayService`: a finished match (or a sent record) replayed by the engine into steps with
//! every hand face up, for viewers that cannot run the engine (the web page). Never a deal in
//! play: a table's record exists only once its match is over.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use bete_api::convert::{self, EventStamp};
use bete_api::pb;
use bete_api::pb::replay_service_server::ReplayService;
use bete_rules::record::{Record, replay};
use bete_rules::{Action, Event, Game, Seat, Viewer};
use tonic::{Request, Response, Status};

use crate::service::{Api, table_id};
use bete_base::status::ServerError;

/// `ReplayService`.
#[derive(Clone, Debug)]
pub struct ReplayApi {
    api: Arc<Api>,
    analyses: Arc<Analyses>,
}

impl ReplayApi {
    pub fn new(api: Arc<Api>) -> ReplayApi {
        ReplayApi {
            api,
            analyses: Arc::default(),
        }
    }
}

/// Tables analysed at most kept; the oldest goes first.
const ANALYSES_KEPT: usize = 256;

/// The analyses made, per table (a finished table's record never changes), and the one
/// analysis that may run at a time (each takes a core for up to its budget).
#[derive(Debug)]
struct Analyses {
    done: Mutex<(HashMap<String, pb::AnalyseTableResponse>, VecDeque<String>)>,
    running: tokio::sync::Semaphore,
}

impl Default for Analyses {
    fn default() -> Analyses {
        Analyses {
            done: Mutex::default(),
            running: tokio::sync::Semaphore::new(1),
        }
    }
}

impl Analyses {
    fn get(&self, table: &str) -> Option<pb::AnalyseTableResponse> {
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        done.0.get(table).cloned()
    }

    fn keep(&self, table: &str, a: &pb::AnalyseTableResponse) {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let (map, order) = &mut *done;
        if map.insert(table.to_string(), a.clone()).is_none() {
            order.push_back(table.to_string());
        }
        while order.len() > ANALYSES_KEPT {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }
}

#[tonic::async_trait]
impl ReplayService for ReplayApi {
    async fn replay_record(
        &self,
        request: Request<pb::ReplayRecordRequest>,
    ) -> Result<Response<pb::ReplayRecordResponse>, Status> {
        let api = &self.api;
        api.call("ReplayRecord", async {
            let bot = api.begin_read(&request).await?;
            let text = match request.into_inner().source {
                Some(pb::replay_record_request::Source::TableId(id)) => {
                    api.finished_record(&bot, table_id(&id)?).await?.1
                }
                Some(pb::replay_record_request::Source::RecordJson(text)) => text,
                None => {
                    return Err(ServerError::field(
                        "source",
                        "is required: table_id or record_json",
                    ));
                }
            };
            // A long match is a few hundred steps of views: off the async workers.
            tokio::task::spawn_blocking(move || steps(&text))
                .await
                .map_err(|e| ServerError::Internal(format!("replay task: {e}")))?
        })
        .await
    }

    async fn analyse_table(
        &self,
        request: Request<pb::AnalyseTableRequest>,
    ) -> Result<Response<pb::AnalyseTableResponse>, Status> {
        let api = &self.api;
        api.call("AnalyseTable", async {
            let bot = api.begin_read(&request).await?;
            let req = request.into_inner();
            let id = table_id(&req.table_id)?;
            // The record first: a table the caller may not see is refused before any cache.
            let text = api.finished_record(&bot, id).await?.1;
            let budget_ms = match req.budget_ms {
                0 => crate::analysis::DEFAULT_BUDGET_MS,
                b if b > crate::analysis::MAX_BUDGET_MS => {
                    return Err(ServerError::field(
                        "budget_ms",
                        "is at most 20000 (20 seconds)",
                    ));
                }
                b => b,
            };
            if let Some(a) = self.analyses.get(&req.table_id) {
                return Ok(a);
            }
            // One at a time: an analysis takes a core for its whole budget.
            let Ok(_running) = self.analyses.running.try_acquire() else {
                return Err(ServerError::Overloaded {
                    retry_after: Duration::from_millis(u64::from(budget_ms)),
                });
            };
            let budget = Duration::from_millis(u64::from(budget_ms));
            let a = tokio::task::spawn_blocking(move || crate::analysis::analyse(&text, budget))
                .await
                .map_err(|e| ServerError::Internal(format!("analysis task: {e}")))??;
            self.analyses.keep(&req.table_id, &a);
            Ok(a)
        })
        .await
    }
}

/// Replays `text` into its steps. The whole record is checked first (structure, every action,
/// the stored balances), so a record that does not replay gets one precise BAD_RECORD.
pub fn steps(text: &str) -> Result<pb::ReplayRecordResponse, ServerError> {
    let bad = |e: &dyn std::fmt::Display| ServerError::BadRecord(e.to_string());
    let record = Record::from_json(text).map_err(|e| bad(&e))?;
    let end = replay(&record).map_err(|e| bad(&e))?;
    let (mut game, first) = Game::new(record.setup()).map_err(|e| bad(&e))?;
    let mut out = vec![step(&game, 0, None, false, &first)];
    for deal in &record.json.deals {
        for a in &deal.actions {
            // Checked by `replay` above; these only fail if the engine disagrees with itself.
            let action: Action = a.action.parse().map_err(|e| bad(&e))?;
            let seat = u8::try_from(a.seat)
                .map(Seat)
                .map_err(|_| ServerError::BadRecord(format!("seat {} out of range", a.seat)))?;
            let events = game
                .apply_recorded(seat, action, a.auto)
                .map_err(|e| bad(&e))?;
            let index = out.len() as u32;
            out.push(step(&game, index, Some((seat, action)), a.auto, &events));
        }
    }
    Ok(pb::ReplayRecordResponse {
        ruleset: convert::ruleset_to_pb(record.ruleset).into(),
        seats: u32::from(record.seats),
        record_json: record.to_json(),
        steps: out,
        balances: end.balances().to_vec(),
    })
}

fn step(
    game: &Game,
    index: u32,
    acted: Option<(Seat, Action)>,
    auto: bool,
    events: &[Event],
) -> pb::ReplayStep {
    let stamp = EventStamp {
        table_id: "",
        seats: game.seats(),
        seq: u64::from(index),
        auto,
        time: UNIX_EPOCH,
    };
    pb::ReplayStep {
        index,
        deal: game.deal_index(),
        seat: acted.map(|(s, _)| u32::from(s.0)),
        action: acted.map(|(_, a)| convert::action_to_pb(a)),
        auto,
        view: Some(convert::view_to_pb(
            "",
            u64::from(index),
            &game.view(Viewer::Spectator),
            None,
        )),
        hands: (0..game.seats())
            .map(|s| pb::SeatCards {
                seat: u32::from(s),
                cards: game
                    .view(Viewer::Seat(Seat(s)))
                    .hand
                    .map(convert::cards_to_pb)
                    .unwrap_or_default(),
            })
            .collect(),
        events: events
            .iter()
            .map(|e| convert::project(e, Viewer::Spectator, &stamp))
            .collect(),
    }
}
