//! `record`: a decision, rejection, trade-off or constraint, in the words of whoever made it —
//! the agent (from its Bash tool, inside a Claude Code session) or a person (docs/extraction.md,
//! "Three ways reasoning gets in").
//!
//! Inside a session (`CLAUDE_CODE_SESSION_ID`, or `--session`) the event joins the session's
//! pending events and goes to the commit the session makes next, as extracted events do. A
//! person, outside any session, records on a commit (`--commit`, HEAD by default): the event
//! goes into that commit's note at once. Either way it passes redaction first, and it ranks
//! above what extraction read out of the session's text.

use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::anyhow;
use serde::{Deserialize, Serialize};

use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure, repo_path};
use crate::event::Event;
use crate::ingest::recorded::{self, Place, Record, What};
use crate::retrieve::index;
use crate::store::Store;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// What is recorded; with --stdin, read from the JSON there.
    #[arg(required_unless_present = "stdin")]
    what: Option<What>,
    /// The decision itself: what was chosen, rejected or traded.
    #[arg(required_unless_present = "stdin")]
    text: Option<String>,
    /// An alternative ruled out, with its reason after a colon (`"an LRU: entries expire by
    /// time"`). Repeatable.
    #[arg(long, value_name = "alternative")]
    rejected: Vec<String>,
    /// Why.
    #[arg(long, value_name = "rationale")]
    because: Option<String>,
    /// The files it bears on, from the current directory. Repeatable.
    #[arg(long, value_name = "path", num_args = 1..)]
    files: Vec<String>,
    /// An earlier decision this one replaces: its event id, or 4 or more of its first hex digits
    /// (`why --json` and `log --json` show them). Repeatable.
    #[arg(long, value_name = "id")]
    supersedes: Vec<String>,
    /// The session recording it; by default the one Claude Code names in
    /// `CLAUDE_CODE_SESSION_ID`.
    #[arg(long, value_name = "id", conflicts_with = "commit")]
    session: Option<String>,
    /// Outside a session: the commit it is about (HEAD by default).
    #[arg(long, value_name = "rev")]
    commit: Option<String>,
    /// Read the event from stdin as JSON: `{"what": "decision", "text": "…", "rejected":
    /// ["…"], "because": "…", "files": ["…"], "supersedes": ["…"]}`; the flags given fill what
    /// it leaves out.
    #[arg(long)]
    stdin: bool,
    /// Print the event recorded as JSON.
    #[arg(long)]
    json: bool,
}

/// The event as given on stdin.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Given {
    what: Option<What>,
    text: Option<String>,
    #[serde(default)]
    rejected: Vec<String>,
    because: Option<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    supersedes: Vec<String>,
}

pub fn run(store: &Store, cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    let given = if args.stdin {
        let mut input = String::new();
        std::io::stdin()
            .take(1 << 20)
            .read_to_string(&mut input)
            .map_err(|e| Failure::usage(anyhow!("cannot read stdin: {e}")))?;
        serde_json::from_str::<Given>(&input)
            .map_err(|e| Failure::usage(anyhow!("stdin is not the event's JSON: {e}")))?
    } else {
        Given::default()
    };
    let what = given
        .what
        .or(args.what)
        .ok_or_else(|| usage("what is recorded is missing"))?;
    let text = given.text.or(args.text).unwrap_or_default();
    let text = text.trim();
    if text.is_empty() {
        return Err(usage("the text of what is recorded is empty"));
    }
    let mut files = Vec::new();
    for file in given.files.iter().chain(&args.files) {
        let path = repo_path(store, cwd, file)?;
        if !files.contains(&path) {
            files.push(path);
        }
    }
    let rejected: Vec<String> = given.rejected.into_iter().chain(args.rejected).collect();
    let because = given.because.or(args.because).unwrap_or_default();

    let session = args
        .session
        .clone()
        .or_else(|| std::env::var("CLAUDE_CODE_SESSION_ID").ok())
        .filter(|s| !s.trim().is_empty() && args.commit.is_none());
    let place = match &session {
        Some(session) => Place::Session(session),
        None => Place::Commit(args.commit.as_deref().unwrap_or("HEAD")),
    };
    let recorded = Record {
        what,
        text: text.to_owned(),
        rejected,
        because,
        files,
        supersedes: given
            .supersedes
            .into_iter()
            .chain(args.supersedes)
            .collect(),
    };
    let (event, placed) = recorded::record(store, &recorded, place)?;
    // A record on a commit is a note: the hooks read the index as it is, so it is brought up
    // now (as every command that writes notes does), not at the next command that reads. (For
    // a record waiting for its session's commit, nothing changed and this returns at once.)
    if let Err(e) = index::refresh(store) {
        eprintln!("warning: the retrieval index was not updated: {e}");
    }
    report::print(out, &Recorded { event, placed }, args.json)
}

/// The event recorded, and where it went.
#[derive(Serialize)]
struct Recorded {
    event: Event,
    /// Where it went: for the session's next commit, or on a commit.
    placed: String,
}

impl Report for Recorded {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let e = &self.event;
        writeln!(out, "recorded {} {} ({})", e.kind, &e.id[..8], self.placed)
    }
}

fn usage(message: &str) -> Failure {
    Failure::usage(anyhow!("{message}"))
}
