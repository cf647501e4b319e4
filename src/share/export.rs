//! `export`: what the notes hold, in a form other tools and people read.
//!
//! - [`agent_trace`]: Agent Trace records (<https://agent-trace.dev>, version 0.1, the schema
//!   `https://agent-trace.dev/schemas/v1/trace-record.json`), one per commit a session made: for
//!   each file a session wrote, the lines the commit added to it, attributed to the session's
//!   conversation, with the model when the transcript named it; the session ids and the
//!   reasoning recorded on the commit go in `metadata`, under `dev.git-agent-context`.
//! - [`session`]: every event of one session, in time order, with the commits it went to.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use serde::Serialize;
use serde_json::{Value, json};

use crate::event::time::rfc3339;
use crate::event::{Event, Kind};
use crate::retrieve::index::lines;
use crate::retrieve::review::{self, Error};
use crate::store::erase::{self, Resolved};
use crate::store::{Store, notes, pending};

/// The Agent Trace version the records follow.
pub const AGENT_TRACE_VERSION: &str = "0.1";

/// The key of our part of a record's `metadata`.
const METADATA_KEY: &str = "dev.git-agent-context";

/// One Agent Trace record for each commit of `range` (a revision and its history, or `a..b`,
/// `a...b`) that a session's note is on, newest first.
pub fn agent_trace(store: &Store, range: &str) -> Result<Vec<Value>, Error> {
    let repo = store.repo();
    let mut commits = Vec::new();
    review::log(store, Some(range), &[], None, false, &mut |entry| {
        if !entry.sessions.is_empty() {
            commits.push(entry.commit.id);
        }
        Ok(())
    })?;
    let mut records = Vec::new();
    for hex in commits {
        let Ok(commit) = ObjectId::from_hex(hex.as_bytes()) else {
            continue;
        };
        let events = notes::read_id(store, commit)?;
        if let Some(record) = record(&repo, commit, &events)? {
            records.push(record);
        }
    }
    Ok(records)
}

fn record(
    repo: &gix::Repository,
    commit: ObjectId,
    events: &[Event],
) -> Result<Option<Value>, Error> {
    let sessions: Vec<&Event> = events.iter().filter(|e| e.kind == Kind::Session).collect();
    if sessions.is_empty() {
        return Ok(None);
    }
    let added = lines::added_by(repo, commit)?;
    let mut files: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for session in &sessions {
        // The files the session wrote: its summary's, and those of its writes on this commit.
        let wrote: BTreeSet<&str> = events
            .iter()
            .filter(|e| {
                e.session_id == session.session_id && matches!(e.kind, Kind::Session | Kind::Write)
            })
            .flat_map(|e| e.files_affected.iter().map(String::as_str))
            .collect();
        for file in added.iter().filter(|a| wrote.contains(a.path.as_str())) {
            let mut contributor = json!({ "type": "ai" });
            if let Some(model) = model_id(&session.session.model) {
                contributor["model_id"] = model.into();
            }
            files.entry(file.path.as_str()).or_default().push(json!({
                "contributor": contributor,
                "ranges": ranges(&file.numbers),
            }));
        }
    }
    let seconds = repo
        .find_commit(commit)
        .ok()
        .and_then(|c| c.time().ok())
        .map_or(0, |t| t.seconds);
    let reasoning: Vec<Value> = events
        .iter()
        .filter(|e| e.kind.is_reason() && !e.kind.is_musing())
        .map(|e| json!({ "event": e.id, "kind": e.kind, "summary": e.summary, "session": e.session_id }))
        .collect();
    let session_ids: Vec<&str> = sessions.iter().map(|s| s.session_id.as_str()).collect();
    Ok(Some(json!({
        "version": AGENT_TRACE_VERSION,
        "id": uuid(commit),
        "timestamp": rfc3339(seconds),
        "vcs": { "type": "git", "revision": commit.to_string() },
        "tool": { "name": "git-agent-context", "version": env!("CARGO_PKG_VERSION") },
        "files": files
            .into_iter()
            .map(|(path, conversations)| json!({ "path": path, "conversations": conversations }))
            .collect::<Vec<_>>(),
        "metadata": { METADATA_KEY: { "sessions": session_ids, "reasoning": reasoning } },
    })))
}

/// A model as models.dev names it (`anthropic/claude-…`), when the transcript named one.
fn model_id(model: &str) -> Option<String> {
    let model = model.trim();
    if model.is_empty() || model.starts_with('<') {
        return None;
    }
    let id = match model.contains('/') || !model.starts_with("claude") {
        true => model.to_owned(),
        false => format!("anthropic/{model}"),
    };
    Some(id.chars().take(250).collect())
}

/// Line numbers (in order) as runs: `[1, 2, 3, 7]` is 1–3 and 7–7.
fn ranges(numbers: &[usize]) -> Vec<Value> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in numbers {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.into_iter()
        .map(|(start, end)| json!({ "start_line": start, "end_line": end }))
        .collect()
}

/// The record's id: a UUID (version 8, RFC 9562) made from the commit, so that exporting the
/// same commit twice gives the same record.
fn uuid(commit: ObjectId) -> String {
    let hash = xxhash_rust::xxh3::xxh3_128(format!("agent-trace\0{commit}").as_bytes());
    let mut bytes = hash.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// One session's log: its events in time order, each with the commits it went to.
#[derive(Debug, Serialize)]
pub struct SessionLog {
    pub session: String,
    pub events: Vec<Logged>,
}

#[derive(Debug, Serialize)]
pub struct Logged {
    #[serde(flatten)]
    pub event: Event,
    /// The commits the event went to; none while it waits for one.
    pub on: Vec<String>,
}

/// Why a session cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no session {0:?} is recorded (an id, or a prefix of {min} characters or more)", min = erase::PREFIX_MIN)]
    Unknown(String),
    #[error("{0:?} is the start of {1} session ids")]
    Ambiguous(String, usize),
    #[error(transparent)]
    Store(#[from] crate::store::Error),
}

/// The log of the session `name` (an id or a prefix of one): every event the notes and the
/// pending queue hold of it.
pub fn session(store: &Store, name: &str) -> Result<SessionLog, SessionError> {
    let inventory = erase::inventory(store, &[])?;
    let session = match inventory.session(name) {
        Resolved::One(id) => id,
        Resolved::None => return Err(SessionError::Unknown(name.to_owned())),
        Resolved::Ambiguous(n) => return Err(SessionError::Ambiguous(name.to_owned(), n)),
    };
    let stored = inventory.select(std::slice::from_ref(&session), &[], false);
    let commits: BTreeSet<ObjectId> = stored
        .iter()
        .flat_map(|s| s.commits.iter().copied())
        .collect();
    // Each event once, with every commit whose note holds it (a session event is on each).
    let mut by_id: BTreeMap<String, Logged> = BTreeMap::new();
    for commit in commits {
        for event in notes::read_id(store, commit)? {
            if event.session_id != session {
                continue;
            }
            let entry = by_id.entry(event.id.clone()).or_insert_with(|| Logged {
                event: event.clone(),
                on: Vec::new(),
            });
            entry.on.push(commit.to_string());
            // The most complete version: the one on the newest commit has the most commits.
            if event.commits.len() > entry.event.commits.len() {
                entry.event = event;
            }
        }
    }
    for event in pending::session_events(store, &session)? {
        by_id.entry(event.id.clone()).or_insert(Logged {
            event,
            on: Vec::new(),
        });
    }
    let mut events: Vec<Logged> = by_id.into_values().collect();
    events.sort_by(|a, b| {
        (a.event.timestamp.as_str(), a.event.id.as_str())
            .cmp(&(b.event.timestamp.as_str(), b.event.id.as_str()))
    });
    Ok(SessionLog { session, events })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_lines_and_ids() {
        assert_eq!(
            ranges(&[1, 2, 3, 7]),
            [
                json!({"start_line": 1, "end_line": 3}),
                json!({"start_line": 7, "end_line": 7})
            ]
        );
        let id = uuid(ObjectId::null(gix::hash::Kind::Sha1));
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "8");
        assert!("89ab".contains(&id[19..20]), "{id}");
        assert_eq!(
            model_id("claude-sonnet-4-5-20250929").as_deref(),
            Some("anthropic/claude-sonnet-4-5-20250929")
        );
        assert_eq!(model_id("<synthetic>"), None);
    }
}
