//! Packing what we wrote. Our objects are written one file each (loose), as git's own
//! commands write theirs; a command that writes many — an import, a first sync, a rebuild —
//! packs them when it is done ([`pack_if_many`]), so that the repository does not keep
//! thousands of files until the next `git gc`. Hooks write a few objects a run; the process an
//! agent's commit leaves its work to packs the repository's loose objects once there are many
//! ([`pack_if_loose`]): the hooks read the newest objects most, and a loose one costs a file
//! opened, mapped and inflated each time (docs/performance.md).

use std::fs;
use std::process::{Command, Stdio};

use super::{Error, Result, Store};

/// Loose objects past which we pack them: those a command wrote, or all of them after an
/// agent's commit.
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
/// count [`loose`] made when the command started), with `git repack -d`. Whether it packed.
pub fn pack_if_many(store: &Store, before: usize) -> Result<bool> {
    if loose(store) < before + PACK_AFTER {
        return Ok(false);
    }
    repack(store).map(|()| true)
}

/// Pack the repository's loose objects, whoever wrote them, when there are [`PACK_AFTER`] more
/// than the last such packing left (`loose-after-pack` in the store: objects no ref reaches,
/// which `git repack -d` leaves loose), unless `gc.auto` is 0 or `maintenance.auto` false (the
/// user's word that nothing packs on its own): git's own `gc --auto` waits for about 6,700.
/// Whether it packed.
pub fn pack_if_loose(store: &Store) -> Result<bool> {
    let repo = store.repo();
    let config = repo.config_snapshot();
    if config.integer("gc.auto") == Some(0) || config.boolean("maintenance.auto") == Some(false) {
        return Ok(false);
    }
    let left_path = store.dir().join(LEFT_AFTER_PACK);
    let left = fs::read_to_string(&left_path)
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if loose(store) < left + PACK_AFTER {
        return Ok(false);
    }
    repack(store)?;
    super::write_atomic(&left_path, format!("{}\n", loose(store)).as_bytes())?;
    Ok(true)
}

/// The file in the store that keeps how many loose objects the last [`pack_if_loose`] left.
const LEFT_AFTER_PACK: &str = "loose-after-pack";

/// `git repack -d`: the loose objects only, into one new pack, the packs already there left as
/// they are.
fn repack(store: &Store) -> Result<()> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(store.common_dir())
        .args(["repack", "-d", "-q", "--no-write-bitmap-index"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::git("run git repack", e.to_string()))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(Error::git(
            "git repack",
            String::from_utf8_lossy(&out.stderr).trim(),
        )),
    }
}
