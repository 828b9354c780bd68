//! `bete admin`: operator commands (AdminService), authorised by the server's admin token.

use anyhow::Context as _;
use tonic::metadata::MetadataValue;

use crate::{RpcError, pb, render};

/// Operator commands; they need the server's admin token.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AdminCommand {
    /// Stop a table that is not finished: it closes without a match (no record, no rating),
    /// its streams end with TABLE_CLOSED, and it is never played again.
    #[command(
        after_help = "Example:\n  BETE_ADMIN_TOKEN=... bete admin stop-table --server http://127.0.0.1:50051 t_0123abcd --reason 'runaway table'"
    )]
    StopTable {
        /// The server's address.
        #[arg(long, env = "BETE_SERVER", default_value = "http://127.0.0.1:50051")]
        server: String,
        #[command(flatten)]
        tls: super::common::TlsArgs,
        /// The server's admin token (its --admin-token / BETE_ADMIN_TOKEN).
        #[arg(long, env = "BETE_ADMIN_TOKEN", hide_env_values = true)]
        admin_token: String,
        /// Why, for the log and for the seats (at most 200 printable characters).
        #[arg(long, default_value = "")]
        reason: String,
        /// The table to stop.
        table_id: String,
    },
}

/// Runs the subcommand.
pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        AdminCommand::StopTable {
            server,
            tls,
            admin_token,
            reason,
            table_id,
        } => {
            let options = tls.options(&server)?;
            let channel = crate::client::endpoint(&server, options.as_ref())
                .with_context(|| format!("bad server address {server:?}"))?
                .connect()
                .await
                .with_context(|| format!("cannot reach {server}"))?;
            let mut request = tonic::Request::new(pb::StopTableRequest { table_id, reason });
            let bearer: MetadataValue<_> = format!("Bearer {admin_token}")
                .parse()
                .context("the admin token is not valid header text")?;
            request.metadata_mut().insert("authorization", bearer);
            let table = pb::admin_service_client::AdminServiceClient::new(channel)
                .stop_table(request)
                .await
                .map_err(|s| RpcError::from_status(&s))?
                .into_inner()
                .table
                .unwrap_or_default();
            println!(
                "stopped {} (last event {})",
                render::escape(&table.table_id),
                table.last_seq
            );
            Ok(())
        }
    }
}
