//! The pending queue: events not yet attached to a commit, one JSON Lines file per session.
//!
//! Events are upserted by id, so re-extracting a transcript never duplicates one. A line that
//! cannot be read is kept as it is (and counted), never dropped: the store loses nothing.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Result, Store, io_error, write_atomic};
use crate::event::{Event, Key, Kind, Merged, merge};

pub const DIR: &str = "pending";

/// A byte is appended to this file of the store after every change to a queue: its length only
/// grows, so what was made from the queues when it had a length holds while it has it
/// ([`changes`]).
const CHANGES: &str = "pending.changes";

/// The events of one session's queue file, plus the lines we could not read.
struct Queue {
    events: Vec<Event>,
    unreadable: Vec<Vec<u8>>,
}

/// The file name for a session's records: session ids are UUIDs; anything else is made safe.
pub(crate) fn file_name(session: &str) -> String {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if safe.is_empty() {
        "unknown".to_owned()
    } else {
        safe
    };
    format!("{name}.jsonl")
}

/// `<store>/<dir>/<session>.<extension>`: where a record of `session` is kept.
pub(crate) fn session_path(store: &Store, dir: &str, session: &str, extension: &str) -> PathBuf {
    store
        .dir()
        .join(dir)
        .join(file_name(session))
        .with_extension(extension)
}

fn file_for(store: &Store, session: &str) -> PathBuf {
    session_path(store, DIR, session, "jsonl")
}

fn read(path: &Path) -> Result<Queue> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_error("cannot read", path)(e)),
    };
    let mut queue = Queue {
        events: Vec::new(),
        unreadable: Vec::new(),
    };
    // The file is written whole with one line per id; lines [`append`]ed since may repeat an
    // id, and the first line of an id is the one kept.
    let mut seen: HashSet<String> = HashSet::new();
    for line in bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
    {
        match serde_json::from_slice::<Event>(line) {
            Ok(e) if seen.insert(e.id.clone()) => queue.events.push(e),
            Ok(_) => {}
            Err(_) => queue.unreadable.push(line.to_vec()),
        }
    }
    Ok(queue)
}

/// Whether `session`'s queue holds event `id`: a search of the file's bytes, no parsing.
pub fn holds(store: &Store, session: &str, id: &str) -> bool {
    let needle = format!("\"id\":\"{id}\"");
    fs::read(file_for(store, session))
        .is_ok_and(|bytes| memchr::memmem::find(&bytes, needle.as_bytes()).is_some())
}

/// Add `event` to its session's queue with one append, without the lock: for a hook that must
/// not wait. An event of the same id already queued wins over it; an append that races with a
/// rewrite of the file may be lost, so only what the extractor would make again goes this way.
pub fn append(store: &Store, event: &Event) -> Result<()> {
    let dir = store.dir().join(DIR);
    fs::create_dir_all(&dir).map_err(io_error("cannot create", &dir))?;
    let path = file_for(store, &event.session_id);
    let mut line = serde_json::to_vec(event).expect("events serialize");
    line.push(b'\n');
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(&line))
        .map_err(io_error("cannot write", &path))?;
    changed(store)
}

/// Add `events` to their sessions' queues, replacing events with the same id.
pub fn upsert(store: &Store, events: Vec<Event>) -> Result<Merged> {
    let mut by_session: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for e in events {
        by_session.entry(e.session_id.clone()).or_default().push(e);
    }
    let mut total = Merged::default();
    for (session, new) in by_session {
        let path = file_for(store, &session);
        let mut queue = read(&path)?;
        let (events, merged) = merge(std::mem::take(&mut queue.events), new);
        queue.events = events;
        total.added += merged.added;
        total.updated += merged.updated;
        if merged.changed() {
            write(store, &path, &mut queue)?;
        }
    }
    Ok(total)
}

fn write(store: &Store, path: &Path, queue: &mut Queue) -> Result<()> {
    queue
        .events
        .sort_by(|a, b| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)));
    let mut out = Vec::new();
    for e in &queue.events {
        serde_json::to_writer(&mut out, e).expect("events serialize");
        out.push(b'\n');
    }
    for line in &queue.unreadable {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    write_atomic(path, &out)?;
    changed(store)
}

/// Count a change to the queues, once it is made: one byte appended to [`CHANGES`].
pub(crate) fn changed(store: &Store) -> Result<()> {
    let path = store.dir().join(CHANGES);
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(b"."))
        .map_err(io_error("cannot write", &path))
}

/// How many changes to the queues were counted ([`changed`]), 0 when none was. Read before the
/// queues: a change made since shows as a larger count.
pub(crate) fn changes(store: &Store) -> u64 {
    fs::metadata(store.dir().join(CHANGES)).map_or(0, |m| m.len())
}

/// Remove the events named; returns how many were there.
pub fn remove(store: &Store, events: &HashSet<Key>) -> Result<usize> {
    let mut by_session: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    for Key { session, id } in events {
        by_session.entry(session).or_default().insert(id);
    }
    let mut removed = 0;
    for (session, ids) in by_session {
        let path = file_for(store, session);
        let mut queue = read(&path)?;
        let before = queue.events.len();
        queue.events.retain(|e| !ids.contains(e.id.as_str()));
        if queue.events.len() != before {
            removed += before - queue.events.len();
            write(store, &path, &mut queue)?;
        }
    }
    Ok(removed)
}

/// Remove from the queue file at `path` its unreadable lines that are among `lines`; returns
/// how many were there.
pub fn remove_unreadable(store: &Store, path: &Path, lines: &HashSet<&[u8]>) -> Result<usize> {
    let mut queue = read(path)?;
    let before = queue.unreadable.len();
    queue.unreadable.retain(|l| !lines.contains(l.as_slice()));
    let removed = before - queue.unreadable.len();
    if removed > 0 {
        write(store, path, &mut queue)?;
    }
    Ok(removed)
}

/// A summary of everything pending.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    pub events: usize,
    pub sessions: usize,
    pub by_kind: BTreeMap<Kind, usize>,
    pub unreadable_lines: usize,
}

pub fn summary(store: &Store) -> Result<Summary> {
    let mut s = Summary::default();
    for path in store.files_in(DIR, "jsonl")? {
        let queue = read(&path)?;
        s.sessions += 1;
        s.events += queue.events.len();
        s.unreadable_lines += queue.unreadable.len();
        for e in &queue.events {
            *s.by_kind.entry(e.kind).or_default() += 1;
        }
    }
    Ok(s)
}

/// The events of one queue file (one session's).
pub fn events_in(path: &Path) -> Result<Vec<Event>> {
    Ok(read(path)?.events)
}

/// All pending events of one session, in time order.
pub fn session_events(store: &Store, session: &str) -> Result<Vec<Event>> {
    Ok(read(&file_for(store, session))?.events)
}

/// The pending events, of every session, that changed `path` (relative to the top of the
/// working tree).
pub fn touching(store: &Store, path: &str) -> Result<Vec<Event>> {
    let mut out = Vec::new();
    for file in store.files_in(DIR, "jsonl")? {
        out.extend(
            read(&file)?
                .events
                .into_iter()
                .filter(|e| e.files_affected.iter().any(|f| f == path)),
        );
    }
    Ok(out)
}
