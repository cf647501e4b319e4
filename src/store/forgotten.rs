//! The events forgotten in this clone (`forgotten`: `<event id> TAB <session>` a line; ids are
//! hashes of where an event came from, never its text). `forget` adds to it; extraction, the
//! `PostToolUse` hook, the linker and `sync` leave out what it lists, so that a transcript read
//! again or a teammate's notes do not bring a forgotten event back.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;

use super::{Result, Store, io_error, write_atomic};
use crate::event::Event;

/// The file, in the store, that lists them.
pub const FILE: &str = "forgotten";

/// The forgotten ids, each with its session.
pub fn all(store: &Store) -> Result<HashMap<String, String>> {
    let path = store.dir().join(FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(io_error("cannot read", &path)(e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| {
            let (id, session) = l.split_once('\t')?;
            Some((id.to_owned(), session.to_owned()))
        })
        .collect())
}

/// Whether event `id` was forgotten in this clone: for a writer that makes events of its own,
/// outside extraction (the `PostToolUse` hook), before it stores one.
pub fn contains(store: &Store, id: &str) -> Result<bool> {
    Ok(all(store)?.contains_key(id))
}

/// Add `(event id, session)` pairs to the forgotten ones.
pub fn remember<'a>(
    store: &Store,
    events: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<()> {
    let mut all = all(store)?;
    let size = all.len();
    for (id, session) in events {
        // A session id with a line break could not be read back; the id alone is what
        // extraction needs.
        let session = session.replace(['\t', '\n', '\r'], " ");
        all.insert(id.to_owned(), session);
    }
    if all.len() == size {
        return Ok(());
    }
    let lines: BTreeSet<String> = all
        .into_iter()
        .map(|(id, session)| format!("{id}\t{session}\n"))
        .collect();
    write_atomic(
        &store.dir().join(FILE),
        lines.into_iter().collect::<String>().as_bytes(),
    )
}

/// `events` without those forgotten in this clone: what extraction may store.
pub fn without(store: &Store, mut events: Vec<Event>) -> Result<Vec<Event>> {
    if events.is_empty() {
        return Ok(events);
    }
    let forgotten = all(store)?;
    if !forgotten.is_empty() {
        events.retain(|e| !forgotten.contains_key(&e.id));
    }
    Ok(events)
}
