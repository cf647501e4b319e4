//! What each session saw of files whose content is never captured, as the 64-bit hashes of
//! the values (`classify::redact::Taint`), in a file per session (`taint/<session>`, one hex
//! hash a line): shared by the readers of each of the session's transcripts (its main thread
//! and its subagents) and by its `PostToolUse` hooks, so that a value one of them saw is
//! scrubbed from what the others store. Written by appends, without the lock: a line is
//! written whole, a hash twice is harmless, and a damaged line is skipped.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;

use super::pending::session_path;
use super::{Result, Store, io_error};

pub const DIR: &str = "taint";

/// The hashes recorded for `session` (none when there is no file).
pub fn load(store: &Store, session: &str) -> Result<BTreeSet<u64>> {
    let path = session_path(store, DIR, session, "txt");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(io_error("cannot read", &path)(e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
        .collect())
}

/// Record the hashes of `hashes` that `known` (what [`load`] gave) does not hold.
pub fn add(
    store: &Store,
    session: &str,
    known: &BTreeSet<u64>,
    hashes: impl Iterator<Item = u64>,
) -> Result<()> {
    let new: String = hashes
        .filter(|h| !known.contains(h))
        .map(|h| format!("{h:016x}\n"))
        .collect();
    if new.is_empty() || session.is_empty() {
        return Ok(());
    }
    let dir = store.dir().join(DIR);
    fs::create_dir_all(&dir).map_err(io_error("cannot create", &dir))?;
    let path = session_path(store, DIR, session, "txt");
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(new.as_bytes()))
        .map_err(io_error("cannot write", &path))
}
