//! TableService: the table calls, each checked at the edge and answered here or by the
//! table's owner.

use super::tables::stored_status;
use super::{Api, DEFAULT_PAGE, MAX_PAGE, OPERATOR, SPECTATOR, peer, table_id};
use crate::store::{Occupant, TableFilter, TableState, Visibility};
use crate::submits::SubmitAnswers;
use bete_api::convert::{self};
use bete_api::pb;
use bete_api::pb::table_service_server::TableService;
use bete_base::status::ServerError;
use bete_table::Command;
use bete_table::project;
use bete_table::stream::{BotShape, MsgStream, TableShape};
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// `TableService`.
#[derive(Clone, Debug)]
pub struct TableApi(pub Arc<Api>);

#[tonic::async_trait]
impl TableService for TableApi {
    async fn create_table(
        &self,
        request: Request<pb::CreateTableRequest>,
    ) -> Result<Response<pb::CreateTableResponse>, Status> {
        let api = &self.0;
        api.call("CreateTable", async {
            let bot = api.begin(&request).await?;
            api.limits().check_creation(&bot)?;
            let from = peer(&request);
            let (row, seats) = api.check_create(&bot, request.into_inner())?;
            let id = row.id.clone();
            api.limits().reserve_table(&bot, &id, from)?;
            let kept = (row.clone(), seats.clone());
            if let Err(e) = api.store.create_table(row, seats).await {
                api.limits().table_done(&bot.id, &id);
                return Err(e.into());
            }
            // A waiting table is kept as its row until a call needs its actor (bete-table's waiting.rs).
            let status = api.tables.created(kept.0, kept.1).await?;
            tracing::info!(table = %id, "table created");
            Ok(pb::CreateTableResponse {
                table: Some(project::table_to_pb(&status)),
                invitation_code: crate::invitation::code_for(&status.meta).unwrap_or_default(),
            })
        })
        .await
    }

    async fn get_table(
        &self,
        request: Request<pb::GetTableRequest>,
    ) -> Result<Response<pb::GetTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::GetTableRequest>| async move {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let mut status = api.status(&id).await?;
            // A private table's seats, bot ids, strikes and config are for its creator, its
            // seats and the operator (JoinTable by id needs no GetTable). A ladder table is
            // private while its set is unrated (its tables share their decks): then only its
            // seated bots and the operator read it; anyone once its set is rated, which its
            // actor learns from the store (`Command::Readable`).
            let private = status.visibility == Visibility::Private;
            let own = bot.id == OPERATOR
                || (bot.id != SPECTATOR && status.meta.created_by == bot.id)
                || status
                    .seats
                    .iter()
                    .any(|s| s.occupant == Occupant::Bot(bot.id.clone()));
            if private && !own {
                if status.meta.ladder.is_none() {
                    return Err(ServerError::TablePrivate);
                }
                let bot = bot.id.clone();
                status = api
                    .tables
                    .call(&id, move |reply| Command::Readable {
                        bot: bot.clone(),
                        reply,
                    })
                    .await
                    .and_then(|r| r)?;
            }
            Ok(pb::GetTableResponse {
                table: Some(project::table_to_pb(&status)),
            })
        };
        api.forwardable("GetTable", request, true, local, |mut c, r| {
            Box::pin(async move { c.get_table(r).await })
        })
        .await
    }

    async fn list_tables(
        &self,
        request: Request<pb::ListTablesRequest>,
    ) -> Result<Response<pb::ListTablesResponse>, Status> {
        let api = &self.0;
        api.call("ListTables", async {
            api.begin_read(&request).await?;
            let req = request.into_inner();
            let limit = match req.page_size {
                0 => DEFAULT_PAGE,
                n => n.min(MAX_PAGE),
            };
            let before = if req.page_token.is_empty() {
                0
            } else {
                req.page_token
                    .strip_prefix("c")
                    .and_then(|c| c.parse::<i64>().ok())
                    .filter(|c| *c > 0)
                    .ok_or_else(|| {
                        ServerError::field("page_token", "is not a token this server returned")
                    })?
            };
            let ruleset = match req.ruleset {
                0 => None,
                r => Some(convert::ruleset_from_pb(r, "ruleset")?.id().to_string()),
            };
            let state = match pb::TableState::try_from(req.state) {
                Ok(pb::TableState::Unspecified) => None,
                Ok(pb::TableState::Waiting) => Some(TableState::Waiting),
                Ok(pb::TableState::Playing) => Some(TableState::Playing),
                Ok(pb::TableState::Finished) => Some(TableState::Finished),
                Err(_) => {
                    return Err(ServerError::field(
                        "state",
                        format!("unknown TableState number {}", req.state),
                    ));
                }
            };
            let rows = api
                .store
                .list_tables(TableFilter {
                    ruleset,
                    state,
                    viewer_bot: None,
                    before,
                    limit: limit + 1,
                })
                .await?;
            let more = rows.len() > limit as usize;
            let rows = &rows[..rows.len().min(limit as usize)];
            let mut tables = Vec::with_capacity(rows.len());
            for t in rows {
                let mut status = stored_status(t)?;
                if let Some(h) = api.tables.loaded(&t.table.id) {
                    status.last_seq = h.shared.last_seq();
                    status.state = h.shared.state();
                } else if let Some(s) = api.tables.stored_status(t) {
                    status = s;
                }
                tables.push(project::table_to_pb(&status));
            }
            let next_page_token = match (more, rows.last()) {
                (true, Some(last)) => format!("c{}", last.cursor),
                _ => String::new(),
            };
            Ok(pb::ListTablesResponse {
                tables,
                next_page_token,
            })
        })
        .await
    }

    async fn join_table(
        &self,
        request: Request<pb::JoinTableRequest>,
    ) -> Result<Response<pb::JoinTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::JoinTableRequest>| async move {
            let bot = api.begin(&request).await?;
            let req = request.into_inner();
            let id = table_id(&req.table_id)?;
            let limits = api.limits();
            limits
                .seated
                .admit(&*api.store, &bot.id, &id, limits.config.seats_per_bot)
                .await?;
            let seat =
                match req.seat {
                    None => None,
                    Some(s) => Some(u8::try_from(s).map_err(|_| {
                        ServerError::field("seat", format!("seat {s} does not exist"))
                    })?),
                };
            let admit = |meta: &bete_table::TableMeta| {
                crate::invitation::check_join(meta, &bot.id, &req.invitation_code)
            };
            let (seat, status) = api
                .tables
                .join(&id, &bot.id, &bot.name, seat, &admit)
                .await?;
            limits.seated.taken(&bot.id);
            api.tables.attach_bot_streams(&bot.id, &id).await;
            tracing::info!(table = %id, seat, "seat taken");
            Ok(pb::JoinTableResponse {
                seat: u32::from(seat),
                table: Some(project::table_to_pb(&status)),
            })
        };
        // Sent again after a silent owner only if it named its seat: a second "any seat" could
        // take a second seat.
        let idempotent = request.get_ref().seat.is_some();
        api.forwardable("JoinTable", request, idempotent, local, |mut c, r| {
            Box::pin(async move { c.join_table(r).await })
        })
        .await
    }

    async fn leave_table(
        &self,
        request: Request<pb::LeaveTableRequest>,
    ) -> Result<Response<pb::LeaveTableResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::LeaveTableRequest>| async move {
            let bot = api.begin(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let status = api
                .tables
                .call(&id, |reply| Command::Leave {
                    bot: bot.id.clone(),
                    reply,
                })
                .await??;
            Ok(pb::LeaveTableResponse {
                table: Some(project::table_to_pb(&status)),
            })
        };
        // Leaving twice is refused (NOT_SEATED), never applied twice.
        api.forwardable("LeaveTable", request, true, local, |mut c, r| {
            Box::pin(async move { c.leave_table(r).await })
        })
        .await
    }

    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::SubmitActionRequest>| async move {
            let bot = api.begin(&request).await?;
            api.submit(&bot, request.into_inner()).await
        };
        // A request_id makes a resend safe: the owner (or the table's next owner, replaying its
        // log) answers it with the first result.
        let idempotent = !request.get_ref().request_id.is_empty();
        api.forwardable("SubmitAction", request, idempotent, local, |mut c, r| {
            Box::pin(async move { c.submit_action(r).await })
        })
        .await
    }

    type SubmitActionsStream = SubmitAnswers;

    async fn submit_actions(
        &self,
        request: Request<tonic::Streaming<pb::SubmitActionsRequest>>,
    ) -> Result<Response<Self::SubmitActionsStream>, Status> {
        crate::submits::open(self.0.clone(), request).await
    }

    async fn get_seat_view(
        &self,
        request: Request<pb::GetSeatViewRequest>,
    ) -> Result<Response<pb::GetSeatViewResponse>, Status> {
        let api = &self.0;
        let local = |request: Request<pb::GetSeatViewRequest>| async move {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let handle = api.tables.get(&id).await?;
            let bot = bot.id.clone();
            let snap = api
                .tables
                .call(&id, move |reply| Command::View {
                    bot: bot.clone(),
                    reply,
                })
                .await??;
            Ok(pb::GetSeatViewResponse {
                view: Some(project::snapshot_to_pb(&handle.shared.meta, &snap)),
            })
        };
        api.forwardable("GetSeatView", request, true, local, |mut c, r| {
            Box::pin(async move { c.get_seat_view(r).await })
        })
        .await
    }

    type WatchTableStream = MsgStream<TableShape>;

    /// Served by [`WatchTableFrames`] (see `server.rs`); this is the same stream as messages.
    async fn watch_table(
        &self,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Self::WatchTableStream>, Status> {
        let r = self.0.watch_table(request).await?;
        Ok(r.map(MsgStream))
    }

    type WatchBotStream = MsgStream<BotShape>;

    /// Served by [`WatchBotFrames`] (see `server.rs`); this is the same stream as messages.
    async fn watch_bot(
        &self,
        request: Request<pb::WatchBotRequest>,
    ) -> Result<Response<Self::WatchBotStream>, Status> {
        let r = self.0.watch_bot(request).await?;
        Ok(r.map(MsgStream))
    }

    async fn get_game_record(
        &self,
        request: Request<pb::GetGameRecordRequest>,
    ) -> Result<Response<pb::GetGameRecordResponse>, Status> {
        let api = &self.0;
        api.call("GetGameRecord", async {
            let bot = api.begin_read(&request).await?;
            let id = table_id(&request.get_ref().table_id)?;
            let (t, record) = api.finished_record(&bot, id).await?;
            let seed_sha256 = t
                .table
                .seed
                .parse::<bete_rules::Seed>()
                .map(|s| s.commitment())
                .unwrap_or_default();
            Ok(pb::GetGameRecordResponse {
                record_json: record,
                seed_chosen: t.table.seed_chosen,
                seed_sha256,
            })
        })
        .await
    }
}
