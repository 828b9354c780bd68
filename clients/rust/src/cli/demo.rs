//! `bete demo`: a whole match between house bots on a server started in this process.

/// Start a server in this process on a free loopback port (with a temporary data folder),
/// seat house bots, and show a whole match in the watch view.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  bete demo\n  bete demo --ruleset beast --seats 4")]
pub struct Args {}

pub async fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`bete demo` needs the embedded server, which is not wired in yet")
}
