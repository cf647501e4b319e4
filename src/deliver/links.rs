//! The links on the way to a file we write in someone's folder: `install`'s Claude Code settings
//! file and CLAUDE.md (docs/security.md, "Links in a cloned repository").
//!
//! A cloned repository is untrusted input: a committed link (`.claude` → `~/.claude`,
//! `CLAUDE.md` → `~/.bashrc`) must not turn our write into a write to a file elsewhere, nor our
//! read into a copy of one. A link that stays inside the folder the file belongs to (the top of
//! the working tree; Claude Code's folder for the user's settings) is followed, so that
//! `CLAUDE.md` → `AGENTS.md` stays a link and the file it names is the one updated; a link that
//! leads out of the folder, or into the repository's git directory, is refused before anything
//! is read or written. The folder itself may be a link (`~/.claude` kept in a dotfiles
//! repository): it is where the user put it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// How many links a path may go through, as for the system's own resolution.
const HOPS_MAX: u32 = 40;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{link} is a link to {target}, outside {folder}: nothing is written through it")]
    Outside {
        link: PathBuf,
        target: PathBuf,
        folder: PathBuf,
    },
    #[error(
        "{link} is a link to {target}, inside the git directory {git_dir}: nothing is written \
         through it"
    )]
    IntoGitDir {
        link: PathBuf,
        target: PathBuf,
        git_dir: PathBuf,
    },
    #[error("cannot follow the link {link}")]
    Unreadable { link: PathBuf, source: io::Error },
}

/// The file to read and write for `name` in `folder`: `folder/name` itself when no link is on
/// the way, else where the links lead, when that is inside `folder` and not inside `git_dir`.
pub fn follow(folder: &Path, name: &Path, git_dir: Option<&Path>) -> Result<PathBuf, Error> {
    let unreadable = |link: &Path| {
        let link = link.to_owned();
        move |source| Error::Unreadable { link, source }
    };
    let root = real(folder, HOPS_MAX).map_err(unreadable(folder))?;
    let git_dir = match git_dir {
        Some(dir) => Some(real(dir, HOPS_MAX).map_err(unreadable(dir))?),
        None => None,
    };
    let path = folder.join(name);
    let mut at = folder.to_owned();
    let mut linked = false;
    for part in name.components() {
        at.push(part);
        if !fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        linked = true;
        let target = real(&at, HOPS_MAX).map_err(unreadable(&at))?;
        if !target.starts_with(&root) {
            return Err(Error::Outside {
                link: at,
                target,
                folder: root,
            });
        }
        if let Some(git_dir) = git_dir.as_ref().filter(|g| target.starts_with(g)) {
            return Err(Error::IntoGitDir {
                link: at,
                target,
                git_dir: git_dir.clone(),
            });
        }
    }
    match linked {
        false => Ok(path),
        true => real(&path, HOPS_MAX).map_err(unreadable(&path)),
    }
}

/// `path` with every link followed and `.` and `..` resolved, even when it does not exist yet;
/// `path` itself when that cannot be told.
pub fn resolved(path: &Path) -> PathBuf {
    real(path, 0).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` with every link followed and `.` and `..` resolved, even when it, or the end of the
/// links it goes through, does not exist yet (where a write would create it).
fn real(path: &Path, hops: u32) -> io::Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(real) => return Ok(real),
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        Err(_) => {}
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    };
    let parent = match parent.as_os_str().is_empty() {
        true => Path::new("."),
        false => parent,
    };
    match fs::symlink_metadata(path) {
        // A link to nothing (yet): where it leads.
        Ok(m) if m.file_type().is_symlink() => {
            if hops == 0 {
                return Err(io::Error::other("too many levels of links"));
            }
            real(&parent.join(fs::read_link(path)?), hops - 1)
        }
        _ => Ok(real(parent, hops)?.join(name)),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_inside_are_followed_and_links_out_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let top = base.join("top");
        let git = top.join(".git");
        fs::create_dir_all(&git).unwrap();
        fs::create_dir_all(base.join("away")).unwrap();
        fs::write(top.join("AGENTS.md"), "").unwrap();
        let follow = |name: &str| follow(&top, Path::new(name), Some(&git));

        assert_eq!(follow("plain.md").unwrap(), top.join("plain.md"));
        symlink("AGENTS.md", top.join("CLAUDE.md")).unwrap();
        assert_eq!(follow("CLAUDE.md").unwrap(), top.join("AGENTS.md"));
        // A link to a file not there yet leads where it would be made.
        symlink("sub/new.md", top.join("later.md")).unwrap();
        assert_eq!(follow("later.md").unwrap(), top.join("sub/new.md"));

        symlink("../away", top.join(".claude")).unwrap();
        match follow(".claude/settings.json") {
            Err(Error::Outside { link, target, .. }) => {
                assert_eq!((link, target), (top.join(".claude"), base.join("away")));
            }
            other => panic!("{other:?}"),
        }
        symlink(base.join("away/nothing"), top.join("dangling.md")).unwrap();
        assert!(matches!(follow("dangling.md"), Err(Error::Outside { .. })));
        symlink(".git/config", top.join("config.md")).unwrap();
        assert!(matches!(follow("config.md"), Err(Error::IntoGitDir { .. })));
        symlink("loop.md", top.join("loop.md")).unwrap();
        assert!(matches!(follow("loop.md"), Err(Error::Unreadable { .. })));
    }
}
