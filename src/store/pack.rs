//! Packing what a command wrote. Our objects are written one file each (loose), as git's own
//! commands write theirs; a command that writes many — an import, a first sync, a rebuild —
//! packs them when it is done ([`pack_if_many`]), so that the repository does not keep
//! thousands of files until the next `git gc`. Hooks write a few objects a run and leave them
//! to git's own `gc --auto`.

use std::fs;
use std::process::{Command, Stdio};

use super::{Error, Result, Store};

/// New loose objects past which a command packs them.
pub const PACK_AFTER: usize = 256;

/// How many loose objects the repository has: the files of `objects/<xx>/`.
pub fn loose(store: &Store) -> usize {
    let objects = store.common_dir().join("objects");
    let Ok(entries) = fs::read_dir(&objects) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())
        })
        .map(|e| fs::read_dir(e.path()).map_or(0, |files| files.count()))
        .sum()
}

/// Pack the repository's loose objects when there are [`PACK_AFTER`] more than `before` (a
/// count [`loose`] made when the command started), with `git repack -d`: the loose objects
/// only, into one new pack, the packs already there left as they are. Whether it packed.
pub fn pack_if_many(store: &Store, before: usize) -> Result<bool> {
    if loose(store) < before + PACK_AFTER {
        return Ok(false);
    }
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(store.common_dir())
        .args(["repack", "-d", "-q", "--no-write-bitmap-index"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::git("run git repack", e.to_string()))?;
    match out.status.success() {
        true => Ok(true),
        false => Err(Error::git(
            "git repack",
            String::from_utf8_lossy(&out.stderr).trim(),
        )),
    }
}
