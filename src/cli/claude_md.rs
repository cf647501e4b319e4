//! `claude-md`: regenerate the marked section of CLAUDE.md from the decision graph
//! (`deliver::claude_md`).

use std::io::Write;

use crate::cli::CmdResult;
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
        let text = claude_md::section(store)?;
        writeln!(out, "{}", text.trim_end())?;
        return Ok(());
    }
    let (path, done) = claude_md::refresh(store)?;
    let what = match done {
        Refreshed::Created => "created",
        Refreshed::Updated => "updated the section of",
        Refreshed::Unchanged => "unchanged:",
    };
    writeln!(out, "{what} {}", path.display())?;
    Ok(())
}
