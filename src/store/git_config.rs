//! The repository's git settings that make notes follow their commits through `commit
//! --amend` and `rebase` (git copies the notes of rewritten commits itself, merging them with
//! `cat_sort_uniq`, which is a correct merge of our notes).
//!
//! Only `.git/config` is edited, and only to add what is missing: a value the user set
//! (`notes.rewrite.amend = false`, another `notes.rewriteRef`) is kept.

use gix::bstr::ByteSlice;

use super::notes::REF;
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
    let path = store.common_dir().join("config");
    let mut file =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(config_error)?;
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
        let mut out = Vec::new();
        file.write_to(&mut out).map_err(config_error)?;
        write_atomic(&path, &out)?;
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
