//! `record`: a decision, rejection, trade-off or constraint, in the words of whoever made it —
//! the agent (from its Bash tool, inside a Claude Code session) or a person (README.md,
//! "Three ways reasoning gets in").
//!
//! Inside a session (`CLAUDE_CODE_SESSION_ID`, or `--session`) the event joins the session's
//! pending events and goes to the commit the session makes next, as extracted events do. A
//! person, outside any session, records on a commit (`--commit`, HEAD by default): the event
//! goes into that commit's note at once. Either way it passes redaction first, and it ranks
//! above what extraction read out of the session's text.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::anyhow;
use serde::Deserialize;
use serde_json::json;

use crate::classify::extractor::RATIONALE_MAX;
use crate::cli::{CmdResult, Failure, repo_path, write_json};
use crate::event::time::{now_seconds, rfc3339};
use crate::event::{Event, Kind, Origin, event_id, summarize, truncate_words};
use crate::retrieve::review;
use crate::store::{Store, graph, notes, pending};

/// The session a person's events belong to: one for everyone who records by hand.
pub const PEOPLE: &str = "recorded-by-people";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum What {
    /// A choice made: what was chosen.
    Decision,
    /// An option ruled out: what was rejected (its reason with --because).
    Rejection,
    /// A trade-off accepted: what was given up for what.
    Tradeoff,
    /// A constraint the code must keep (kept as a decision).
    Constraint,
}

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
    /// The session recording it; by default the one Claude Code names in
    /// `CLAUDE_CODE_SESSION_ID`.
    #[arg(long, value_name = "id", conflicts_with = "commit")]
    session: Option<String>,
    /// Outside a session: the commit it is about (HEAD by default).
    #[arg(long, value_name = "rev")]
    commit: Option<String>,
    /// Read the event from stdin as JSON: `{"what": "decision", "text": "…", "rejected":
    /// ["…"], "because": "…", "files": ["…"]}`; the flags given fill what it leaves out.
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
}

pub fn run(store: &Store, cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    let given = if args.stdin {
        let mut input = String::new();
        std::io::stdin()
            .take(1 << 20)
            .read_to_string(&mut input)
            .map_err(|e| Failure::Usage(anyhow!("cannot read stdin: {e}")))?;
        serde_json::from_str::<Given>(&input)
            .map_err(|e| Failure::Usage(anyhow!("stdin is not the event's JSON: {e}")))?
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
    let origin = if session.is_some() {
        Origin::Agent
    } else {
        Origin::Human
    };
    let session_id = session.clone().unwrap_or_else(|| PEOPLE.to_owned());
    let redactor = store.config().redactor();
    let clean = |s: &str| redactor.redact(s).into_owned();
    let kind = match what {
        What::Decision | What::Constraint => Kind::Decision,
        What::Rejection => Kind::Rejection,
        What::Tradeoff => Kind::Tradeoff,
    };
    let text = clean(text);
    let summary = summarize(&text);
    // The whole text when the summary had to cut it, then the reason.
    let rationale = [
        if summary.len() < text.len() {
            text.as_str()
        } else {
            ""
        },
        because.trim(),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(" ");
    let rationale = match rationale.is_empty() {
        true => summary.clone(),
        false => truncate_words(&clean(&rationale), RATIONALE_MAX),
    };
    // The same record made twice is one event.
    let source = format!("record:{}", event_id(&summary, &rationale, kind));
    let mut event = Event::new(
        &session_id,
        &source,
        kind,
        origin,
        &summary,
        &rfc3339(now_seconds()),
    );
    event.rationale = rationale;
    event.alternatives = (rejected.iter())
        .map(|r| summarize(&clean(r.trim())))
        .filter(|r| !r.is_empty())
        .collect();
    event.files_affected = files;
    let _lock = store.lock()?;
    let placed = match session {
        Some(_) => {
            pending::append(store, &event)?;
            "pending, for the session's next commit".to_owned()
        }
        None => {
            let rev = args.commit.as_deref().unwrap_or("HEAD");
            let commit =
                review::resolve(&store.repo(), rev).map_err(|e| Failure::Usage(e.into()))?;
            event.commits = vec![commit.to_string()];
            let batch = [(commit, vec![event.clone()])];
            notes::attach_all(store, &batch)?;
            graph::update(store, &crate::ingest::commit::sessions_of(&batch))?;
            format!("on commit {}", &commit.to_string()[..7])
        }
    };
    if args.json {
        return write_json(out, &json!({ "event": event, "placed": placed }));
    }
    writeln!(out, "recorded {} {} ({placed})", event.kind, &event.id[..8])?;
    Ok(())
}

fn usage(message: &str) -> Failure {
    Failure::Usage(anyhow!("{message}"))
}
