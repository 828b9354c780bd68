//! AccountService and LadderService calls: accounts, ladders, entries, standings and results.

use super::Client;
use crate::error::{Error, Result};
use bete_api::pb;

impl Client {
    /// Creates an account; its token registers bots owned by it ([`Client::register_owned`]).
    /// Not retried: a retry could create a second account.
    pub async fn create_account(&self, name: &str) -> Result<pb::CreateAccountResponse> {
        let request = pb::CreateAccountRequest { name: name.into() };
        Ok(self
            .accounts
            .clone()
            .create_account(request)
            .await?
            .into_inner())
    }

    /// The bots of the account whose token this client carries (see [`Client::set_token`]).
    pub async fn list_account_bots(&self) -> Result<pb::ListAccountBotsResponse> {
        self.retrying_on(&self.accounts, |mut s| async move {
            s.list_account_bots(pb::ListAccountBotsRequest {}).await
        })
        .await
    }

    /// Every ladder of the server.
    pub async fn list_ladders(&self) -> Result<Vec<pb::Ladder>> {
        let response = self
            .retrying_on(&self.ladders, |mut s| async move {
                s.list_ladders(pb::ListLaddersRequest {}).await
            })
            .await?;
        Ok(response.ladders)
    }

    /// One ladder, with this bot's entry when it entered.
    pub async fn get_ladder(&self, ladder_id: &str) -> Result<pb::GetLadderResponse> {
        let request = pb::GetLadderRequest {
            ladder_id: ladder_id.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_ladder(request).await }
        })
        .await
    }

    /// Enters this bot in a ladder, to play `capacity` ladder tables at once (0 means 1).
    /// The scheduler seats it only while it holds a WatchBot stream (a [`crate::Runner`]).
    pub async fn enter_ladder(&self, ladder_id: &str, capacity: u32) -> Result<pb::LadderEntry> {
        let request = pb::EnterLadderRequest {
            ladder_id: ladder_id.into(),
            capacity,
        };
        let response = self
            .ladders
            .clone()
            .enter_ladder(request)
            .await?
            .into_inner();
        response
            .entry
            .ok_or(Error::MissingField("EnterLadder", "entry"))
    }

    /// Takes this bot off a ladder; matches it is playing go on and count.
    pub async fn leave_ladder(&self, ladder_id: &str) -> Result<pb::LadderEntry> {
        let request = pb::LeaveLadderRequest {
            ladder_id: ladder_id.into(),
        };
        let response = self
            .ladders
            .clone()
            .leave_ladder(request)
            .await?
            .into_inner();
        response
            .entry
            .ok_or(Error::MissingField("LeaveLadder", "entry"))
    }

    /// One page of a ladder's leaderboard, best first (`page_size` 0 means the server's 50).
    pub async fn get_standings_page(
        &self,
        ladder_id: &str,
        page_size: u32,
        page_token: &str,
    ) -> Result<pb::GetStandingsResponse> {
        let request = pb::GetStandingsRequest {
            ladder_id: ladder_id.into(),
            page_size,
            page_token: page_token.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_standings(request).await }
        })
        .await
    }

    /// A ladder's crosstable: every pair of bots that met in its rated matches (sets), with
    /// the mean net difference per deal between them and its 95 % interval.
    pub async fn get_crosstable(&self, ladder_id: &str) -> Result<pb::GetCrosstableResponse> {
        let request = pb::GetCrosstableRequest {
            ladder_id: ladder_id.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.get_crosstable(request).await }
        })
        .await
    }

    /// A ladder's whole leaderboard, best first (every page).
    pub async fn get_standings(&self, ladder_id: &str) -> Result<Vec<pb::Standing>> {
        let mut standings = Vec::new();
        let mut token = String::new();
        loop {
            let page = self.get_standings_page(ladder_id, 500, &token).await?;
            standings.extend(page.standings);
            if page.next_page_token.is_empty() {
                return Ok(standings);
            }
            token = page.next_page_token;
        }
    }

    /// One page of a ladder's matches, newest first, of one bot when `bot_id` is not empty.
    pub async fn list_ladder_matches(
        &self,
        ladder_id: &str,
        bot_id: &str,
        page_size: u32,
        page_token: &str,
    ) -> Result<pb::ListLadderMatchesResponse> {
        let request = pb::ListLadderMatchesRequest {
            ladder_id: ladder_id.into(),
            bot_id: bot_id.into(),
            page_size,
            page_token: page_token.into(),
        };
        self.retrying_on(&self.ladders, |mut s| {
            let request = request.clone();
            async move { s.list_ladder_matches(request).await }
        })
        .await
    }

    /// Opens a stream of rated ladder matches (of one ladder, or all when `ladder_id` is
    /// empty), with heartbeats while idle. No automatic resume.
    pub async fn watch_ladder_results(
        &self,
        ladder_id: &str,
    ) -> Result<tonic::Streaming<pb::WatchLadderResultsResponse>> {
        let request = pb::WatchLadderResultsRequest {
            ladder_id: ladder_id.into(),
        };
        Ok(self
            .ladders
            .clone()
            .watch_ladder_results(request)
            .await?
            .into_inner())
    }
}
