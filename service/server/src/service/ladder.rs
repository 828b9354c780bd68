//! `bete.v1.LadderService`: the public reads of ladders, standings and matches, and a bot's
//! entering and leaving.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bete_api::convert;
use bete_api::pb;
use bete_api::pb::ladder_service_server::LadderService;
use bete_ladder::crosstable::{Outcome, crosstable};
use bete_ladder::{LadderSpec, Rating};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::service::Api;
use crate::store::{EntryRow, RatingRow};
use bete_base::status::ServerError;
use bete_ladder_runtime::{LadderCommand, match_to_pb};
use bete_table::project::timestamp;

const DEFAULT_STANDINGS: u32 = 50;
const MAX_STANDINGS: u32 = 500;
const DEFAULT_MATCHES: u32 = 20;
const MAX_MATCHES: u32 = 200;

/// `LadderService`.
#[derive(Clone, Debug)]
pub struct LadderApi(pub Arc<Api>);

fn ladder_id(id: &str) -> Result<String, ServerError> {
    if id.is_empty() {
        return Err(ServerError::field("ladder_id", "is required"));
    }
    if id.len() > 64 {
        return Err(ServerError::field(
            "ladder_id",
            "is longer than 64 characters",
        ));
    }
    Ok(id.to_string())
}

fn policy_to_pb(p: &str) -> pb::HouseBotPolicy {
    match p {
        "random" => pb::HouseBotPolicy::Random,
        "heuristic" => pb::HouseBotPolicy::Heuristic,
        "search" => pb::HouseBotPolicy::Search,
        _ => pb::HouseBotPolicy::Unspecified,
    }
}

fn spec_to_pb(s: &LadderSpec, counts: (u32, u32, u64)) -> pb::Ladder {
    pb::Ladder {
        ladder_id: s.id.clone(),
        ruleset: convert::ruleset_to_pb(s.ruleset).into(),
        seat_count: u32::from(s.seats),
        config: s
            .config_json()
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect(),
        deals_per_match: s.deals_per_match,
        decision_deadline_ms: u32::try_from(s.deadline_ms).unwrap_or(u32::MAX),
        duplicate: s.duplicate,
        max_matches_per_day: s.max_matches_per_day,
        max_tables_per_bot: s.max_tables_per_bot,
        house_entrants: s
            .house_entrants
            .iter()
            .map(|p| policy_to_pb(bete_ladder::spec::house_policy(p)).into())
            .collect(),
        max_strikes_per_match: s.max_strikes_per_match,
        entrants: counts.0,
        online: counts.1,
        matches_rated: counts.2,
        search_budget_ms: if s
            .house_entrants
            .iter()
            .any(|p| bete_ladder::spec::house_policy(p) == "search")
        {
            s.search_budget_ms
        } else {
            0
        },
        // Bounded by the ladders file's checks (at most 600,000).
        house_fill_after_ms: u32::try_from(s.house_fill_after_ms).unwrap_or(u32::MAX),
        strike_window: s.strike_window,
        max_strike_share: s.max_strike_share,
        strike_cooldown_ms: s.strike_cooldown_ms,
        luck_adjusted: s.luck_adjusted,
    }
}

fn entry_to_pb(e: &EntryRow) -> pb::LadderEntry {
    pb::LadderEntry {
        ladder_id: e.ladder_id.clone(),
        bot_id: e.bot_id.clone(),
        capacity: e.capacity,
        active: e.active,
        removed_reason: e.removed_reason.clone(),
        entered_at: Some(timestamp(e.entered_at_ms)),
    }
}

/// A page token `c<cursor>` or `o<offset>`.
fn page_token(token: &str, prefix: &str) -> Result<i64, ServerError> {
    if token.is_empty() {
        return Ok(0);
    }
    token
        .strip_prefix(prefix)
        .and_then(|c| c.parse::<i64>().ok())
        .filter(|c| *c > 0)
        .ok_or_else(|| ServerError::field("page_token", "is not a token this server returned"))
}

impl LadderApi {
    async fn names(
        &self,
        ids: impl Iterator<Item = &String>,
    ) -> HashMap<String, (String, String, String)> {
        let mut out = HashMap::new();
        let mut wanted = Vec::new();
        for id in ids {
            if id.starts_with("house:") {
                let house = (
                    id.clone(),
                    "house".to_string(),
                    bete_ladder_runtime::HOUSE_OWNER.to_string(),
                );
                out.insert(id.clone(), house);
            } else {
                // Until read (or if gone): the id stands for the name.
                out.insert(id.clone(), (id.clone(), String::new(), String::new()));
                wanted.push(id.clone());
            }
        }
        if let Ok(bots) = self.0.store.bots(wanted).await {
            for b in bots {
                let v = (b.name.clone(), b.version.clone(), b.owner_id().to_string());
                out.insert(b.id, v);
            }
        }
        out
    }
}

fn conservative(r: &RatingRow) -> f64 {
    Rating {
        mu: r.mu,
        sigma: r.sigma,
    }
    .conservative()
}

/// The ranks of the first `n` rows in leaderboard order: equal conservative ratings share the
/// better rank (1, 2, 2, 4). One pass, whatever page is asked for.
fn ranks(rows: &[RatingRow], n: usize) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::with_capacity(n);
    for (i, r) in rows.iter().take(n).enumerate() {
        let rank = match (i.checked_sub(1), out.last()) {
            (Some(p), Some(&prev)) if conservative(&rows[p]) == conservative(r) => prev,
            _ => i as u32 + 1,
        };
        out.push(rank);
    }
    out
}

/// The leaderboard's order: conservative rating, then more matches, then id (a total order,
/// so pages never overlap).
fn order(a: &RatingRow, b: &RatingRow) -> std::cmp::Ordering {
    let (ra, rb) = (conservative(a), conservative(b));
    rb.total_cmp(&ra)
        .then(b.matches.cmp(&a.matches))
        .then(a.bot_id.cmp(&b.bot_id))
}

type ResultStream =
    Pin<Box<dyn Stream<Item = Result<pb::WatchLadderResultsResponse, Status>> + Send>>;

#[tonic::async_trait]
impl LadderService for LadderApi {
    async fn list_ladders(
        &self,
        request: Request<pb::ListLaddersRequest>,
    ) -> Result<Response<pb::ListLaddersResponse>, Status> {
        let api = &self.0;
        api.call("ListLadders", async {
            api.gate_message(request.get_ref())?;
            let mut ladders = Vec::new();
            for s in api.ladders.specs() {
                let counts = api
                    .ladders
                    .ask(&s.id, |reply| LadderCommand::Counts { reply })
                    .await?;
                ladders.push(spec_to_pb(s, counts));
            }
            Ok(pb::ListLaddersResponse { ladders })
        })
        .await
    }

    async fn get_ladder(
        &self,
        request: Request<pb::GetLadderRequest>,
    ) -> Result<Response<pb::GetLadderResponse>, Status> {
        let api = &self.0;
        api.call("GetLadder", async {
            api.gate_message(request.get_ref())?;
            let id = ladder_id(&request.get_ref().ladder_id)?;
            let spec = api.ladders.spec(&id)?.clone();
            let counts = api
                .ladders
                .ask(&id, |reply| LadderCommand::Counts { reply })
                .await?;
            // The caller's entry, when it sent a bot token (the reads need none).
            let entry = match request.metadata().get("authorization") {
                Some(_) => {
                    let bot = api
                        .auth
                        .authenticate(request.metadata(), crate::service::peer(&request))
                        .await?;
                    api.store
                        .entries(id.clone())
                        .await?
                        .into_iter()
                        .find(|e| e.bot_id == bot.id)
                        .map(|e| entry_to_pb(&e))
                }
                None => None,
            };
            Ok(pb::GetLadderResponse {
                ladder: Some(spec_to_pb(&spec, counts)),
                entry,
            })
        })
        .await
    }

    async fn enter_ladder(
        &self,
        request: Request<pb::EnterLadderRequest>,
    ) -> Result<Response<pb::EnterLadderResponse>, Status> {
        let api = &self.0;
        api.call("EnterLadder", async {
            let bot = api.begin_call(&request).await?;
            api.limits().check_ladder_entry(&bot)?;
            let req = request.into_inner();
            let id = ladder_id(&req.ladder_id)?;
            let spec = api.ladders.spec(&id)?;
            let capacity = match req.capacity {
                0 => 1,
                c if c <= spec.max_tables_per_bot => c,
                c => {
                    return Err(ServerError::field(
                        "capacity",
                        format!(
                            "{c} is more than the {} tables this ladder lets a bot play at once",
                            spec.max_tables_per_bot
                        ),
                    ));
                }
            };
            let entry = api
                .ladders
                .ask(&id, |reply| LadderCommand::Enter {
                    bot: bot.id.clone(),
                    capacity,
                    reply,
                })
                .await??;
            Ok(pb::EnterLadderResponse {
                entry: Some(entry_to_pb(&entry)),
            })
        })
        .await
    }

    async fn leave_ladder(
        &self,
        request: Request<pb::LeaveLadderRequest>,
    ) -> Result<Response<pb::LeaveLadderResponse>, Status> {
        let api = &self.0;
        api.call("LeaveLadder", async {
            let bot = api.begin_call(&request).await?;
            api.limits().check_ladder_entry(&bot)?;
            let id = ladder_id(&request.get_ref().ladder_id)?;
            api.ladders.spec(&id)?;
            let entry = api
                .ladders
                .ask(&id, |reply| LadderCommand::Leave {
                    bot: bot.id.clone(),
                    reply,
                })
                .await??;
            Ok(pb::LeaveLadderResponse {
                entry: Some(entry_to_pb(&entry)),
            })
        })
        .await
    }

    async fn get_standings(
        &self,
        request: Request<pb::GetStandingsRequest>,
    ) -> Result<Response<pb::GetStandingsResponse>, Status> {
        let api = &self.0;
        api.call("GetStandings", async {
            api.gate_message(request.get_ref())?;
            let req = request.into_inner();
            let id = ladder_id(&req.ladder_id)?;
            api.ladders.spec(&id)?;
            let limit = match req.page_size {
                0 => DEFAULT_STANDINGS,
                n => n.min(MAX_STANDINGS),
            } as usize;
            let offset = page_token(&req.page_token, "o")? as usize;
            let mut rows = api.store.ratings(id.clone()).await?;
            rows.sort_by(order);
            let active: HashMap<String, bool> = api
                .store
                .entries(id.clone())
                .await?
                .into_iter()
                .map(|e| (e.bot_id, e.active))
                .collect();
            let page: Vec<&RatingRow> = rows.iter().skip(offset).take(limit).collect();
            let names = self.names(page.iter().map(|r| &r.bot_id)).await;
            let ranks = ranks(&rows, offset + page.len());
            let mut standings = Vec::with_capacity(page.len());
            for (i, r) in page.iter().enumerate() {
                let rating = conservative(r);
                let rank = ranks[offset + i];
                let house = r.bot_id.starts_with("house:");
                let (name, version, owner) = names.get(&r.bot_id).cloned().unwrap_or_default();
                standings.push(pb::Standing {
                    rank,
                    bot_id: r.bot_id.clone(),
                    bot_name: name,
                    bot_version: version,
                    owner_id: owner,
                    rating,
                    mu: r.mu,
                    sigma: r.sigma,
                    matches: r.matches,
                    mean_jetons_per_deal: if r.deals == 0 {
                        0.0
                    } else {
                        r.jetons as f64 / r.deals as f64
                    },
                    last_net: r.last_net,
                    last_place: r.last_place,
                    house,
                    active: house || active.get(&r.bot_id).copied().unwrap_or(false),
                });
            }
            let next_page_token = if offset + limit < rows.len() {
                format!("o{}", offset + limit)
            } else {
                String::new()
            };
            Ok(pb::GetStandingsResponse {
                standings,
                next_page_token,
            })
        })
        .await
    }

    async fn list_ladder_matches(
        &self,
        request: Request<pb::ListLadderMatchesRequest>,
    ) -> Result<Response<pb::ListLadderMatchesResponse>, Status> {
        let api = &self.0;
        api.call("ListLadderMatches", async {
            api.gate_message(request.get_ref())?;
            let req = request.into_inner();
            let id = ladder_id(&req.ladder_id)?;
            api.ladders.spec(&id)?;
            if req.bot_id.len() > 64 {
                return Err(ServerError::field("bot_id", "is longer than 64 characters"));
            }
            let limit = match req.page_size {
                0 => DEFAULT_MATCHES,
                n => n.min(MAX_MATCHES),
            };
            let before = page_token(&req.page_token, "c")?;
            let bot = (!req.bot_id.is_empty()).then_some(req.bot_id);
            let rows = api.store.ladder_matches(id, bot, before, limit + 1).await?;
            let more = rows.len() > limit as usize;
            let rows = &rows[..rows.len().min(limit as usize)];
            let all_names = self
                .names(rows.iter().flat_map(|m| m.entrants.iter()))
                .await;
            let names: HashMap<String, String> =
                all_names.into_iter().map(|(k, v)| (k, v.0)).collect();
            let mut matches = Vec::with_capacity(rows.len());
            for m in rows {
                let tables = api.store.match_tables(m.id.clone()).await?;
                matches.push(match_to_pb(m, &tables, &names));
            }
            let next_page_token = match (more, rows.last()) {
                (true, Some(last)) => format!("c{}", last.cursor),
                _ => String::new(),
            };
            Ok(pb::ListLadderMatchesResponse {
                matches,
                next_page_token,
            })
        })
        .await
    }

    async fn get_crosstable(
        &self,
        request: Request<pb::GetCrosstableRequest>,
    ) -> Result<Response<pb::GetCrosstableResponse>, Status> {
        let api = &self.0;
        api.call("GetCrosstable", async {
            api.gate_message(request.get_ref())?;
            let id = ladder_id(&request.get_ref().ladder_id)?;
            api.ladders.spec(&id)?;
            // One read for the whole table: every rated match's results (the pairs come from
            // them in memory, not a query per pair).
            let rated = api.store.rated_matches(id.clone()).await?;
            let outcomes: Vec<Vec<Outcome>> = rated
                .iter()
                .map(|m| {
                    m.results
                        .iter()
                        .map(|r| Outcome {
                            bot_id: r.bot_id.clone(),
                            net: r.net,
                            deals: r.deals,
                        })
                        .collect()
                })
                .collect();
            let pairs = crosstable(outcomes.iter().map(Vec::as_slice));
            let names = self
                .names(
                    pairs
                        .iter()
                        .flat_map(|p| [&p.bot_a, &p.bot_b])
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter(),
                )
                .await;
            let name = |id: &String| names.get(id).map(|n| n.0.clone()).unwrap_or_default();
            Ok(pb::GetCrosstableResponse {
                ladder_id: id,
                matches_rated: rated.len() as u64,
                pairs: pairs
                    .into_iter()
                    .map(|p| pb::CrosstablePair {
                        bot_a_name: name(&p.bot_a),
                        bot_b_name: name(&p.bot_b),
                        bot_a: p.bot_a,
                        bot_b: p.bot_b,
                        meetings: p.meetings,
                        deals: p.deals,
                        a_ahead: p.a_ahead,
                        level: p.level,
                        b_ahead: p.b_ahead,
                        mean_net_difference_per_deal: p.mean,
                        interval_low: p.low,
                        interval_high: p.high,
                    })
                    .collect(),
            })
        })
        .await
    }

    type WatchLadderResultsStream = ResultStream;

    async fn watch_ladder_results(
        &self,
        request: Request<pb::WatchLadderResultsRequest>,
    ) -> Result<Response<Self::WatchLadderResultsStream>, Status> {
        let api = self.0.clone();
        let filter = request.get_ref().ladder_id.clone();
        let heartbeat = api.config.heartbeat_interval;
        let r = api
            .call("WatchLadderResults", async {
                api.gate_message(request.get_ref())?;
                if !filter.is_empty() {
                    api.ladders.spec(&filter)?;
                }
                Ok(())
            })
            .await;
        r?;
        let mut rx = api.ladders.results.subscribe();
        let stopped = api.tables.deps.shutdown.clone();
        let stream = async_stream(move |tx| async move {
            loop {
                let next = tokio::select! {
                    r = rx.recv() => r,
                    _ = tokio::time::sleep(heartbeat.max(Duration::from_millis(100))) => {
                        let beat = pb::WatchLadderResultsResponse {
                            kind: Some(pb::watch_ladder_results_response::Kind::Heartbeat(
                                timestamp(crate::now_ms()),
                            )),
                        };
                        if tx.send(Ok(beat)).await.is_err() { return; }
                        continue;
                    }
                    _ = stopped.stopped() => {
                        let _ = tx.send(Err(ServerError::ShuttingDown.to_status())).await;
                        return;
                    }
                };
                match next {
                    Ok(m) if filter.is_empty() || m.ladder_id == filter => {
                        let msg = pb::WatchLadderResultsResponse {
                            kind: Some(pb::watch_ladder_results_response::Kind::Rated(m)),
                        };
                        if tx.send(Ok(msg)).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    // A reader too slow for the results skips ahead; ListLadderMatches has all.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(Response::new(stream))
    }
}

/// A stream fed by a task through a small channel (the task ends when the reader goes).
fn async_stream<F, Fut>(f: F) -> ResultStream
where
    F: FnOnce(tokio::sync::mpsc::Sender<Result<pb::WatchLadderResultsResponse, Status>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(f(tx));
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bot: &str, mu: f64, sigma: f64, matches: u32) -> RatingRow {
        RatingRow {
            ladder_id: "l".into(),
            bot_id: bot.into(),
            mu,
            sigma,
            matches,
            jetons: 0,
            deals: 0,
            last_net: 0,
            last_place: 0,
        }
    }

    /// Equal conservative ratings share the better rank, and the rank after a tie skips the
    /// places the tie took, as the leaderboard shows it on every page.
    #[test]
    fn ties_share_the_better_rank() {
        let mut rows = vec![
            row("d", 20.0, 3.0, 1),
            row("a", 31.0, 2.0, 5),
            row("c", 27.0, 1.0, 2),
            row("b", 27.0, 1.0, 3),
            row("e", 10.0, 1.0, 1),
        ];
        rows.sort_by(order);
        let ids: Vec<&str> = rows.iter().map(|r| r.bot_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d", "e"]);
        assert_eq!(ranks(&rows, 5), [1, 2, 2, 4, 5]);
        assert_eq!(ranks(&rows, 3), [1, 2, 2]);
        assert_eq!(ranks(&rows, 9).len(), 5);
    }
}
