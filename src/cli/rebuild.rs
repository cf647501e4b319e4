//! `rebuild`: make the decision graph on `refs/agent-context` again from the notes.

use std::io::Write;

use serde_json::json;

use crate::cli::progress::Steps;
use crate::cli::{CmdResult, write_json};
use crate::retrieve::index;
use crate::store::{Store, graph};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let _lock = store.lock()?;
    let steps = Steps::new();
    steps.step("reading the notes and writing the graph");
    let updated = graph::rebuild(store)?;
    steps.step("indexing the notes");
    index::rebuild(store)?;
    steps.finish();
    report(&updated, args.json, out)
}

/// Say what a rebuild did.
pub fn report(updated: &graph::Updated, json: bool, out: &mut dyn Write) -> CmdResult {
    if json {
        return write_json(
            out,
            &json!({
                "schema_version": 1,
                "ref": graph::REF,
                "sessions": updated.sessions,
                "decisions": updated.decisions,
                "commit": updated.commit.map(|c| c.to_string()),
            }),
        );
    }
    let what = format!(
        "{} session{}, {} decision{}",
        updated.sessions,
        if updated.sessions == 1 { "" } else { "s" },
        updated.decisions,
        if updated.decisions == 1 { "" } else { "s" }
    );
    match updated.commit {
        Some(commit) => writeln!(
            out,
            "rebuilt {} from the notes: {what} (commit {})",
            graph::REF,
            commit.to_hex_with_len(7)
        )?,
        None => writeln!(out, "{} is up to date: {what}", graph::REF)?,
    }
    Ok(())
}
