//! The two event streams, WatchTable and WatchBot, served through `FrameCodec` so an
//! event's shared encoding goes out as is.

use super::{Api, BOT_STREAM_BUFFER, OPERATOR, PEER_STREAM_QUIET, SPECTATOR, table_id};
use crate::store::BotRow;
use bete_api::pb;
use bete_base::status::ServerError;
use bete_table::stream::{BotShape, Frame, Frames, TableShape, WatchStream};
use bete_table::{BotStream, Command};
use std::sync::Arc;
use tokio::sync::mpsc;
use tonic::codegen::BoxFuture;
use tonic::server::ServerStreamingService;
use tonic::{Request, Response, Status};

impl Api {
    pub(super) async fn watch_table(
        self: &Arc<Self>,
        request: Request<pb::WatchTableRequest>,
    ) -> Result<Response<Frames<TableShape>>, Status> {
        let api = self;
        api.call("WatchTable", async {
            let bot = api.begin_read(&request).await?;
            // A peer's proxy of a caller's stream (forward.rs) was counted at its edge.
            let from_peer = api.forwarded_by(request.metadata()).is_some();
            // The anonymous spectators share no bot's count (they are bounded by the
            // connection cap and the streams per connection).
            let permit = if bot.id == SPECTATOR || from_peer {
                None
            } else {
                Some(api.limits().open_stream(&bot.id)?)
            };
            let (md, _, req) = request.into_parts();
            let id = table_id(&req.table_id)?;
            let from_seq = req.from_seq;
            let watcher = bot.id.clone();
            let watched = api
                .tables
                .call(&id, move |reply| Command::Watch {
                    bot: watcher.clone(),
                    from_seq,
                    reply,
                })
                .await
                .and_then(|r| r);
            match watched {
                Ok((rx, shared)) => Ok(Box::pin(
                    api.table_stream(&bot, rx, shared, from_seq, permit),
                ) as Frames<TableShape>),
                // A peer plays it: its stream, through this node (forward.rs).
                Err(ServerError::TableElsewhere { addr, .. })
                    if api.forward.is_some() && !from_peer && !addr.is_empty() =>
                {
                    Ok(crate::forward::watch_table_elsewhere(
                        api.clone(),
                        md,
                        bot,
                        id,
                        from_seq,
                        addr,
                        permit,
                    ))
                }
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// This node's WatchTable stream of a table it plays, from the actor's channel.
    pub(crate) fn table_stream(
        &self,
        bot: &BotRow,
        rx: mpsc::Receiver<bete_table::Outbound>,
        shared: Arc<bete_table::Shared>,
        from_seq: Option<u64>,
        permit: Option<crate::limits::StreamPermit>,
    ) -> WatchStream<TableShape> {
        let stream = WatchStream::<TableShape>::new(
            rx,
            self.config.heartbeat_interval,
            self.tables.deps.shutdown.stopped(),
            from_seq.unwrap_or(0),
            None,
            Some(Box::new(move || {
                drop(permit);
                shared.watcher_left.notify_one()
            })),
        );
        // The anonymous spectator has no token to revoke, nor the operator a bot's.
        if bot.id == SPECTATOR || bot.id == OPERATOR {
            stream
        } else {
            stream.revocable(self.auth.revocation(&bot.token_hash))
        }
    }

    pub(super) async fn watch_bot(
        self: &Arc<Self>,
        request: Request<pb::WatchBotRequest>,
    ) -> Result<Response<Frames<BotShape>>, Status> {
        let api = self;
        api.call("WatchBot", async {
            let bot = api.begin(&request).await?;
            // Taken at once: a rotation while the bot's tables load still ends the stream.
            let revoked = api.auth.revocation(&bot.token_hash);
            // A peer's stream (the tables this node plays, for the bot's stream on that peer):
            // counted there.
            let from_peer = api.forwarded_by(request.metadata()).is_some();
            let permit = (!from_peer)
                .then(|| api.limits().open_stream(&bot.id))
                .transpose()?;
            let (md, _, req) = request.into_parts();
            let (tx, rx) = mpsc::channel(BOT_STREAM_BUFFER);
            let stream = BotStream::new(api.tables.new_stream_id(), tx);
            // Register first, then list: a join racing with this call attaches the stream either way.
            api.tables.add_bot_stream(&bot.id, stream.clone());
            // `exclusive`: this stream is the bot's only one; the older ones end and their
            // tables let go of them (this one follows the tables below).
            if req.exclusive {
                for old in api.tables.take_other_bot_streams(&bot.id, stream.id) {
                    old.replace();
                }
            }
            let resume = req.from_seq.keys().cloned().collect();
            let mut following = Vec::new();
            for id in api.store.tables_of_bot(bot.id.clone(), resume).await? {
                if let Ok(handle) = api.tables.get_unattached(&id).await {
                    following.push((id, handle));
                }
            }
            // A resume point beyond a table's last event fails the whole stream at open, as
            // WatchTable does, before any table is told of it: such a seq never came from that
            // table (another table's seq, a table restored from an older backup), and a silent
            // fresh snapshot would hide the bug. Entries for tables the bot does not sit at are
            // ignored. The published seq is never behind what a stream was sent.
            let beyond = following.iter().find_map(|(id, handle)| {
                let from_seq = req.from_seq.get(id).copied()?;
                let last_seq = handle.shared.last_seq();
                (from_seq > last_seq).then(|| ServerError::FromSeqOutOfRange {
                    from_seq,
                    last_seq,
                    table_id: Some(id.clone()),
                })
            });
            if let Some(e) = beyond {
                api.tables.remove_bot_stream(&bot.id, stream.id);
                return Err(e);
            }
            for (id, handle) in following {
                handle
                    .tell(Command::WatchBot {
                        bot: bot.id.clone(),
                        stream: stream.clone(),
                        from_seq: req.from_seq.get(&id).copied(),
                    })
                    .await;
            }
            // An entered bot is online now: its ladders may seat it at once.
            api.ladders.poke();
            let tables = api.tables.clone();
            let (bot_id, stream_id, following) = (bot.id.clone(), stream.id, stream.tables.clone());
            // A peer's stream sends no heartbeats: the bot's own node sends them on the merged
            // stream (peers' would be dropped there), and HTTP/2 pings on the peer channels
            // notice a lost peer. Idle, such streams cost the cluster nothing but memory.
            let every = if from_peer {
                PEER_STREAM_QUIET
            } else {
                api.config.heartbeat_interval
            };
            let here = WatchStream::<BotShape>::new(
                rx,
                every,
                api.tables.deps.shutdown.stopped(),
                0,
                Some(stream.cut.clone()),
                Some(Box::new(move || {
                    drop(permit);
                    tables.remove_bot_stream(&bot_id, stream_id);
                    BotStream::ring_closed(&following);
                })),
            )
            .revocable(revoked)
            .replaceable(stream.replaced.stopped());
            // The bot's tables that peers play come through their streams (forward.rs).
            Ok(match (&api.forward, from_peer) {
                (Some(fw), false) => crate::forward::watch_bot_everywhere(
                    (api.clone(), bot.clone()),
                    fw.clone(),
                    md,
                    here,
                    req.from_seq,
                ),
                _ => Box::pin(here) as Frames<BotShape>,
            })
        })
        .await
    }
}

/// TableService.WatchTable as the server serves it: frames through `FrameCodec`, so an event's
/// shared encoding goes out as is.
#[derive(Clone, Debug)]
pub struct WatchTableFrames(pub Arc<Api>);

impl ServerStreamingService<pb::WatchTableRequest> for WatchTableFrames {
    type Response = Frame<pb::WatchTableResponse>;
    type ResponseStream = Frames<TableShape>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;
    fn call(&mut self, request: Request<pb::WatchTableRequest>) -> Self::Future {
        let api = self.0.clone();
        Box::pin(async move { api.watch_table(request).await })
    }
}

/// TableService.WatchBot as the server serves it (see [`WatchTableFrames`]).
#[derive(Clone, Debug)]
pub struct WatchBotFrames(pub Arc<Api>);

impl ServerStreamingService<pb::WatchBotRequest> for WatchBotFrames {
    type Response = Frame<pb::WatchBotResponse>;
    type ResponseStream = Frames<BotShape>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;
    fn call(&mut self, request: Request<pb::WatchBotRequest>) -> Self::Future {
        let api = self.0.clone();
        Box::pin(async move { api.watch_bot(request).await })
    }
}
