//! Per-transcript extraction state (cursor + extractor state), one JSON file per transcript.
//!
//! The file name is a hash of the transcript's path, so any transcript — whatever its name —
//! maps to one state file. The record type belongs to the caller; this module only keeps it.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Error, Result, Store, io_error, write_atomic};

pub const DIR: &str = "cursors";

/// What [`load`] found.
pub enum Loaded<T> {
    Missing,
    Found(T),
    /// The file exists but cannot be read as a state: extraction starts over (ids are stable,
    /// so nothing is duplicated).
    Unreadable(Error),
}

fn path_for(store: &Store, transcript: &Path) -> PathBuf {
    let key = xxhash_rust::xxh3::xxh3_64(transcript.as_os_str().as_encoded_bytes());
    store.dir().join(DIR).join(format!("{key:016x}.json"))
}

pub fn load<T: DeserializeOwned>(store: &Store, transcript: &Path) -> Loaded<T> {
    let path = path_for(store, transcript);
    match fs::read(&path) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(v) => Loaded::Found(v),
            Err(source) => Loaded::Unreadable(Error::Json { path, source }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded::Missing,
        Err(e) => Loaded::Unreadable(io_error("cannot read", &path)(e)),
    }
}

pub fn save<T: Serialize>(store: &Store, transcript: &Path, value: &T) -> Result<()> {
    let path = path_for(store, transcript);
    let bytes = serde_json::to_vec(value).map_err(|source| Error::Json {
        path: path.clone(),
        source,
    })?;
    write_atomic(&path, &bytes)
}

/// Every saved state (for `status`); unreadable files are returned as errors.
pub fn all<T: DeserializeOwned>(store: &Store) -> Vec<Result<T>> {
    store
        .files_in(DIR, "json")
        .unwrap_or_default()
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).map_err(io_error("cannot read", &path))?;
            serde_json::from_slice(&bytes).map_err(|source| Error::Json { path, source })
        })
        .collect()
}
