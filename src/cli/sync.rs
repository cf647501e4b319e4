//! `sync [<remote>]`: share the notes with a team through a git remote.

use std::io::Write;

use crate::cli::CmdResult;
use crate::share::sync::{self, Options};
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
    if args.json {
        let mut value = serde_json::to_value(&done).map_err(std::io::Error::from)?;
        value["schema_version"] = 1.into();
        return super::write_json(out, &value);
    }
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
    } else if args.no_push {
        "nothing pushed (--no-push)"
    } else if done.level == "none" {
        "nothing pushed (share.level = none)"
    } else {
        "it has all of ours"
    };
    writeln!(out, "{}: {taken}; {given}", done.remote)?;
    Ok(())
}
