//! TableService calls: creating, reading, joining and leaving tables, submitting actions and
//! opening their streams.

use super::{Client, Submitted, new_request_id};
use crate::action_stream::ActionStream;
use crate::error::{Error, Result};
use bete_api::pb;
use std::collections::HashMap;

impl Client {
    /// Creates a table (not retried: a retry could create a second one).
    pub async fn create_table(&self, request: pb::CreateTableRequest) -> Result<pb::Table> {
        Ok(self.create_table_invitation(request).await?.0)
    }

    /// [`Client::create_table`], with the invitation code of a private table (empty for a
    /// listed one): the code other bots need to join it.
    pub async fn create_table_invitation(
        &self,
        request: pb::CreateTableRequest,
    ) -> Result<(pb::Table, String)> {
        let response = self
            .tables
            .clone()
            .create_table(request)
            .await?
            .into_inner();
        let table = response
            .table
            .ok_or(Error::MissingField("CreateTable", "table"))?;
        Ok((table, response.invitation_code))
    }

    /// One table with its seats.
    pub async fn get_table(&self, table_id: &str) -> Result<pb::Table> {
        let request = pb::GetTableRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_table(request).await }
        });
        response
            .await?
            .table
            .ok_or(Error::MissingField("GetTable", "table"))
    }

    /// Every listed table matching the filters (UNSPECIFIED = any), newest first, all pages.
    pub async fn list_tables(
        &self,
        ruleset: pb::Ruleset,
        state: pb::TableState,
    ) -> Result<Vec<pb::Table>> {
        let mut tables = Vec::new();
        let mut page_token = String::new();
        loop {
            let request = pb::ListTablesRequest {
                page_size: 200,
                page_token: page_token.clone(),
                ruleset: ruleset as i32,
                state: state as i32,
            };
            let page = self
                .retrying(|mut s| {
                    let request = request.clone();
                    async move { s.list_tables(request).await }
                })
                .await?;
            tables.extend(page.tables);
            if page.next_page_token.is_empty() {
                return Ok(tables);
            }
            page_token = page.next_page_token;
        }
    }

    /// Takes the named seat, or the lowest free one.
    pub async fn join_table(
        &self,
        table_id: &str,
        seat: Option<u32>,
    ) -> Result<pb::JoinTableResponse> {
        self.join_table_invited(table_id, seat, "").await
    }

    /// [`Client::join_table`] at a private table, with the invitation code its creator got
    /// (empty: none).
    pub async fn join_table_invited(
        &self,
        table_id: &str,
        seat: Option<u32>,
        invitation_code: &str,
    ) -> Result<pb::JoinTableResponse> {
        let request = pb::JoinTableRequest {
            table_id: table_id.into(),
            seat,
            invitation_code: invitation_code.into(),
        };
        Ok(self.tables.clone().join_table(request).await?.into_inner())
    }

    /// Gives up this bot's seat.
    pub async fn leave_table(&self, table_id: &str) -> Result<pb::Table> {
        let request = pb::LeaveTableRequest {
            table_id: table_id.into(),
        };
        let response = self.tables.clone().leave_table(request).await?.into_inner();
        response
            .table
            .ok_or(Error::MissingField("LeaveTable", "table"))
    }

    /// This bot's view of a table (the spectator view when it has no seat there).
    pub async fn get_seat_view(&self, table_id: &str) -> Result<pb::SeatView> {
        let request = pb::GetSeatViewRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_seat_view(request).await }
        });
        response
            .await?
            .view
            .ok_or(Error::MissingField("GetSeatView", "view"))
    }

    /// The finished match's `bete-record/1` JSON.
    pub async fn get_game_record(&self, table_id: &str) -> Result<String> {
        let request = pb::GetGameRecordRequest {
            table_id: table_id.into(),
        };
        let response = self.retrying(|mut s| {
            let request = request.clone();
            async move { s.get_game_record(request).await }
        });
        Ok(response.await?.record_json)
    }

    /// Submits an action under a fresh `request_id`, checked against `expected_seq` (0 skips
    /// the check). While the server is unreachable the call is retried with the same id, so it
    /// is applied at most once however often the answer is lost.
    ///
    /// That holds only inside this call. A caller that gives up on it (a timeout, a dropped
    /// future) or gets a transient error cannot tell whether the action was applied: to try
    /// again it must use [`Client::submit_action_with_id`] with the SAME `request_id` (choose
    /// it up front, e.g. with [`new_request_id`]). A fresh id can apply the action twice when
    /// `expected_seq` is 0; with a real `expected_seq` the second try is refused as stale
    /// instead of answered with the first result.
    pub async fn submit_action(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
    ) -> Result<Submitted> {
        self.submit_action_with_id(table_id, action, expected_seq, &new_request_id())
            .await
    }

    /// [`Client::submit_action`] with a caller-chosen `request_id` (to retry a decision across
    /// restarts of the caller).
    pub async fn submit_action_with_id(
        &self,
        table_id: &str,
        action: &pb::Action,
        expected_seq: u64,
        request_id: &str,
    ) -> Result<Submitted> {
        // The server fills `text` itself and ignores it on input; sending only the verb and
        // cards keeps the request minimal.
        let action = pb::Action {
            kind: action.kind,
            cards: action.cards.clone(),
            text: String::new(),
        };
        let request = pb::SubmitActionRequest {
            table_id: table_id.into(),
            action: Some(action),
            expected_seq,
            request_id: request_id.into(),
        };
        let mut attempts = 0;
        let response = self
            .retrying(|mut s| {
                attempts += 1;
                let request = request.clone();
                async move { s.submit_action(request).await }
            })
            .await?;
        Ok(Submitted {
            seq: response.seq,
            replayed: response.replayed,
            attempts,
        })
    }

    /// A handle that submits this bot's actions on SubmitActions streams: the same results
    /// and errors as [`Client::submit_action`], cheaper per move for the server. Streams open
    /// on first use.
    pub fn action_stream(&self) -> ActionStream {
        ActionStream::new(self.clone())
    }

    /// Opens one SubmitActions stream that sends `requests` (see [`ActionStream`]).
    pub(crate) async fn open_submit_actions(
        &self,
        requests: tokio_stream::wrappers::ReceiverStream<pb::SubmitActionsRequest>,
    ) -> Result<tonic::Streaming<pb::SubmitActionsResponse>> {
        Ok(self
            .tables
            .clone()
            .submit_actions(requests)
            .await?
            .into_inner())
    }

    /// Opens one WatchTable stream (no automatic resume; see [`Client::watch_table`]).
    pub async fn open_watch_table(
        &self,
        table_id: &str,
        from_seq: Option<u64>,
    ) -> Result<tonic::Streaming<pb::WatchTableResponse>> {
        let request = pb::WatchTableRequest {
            table_id: table_id.into(),
            from_seq,
        };
        Ok(self.tables.clone().watch_table(request).await?.into_inner())
    }

    /// Opens one WatchBot stream for every table this bot sits at; `from_seq` resumes tables
    /// where the caller left off.
    pub async fn open_watch_bot(
        &self,
        from_seq: HashMap<String, u64>,
    ) -> Result<tonic::Streaming<pb::WatchBotResponse>> {
        let request = pb::WatchBotRequest {
            from_seq,
            exclusive: self.exclusive.load(std::sync::atomic::Ordering::Relaxed),
        };
        Ok(self.tables.clone().watch_bot(request).await?.into_inner())
    }

    /// Opens every later WatchBot stream of this client (and its clones) with `exclusive`:
    /// the server then ends the bot's other WatchBot streams (ABORTED / STREAM_REPLACED), so
    /// only this process plays the bot. A runner whose stream is replaced stops with that error.
    pub fn set_exclusive(&self, exclusive: bool) {
        self.exclusive
            .store(exclusive, std::sync::atomic::Ordering::Relaxed);
    }
}
