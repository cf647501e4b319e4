//! `claude-md`: regenerate the marked section of CLAUDE.md from the decision graph
//! (`deliver::claude_md`).

use std::io::Write;

use anyhow::anyhow;

use crate::cli::{CmdResult, Failure};
use crate::deliver::claude_md::{self, Refreshed};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the section instead of writing CLAUDE.md.
    #[arg(long)]
    print: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    if args.print {
        let text = claude_md::section(store).map_err(|e| Failure::Usage(anyhow!(e)))?;
        writeln!(out, "{}", text.trim_end())?;
        return Ok(());
    }
    let (path, done) = claude_md::refresh(store).map_err(|e| Failure::Usage(anyhow!(e)))?;
    let what = match done {
        Refreshed::Created => "created",
        Refreshed::Updated => "updated the section of",
        Refreshed::Unchanged => "unchanged:",
    };
    writeln!(out, "{what} {}", path.display())?;
    Ok(())
}
