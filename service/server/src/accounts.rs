//! Accounts (the owners of bots) and bot registration.
//!
//! A bot registered with an account token belongs to that account; a bot registered without
//! one is its own owner, as before accounts existed, so older SDK code keeps working on a
//! server with open signup. With open signup off, accounts come only from the operator (admin
//! token) and bots only from accounts: one person cannot mint owners at will to seat several
//! of their bots at one ladder table.

use std::sync::Arc;

use bete_api::pb;
use bete_api::pb::account_service_server::AccountService;
use tonic::{Request, Response, Status};

use crate::auth::{self, hex};
use crate::now_ms;
use crate::service::Api;
use crate::store::{AccountRow, BotRow};
use bete_base::status::{FieldViolation, ServerError};
use bete_table::project::timestamp;

/// Account tokens start with this, bot tokens with `bete_`: a call can tell them apart
/// without a lookup, and a bot token sent to RegisterBot is not mistaken for an account's.
pub const ACCOUNT_TOKEN_PREFIX: &str = "beteacct_";

/// The most bots one account may register (every version counts): bounds what one owner can
/// make the server store and the scheduler consider.
pub const MAX_BOTS_PER_ACCOUNT: usize = 100;

/// Longest bot version.
const MAX_VERSION_CHARS: usize = 32;

/// The account of `authorization: Bearer <account token>`, if the call carries one.
async fn calling_account(
    api: &Api,
    md: &tonic::metadata::MetadataMap,
    peer: Option<std::net::IpAddr>,
) -> Result<Option<AccountRow>, ServerError> {
    let Ok(token) = auth::bearer(md) else {
        return Ok(None);
    };
    if !token.starts_with(ACCOUNT_TOKEN_PREFIX) {
        return Ok(None);
    }
    // Account tokens are not cached: every one is counted against the failure budget's block.
    api.auth.not_blocked(peer)?;
    let account = api
        .store
        .account_by_token_hash(auth::token_hash(token))
        .await?
        .ok_or_else(|| {
            api.auth.failed(
                peer,
                ServerError::Unauthenticated(
                    "unknown account token: create an account with AccountService.CreateAccount",
                ),
            )
        })?;
    Ok(Some(account))
}

/// BotService.RegisterBot.
pub async fn register_bot(
    api: &Api,
    md: &tonic::metadata::MetadataMap,
    peer: Option<std::net::IpAddr>,
    req: pb::RegisterBotRequest,
) -> Result<pb::RegisterBotResponse, ServerError> {
    let mut bad = Vec::new();
    // Printable, bounded, and not a name the server uses (`house:*`, ...): see names.rs.
    if let Err(description) = bete_base::names::check_name(&req.name) {
        bad.push(FieldViolation {
            field: "name".into(),
            description,
        });
    }
    if let Err(description) = bete_base::names::check_owner(&req.owner) {
        bad.push(FieldViolation {
            field: "owner".into(),
            description,
        });
    }
    let version = if req.version.is_empty() {
        "1".to_string()
    } else {
        req.version.clone()
    };
    if version.chars().count() > MAX_VERSION_CHARS || !version.chars().all(|c| c.is_ascii_graphic())
    {
        bad.push(FieldViolation {
            field: "version".into(),
            description: format!(
                "must be 1-{MAX_VERSION_CHARS} printable ASCII characters without spaces"
            ),
        });
    }
    if !bad.is_empty() {
        return Err(ServerError::InvalidArgument(bad));
    }
    let account = calling_account(api, md, peer).await?;
    if account.is_none() && !api.config.open_signup {
        return Err(ServerError::SignupClosed(
            "open signup is off on this server: register the bot with your account's token \
             (`authorization: Bearer <account token>`); accounts come from the operator",
        ));
    }
    if let Some(a) = &account {
        api.limits().check_account_registration(&a.id)?;
        let bots = api.store.bots_of_account(a.id.clone()).await?;
        if bots.len() >= MAX_BOTS_PER_ACCOUNT {
            return Err(ServerError::AccountBotLimit(MAX_BOTS_PER_ACCOUNT as u32));
        }
        if bots
            .iter()
            .any(|b| b.name == req.name && b.version == version)
        {
            return Err(ServerError::BotVersionExists {
                name: req.name,
                version,
            });
        }
    }
    let token = auth::new_token();
    let bot = BotRow {
        id: auth::new_bot_id(),
        name: req.name,
        owner: req.owner,
        token_hash: auth::token_hash(&token),
        created_at_ms: now_ms(),
        account_id: account.map(|a| a.id),
        version,
    };
    api.store.create_bot(bot.clone()).await?;
    let (bot_id, owner_id, version) = (
        bot.id.clone(),
        bot.owner_id().to_string(),
        bot.version.clone(),
    );
    api.auth.remember(bot);
    tracing::info!(bot = %bot_id, owner = %owner_id, "bot registered");
    Ok(pb::RegisterBotResponse {
        bot_id,
        token,
        owner_id,
        version,
    })
}

/// BotService.RotateBotToken: the caller is authenticated first (an account token, or a bot
/// token), then must own the bot.
pub async fn rotate_bot_token(
    api: &Api,
    md: &tonic::metadata::MetadataMap,
    peer: Option<std::net::IpAddr>,
    req: pb::RotateBotTokenRequest,
) -> Result<pb::RotateBotTokenResponse, ServerError> {
    let account = calling_account(api, md, peer).await?;
    let caller = match account {
        Some(_) => None,
        None => {
            let bot = api.auth.authenticate(md, peer).await?;
            api.limits().check_call(&bot)?;
            Some(bot)
        }
    };
    if req.bot_id.is_empty() || req.bot_id.len() > 64 {
        return Err(ServerError::field(
            "bot_id",
            "must be a bot's id (1-64 characters)",
        ));
    }
    let bot = api
        .store
        .bot(req.bot_id.clone())
        .await?
        .ok_or_else(|| ServerError::BotNotFound(req.bot_id.clone()))?;
    let owns = match (&account, &caller, &bot.account_id) {
        (Some(a), _, Some(owner)) => a.id == *owner,
        (None, Some(c), None) => c.id == bot.id,
        _ => false,
    };
    if !owns {
        return Err(ServerError::NotBotOwner(match bot.account_id {
            Some(_) => {
                "only the bot's account may rotate its token: send the account's token \
                 (`authorization: Bearer <account token>`)"
            }
            None => "a bot without an account rotates its own token: send that bot's token",
        }));
    }
    let token = api.auth.rotate(&bot.id).await?;
    tracing::info!(bot = %bot.id, "bot token rotated");
    Ok(pb::RotateBotTokenResponse {
        bot_id: bot.id,
        token,
    })
}

/// `AccountService`.
#[derive(Clone, Debug)]
pub struct AccountApi(pub Arc<Api>);

#[tonic::async_trait]
impl AccountService for AccountApi {
    async fn create_account(
        &self,
        request: Request<pb::CreateAccountRequest>,
    ) -> Result<Response<pb::CreateAccountResponse>, Status> {
        let api = &self.0;
        api.call("CreateAccount", async {
            api.gate_message(request.get_ref())?;
            // The address's count budget, taken just before the account is stored (and given
            // back if it is not): None when the call is not held to it.
            let mut counted = None;
            if !api.config.open_signup {
                api.auth.require_admin(request.metadata())?;
            } else if request.peer_certs().is_none() {
                // Open signup: anyone may call, so the caller's address is held to a rate and a
                // count (with signup closed only the operator creates accounts, and is not
                // held). A client with a certificate of the client CA (`--tls-client-ca`) is a
                // trusted farm.
                let addr = request.remote_addr().map(|a| a.ip());
                api.limits().check_account_creation(addr)?;
                counted = Some(addr);
            }
            let req = request.into_inner();
            // The rules of a bot's name (names.rs): an account's name is shown beside its bots.
            if let Err(description) = bete_base::names::check_name(&req.name) {
                return Err(ServerError::InvalidArgument(vec![FieldViolation {
                    field: "name".into(),
                    description,
                }]));
            }
            let token = format!("{ACCOUNT_TOKEN_PREFIX}{}", hex(&rand::random::<[u8; 32]>()));
            let account = AccountRow {
                id: format!("a_{}", hex(&rand::random::<[u8; 8]>())),
                name: req.name,
                token_hash: auth::token_hash(&token),
                created_at_ms: now_ms(),
            };
            let account_id = account.id.clone();
            if let Some(addr) = counted {
                api.limits().reserve_account(addr)?;
            }
            if let Err(e) = api.store.create_account(account).await {
                if let Some(addr) = counted {
                    api.limits().release_account(addr);
                }
                return Err(e.into());
            }
            tracing::info!(account = %account_id, "account created");
            Ok(pb::CreateAccountResponse { account_id, token })
        })
        .await
    }

    async fn list_account_bots(
        &self,
        request: Request<pb::ListAccountBotsRequest>,
    ) -> Result<Response<pb::ListAccountBotsResponse>, Status> {
        let api = &self.0;
        api.call("ListAccountBots", async {
            api.gate_message(request.get_ref())?;
            let account = calling_account(api, request.metadata(), crate::service::peer(&request))
                .await?
                .ok_or(ServerError::Unauthenticated(
                    "send the account's token as `authorization: Bearer <account token>`",
                ))?;
            let bots = api.store.bots_of_account(account.id.clone()).await?;
            Ok(pb::ListAccountBotsResponse {
                account_id: account.id,
                bots: bots
                    .into_iter()
                    .map(|b| pb::AccountBot {
                        bot_id: b.id,
                        name: b.name,
                        version: b.version,
                        created_at: Some(timestamp(b.created_at_ms)),
                    })
                    .collect(),
            })
        })
        .await
    }
}
