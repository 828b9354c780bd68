//! WatchTable of a table a peer plays: the owner's stream piped to the caller, looked up
//! again when the table moves.

use super::{Forwarder, LOOK_AGAIN, PEER_BUFFER, reason};
use crate::limits::StreamPermit;
use crate::service::Api;
use crate::store::BotRow;
use bete_api::pb;
use bete_base::status::ServerError;
use bete_table::Command;
use bete_table::stream::{Frame, Frames, TableShape};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::StreamExt;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// WatchTable of a table a peer plays: the owner's stream, opened with the caller's token (the
/// owner builds the caller's view: a seat sees its own cards only), piped to the caller. When
/// the owner's stream ends because the table moved or the owner died, the table is looked up
/// again (claimed here if its owner's lease lapsed) and the stream resumes there from the last
/// seq sent: no gap, no duplicate, and the caller's stream goes on.
pub(crate) fn watch_table_elsewhere(
    api: Arc<Api>,
    md: MetadataMap,
    bot: Arc<BotRow>,
    table: String,
    from_seq: Option<u64>,
    addr: String,
    permit: Option<StreamPermit>,
) -> Frames<TableShape> {
    let (tx, rx) = mpsc::channel(PEER_BUFFER);
    tokio::spawn(async move {
        let _permit = permit;
        let stopped = api.tables.deps.shutdown.stopped();
        tokio::select! {
            () = proxy_table(&api, &md, &bot, &table, from_seq, addr, &tx) => {}
            () = stopped => {
                let _ = tx.send(Err(ServerError::ShuttingDown.to_status())).await;
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

pub(super) type TableOut = mpsc::Sender<Result<Frame<pb::WatchTableResponse>, Status>>;

/// How a peer's WatchTable stream ended.
pub(super) enum Piped {
    /// The caller went away.
    CallerGone,
    /// For good: the owner's end (OK, or an error of the caller's own) is the caller's.
    Ended(Option<Status>),
    /// The table moved on or its owner is gone: look it up again.
    Lost,
}

pub(super) async fn proxy_table(
    api: &Arc<Api>,
    md: &MetadataMap,
    bot: &BotRow,
    table: &str,
    mut last: Option<u64>,
    mut addr: String,
    tx: &TableOut,
) {
    let Some(fw) = api.forward.clone() else {
        return;
    };
    let mut lost_since: Option<Instant> = None;
    loop {
        match pipe_table(&fw, &addr, md, table, &mut last, &mut lost_since, tx).await {
            Piped::CallerGone => return,
            Piped::Ended(end) => {
                if let Some(s) = end {
                    let _ = tx.send(Err(s)).await;
                }
                return;
            }
            Piped::Lost => {}
        }
        let since = *lost_since.get_or_insert_with(Instant::now);
        if since.elapsed() > fw.patience() {
            let _ = tx
                .send(Err(ServerError::OwnerUnreachable {
                    table: table.to_string(),
                    node: String::new(),
                    addr,
                    retry_after: fw.lease_ttl(),
                }
                .to_status()))
                .await;
            return;
        }
        tokio::time::sleep(LOOK_AGAIN).await;
        if tx.is_closed() {
            return;
        }
        let watched = api
            .tables
            .call(table, |reply| Command::Watch {
                bot: bot.id.clone(),
                from_seq: last,
                reply,
            })
            .await
            .and_then(|r| r);
        match watched {
            // The table is played here now: this node's stream, from the last seq sent.
            Ok((rx, shared)) => {
                let mut here = api.table_stream(bot, rx, shared, last, None);
                while let Some(item) = here.next().await {
                    if tx.send(item).await.is_err() {
                        return;
                    }
                }
                return;
            }
            Err(ServerError::TableElsewhere { addr: a, .. }) if !a.is_empty() => addr = a,
            Err(e) => {
                let _ = tx.send(Err(e.to_status())).await;
                return;
            }
        }
    }
}

pub(super) async fn pipe_table(
    fw: &Forwarder,
    addr: &str,
    md: &MetadataMap,
    table: &str,
    last: &mut Option<u64>,
    lost_since: &mut Option<Instant>,
    tx: &TableOut,
) -> Piped {
    use pb::watch_table_response::Kind;
    let Ok(mut client) = fw.client(addr) else {
        return Piped::Lost;
    };
    let req = pb::WatchTableRequest {
        table_id: table.to_string(),
        from_seq: *last,
    };
    let opened = tokio::select! {
        r = client.watch_table(fw.request(md, req, None)) => r,
        () = tx.closed() => return Piped::CallerGone,
    };
    let mut stream = match opened {
        Ok(r) => r.into_inner(),
        Err(s) => return lost_or_ended(s),
    };
    loop {
        let m = tokio::select! {
            m = stream.message() => m,
            () = tx.closed() => return Piped::CallerGone,
        };
        let msg = match m {
            Ok(Some(msg)) => msg,
            Ok(None) => return Piped::Ended(None),
            Err(s) => return lost_or_ended(s),
        };
        *lost_since = None;
        let seq = match &msg.kind {
            Some(Kind::Event(e)) => Some(e.seq),
            Some(Kind::Snapshot(v)) => Some(v.seq),
            _ => None,
        };
        if let Some(seq) = seq {
            // Sent already (by the previous owner).
            if last.is_some_and(|l| seq <= l) {
                continue;
            }
            *last = Some(seq);
        }
        if tx.send(Ok(Frame::Msg(msg))).await.is_err() {
            return Piped::CallerGone;
        }
    }
}

/// A peer stream's failure: the table moving on (or its owner draining or gone) is looked up
/// again; any other failure is the caller's (a revoked token, a bad from_seq, too slow).
pub(super) fn lost_or_ended(s: Status) -> Piped {
    match reason(&s).as_deref() {
        None | Some("TABLE_ELSEWHERE" | "SHUTTING_DOWN" | "STORE_UNAVAILABLE") => Piped::Lost,
        Some(_) => Piped::Ended(Some(s)),
    }
}
