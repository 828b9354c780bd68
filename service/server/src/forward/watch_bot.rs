//! WatchBot across the cluster: the bot's tables on every node merged into one stream, each
//! table heard once, a moved table caught up without a gap or a duplicate.

use super::{Forwarder, PEER_BUFFER};
use crate::service::Api;
use crate::store::BotRow;
use bete_api::pb;
use bete_table::Command;
use bete_table::stream::{BotShape, Frame, Frames, Shape, WatchStream};
use prost::Message;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// What a merged WatchBot stream has sent per table, so a table heard from two nodes (while it
/// moves) reaches the bot once: events and snapshots by seq, decisions by seq, `Seated` once
/// per seat taken.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Per table, the seq of the last event or snapshot sent.
    last: HashMap<String, u64>,
    /// Per table, the seq of the last decision sent.
    decided: HashMap<String, u64>,
    /// The seats announced and not left since: the node a table moves to announces them
    /// again, which is no news; a seat left (its SeatLeft sent) and taken again is.
    seated: HashSet<(String, u32)>,
    /// Tables whose `Seated` was just sent as news (a join, or the stream's first word of the
    /// table): the snapshot that follows starts the bot's picture of the table, and goes out
    /// as it is rather than being caught up.
    fresh: HashSet<String>,
}

impl Seen {
    fn admit(&mut self, table: &str, kind: &pb::watch_bot_response::Kind) -> bool {
        use pb::watch_bot_response::Kind;
        let last = self.last.get(table).copied();
        let seq = match kind {
            Kind::Event(e) => e.seq,
            Kind::Snapshot(v) => v.seq,
            Kind::Decision(d) => {
                let stale = last.is_some_and(|l| d.seq < l)
                    || self.decided.get(table).is_some_and(|s| d.seq <= *s);
                if !stale {
                    self.decided.insert(table.to_string(), d.seq);
                }
                return !stale;
            }
            Kind::Seated(s) => {
                let news = self.seated.insert((table.to_string(), s.seat));
                if news {
                    self.fresh.insert(table.to_string());
                }
                return news;
            }
            Kind::Heartbeat(_) => return true,
            // A peer stream that was cut is opened again by the merge, from the seqs sent.
            Kind::Resync(_) => return false,
        };
        if last.is_some_and(|l| seq <= l) {
            return false;
        }
        self.last.insert(table.to_string(), seq);
        self.fresh.remove(table);
        if let Kind::Event(pb::Event {
            body: Some(pb::event::Body::SeatLeft(left)),
            ..
        }) = kind
        {
            self.seated.remove(&(table.to_string(), left.seat));
        }
        true
    }

    /// For a snapshot of `table` at `seq`: the events to fetch in its place, as (the last seq
    /// sent, the snapshot's), when the bot already follows the table (no `Seated` news just
    /// before it) and it skips events that fit a resume.
    fn behind(&self, table: &str, seq: u64) -> Option<(u64, u64)> {
        if self.fresh.contains(table) {
            return None;
        }
        let last = *self.last.get(table)?;
        (seq > last && seq - last <= CATCH_UP_MAX).then_some((last, seq))
    }
}

/// A frame as a message, to look at: a frame of this node's own stream may be shared or
/// pre-encoded bytes. `None`: not decodable (sent on as it is).
pub(super) fn decoded(
    frame: &Frame<pb::WatchBotResponse>,
) -> Option<Cow<'_, pb::WatchBotResponse>> {
    match frame {
        Frame::Msg(m) => Some(Cow::Borrowed(m)),
        Frame::Shared { table, event } => pb::Event::decode(event.clone()).ok().map(|e| {
            Cow::Owned(BotShape::event_msg(
                table.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
                e,
            ))
        }),
        Frame::Encoded(bytes) => pb::WatchBotResponse::decode(&bytes[..])
            .ok()
            .map(Cow::Owned),
    }
}

/// A bot's WatchBot stream on the node it reached: this node's tables (`here`) and, through an
/// internal WatchBot on every live peer (with the bot's token and this node's mark, so the peer
/// sends only the tables it plays), the tables peers play. The peer set follows the cluster's
/// live nodes (every pass); a peer stream that ends is opened again with `from_seq` = the last
/// seq sent per table, and whatever two nodes both send while a table moves is sent once.
///
/// A node that takes a table over attaches the streams it already holds to it afresh, with a
/// snapshot: it cannot know which events the bot has. When such a snapshot is past the last
/// seq the bot was sent, the events in between (committed by the old owner but not yet
/// relayed when it died) are fetched from the new owner with WatchTable `from_seq` and sent
/// instead, and the table's other messages wait for them: the bot's stream resumes without a
/// gap or a duplicate.
pub(crate) fn watch_bot_everywhere(
    (api, bot): (Arc<Api>, Arc<BotRow>),
    fw: Arc<Forwarder>,
    md: MetadataMap,
    here: WatchStream<BotShape>,
    from_seq: HashMap<String, u64>,
) -> Frames<BotShape> {
    let (tx, rx) = mpsc::channel(PEER_BUFFER);
    tokio::spawn(merge((api, bot), fw, md, here, from_seq, tx));
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// The most events a merge fetches in place of a snapshot; beyond, the snapshot stands, as on
/// a single node, which resumes a WatchBot stream with events only when they fit its buffer.
pub(super) const CATCH_UP_MAX: u64 = (crate::service::BOT_STREAM_BUFFER / 2) as u64;

/// How long fetching them may take before the snapshot is sent after all. The table's
/// messages wait meanwhile (a decision among them eats into the bot's deadline), and the node
/// asked has just sent the snapshot, so it answers at once or not at all.
pub(super) const CATCH_UP_WAIT: Duration = Duration::from_secs(2);

pub(super) type Out = mpsc::Sender<Result<Frame<pb::WatchBotResponse>, Status>>;

/// The events fetched for a table in place of its snapshot (`None`: they could not be had).
pub(super) type Caught = (String, Option<Vec<pb::Event>>);

/// A table catching up: the snapshot it replaces, and the table's messages that came
/// meanwhile, in order, each with the node that sent it.
pub(super) type CatchingUp = (BotFrame, Vec<(BotFrame, String)>);

pub(super) type BotFrame = Frame<pb::WatchBotResponse>;

/// The merge's state: what was sent, and the tables catching up.
pub(super) struct Merge {
    /// This node, and the bot: a table caught up from this node is read from its actor.
    api: Arc<Api>,
    bot: Arc<BotRow>,
    own: String,
    fw: Arc<Forwarder>,
    md: MetadataMap,
    seen: Seen,
    /// Per table catching up (see [`CatchingUp`]).
    catching: HashMap<String, CatchingUp>,
    caught: mpsc::Sender<Caught>,
    tx: Out,
}

/// The bot went away.
pub(super) struct Gone;

impl Merge {
    async fn send(&self, frame: Frame<pb::WatchBotResponse>) -> Result<(), Gone> {
        self.tx.send(Ok(frame)).await.map_err(|_| Gone)
    }

    /// Sends a frame that node `from` sent on to the bot, once, in its table's order.
    async fn offer(&mut self, frame: Frame<pb::WatchBotResponse>, from: &str) -> Result<(), Gone> {
        use pb::watch_bot_response::Kind;
        let Some(msg) = decoded(&frame) else {
            return self.send(frame).await;
        };
        let table = msg.table_id.clone();
        let Some(kind) = &msg.kind else {
            return self.send(frame).await;
        };
        if matches!(kind, Kind::Heartbeat(_)) {
            return self.send(frame).await;
        }
        let behind = match kind {
            Kind::Snapshot(v) => self.seen.behind(&table, v.seq),
            _ => None,
        };
        let holding = self.catching.contains_key(&table);
        let admit = !holding && behind.is_none() && self.seen.admit(&table, kind);
        drop(msg);
        if let Some((_, held)) = self.catching.get_mut(&table) {
            held.push((frame, from.to_string()));
            return Ok(());
        }
        if let Some((last, to)) = behind {
            if from == self.own {
                // The snapshot came from this node: its own actor has the events.
                tokio::spawn(catch_up_here(
                    self.api.clone(),
                    self.bot.clone(),
                    table.clone(),
                    (last, to),
                    self.caught.clone(),
                ));
            } else {
                tokio::spawn(catch_up(
                    self.fw.clone(),
                    from.to_string(),
                    self.md.clone(),
                    table.clone(),
                    (last, to),
                    self.caught.clone(),
                ));
            }
            self.catching.insert(table, (frame, Vec::new()));
            return Ok(());
        }
        if admit {
            self.send(frame).await?;
        }
        Ok(())
    }

    /// A table's catch-up is over: its events (or, failing them, its snapshot), then what
    /// waited for them.
    async fn caught_up(&mut self, (table, events): Caught) -> Result<(), Gone> {
        use pb::watch_bot_response::Kind;
        let Some((snapshot, held)) = self.catching.remove(&table) else {
            return Ok(());
        };
        match events {
            Some(events) => {
                tracing::debug!(table = %table, events = events.len(), "WatchBot caught up");
                for e in events {
                    let kind = Kind::Event(e);
                    if self.seen.admit(&table, &kind) {
                        let msg = pb::WatchBotResponse {
                            table_id: table.clone(),
                            kind: Some(kind),
                        };
                        self.send(Frame::Msg(msg)).await?;
                    }
                }
            }
            None => {
                tracing::info!(table = %table, "WatchBot could not fetch the events a moved table's snapshot skips; the snapshot is sent");
                let admit = decoded(&snapshot)
                    .and_then(|m| m.kind.as_ref().map(|k| self.seen.admit(&table, k)))
                    .unwrap_or(true);
                if admit {
                    self.send(snapshot).await?;
                }
            }
        }
        for (frame, from) in held {
            self.offer(frame, &from).await?;
        }
        Ok(())
    }
}

/// WatchTable of `table` on the node at `addr` (the bot's own view there) from seq `last`:
/// the events up to `to`, contiguous, within [`CATCH_UP_WAIT`].
pub(super) async fn catch_up(
    fw: Arc<Forwarder>,
    addr: String,
    md: MetadataMap,
    table: String,
    (last, to): (u64, u64),
    out: mpsc::Sender<Caught>,
) {
    let fetch = async {
        let mut client = fw.client(&addr).ok()?;
        let req = pb::WatchTableRequest {
            table_id: table.clone(),
            from_seq: Some(last),
        };
        let mut stream = client
            .watch_table(fw.request(&md, req, None))
            .await
            .ok()?
            .into_inner();
        let mut events: Vec<pb::Event> = Vec::new();
        while let Some(m) = stream.message().await.ok()? {
            if let Some(done) = gather(&mut events, m.kind, (last, to)) {
                return done.then_some(events);
            }
        }
        None
    };
    let events = tokio::time::timeout(CATCH_UP_WAIT, fetch)
        .await
        .ok()
        .flatten();
    let _ = out.send((table, events)).await;
}

/// [`catch_up`] of a table this node plays: the same events, from its actor (a WatchTable
/// from `last` in the bot's own view), with no call to itself over gRPC.
pub(super) async fn catch_up_here(
    api: Arc<Api>,
    bot: Arc<BotRow>,
    table: String,
    (last, to): (u64, u64),
    out: mpsc::Sender<Caught>,
) {
    use pb::watch_table_response::Kind;
    let fetch = async {
        let (rx, shared) = api
            .tables
            .call(&table, |reply| Command::Watch {
                bot: bot.id.clone(),
                from_seq: Some(last),
                reply,
            })
            .await
            .ok()?
            .ok()?;
        let mut stream = api.table_stream(&bot, rx, shared, Some(last), None);
        let mut events: Vec<pb::Event> = Vec::new();
        while let Some(frame) = stream.next().await {
            let kind = match frame.ok()? {
                Frame::Msg(m) => m.kind,
                Frame::Shared { event, .. } => Some(Kind::Event(pb::Event::decode(event).ok()?)),
                Frame::Encoded(bytes) => pb::WatchTableResponse::decode(&bytes[..]).ok()?.kind,
            };
            if let Some(done) = gather(&mut events, kind, (last, to)) {
                return done.then_some(events);
            }
        }
        None
    };
    let events = tokio::time::timeout(CATCH_UP_WAIT, fetch)
        .await
        .ok()
        .flatten();
    let _ = out.send((table, events)).await;
}

/// One WatchTable message of a catch-up from `last` to `to`: `None` to read on, `Some(true)`
/// when `events` holds them all, `Some(false)` when the gap cannot be filled exactly (a
/// snapshot, an event out of order).
fn gather(
    events: &mut Vec<pb::Event>,
    kind: Option<pb::watch_table_response::Kind>,
    (last, to): (u64, u64),
) -> Option<bool> {
    use pb::watch_table_response::Kind;
    match kind {
        Some(Kind::Event(e)) if e.seq == last + 1 + events.len() as u64 => {
            let done = e.seq >= to;
            events.push(e);
            done.then_some(true)
        }
        Some(Kind::Heartbeat(_)) => None,
        _ => Some(false),
    }
}

pub(super) async fn merge(
    (api, bot): (Arc<Api>, Arc<BotRow>),
    fw: Arc<Forwarder>,
    md: MetadataMap,
    mut here: WatchStream<BotShape>,
    from_seq: HashMap<String, u64>,
    tx: Out,
) {
    let (peer_tx, mut peer_rx) = mpsc::channel::<(pb::WatchBotResponse, Arc<str>)>(PEER_BUFFER);
    let (caught_tx, mut caught_rx) = mpsc::channel::<Caught>(16);
    let own: String = fw.addr().to_string();
    let mut m = Merge {
        api,
        bot,
        own: own.clone(),
        fw: fw.clone(),
        md: md.clone(),
        seen: Seen {
            last: from_seq,
            ..Seen::default()
        },
        catching: HashMap::new(),
        caught: caught_tx,
        tx,
    };
    let stop = CancellationToken::new();
    let _stop = stop.clone().drop_guard();
    let mut pipes: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut tick = tokio::time::interval(bete_cluster::pass_interval(fw.lease_ttl()));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let sent = tokio::select! {
            () = m.tx.closed() => return,
            item = here.next() => match item {
                None => return,
                Some(Err(s)) => {
                    let _ = m.tx.send(Err(s)).await;
                    return;
                }
                Some(Ok(frame)) => m.offer(frame, &own).await,
            },
            Some((msg, from)) = peer_rx.recv() => {
                // This node's own stream keeps the heartbeat.
                if matches!(msg.kind, Some(pb::watch_bot_response::Kind::Heartbeat(_)) | None) {
                    continue;
                }
                m.offer(Frame::Msg(msg), &from).await
            }
            Some(caught) = caught_rx.recv() => m.caught_up(caught).await,
            _ = tick.tick() => {
                let peers = match fw.live_peers().await {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot list live peers");
                        continue;
                    }
                };
                pipes.retain(|node, pipe| {
                    let keep = !pipe.is_finished() && peers.iter().any(|(n, _)| n == node);
                    if !keep {
                        pipe.abort();
                    }
                    keep
                });
                for (node, addr) in peers {
                    if pipes.contains_key(&node) {
                        continue;
                    }
                    let from_seq = m.seen.last.clone();
                    let pipe = pipe_bot(fw.clone(), addr, md.clone(), from_seq, peer_tx.clone(), stop.clone());
                    pipes.insert(node, tokio::spawn(pipe));
                }
                Ok(())
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

/// One internal WatchBot on a peer, until it ends (the merge opens it again while the peer is
/// live).
pub(super) async fn pipe_bot(
    fw: Arc<Forwarder>,
    addr: String,
    md: MetadataMap,
    from_seq: HashMap<String, u64>,
    out: mpsc::Sender<(pb::WatchBotResponse, Arc<str>)>,
    stop: CancellationToken,
) {
    let from: Arc<str> = Arc::from(addr.as_str());
    let Ok(mut client) = fw.client(&addr) else {
        return;
    };
    let req = fw.request(
        &md,
        pb::WatchBotRequest {
            from_seq,
            ..Default::default()
        },
        None,
    );
    let mut stream = match client.watch_bot(req).await {
        Ok(r) => r.into_inner(),
        Err(s) => {
            tracing::debug!(peer = %addr, code = ?s.code(), "peer WatchBot refused");
            return;
        }
    };
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            m = stream.message() => match m {
                Ok(Some(m)) => {
                    if out.send((m, from.clone())).await.is_err() {
                        return;
                    }
                }
                _ => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pb::watch_bot_response::Kind;

    fn seated(seat: u32) -> Kind {
        Kind::Seated(pb::Seated {
            table_id: "t".into(),
            seat,
            table: None,
        })
    }

    fn snapshot(seq: u64) -> Kind {
        Kind::Snapshot(pb::SeatView {
            seq,
            ..Default::default()
        })
    }

    fn event(seq: u64, body: Option<pb::event::Body>) -> Kind {
        Kind::Event(pb::Event {
            seq,
            body,
            ..Default::default()
        })
    }

    /// A table's first words pass; the same seat announced again by a new owner does not, and
    /// its snapshot past what was sent is caught up; a seat left and taken again is news, and
    /// its snapshot goes out as it is.
    #[test]
    fn a_moved_table_is_caught_up_and_a_rejoined_one_starts_afresh() {
        let mut seen = Seen::default();
        assert!(seen.admit("t", &seated(0)));
        assert_eq!(seen.behind("t", 5), None, "the first snapshot");
        assert!(seen.admit("t", &snapshot(5)));
        assert!(seen.admit("t", &event(6, None)));
        assert!(seen.admit("t", &event(7, None)));
        // The table moves: the new owner announces the seat again, with a snapshot at 9.
        assert!(!seen.admit("t", &seated(0)), "no news");
        assert_eq!(seen.behind("t", 9), Some((7, 9)));
        assert_eq!(seen.behind("t", 7), None, "nothing skipped");
        assert_eq!(
            seen.behind("t", 7 + CATCH_UP_MAX + 1),
            None,
            "too many to resume"
        );
        // The bot leaves its seat and takes it again later.
        let left = pb::event::Body::SeatLeft(pb::SeatLeft {
            seat: 0,
            bot_id: "b".into(),
        });
        assert!(seen.admit("t", &event(8, Some(left))));
        assert!(seen.admit("t", &seated(0)), "a seat taken again is news");
        assert_eq!(seen.behind("t", 12), None, "its snapshot starts afresh");
        assert!(seen.admit("t", &snapshot(12)));
        assert_eq!(
            seen.behind("t", 14),
            Some((12, 14)),
            "and later moves catch up again"
        );
    }
}
