//! The continuation summary (seed 001): after `/compact`, an automatic compaction or a resume,
//! a session is told where its work stands — the current task, what is completed and pending,
//! its key decisions and the files it is modifying — so that it goes on without investigating
//! again.
//!
//! It is the session's [`Summary`], made from the events stored for it (pending and attached).
//! `PreCompact`, `Stop` and `SessionEnd` extract the transcript first and save the summary in
//! `continuation/<session>.json`; `SessionStart` gives it back within its budget, making it
//! from the store only when no snapshot exists.

use std::fs;

use serde_json::json;

use crate::deliver::Result;
use crate::event::Event;
use crate::event::summary::{self, Summary};
use crate::render::templates::{self, CONTINUATION, within};
use crate::store::{Store, io_error, link, pending, remove_file, write_atomic};

const DIR: &str = "continuation";
/// Tokens a continuation is given at most.
const TOKENS: usize = 2_000;

/// Every stored event of `session`: pending, and attached to commits (several versions of an
/// event may be among them; see [`summary::unique`]).
fn session_events(store: &Store, session: &str) -> Result<Vec<Event>> {
    let mut events = pending::session_events(store, session)?;
    events.extend(link::attached_events(store, session)?);
    Ok(events)
}

/// The summary of `session` from what is stored for it.
pub fn summarize(store: &Store, session: &str) -> Result<Summary> {
    let events = session_events(store, session)?;
    Ok(Summary::of(&summary::unique(&events)))
}

/// Make and save the summary of `session`, for [`context`] to give back.
pub fn snapshot(store: &Store, session: &str) -> Result<Summary> {
    let summary = summarize(store, session)?;
    let path = saved_path(store, session);
    let dir = store.dir().join(DIR);
    fs::create_dir_all(&dir).map_err(io_error("cannot create", &dir))?;
    let text = serde_json::to_vec_pretty(&summary).expect("a summary is plain data");
    write_atomic(&path, &text)?;
    Ok(summary)
}

fn saved_path(store: &Store, session: &str) -> std::path::PathBuf {
    pending::session_path(store, DIR, session, "json")
}

/// The saved summary of `session`, if any (an unreadable one counts as none).
fn saved(store: &Store, session: &str) -> Option<Summary> {
    serde_json::from_slice(&fs::read(saved_path(store, session)).ok()?).ok()
}

/// Whether a summary of `session` was saved.
pub fn saved_exists(store: &Store, session: &str) -> bool {
    saved_path(store, session).is_file()
}

/// Drop the saved summary of `session`, made from events since forgotten: [`context`] makes
/// one from the store until the next snapshot.
pub fn discard(store: &Store, session: &str) -> Result<()> {
    Ok(remove_file(&saved_path(store, session))?)
}

/// What `session` is given after it was `how` ("compacted", "resumed"): its saved summary, or
/// one made from the store; nothing when nothing is recorded for it.
pub fn context(store: &Store, session: &str, how: &str) -> Result<Option<String>> {
    let summary = match saved(store, session) {
        Some(s) => s,
        None => summarize(store, session)?,
    };
    if summary.is_empty() {
        return Ok(None);
    }
    let text = templates::render(
        store,
        &CONTINUATION,
        &json!({"session": session, "how": how, "summary": summary}),
    )?;
    Ok(Some(within(text, TOKENS)))
}
