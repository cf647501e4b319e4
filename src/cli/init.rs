//! `init`: create the local store and make notes follow commits through amend and rebase.

use std::io::Write;

use crate::app::install::{Initialized, initialize};
use crate::cli::CmdResult;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(store: &Store, _args: Args, out: &mut dyn Write) -> CmdResult {
    let Initialized {
        created,
        configured,
        ..
    } = initialize(store)?;
    if created {
        writeln!(
            out,
            "initialized agent-context in {}",
            store.dir().display()
        )?;
    } else {
        writeln!(
            out,
            "agent-context already initialized in {}",
            store.dir().display()
        )?;
    }
    if configured {
        writeln!(
            out,
            "set notes.rewriteRef and notes.rewrite.*: notes follow commits through amend and rebase"
        )?;
    }
    Ok(())
}
