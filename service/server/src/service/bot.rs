//! BotService: registering bots and rotating their tokens.

use super::{Api, peer};
use bete_api::pb;
use bete_api::pb::bot_service_server::BotService;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// `BotService`.
#[derive(Clone, Debug)]
pub struct BotApi(pub Arc<Api>);

#[tonic::async_trait]
impl BotService for BotApi {
    async fn register_bot(
        &self,
        request: Request<pb::RegisterBotRequest>,
    ) -> Result<Response<pb::RegisterBotResponse>, Status> {
        let api = &self.0;
        api.call("RegisterBot", async {
            api.gate(&request)?;
            // A client that presented a certificate of the client CA (a trusted bot farm,
            // `--tls-client-ca`) is not held to the per-address limit: it may sit behind one
            // address with many bots. rustls verified the certificate before any call.
            let counted = request.peer_certs().is_none();
            let addr = request.remote_addr().map(|a| a.ip());
            if counted {
                api.limits().check_registration(addr)?;
                // The count budget: every bot from the address, through any account.
                api.limits().reserve_bot(addr)?;
            }
            let from = peer(&request);
            let (md, _, req) = request.into_parts();
            let registered = crate::accounts::register_bot(api, &md, from, req).await;
            if counted && registered.is_err() {
                api.limits().release_bot(addr);
            }
            registered
        })
        .await
    }

    async fn rotate_bot_token(
        &self,
        request: Request<pb::RotateBotTokenRequest>,
    ) -> Result<Response<pb::RotateBotTokenResponse>, Status> {
        let api = &self.0;
        api.call("RotateBotToken", async {
            api.gate(&request)?;
            let from = peer(&request);
            let (md, _, req) = request.into_parts();
            crate::accounts::rotate_bot_token(api, &md, from, req).await
        })
        .await
    }
}
