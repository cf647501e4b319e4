//! `rebuild`: make the decision graph on `refs/agent-context` again from the notes.

use std::io::{self, Write};

use serde::Serialize;

use crate::cli::CmdResult;
use crate::cli::progress::Steps;
use crate::cli::report::{self, Report};
use crate::deliver::brief;
use crate::retrieve::index;
use crate::store::{Store, graph, told};

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
    told::clear(store);
    brief::discard(store)?;
    steps.finish();
    report::print(out, &Rebuilt::from(&updated), args.json)
}

/// What making the graph again did.
#[derive(Serialize)]
pub struct Rebuilt {
    #[serde(rename = "ref")]
    refname: &'static str,
    sessions: usize,
    decisions: usize,
    /// The new commit on the ref; `None` when nothing changed.
    commit: Option<String>,
}

impl From<&graph::Updated> for Rebuilt {
    fn from(updated: &graph::Updated) -> Rebuilt {
        Rebuilt {
            refname: graph::REF,
            sessions: updated.sessions,
            decisions: updated.decisions,
            commit: updated.commit.map(|c| c.to_string()),
        }
    }
}

impl Report for Rebuilt {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let what = format!(
            "{} session{}, {} decision{}",
            self.sessions,
            if self.sessions == 1 { "" } else { "s" },
            self.decisions,
            if self.decisions == 1 { "" } else { "s" }
        );
        match &self.commit {
            Some(commit) => writeln!(
                out,
                "rebuilt {} from the notes: {what} (commit {})",
                self.refname,
                &commit[..7]
            ),
            None => writeln!(out, "{} is up to date: {what}", self.refname),
        }
    }
}
