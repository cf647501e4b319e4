//! The repository's git settings that make notes follow their commits through `commit
//! --amend` and `rebase` (git copies the notes of rewritten commits itself, merging them with
//! `cat_sort_uniq`, which is a correct merge of our notes).
//!
//! Only `.git/config` is edited, and only to add what is missing: a value the user set
//! (`notes.rewrite.amend = false`, another `notes.rewriteRef`) is kept.
//!
//! With `install --sync`, a remote's fetch refspecs also get one for our notes
//! ([`fetch_notes`]), so that a plain `git fetch` or `git pull` brings the team's notes beside
//! ours ([`super::notes::tracking`]).

use gix::bstr::ByteSlice;

use super::notes::{self, REF};
use super::{Error, Result, Store, write_atomic};

/// (section, subsection, key, value)
const SETTINGS: [(&str, Option<&str>, &str, &str); 4] = [
    ("notes", None, "rewriteRef", REF),
    ("notes", Some("rewrite"), "amend", "true"),
    ("notes", Some("rewrite"), "rebase", "true"),
    ("notes", None, "rewriteMode", "cat_sort_uniq"),
];

/// The error and its causes on one line, as every other git error ([`super::error_chain`]).
fn config_error(e: impl std::error::Error) -> Error {
    Error::git("edit .git/config", super::error_chain(&e))
}

/// Add the note-rewriting settings that are missing; tell whether the file changed.
pub fn enable_note_rewrites(store: &Store) -> Result<bool> {
    let (path, mut file) = config_file(store)?;
    let mut changed = false;
    for (section, subsection, key, value) in SETTINGS {
        let full = match subsection {
            Some(sub) => format!("{section}.{sub}.{key}"),
            None => format!("{section}.{key}"),
        };
        let present = file.strings(full.as_str()).unwrap_or_default();
        // rewriteRef may hold several refs: ours is added beside the user's. The others are
        // single values: an existing one is the user's choice.
        let missing = if key == "rewriteRef" {
            !present
                .iter()
                .any(|v| v.as_bstr() == value.as_bytes().as_bstr())
        } else {
            present.is_empty()
        };
        if missing {
            file.section_mut_or_create_new(section, subsection.map(|s| s.as_bytes().as_bstr()))
                .map_err(config_error)?
                .push(key, Some(value.as_bytes().as_bstr()))
                .map_err(config_error)?;
            changed = true;
        }
    }
    if changed {
        save(&path, &file)?;
    }
    Ok(changed)
}

/// Whether notes follow rewritten commits as [`enable_note_rewrites`] sets it: our ref among
/// `notes.rewriteRef`, and `notes.rewrite.amend` and `.rebase` not turned off.
pub fn note_rewrites(store: &Store) -> bool {
    let repo = store.repo();
    let config = repo.config_snapshot();
    let refs = config.strings("notes.rewriteRef").unwrap_or_default();
    refs.iter().any(|v| v.as_bstr() == REF.as_bytes().as_bstr())
        && ["notes.rewrite.amend", "notes.rewrite.rebase"]
            .iter()
            .all(|key| config.boolean(*key) != Some(false))
}

/// The folder git runs this repository's hooks from: `core.hooksPath` (relative to the top of
/// the working tree, or to the git directory of a bare repository), else `hooks/` in the
/// common git directory.
pub fn hooks_dir(store: &Store) -> Result<std::path::PathBuf> {
    let configured = store
        .repo()
        .config_snapshot()
        .trusted_path("core.hooksPath")
        .map_err(super::git_error("read core.hooksPath"))?
        .filter(|dir| !dir.as_os_str().is_empty());
    Ok(match configured {
        // Joining an absolute path gives that path.
        Some(dir) => store.workdir().unwrap_or(store.common_dir()).join(dir),
        None => store.common_dir().join("hooks"),
    })
}

/// The fetch refspec that brings `remote`'s notes beside ours.
pub fn notes_refspec(remote: &str) -> String {
    format!("+{REF}:{}", notes::tracking(remote))
}

fn config_file(store: &Store) -> Result<(std::path::PathBuf, gix::config::File)> {
    let path = store.common_dir().join("config");
    let file = gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
        .map_err(config_error)?;
    Ok((path, file))
}

fn save(path: &std::path::Path, file: &gix::config::File) -> Result<()> {
    let mut out = Vec::new();
    file.write_to(&mut out).map_err(config_error)?;
    write_atomic(path, &out)
}

/// Add [`notes_refspec`] to `remote`'s fetch refspecs, unless it is there; whether it was
/// added.
pub fn fetch_notes(store: &Store, remote: &str) -> Result<bool> {
    let (path, mut file) = config_file(store)?;
    let spec = notes_refspec(remote);
    let key = format!("remote.{remote}.fetch");
    let present = file.strings(key.as_str()).unwrap_or_default();
    if present
        .iter()
        .any(|v| v.as_bstr() == spec.as_bytes().as_bstr())
    {
        return Ok(false);
    }
    file.section_mut_or_create_new("remote", Some(remote.as_bytes().as_bstr()))
        .map_err(config_error)?
        .push("fetch", Some(spec.as_bytes().as_bstr()))
        .map_err(config_error)?;
    save(&path, &file)?;
    Ok(true)
}

/// The remotes whose fetch refspecs bring our notes.
pub fn remotes_fetching_notes(store: &Store) -> Vec<String> {
    let repo = store.repo();
    let config = repo.config_snapshot();
    let mut out: Vec<String> = repo
        .remote_names()
        .iter()
        .map(|n| n.to_string())
        .filter(|name| {
            let spec = notes_refspec(name);
            config
                .strings(format!("remote.{name}.fetch").as_str())
                .unwrap_or_default()
                .iter()
                .any(|v| v.as_bstr() == spec.as_bytes().as_bstr())
        })
        .collect();
    out.sort();
    out
}

/// Take [`notes_refspec`] out of every remote's fetch refspecs; the remotes it was taken from.
pub fn stop_fetching_notes(store: &Store) -> Result<Vec<String>> {
    let remotes = remotes_fetching_notes(store);
    if remotes.is_empty() {
        return Ok(remotes);
    }
    let (path, mut file) = config_file(store)?;
    for remote in &remotes {
        let spec = notes_refspec(remote);
        let key = format!("remote.{remote}.fetch");
        let mut values = file.raw_values_mut(key.as_str()).map_err(config_error)?;
        let ours: Vec<usize> = values
            .get()
            .map_err(config_error)?
            .iter()
            .enumerate()
            .filter(|(_, v)| v.as_bstr() == spec.as_bytes().as_bstr())
            .map(|(i, _)| i)
            .collect();
        for i in ours.into_iter().rev() {
            values.delete(i);
        }
    }
    save(&path, &file)?;
    Ok(remotes)
}
