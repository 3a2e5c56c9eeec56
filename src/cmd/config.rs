//! `megashingle config`: the effective configuration (defaults < file < flags) as a
//! `pipeline.toml`.

use anyhow::Result;

use crate::cli::ConfigOnlyArgs;
use crate::cmd::files::print;
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: ConfigOnlyArgs) -> Result<Outcome> {
    let config = args.config.resolve()?;
    print(&config.to_toml())?;
    Ok(Outcome::Clean)
}
