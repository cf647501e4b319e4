//! A decision, rejection, trade-off or constraint in the words of whoever made it
//! (docs/extraction.md, "Three ways reasoning gets in"): one implementation for the `record` command and the MCP
//! server's `record_decision` tool.
//!
//! In a session the event joins the session's pending events and goes to the commit the
//! session makes next, as extracted events do. Outside any session it goes into the note of a
//! commit at once. Either way it passes redaction first, and it ranks above what extraction
//! read out of the session's text.

use serde::Deserialize;

use crate::classify::extractor::RATIONALE_MAX;
use crate::event::time::{now_seconds, rfc3339};
use crate::event::{Event, Kind, Origin, event_id, summarize, truncate_words};
use crate::retrieve::review;
use crate::store::erase::{self, Resolved};
use crate::store::{self, Store, graph, notes, pending};

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

/// What is recorded, checked by the caller: `files` are paths as git names them.
#[derive(Debug, Clone)]
pub struct Record {
    pub what: What,
    pub text: String,
    pub rejected: Vec<String>,
    pub because: String,
    pub files: Vec<String>,
    /// Earlier decisions it replaces: their event ids, or prefixes of at least 4 hex digits
    /// naming one decision of the graph each.
    pub supersedes: Vec<String>,
}

/// Where the event goes.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// The pending events of this session: the agent's own record.
    Session(&'a str),
    /// The note of this commit (a revision): a person's record.
    Commit(&'a str),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("the text of what is recorded is empty")]
    Empty,
    #[error(
        "{0:?} names no recorded decision (give its event id, or 4 or more of its first hex digits)"
    )]
    UnknownDecision(String),
    #[error("{0:?} names several recorded decisions: give more of its id")]
    AmbiguousDecision(String),
    #[error("{0:?} is not a file of the working tree")]
    NotAFile(String),
    #[error(transparent)]
    Revision(review::Error),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Record `record` at `place`; the event stored, and where it went in words ("pending, for the
/// session's next commit", "on commit 1a2b3c4").
pub fn record(store: &Store, record: &Record, place: Place<'_>) -> Result<(Event, String), Error> {
    let text = record.text.trim();
    if text.is_empty() {
        return Err(Error::Empty);
    }
    if let Some(bad) = record
        .files
        .iter()
        .find(|f| f.is_empty() || *f == ".git" || f.starts_with(".git/"))
    {
        return Err(Error::NotAFile(bad.clone()));
    }
    let (session_id, origin) = match place {
        Place::Session(session) => (session, Origin::Agent),
        Place::Commit(_) => (PEOPLE, Origin::Human),
    };
    let redactor = store.config().redactor();
    let clean = |s: &str| redactor.redact(s).into_owned();
    let kind = match record.what {
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
        record.because.trim(),
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
        session_id,
        &source,
        kind,
        origin,
        &summary,
        &rfc3339(now_seconds()),
    );
    event.rationale = rationale;
    event.alternatives = (record.rejected.iter())
        .map(|r| summarize(&clean(r.trim())))
        .filter(|r| !r.is_empty())
        .collect();
    event.files_affected = record.files.clone();
    event.supersedes = decisions_named(store, &record.supersedes)?;
    let _lock = store.lock()?;
    let placed = match place {
        Place::Session(_) => {
            // The same record again, with more files or alternatives, replaces the first.
            pending::upsert(store, vec![event.clone()])?;
            "pending, for the session's next commit".to_owned()
        }
        Place::Commit(rev) => {
            let commit = review::resolve(&store.repo(), rev).map_err(Error::Revision)?;
            event.commits = vec![commit.to_string()];
            let batch = [(commit, vec![event.clone()])];
            notes::attach_all(store, &batch)?;
            graph::update(store, &crate::ingest::commit::sessions_of(&batch))?;
            format!("on commit {}", &commit.to_string()[..7])
        }
    };
    Ok((event, placed))
}

/// The ids of the decisions that `given` (ids or prefixes) name, one each: the graph's, and
/// those still pending (a record made moments ago).
fn decisions_named(store: &Store, given: &[String]) -> Result<Vec<String>, Error> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    let repo = store.repo();
    let mut known = graph::View::open(&repo)?.decision_ids()?;
    for file in store.files_in(pending::DIR, "jsonl")? {
        let events = pending::events_in(&file)?;
        known.extend(
            (events.into_iter())
                .filter(|e| matches!(e.kind, Kind::Decision | Kind::Rejection))
                .map(|e| e.id),
        );
    }
    known.sort();
    known.dedup();
    let mut ids = Vec::new();
    for prefix in given {
        let prefix = prefix.trim().to_ascii_lowercase();
        if !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::UnknownDecision(prefix));
        }
        match erase::resolve_prefix(known.iter(), &prefix) {
            Resolved::One(id) if !ids.contains(&id) => ids.push(id),
            Resolved::One(_) => {}
            Resolved::Ambiguous(_) => return Err(Error::AmbiguousDecision(prefix)),
            Resolved::None => return Err(Error::UnknownDecision(prefix)),
        }
    }
    Ok(ids)
}
