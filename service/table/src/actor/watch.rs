//! Watchers and fan-out: who may see what, snapshots, and the events sent to every sink; the
//! gauges that count tables and seats.

use super::Actor;
use crate::project;
use crate::sink::{Offer, Sink, SinkTx};
use crate::{Snapshot, TableStatus, WatchItem};
use bete_base::status::ServerError;
use bete_rules::{Game, Seat, Viewer};
use bete_store::{Occupant, TableState, Visibility};
use prost::bytes::Bytes;
use std::sync::Arc;
use tokio::sync::mpsc;

impl Actor {
    pub(super) fn enter_metrics(&mut self) {
        self.update_metrics();
    }

    pub(super) fn update_metrics(&mut self) {
        let playing = self.state() == TableState::Playing;
        if playing != self.counted_playing {
            if playing {
                self.deps.metrics.tables_active.inc();
            } else {
                self.deps.metrics.tables_active.dec();
            }
            self.counted_playing = playing;
        }
        let seats = if self.state() == TableState::Finished {
            0
        } else {
            self.seats
                .iter()
                .filter(|s| matches!(s.occupant, Occupant::Bot(_)))
                .count() as i64
        };
        self.deps.metrics.seats.inc_by(seats - self.counted_seats);
        self.counted_seats = seats;
    }

    /// Let go of watchers whose streams closed.
    pub(super) fn prune_watchers(&mut self) {
        let before = self.sinks.len();
        self.sinks.retain(|s| !s.is_gone());
        self.update_watchers(before);
    }

    pub(super) fn update_watchers(&mut self, before: usize) {
        let now = self.sinks.len() as i64;
        self.deps.metrics.watchers.inc_by(now - before as i64);
    }

    pub(super) fn leave_metrics(&mut self) {
        if self.counted_playing {
            self.deps.metrics.tables_active.dec();
        }
        self.deps.metrics.seats.dec_by(self.counted_seats);
        self.deps.metrics.watchers.dec_by(self.sinks.len() as i64);
        self.counted_playing = false;
        self.counted_seats = 0;
    }

    pub(super) fn seat_of(&self, bot: &str) -> Option<u8> {
        self.seats
            .iter()
            .position(|s| matches!(&s.occupant, Occupant::Bot(b) if b == bot))
            .map(|i| i as u8)
    }

    pub(super) fn viewer_of(&self, bot: &str) -> Viewer {
        match self.seat_of(bot) {
            Some(s) => Viewer::Seat(Seat(s)),
            None => Viewer::Spectator,
        }
    }

    /// A spectator may watch only listed tables; the operator any, in the spectator's view.
    fn may_watch(&self, bot: &str) -> Result<Viewer, ServerError> {
        let viewer = self.viewer_of(bot);
        if viewer == Viewer::Spectator
            && bot != crate::OPERATOR
            && self.visibility == Visibility::Private
        {
            return Err(ServerError::TablePrivate);
        }
        Ok(viewer)
    }

    /// [`Self::may_watch`], after asking the store whether a finished ladder table, private
    /// here, was listed since it loaded: its set's rating lists it in the store, perhaps on
    /// another node (the ladder's leader). Only a finished table can have been rated, so a
    /// playing table never waits on the store here.
    pub(super) async fn readable(&mut self, bot: &str) -> Result<Viewer, ServerError> {
        let refused = match self.may_watch(bot) {
            Err(ServerError::TablePrivate) => ServerError::TablePrivate,
            r => return r,
        };
        if self.meta.ladder.is_none() || self.state() != TableState::Finished {
            return Err(refused);
        }
        let stored = self.deps.store.table(self.meta.id.clone()).await?;
        if stored.is_some_and(|t| t.table.visibility == Visibility::Listed) {
            self.visibility = Visibility::Listed;
            return self.may_watch(bot);
        }
        Err(refused)
    }

    pub(super) fn snapshot(&self, viewer: Viewer) -> Snapshot {
        let view = self.game.as_ref().map(|g| g.view(viewer));
        let to_act = self.game.as_ref().and_then(Game::to_act);
        let deadline_ms = match (viewer, to_act) {
            (Viewer::Seat(s), Some(t)) if s == t => Some(self.deadline_ms()),
            _ => None,
        };
        Snapshot {
            seq: self.last_seq(),
            viewer,
            view,
            deadline_ms,
        }
    }

    pub(super) fn status(&self) -> TableStatus {
        TableStatus {
            meta: self.meta.clone(),
            visibility: self.visibility,
            seats: self.seats.clone(),
            state: self.state(),
            last_seq: self.last_seq(),
        }
    }

    /// Offer events `first..` to every watcher (projected later, each for its own viewer), then
    /// a decision to a bot stream whose seat must act.
    pub(super) fn fan_out(&mut self, first: usize, decide: bool) {
        if self.sinks.is_empty() {
            return;
        }
        let before = self.sinks.len();
        let new = &self.events[first..];
        // Each event's public encoding, made at most once and shared by every watcher who sees
        // no more than that (most events, most watchers).
        let mut public: Vec<Option<Bytes>> = vec![None; new.len()];
        let to_act = self.game.as_ref().and_then(Game::to_act);
        let mut sinks = std::mem::take(&mut self.sinks);
        sinks.retain_mut(|sink| {
            let viewer = self.viewer_of(&sink.bot);
            for (e, bytes) in new.iter().zip(public.iter_mut()) {
                let shared = project::sees_only_public(e, viewer).then(|| {
                    bytes
                        .get_or_insert_with(|| project::public_event_bytes(&self.meta, e))
                        .clone()
                });
                let item = WatchItem::Event {
                    event: e.clone(),
                    viewer,
                    shared,
                };
                if let Offer::Gone { too_slow } = sink.offer(&self.meta, item) {
                    if too_slow {
                        self.deps.metrics.watchers_dropped.inc();
                    }
                    return false;
                }
            }
            if decide
                && matches!(sink.tx, SinkTx::Bot(_))
                && to_act.is_some()
                && viewer == Viewer::Seat(to_act.unwrap_or_default())
                && !self.forfeited.contains(&sink.bot)
            {
                let snap = Box::new(self.snapshot(viewer));
                if let Offer::Gone { too_slow } = sink.offer(&self.meta, WatchItem::Decision(snap))
                {
                    if too_slow {
                        self.deps.metrics.watchers_dropped.inc();
                    }
                    return false;
                }
            }
            true
        });
        self.sinks = sinks;
        self.update_watchers(before);
    }

    pub(super) fn watch(
        &mut self,
        bot: String,
        from_seq: Option<u64>,
    ) -> Result<mpsc::Receiver<crate::Outbound>, ServerError> {
        let viewer = self.may_watch(&bot)?;
        let last = self.last_seq();
        let backlog = match from_seq {
            Some(f) if f > last => {
                return Err(ServerError::FromSeqOutOfRange {
                    from_seq: f,
                    last_seq: last,
                    table_id: None,
                });
            }
            Some(f) => &self.events[f as usize..],
            None => &[],
        };
        let (tx, rx) = mpsc::channel(backlog.len() + self.deps.watch_buffer.max(4));
        let mut sink = Sink {
            bot,
            tx: SinkTx::Table(tx),
            last_seq: from_seq.unwrap_or(0),
        };
        if from_seq.is_none() {
            sink.offer(
                &self.meta,
                WatchItem::Snapshot(Box::new(self.snapshot(viewer))),
            );
        }
        for e in backlog.iter().cloned() {
            sink.offer(
                &self.meta,
                WatchItem::Event {
                    event: e,
                    viewer,
                    shared: None,
                },
            );
        }
        if self.state() != TableState::Finished {
            self.sinks.push(sink);
            self.deps.metrics.watchers.inc();
        }
        Ok(rx)
    }

    pub(super) fn watch_bot(
        &mut self,
        bot: String,
        stream: crate::BotStream,
        from_seq: Option<u64>,
    ) {
        if self
            .sinks
            .iter()
            .any(|s| matches!(&s.tx, SinkTx::Bot(b) if b.id == stream.id))
        {
            return;
        }
        let Some(seat) = self.seat_of(&bot) else {
            return;
        };
        let viewer = Viewer::Seat(Seat(seat));
        let last = self.last_seq();
        let room = stream.tx.capacity() / 2;
        let mut sink = Sink {
            bot,
            tx: SinkTx::Bot(stream),
            last_seq: 0,
        };
        let mut ok =
            sink.offer(&self.meta, WatchItem::Seated(seat, Box::new(self.status()))) == Offer::Sent;
        match from_seq {
            // Resume with the missed events when they fit; otherwise a fresh snapshot.
            Some(f) if f <= last && ((last - f) as usize) < room => {
                for e in self.events[f as usize..].iter().cloned() {
                    let item = WatchItem::Event {
                        event: e,
                        viewer,
                        shared: None,
                    };
                    ok = ok && sink.offer(&self.meta, item) == Offer::Sent;
                }
            }
            _ => {
                // Information only: on WatchBot the DecisionRequest below is the one message
                // to act on, so the snapshot carries no legal actions and no deadline.
                let mut snap = self.snapshot(viewer);
                if let Some(view) = &mut snap.view {
                    view.legal_actions.clear();
                }
                snap.deadline_ms = None;
                ok = ok
                    && sink.offer(&self.meta, WatchItem::Snapshot(Box::new(snap))) == Offer::Sent;
            }
        }
        if self.game.as_ref().and_then(Game::to_act) == Some(Seat(seat)) {
            ok = ok
                && sink.offer(
                    &self.meta,
                    WatchItem::Decision(Box::new(self.snapshot(viewer))),
                ) == Offer::Sent;
        }
        if ok && self.state() != TableState::Finished {
            if let SinkTx::Bot(b) = &sink.tx
                && let Ok(mut tables) = b.tables.lock()
            {
                tables.push(Arc::downgrade(&self.shared));
            }
            self.sinks.push(sink);
            self.deps.metrics.watchers.inc();
        }
    }
}
