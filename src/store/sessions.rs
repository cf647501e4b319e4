//! The session registry: for each session seen in this repository, where it ran and which
//! transcript files hold it, one JSON file per session in `sessions/`.
//!
//! Written by whoever learns it — an extraction, a Claude Code hook (whose payload names the
//! transcript) — and read by the post-commit hook, which must find a session's transcript from
//! nothing but its id, fast.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Error, Result, Store, pending, write_cache};

pub const DIR: &str = "sessions";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    /// Where the session ran (its first recorded working directory).
    #[serde(default)]
    pub cwd: String,
    /// Its transcript files: the main one and its subagents'.
    #[serde(default)]
    pub transcripts: Vec<PathBuf>,
}

fn path_for(store: &Store, session: &str) -> PathBuf {
    pending::session_path(store, DIR, session, "json")
}

/// The registry entry of `session`, if there is a readable one.
pub fn get(store: &Store, session: &str) -> Option<Session> {
    let bytes = fs::read(path_for(store, session)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Record that `transcript` holds (part of) `session`, which ran in `cwd`. Writes only when
/// that is news.
pub fn record(store: &Store, session: &str, transcript: &Path, cwd: &str) -> Result<()> {
    if session.is_empty() {
        return Ok(());
    }
    let mut entry = get(store, session).unwrap_or_else(|| Session {
        session_id: session.to_owned(),
        ..Session::default()
    });
    let before = entry.clone();
    if entry.cwd.is_empty() {
        entry.cwd = cwd.to_owned();
    }
    if !entry.transcripts.iter().any(|t| t == transcript) {
        entry.transcripts.push(transcript.to_owned());
        entry.transcripts.sort();
    }
    if entry == before {
        return Ok(());
    }
    let path = path_for(store, session);
    let bytes = serde_json::to_vec_pretty(&entry).map_err(|source| Error::Json {
        path: path.clone(),
        source,
    })?;
    // What the registry holds can be found again (in Claude Code's project folder, by the
    // next hook that names the transcript): not synced to disk, which would hold up the first
    // hook of every session.
    write_cache(&path, &bytes)
}

/// Every readable registry entry.
pub fn all(store: &Store) -> Result<Vec<Session>> {
    let mut out: Vec<Session> = store
        .files_in(DIR, "json")?
        .into_iter()
        .filter_map(|path| serde_json::from_slice(&fs::read(path).ok()?).ok())
        .collect();
    out.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    Ok(out)
}
