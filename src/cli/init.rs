//! `init`: create the local store and make notes follow commits through amend and rebase.

use std::io::Write;

use crate::cli::CmdResult;
use crate::store::{Store, git_config, notes};

#[derive(Debug, clap::Args)]
pub struct Args {}

/// What [`initialize`] did.
pub struct Initialized {
    /// The store was made.
    pub created: bool,
    /// The notes ref was made.
    pub started: bool,
    /// `.git/config` got the note-rewriting settings.
    pub configured: bool,
}

/// The store, the notes ref and the note-rewriting settings, each made if missing.
pub fn initialize(store: &Store) -> crate::store::Result<Initialized> {
    Ok(Initialized {
        created: store.init()?,
        started: notes::ensure_ref(store)?,
        configured: git_config::enable_note_rewrites(store)?,
    })
}

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
