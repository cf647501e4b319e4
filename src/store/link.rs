//! Linking pending events to the commits their session produced (DESIGN §6).
//!
//! Signal implemented so far, the most trusted: commits the session named itself —
//! `toolUseResult.gitOperation.commit.sha`, `[branch sha]` in the output of `git commit`, or
//! `git log --oneline` after `git commit -q` — when the id resolves to a commit of this
//! repository. A session's events, in time order, go to the first such commit at or after
//! them: the events between commit k-1 and commit k led to commit k. Events after the last
//! commit stay pending until a later commit takes them.
//!
//! Attached events leave the pending queue; `attached/<session>.jsonl` remembers where each
//! went (`<id> <commit>` per line), so that a later, more complete version of an event (a turn
//! that was still going when it was first extracted) updates its note instead of waiting for
//! another commit. Crash safety: notes are written first, then the index, then the queue is
//! trimmed; every step is idempotent, so a re-run completes an interrupted one.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::PathBuf;

use gix::ObjectId;

use super::{Result, Store, io_error, notes, pending, write_atomic};
use crate::event::{Event, Origin};

pub const DIR: &str = "attached";

/// What linking did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Linked {
    pub commits: usize,
    pub events: usize,
}

fn index_file(store: &Store, session: &str) -> PathBuf {
    store.dir().join(DIR).join(pending::file_name(session))
}

/// Where the events of `session` already went: event id → commit.
fn read_index(store: &Store, session: &str) -> Result<HashMap<String, ObjectId>> {
    let path = index_file(store, session);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(io_error("cannot read", &path)(e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| {
            let (id, commit) = l.split_once(' ')?;
            Some((
                id.to_owned(),
                ObjectId::from_hex(commit.trim().as_bytes()).ok()?,
            ))
        })
        .collect())
}

fn write_index(store: &Store, session: &str, index: &HashMap<String, ObjectId>) -> Result<()> {
    let mut lines: Vec<String> = index.iter().map(|(id, c)| format!("{id} {c}")).collect();
    lines.sort();
    let mut out = lines.join("\n");
    out.push('\n');
    write_atomic(&index_file(store, session), out.as_bytes())
}

/// Split fresh events: those already attached go to their commit's note now (returned count),
/// the others are returned for the pending queue.
pub fn route(store: &Store, events: Vec<Event>) -> Result<(usize, Vec<Event>)> {
    let mut by_session: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for e in events {
        by_session.entry(e.session_id.clone()).or_default().push(e);
    }
    let mut rest = Vec::new();
    let mut updated = 0;
    for (session, events) in by_session {
        let index = read_index(store, &session)?;
        if index.is_empty() {
            rest.extend(events);
            continue;
        }
        let mut to_notes: BTreeMap<ObjectId, Vec<Event>> = BTreeMap::new();
        for e in events {
            match index.get(&e.id) {
                Some(commit) => to_notes.entry(*commit).or_default().push(e),
                None => rest.push(e),
            }
        }
        for (commit, events) in to_notes {
            updated += notes::attach_to(store, commit, &events)?.updated;
        }
    }
    Ok((updated, rest))
}

/// Attach the pending events of `session` that a commit of the session now takes.
pub fn session(store: &Store, session: &str) -> Result<Linked> {
    let events = pending::session_events(store, session)?;
    let repo = store.repo();
    let mut batches: Vec<(ObjectId, Vec<Event>)> = Vec::new();
    let mut batch: Vec<Event> = Vec::new();
    for e in events {
        let commit = match e.origin {
            Origin::Commit => e
                .commits
                .iter()
                .find_map(|c| notes::resolve_commit(&repo, c)),
            _ => None,
        };
        batch.push(e);
        if let Some(commit) = commit {
            batches.push((commit, std::mem::take(&mut batch)));
        }
    }
    if batches.is_empty() {
        return Ok(Linked::default());
    }
    let mut index = read_index(store, session)?;
    let mut moved: HashSet<(String, String)> = HashSet::new();
    let mut linked = Linked::default();
    for (commit, events) in &batches {
        notes::attach_to(store, *commit, events)?;
        linked.commits += 1;
        linked.events += events.len();
        for e in events {
            index.insert(e.id.clone(), *commit);
            moved.insert((e.session_id.clone(), e.id.clone()));
        }
    }
    write_index(store, session, &index)?;
    pending::remove(store, &moved)?;
    Ok(linked)
}
