//! `forget`: take events out of the notes, the decision graph, the pending queue and the local
//! caches (docs/security.md, "Forgetting, and purging what was pushed"), by session, by id or by
//! what they say; complete first a forget that died; make CLAUDE.md's section again. The steps
//! on the store are `store::erase`'s; this chooses, runs them in order and says what it did
//! ([`Outcome`]).
//!
//! As with `git log --author --grep`, each kind of criterion given narrows the choice and
//! several values of one kind are alternatives: `--session A --match KEY` forgets the events of
//! A that mention KEY. Every session and event named must be stored, or nothing is forgotten
//! (as `git rm` with a pathspec that matches no file).

use std::collections::BTreeSet;

use regex::Regex;
use serde::Serialize;

use crate::deliver::{self, brief, claude_md, continuation};
use crate::retrieve::index;
use crate::store::erase::{self, Inventory, RawLine, Removed, Resolved, Scrubbed, Stored};
use crate::store::{self, Store, graph, notes, told};

/// What to forget, checked: each kind narrows the choice, several values of one kind are
/// alternatives.
#[derive(Debug, Default)]
pub struct Criteria {
    /// Session ids, or prefixes naming one.
    pub sessions: Vec<String>,
    /// Event ids, or prefixes of hex digits naming one.
    pub events: Vec<String>,
    pub patterns: Vec<Regex>,
    /// Every event forgotten here that is stored again.
    pub again: bool,
}

impl Criteria {
    /// Whether a session, an event or a pattern was given.
    fn any(&self) -> bool {
        !(self.sessions.is_empty() && self.events.is_empty() && self.patterns.is_empty())
    }
}

/// Why nothing was forgotten.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no stored event is of session {0}")]
    NoSuchSession(String),
    #[error("no stored event has id {0}")]
    NoSuchEvent(String),
    #[error("--session {name} is ambiguous: {count} sessions start with it")]
    AmbiguousSession { name: String, count: usize },
    #[error("--event {name} is ambiguous: {count} events start with it")]
    AmbiguousEvent { name: String, count: usize },
    #[error("nothing to forget: {0}")]
    Nothing(String),
    #[error(transparent)]
    Deliver(#[from] deliver::Error),
    #[error(transparent)]
    Store(#[from] store::Error),
}

impl Error {
    /// Whether it says that what was named is not stored: nothing found, not bad input.
    pub fn not_found(&self) -> bool {
        matches!(
            self,
            Error::NoSuchSession(_) | Error::NoSuchEvent(_) | Error::Nothing(_)
        )
    }
}

/// What a forget did, or (`dry_run`) would do. The forgotten text is given by a dry run only,
/// which is for deciding; a forget gives ids and places.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub dry_run: bool,
    pub events: Vec<Forgotten>,
    pub notes: NotesTaken,
    /// Events taken out of the pending queue.
    pub pending: usize,
    /// Unreadable lines of the pending queue that the patterns match, taken out.
    pub pending_unreadable_lines: usize,
    pub graph: GraphMade,
    pub replaced: Replaced,
    /// A forget that died, completed first; its JSON is how many events it took out.
    #[serde(rename = "completed_interrupted", serialize_with = "events_taken")]
    pub completed: Option<Completed>,
    /// What became of CLAUDE.md's section, when the file has one: `updated`, `unchanged`,
    /// `failed`.
    pub claude_md: Option<&'static str>,
    /// Why nothing more was chosen, when completing a forget that died was all there was to do.
    #[serde(skip)]
    pub nothing: Option<String>,
    /// A forget that died waits to be completed (a dry run does not complete it).
    #[serde(skip)]
    pub interrupted: bool,
    /// Why CLAUDE.md's section was not made again.
    #[serde(skip)]
    pub claude_md_failure: Option<String>,
}

impl Outcome {
    /// Whether the refs got new commits: their history still holds the forgotten text.
    pub fn refs_changed(&self) -> bool {
        self.notes.commit.is_some()
            || self.graph.commit.is_some()
            || self.completed.is_some_and(|c| c.refs_changed)
    }
}

fn events_taken<S: serde::Serializer>(
    completed: &Option<Completed>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(completed.map_or(0, |c| c.events) as u64)
}

/// An event forgotten.
#[derive(Debug, Serialize)]
pub struct Forgotten {
    pub id: String,
    pub session: String,
    pub kind: String,
    pub timestamp: String,
    /// The commits whose notes held it.
    pub commits: Vec<String>,
    /// Whether the pending queue held it.
    pub pending: bool,
    /// What it said: in a dry run only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// What was taken off the notes.
#[derive(Debug, Serialize)]
pub struct NotesTaken {
    #[serde(rename = "ref")]
    pub refname: &'static str,
    /// Events taken off notes (an event on three commits counts three).
    pub entries: usize,
    /// The notes they were on.
    pub notes: usize,
    /// The notes left empty, and so deleted.
    pub notes_deleted: usize,
    /// The new commit on the notes ref, if the notes changed.
    pub commit: Option<String>,
}

/// The graph, made again from the notes.
#[derive(Debug, Serialize)]
pub struct GraphMade {
    #[serde(rename = "ref")]
    pub refname: &'static str,
    pub commit: Option<String>,
}

/// Where the text that `--match` found was replaced outside the events.
#[derive(Debug, Serialize)]
pub struct Replaced {
    pub extraction_states: usize,
    pub log_lines: usize,
}

/// What completing a forget that died did.
#[derive(Debug, Clone, Copy)]
pub struct Completed {
    /// The forgotten events it had left stored, taken out now.
    pub events: usize,
    /// Whether that changed the refs.
    pub refs_changed: bool,
}

/// What the criteria choose: events, and the queue's unreadable lines that a pattern finds;
/// with the sessions named, in full.
#[derive(Default)]
struct Choice<'i> {
    events: Vec<&'i Stored>,
    lines: Vec<&'i RawLine>,
    sessions: Vec<String>,
}

impl Choice<'_> {
    fn is_empty(&self) -> bool {
        self.events.is_empty() && self.lines.is_empty()
    }
}

/// Forget what `criteria` choose, or (`dry_run`) say what it would forget and change nothing.
pub fn forget(store: &Store, criteria: &Criteria, dry_run: bool) -> Result<Outcome, Error> {
    if dry_run {
        let inventory = erase::inventory(store, &criteria.patterns)?;
        let chosen = choose(store, &inventory, criteria)?;
        let scrubbed = erase::scrub(store, &criteria.patterns, &chosen.sessions, false)?;
        if chosen.is_empty() && scrubbed.is_empty() {
            return Err(nothing(criteria));
        }
        let emptied = inventory.notes_emptied(&chosen.events);
        let mut outcome = outcome(&chosen, emptied, None, scrubbed);
        outcome.interrupted = erase::interrupted(store);
        return Ok(outcome);
    }
    // Without a store, nothing is written before the choice is known to be good.
    if !store.exists() {
        let inventory = erase::inventory(store, &criteria.patterns)?;
        if choose(store, &inventory, criteria)?.is_empty() {
            return Err(nothing(criteria));
        }
    }
    let lock = store.lock()?;
    let completed = complete_interrupted(store)?;
    let inventory = erase::inventory(store, &criteria.patterns)?;
    // The same command run again after it died finds what it named gone: the completed forget
    // was its work.
    let (chosen, unresolved) = match choose(store, &inventory, criteria) {
        Ok(chosen) => (chosen, None),
        // Its text is replaced in the states of the sessions it named, as given (none given:
        // every session's); never in every session's because one it named is gone.
        Err(e) if completed.is_some() && e.not_found() => {
            let named = Choice {
                sessions: criteria.sessions.clone(),
                ..Choice::default()
            };
            (named, Some(e))
        }
        Err(e) => return Err(e),
    };
    let emptied = inventory.notes_emptied(&chosen.events);
    let removed = match chosen.is_empty() {
        true => Removed::default(),
        false => erase::remove(store, &chosen.events, &chosen.lines)?,
    };
    // Only what it changes is written: with nothing chosen and nothing replaced, nothing was.
    let scrubbed = erase::scrub(store, &criteria.patterns, &chosen.sessions, true)?;
    let nothing = (chosen.is_empty() && scrubbed.is_empty())
        .then(|| unresolved.unwrap_or_else(|| nothing(criteria)));
    let nothing = match (nothing, completed) {
        (Some(why), None) => return Err(why),
        (nothing, _) => nothing,
    };
    if !chosen.is_empty() {
        let sessions: BTreeSet<&str> = chosen.events.iter().map(|e| e.session.as_str()).collect();
        clear_caches(store, removed.notes_commit.is_some(), sessions)?;
    }
    // CLAUDE.md quotes the graph, and may be committed: it is made again before the forget is
    // marked done, so that a forget killed before then is completed up to it.
    let claude_md = match chosen.is_empty() && completed.is_none() {
        true => None,
        false => refresh_claude_md(store),
    };
    if erase::interrupted(store) {
        erase::finish(store)?;
    }
    drop(lock);
    let mut outcome = outcome(&chosen, emptied, Some(removed), scrubbed);
    outcome.completed = completed;
    outcome.nothing = nothing.map(|why| match why {
        Error::Nothing(why) => why,
        other => other.to_string(),
    });
    (outcome.claude_md, outcome.claude_md_failure) = match claude_md {
        Some(Err(why)) => (Some("failed"), Some(why)),
        Some(Ok(done)) => (Some(done), None),
        None => (None, None),
    };
    Ok(outcome)
}

/// The outcome of taking out `choice` (`removed`; `None` in a dry run).
fn outcome(
    choice: &Choice<'_>,
    emptied: usize,
    removed: Option<Removed>,
    scrubbed: Scrubbed,
) -> Outcome {
    let chosen = &choice.events;
    let dry_run = removed.is_none();
    let in_notes: usize = chosen.iter().map(|e| e.commits.len()).sum();
    let notes_touched: BTreeSet<_> = chosen.iter().flat_map(|e| e.commits.iter()).collect();
    let pending = chosen.iter().filter(|e| e.pending).count();
    let removed = removed.as_ref();
    Outcome {
        dry_run,
        events: (chosen.iter())
            .map(|e| Forgotten {
                id: e.id.clone(),
                session: e.session.clone(),
                kind: e.kind.to_string(),
                timestamp: e.timestamp.clone(),
                commits: e.commits.iter().map(ToString::to_string).collect(),
                pending: e.pending,
                summary: dry_run.then(|| e.summary.clone()),
            })
            .collect(),
        notes: NotesTaken {
            refname: notes::REF,
            entries: removed.map_or(in_notes, |r| r.from_notes),
            notes: notes_touched.len(),
            notes_deleted: emptied,
            commit: removed.and_then(|r| r.notes_commit).map(|c| c.to_string()),
        },
        pending: removed.map_or(pending, |r| r.from_pending),
        pending_unreadable_lines: removed.map_or(choice.lines.len(), |r| r.lines_from_pending),
        graph: GraphMade {
            refname: graph::REF,
            commit: removed.and_then(|r| r.graph.commit).map(|c| c.to_string()),
        },
        replaced: Replaced {
            extraction_states: scrubbed.states,
            log_lines: scrubbed.log_lines,
        },
        claude_md: None,
        completed: None,
        nothing: None,
        interrupted: false,
        claude_md_failure: None,
    }
}

/// "Nothing to forget", naming the criteria as given.
fn nothing(criteria: &Criteria) -> Error {
    let mut given = Vec::new();
    given.extend(criteria.sessions.iter().map(|s| format!("--session {s}")));
    given.extend(criteria.events.iter().map(|e| format!("--event {e}")));
    given.extend((criteria.patterns.iter()).map(|p| format!("--match {:?}", p.as_str())));
    let again = "no event forgotten in this clone is stored again";
    Error::Nothing(match (given.is_empty(), criteria.again) {
        (true, _) => again.to_owned(),
        (false, false) => format!("no stored event meets {}", given.join(" and ")),
        (false, true) => format!("no stored event meets {}, and {again}", given.join(" and ")),
    })
}

/// What the criteria choose. A session or event named that is not stored is "nothing found";
/// a prefix naming several, bad input.
fn choose<'i>(
    store: &Store,
    inventory: &'i Inventory,
    criteria: &Criteria,
) -> Result<Choice<'i>, Error> {
    let mut sessions = Vec::new();
    for name in &criteria.sessions {
        match inventory.session(name) {
            Resolved::One(id) => sessions.push(id),
            Resolved::None => return Err(Error::NoSuchSession(name.clone())),
            Resolved::Ambiguous(count) => {
                return Err(Error::AmbiguousSession {
                    name: name.clone(),
                    count,
                });
            }
        }
    }
    let mut events = Vec::new();
    for name in &criteria.events {
        match inventory.event(name) {
            Resolved::One(id) => events.push(id),
            Resolved::None => return Err(Error::NoSuchEvent(name.clone())),
            Resolved::Ambiguous(count) => {
                return Err(Error::AmbiguousEvent {
                    name: name.clone(),
                    count,
                });
            }
        }
    }
    let mut chosen = match criteria.any() {
        true => inventory.select(&sessions, &events, !criteria.patterns.is_empty()),
        false => Vec::new(),
    };
    if criteria.again {
        for e in inventory.already_forgotten(store)? {
            if !chosen.iter().any(|c| c.id == e.id) {
                chosen.push(e);
            }
        }
    }
    let lines = match criteria.events.is_empty() {
        true => inventory.lines(&sessions),
        false => Vec::new(),
    };
    Ok(Choice {
        events: chosen,
        lines,
        sessions,
    })
}

/// Finish a forget that died part way (its ids are remembered): the same steps for every
/// forgotten event still stored, and the graph and caches made again; the caller makes
/// CLAUDE.md again and marks it done ([`erase::finish`]). `None` when none died.
fn complete_interrupted(store: &Store) -> Result<Option<Completed>, Error> {
    if !erase::interrupted(store) {
        return Ok(None);
    }
    let inventory = erase::inventory(store, &[])?;
    let left = inventory.already_forgotten(store)?;
    let removed = erase::remove(store, &left, &[])?;
    let forgotten = store::forgotten::all(store)?;
    clear_caches(
        store,
        true,
        forgotten.values().map(String::as_str).collect(),
    )?;
    Ok(Some(Completed {
        events: left.len(),
        refs_changed: removed.notes_commit.is_some() || removed.graph.commit.is_some(),
    }))
}

/// The local caches made from the forgotten events: the retrieval index (made from the notes)
/// is made again when they changed and the hooks' copies of the notes' reasoning go, and the
/// sessions' saved continuation summaries and the brief kept for the next session go (they are
/// made again from the store).
fn clear_caches(store: &Store, notes_changed: bool, sessions: BTreeSet<&str>) -> Result<(), Error> {
    if notes_changed {
        index::rebuild(store)?;
        told::clear(store);
    }
    brief::discard(store)?;
    for session in sessions {
        continuation::discard(store, session)?;
    }
    Ok(())
}

/// CLAUDE.md's generated section quotes the graph: when the file has one, it is made again.
/// `None` when there is none; a failure is said, not fatal (the events are forgotten).
fn refresh_claude_md(store: &Store) -> Option<Result<&'static str, String>> {
    let path = store.workdir()?.join(claude_md::FILE);
    let text = std::fs::read_to_string(&path).ok()?;
    if !text.contains(claude_md::BEGIN) {
        return None;
    }
    Some(match claude_md::refresh_if_changed(store) {
        Ok(claude_md::Refreshed::Unchanged) => Ok("unchanged"),
        Ok(_) => Ok("updated"),
        Err(e) => Err(store::error_chain(&e)),
    })
}
