//! `init`: create the local store.

use std::io::Write;

use crate::cli::CmdResult;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(store: &Store, _args: Args, out: &mut dyn Write) -> CmdResult {
    if store.init()? {
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
    Ok(())
}
