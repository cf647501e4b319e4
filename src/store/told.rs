//! What `query` and the Claude Code hooks read of a commit's note, kept in the store: the events
//! they may give, whole, and a glance at the rest of its reasoning
//! ([`crate::event::note::decode_kinds`]). A note grows to hundreds of kilobytes of operations
//! and explorations, found, inflated and split into lines on every hook that weighs its commit;
//! what they read of it is a few kilobytes.
//!
//! A cache, one file per commit (`told/<commit>.json`): it names the note's blob it was made
//! from and the kinds it holds, and is made again by the next reader once either differs, so
//! it is never read stale. A file that cannot be read or written is a cache missed, no more.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Result, Store, io_error, write_cache};
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

#[derive(Serialize, Deserialize)]
struct Kept {
    blob: String,
    kinds: String,
    events: Vec<Event>,
    glances: Vec<Glance>,
}

/// Remove all that is kept: a forget takes what it removed out of the notes, and out of their
/// copies here at once, not when each note is next read.
pub(crate) fn clear(store: &Store) -> Result<()> {
    let dir = store.dir().join(DIR);
    match fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("cannot remove", &dir)(e)),
        _ => Ok(()),
    }
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
    (ObjectId::from_hex(kept.blob.as_bytes()).ok() == Some(blob) && kept.kinds == kinds.names())
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
    let kept = Kept {
        blob: blob.to_string(),
        kinds: kinds.names(),
        events: events.clone(),
        glances: glances.clone(),
    };
    if let Ok(bytes) = serde_json::to_vec(&kept) {
        let _ = write_cache(&path(dir, commit), &bytes);
    }
}
