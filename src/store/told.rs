//! What `query` and the Claude Code hooks read of a commit's note, kept in the store: the events
//! they may give, whole, and a glance at the rest of its reasoning
//! ([`crate::event::note::decode_kinds`]). A note grows to hundreds of kilobytes of operations
//! and explorations, found, inflated and split into lines on every hook that weighs its commit;
//! what they read of it is a few kilobytes.
//!
//! A cache, one file per commit (`told/<commit>.json`): it names the note's blob it was made
//! from, the kinds it holds and its form, and is made again by the next reader once one of them
//! differs, so it is never read stale. A file that cannot be read or written is a cache missed,
//! no more.

use std::fs;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Store, write_cache};
use crate::event::note::Glance;
use crate::event::{Event, Kind};

pub const DIR: &str = "told";

/// Which kinds a reader takes whole and which it glances at.
#[derive(Clone, Copy)]
pub(crate) struct Kinds {
    pub(crate) whole: fn(Kind) -> bool,
    pub(crate) glanced: fn(Kind) -> bool,
}

impl Kinds {
    /// The kinds, named: what a kept file must have been made for.
    fn names(self) -> String {
        let named = |keep: fn(Kind) -> bool| {
            (Kind::ALL.into_iter())
                .filter(|&k| keep(k))
                .map(Kind::as_str)
                .collect::<Vec<_>>()
                .join(",")
        };
        format!("{};{}", named(self.whole), named(self.glanced))
    }
}

/// The form of a copy: a copy of another is read again from the note (a newer version that reads
/// more of a note, or reads it otherwise, changes it).
const FORMAT: u32 = 1;

#[derive(Deserialize)]
struct Kept {
    format: u32,
    blob: String,
    kinds: String,
    events: Vec<Event>,
    glances: Vec<Glance>,
}

#[derive(Serialize)]
struct Keeping<'a> {
    format: u32,
    blob: String,
    kinds: String,
    events: &'a [Event],
    glances: &'a [Glance],
}

/// Remove all that is kept: a forget takes what it removed out of the notes, and out of their
/// copies here at once, not when each note is next read; `rebuild` starts afresh. A copy a hook
/// writes meanwhile, of a note that has changed since, is removed by that hook.
pub(crate) fn clear(store: &Store) {
    let dir = store.dir().join(DIR);
    for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
        let _ = fs::remove_file(entry.path());
    }
    let _ = fs::remove_dir(&dir);
}

/// Remove the copy of `commit`'s note, if there is one.
pub(crate) fn remove(dir: &Path, commit: ObjectId) {
    let _ = fs::remove_file(path(dir, commit));
}

fn path(dir: &Path, commit: ObjectId) -> PathBuf {
    dir.join(format!("{commit}.json"))
}

/// What `dir` keeps of `commit`'s note, when it was made from `blob` for `kinds`.
pub(crate) fn read(
    dir: &Path,
    commit: ObjectId,
    blob: ObjectId,
    kinds: Kinds,
) -> Option<(Vec<Event>, Vec<Glance>)> {
    let bytes = fs::read(path(dir, commit)).ok()?;
    let kept: Kept = serde_json::from_slice(&bytes).ok()?;
    let made_from = ObjectId::from_hex(kept.blob.as_bytes()).ok();
    (kept.format == FORMAT && made_from == Some(blob) && kept.kinds == kinds.names())
        .then_some((kept.events, kept.glances))
}

/// Keep what was read of `commit`'s note, whose blob is `blob`; a failure is only a cache not
/// written.
pub(crate) fn write(
    dir: &Path,
    commit: ObjectId,
    blob: ObjectId,
    kinds: Kinds,
    (events, glances): &(Vec<Event>, Vec<Glance>),
) {
    let keeping = Keeping {
        format: FORMAT,
        blob: blob.to_string(),
        kinds: kinds.names(),
        events,
        glances,
    };
    if let Ok(bytes) = serde_json::to_vec(&keeping) {
        let _ = write_cache(&path(dir, commit), &bytes);
    }
}
