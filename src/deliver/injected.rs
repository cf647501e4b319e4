//! What a session has been given already: the ids of the events its hooks injected, and a key
//! of each one's words (`retrieve::query::words_key`), one a line in `injected/<session>.txt`,
//! so that an item is not given twice, nor its twin under another id. Compaction and `/clear`
//! take the context away, and the record with it.

use std::collections::BTreeSet;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

use crate::store::{Result, Store, io_error, pending, remove_file};

const DIR: &str = "injected";

fn path_for(store: &Store, session: &str) -> PathBuf {
    pending::session_path(store, DIR, session, "txt")
}

/// The events `session` has been given.
pub fn read(store: &Store, session: &str) -> BTreeSet<String> {
    fs::read_to_string(path_for(store, session))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Record that `session` was given `ids`. Hooks of one session may run at once: each adds its
/// lines with one append.
pub fn add(store: &Store, session: &str, ids: &[String]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    let path = path_for(store, session);
    let dir = store.dir().join(DIR);
    fs::create_dir_all(&dir).map_err(io_error("cannot create", &dir))?;
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(io_error("cannot write", &path))
}

/// Forget what `session` was given: its context was compacted or cleared.
pub fn forget(store: &Store, session: &str) -> Result<()> {
    remove_file(&path_for(store, session))
}
