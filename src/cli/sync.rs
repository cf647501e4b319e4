//! `sync [<remote>]`: share the notes with a team through a git remote.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::CmdResult;
use crate::cli::report::{self, Report};
use crate::share::sync::{self, Options, Synced};
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: the current branch's remote, else origin, else the only one).
    remote: Option<String>,
    /// Fetch and merge the remote's notes, push nothing.
    #[arg(long)]
    no_push: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let remote = match args.remote {
        Some(name) => name,
        None => sync::default_remote(store)?,
    };
    let options = Options {
        push: !args.no_push,
        prompt: true,
    };
    let done = sync::sync(store, &remote, options)?;
    let report = SyncReport {
        done,
        no_push: args.no_push,
    };
    report::print(out, &report, args.json)
}

/// What a sync did; its JSON is [`Synced`]'s.
#[derive(Serialize)]
struct SyncReport {
    #[serde(flatten)]
    done: Synced,
    #[serde(skip)]
    no_push: bool,
}

impl Report for SyncReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let done = &self.done;
        let taken = match (done.fetched, done.merged_events) {
            (false, _) => "it has no notes yet".to_owned(),
            (true, 0) => "nothing new from it".to_owned(),
            (true, n) => format!(
                "{n} event{} new here on {} note{}",
                if n == 1 { "" } else { "s" },
                done.merged_notes,
                if done.merged_notes == 1 { "" } else { "s" }
            ),
        };
        let given = if done.pushed {
            "ours pushed"
        } else if self.no_push {
            "nothing pushed (--no-push)"
        } else if done.level == "none" {
            "nothing pushed (share.level = none)"
        } else {
            "it has all of ours"
        };
        writeln!(out, "{}: {taken}; {given}", done.remote)
    }
}
