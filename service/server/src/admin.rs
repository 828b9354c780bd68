//! `AdminService`: operator calls, authorised by the operator's admin token only.

use std::sync::Arc;

use bete_api::pb;
use bete_api::pb::admin_service_server::AdminService;
use tonic::{Request, Response, Status};

use crate::service::Api;
use bete_base::status::ServerError;
use bete_table::Command;
use bete_table::project;

/// Longest reason an operator may give.
const MAX_REASON_CHARS: usize = 200;

/// `AdminService`.
#[derive(Clone, Debug)]
pub struct AdminApi(pub Arc<Api>);

#[tonic::async_trait]
impl AdminService for AdminApi {
    async fn stop_table(
        &self,
        request: Request<pb::StopTableRequest>,
    ) -> Result<Response<pb::StopTableResponse>, Status> {
        let api = &self.0;
        api.call("StopTable", async {
            api.auth.require_admin(request.metadata())?;
            let req = request.into_inner();
            if req.table_id.is_empty() || req.table_id.len() > 64 {
                return Err(ServerError::field("table_id", "must be 1-64 characters"));
            }
            if req.reason.chars().count() > MAX_REASON_CHARS
                || req.reason.chars().any(|c| !bete_base::names::printable(c))
            {
                return Err(ServerError::field(
                    "reason",
                    format!("must be at most {MAX_REASON_CHARS} printable characters"),
                ));
            }
            let reason = if req.reason.is_empty() {
                "stopped by an operator".to_string()
            } else {
                format!("stopped by an operator: {}", req.reason)
            };
            let status = api
                .tables
                .call(&req.table_id, |reply| Command::Close {
                    reason: reason.clone(),
                    reply,
                })
                .await??;
            tracing::warn!(table = %req.table_id, "table stopped by the operator");
            Ok(pb::StopTableResponse {
                table: Some(project::table_to_pb(&status)),
            })
        })
        .await
    }
}
