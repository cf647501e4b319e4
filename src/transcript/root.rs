//! The folder a session's file paths are relative to (docs/linking.md, "Whose files").
//!
//! Events name files relative to the repository, whoever recorded the transcript and wherever:
//! in this clone, in a linked worktree of it, in a subfolder, or on a teammate's machine
//! (`/Users/<dev>/src/app`, `C:\src\app`). The session's root is the worktree of this
//! repository that holds its `cwd`; for a `cwd` outside every worktree, it is the `cwd` or the
//! nearest of its ancestors under which the session's first file path names a file of this
//! repository (a session started in a subfolder names files under the repository's root).
//!
//! Paths are compared as text, after a lexical clean-up: Windows separators become `/`, `.` and
//! `..` components are resolved (a path that climbs out of its root is not inside it), and a
//! Windows path compares without regard to case.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

/// Whether `cwd` is in `workdir` and in none of the `excluded` folders (other worktrees nested
/// in it, whose sessions are theirs).
pub fn within(cwd: &std::path::Path, workdir: &std::path::Path, excluded: &[PathBuf]) -> bool {
    cwd.starts_with(workdir) && !excluded.iter().any(|x| cwd.starts_with(x))
}

/// How far above a foreign `cwd` its root may be.
const LEVELS_UP_MAX: usize = 8;

/// The worktrees of this repository and a view of its files, to find sessions' roots.
pub struct Roots<'a> {
    /// Every worktree's folder, cleaned up, deepest first.
    worktrees: Vec<String>,
    /// Whether a repository-relative path names a file at HEAD.
    is_file: Box<dyn Fn(&str) -> bool + 'a>,
    /// What [`inside`] gave for a root and a path: a session names the same files (and its
    /// commands the same words) over and over, and following links costs system calls.
    seen: RefCell<HashMap<(String, String), String>>,
}

impl<'a> Roots<'a> {
    pub fn new(worktrees: &[PathBuf], is_file: impl Fn(&str) -> bool + 'a) -> Self {
        let mut worktrees: Vec<String> = worktrees
            .iter()
            .map(|w| clean(&w.to_string_lossy()))
            .collect();
        worktrees.sort_by_key(|w| std::cmp::Reverse(w.len()));
        Roots {
            worktrees,
            is_file: Box::new(is_file),
            seen: RefCell::default(),
        }
    }

    /// The root of a session started in `cwd`, once it is known: at once for a `cwd` in one of
    /// this repository's worktrees; else when `path`, an absolute path the session named, is
    /// a file of the repository under `cwd` or one of its ancestors (the deepest such). `None`
    /// while nothing tells.
    pub fn of(&self, cwd: &str, path: &str) -> Option<String> {
        let cwd = clean(cwd);
        if cwd.is_empty() {
            return None;
        }
        if let Some(worktree) = self.worktrees.iter().find(|w| under(&cwd, w).is_some()) {
            return Some(worktree.clone());
        }
        let path = clean(path);
        // A path outside the cwd (a file read beside the clone) says nothing of where in the
        // repository the session started.
        under(&path, &cwd)?;
        let mut candidate = cwd.as_str();
        for _ in 0..=LEVELS_UP_MAX {
            if let Some(rest) = under(&path, candidate)
                && !rest.is_empty()
                && (self.is_file)(rest)
            {
                return Some(candidate.to_owned());
            }
            match parent(candidate) {
                Some(up) => candidate = up,
                None => break,
            }
        }
        None
    }

    /// `path` as events name it, for a session whose root is `root` (`None`: not known yet,
    /// then the session's `cwd` stands in, or without one the worktree holding the path):
    /// relative to the root when inside it, else cleaned up and absolute. A relative path is
    /// read from the `cwd`.
    pub fn relative(&self, root: Option<&str>, cwd: &str, path: &str) -> String {
        let cwd = clean(cwd);
        let cleaned = match clean(path) {
            // The home folder, never inside the repository.
            p if p.starts_with('~') => return p,
            p if is_absolute(&p) => p,
            p if is_absolute(&cwd) => clean(&format!("{cwd}/{p}")),
            p => return p,
        };
        let root = match root {
            Some(root) => Some(root),
            None if !cwd.is_empty() => Some(cwd.as_str()),
            None => self
                .worktrees
                .iter()
                .find(|w| under(&cleaned, w).is_some())
                .map(String::as_str),
        };
        let Some(root) = root else {
            return cleaned;
        };
        let key = (root.to_owned(), cleaned);
        if let Some(seen) = self.seen.borrow().get(&key) {
            return seen.clone();
        }
        let out = inside(Some(root), key.1.clone());
        self.seen.borrow_mut().insert(key, out.clone());
        out
    }
}

/// `path` relative to `root` when inside it, else cleaned up (see [`clean`]) and as it was,
/// absolute or not.
pub fn relative_to(root: Option<&std::path::Path>, path: &str) -> String {
    let root = root.map(|r| clean(&r.to_string_lossy()));
    inside(root.as_deref(), clean(path))
}

/// Whether `path`, as [`Roots::relative`] or [`relative_to`] give it, is inside the
/// repository: relative, and not climbing out of it. Files outside are never recorded
/// (docs/security.md).
pub fn inside_repository(path: &str) -> bool {
    !path.is_empty()
        && !is_absolute(path)
        && !path.starts_with('~')
        && path != ".."
        && !path.starts_with("../")
}

/// `path` (cleaned up) made relative to `root` when inside it, the links on its way followed
/// when `root` is a folder of this machine.
fn inside(root: Option<&str>, path: String) -> String {
    match root.map(|r| (r, under(&path, r))) {
        Some((root, Some(rest))) if !rest.is_empty() => follow_links(root, rest),
        _ => path,
    }
}

/// `relative`, a path inside the folder `root`, with the links among its folders (and itself)
/// followed, as the file system would: relative to `root` when it stays inside, else the
/// absolute path it leads to. A link `vault -> secrets` makes `vault/prod.txt` the
/// `secrets/prod.txt` an exclusion names. Unchanged when `root` is not a folder here (a
/// teammate's transcript) or nothing on its way is a link.
fn follow_links(root: &str, relative: &str) -> String {
    use std::path::Path;
    // Most paths have no link on their way, and most words of a command name nothing here:
    // each part is looked at (`lstat`) until one is a link or is not there (nothing below a
    // missing part can be one). Only a link has the path resolved whole, which reads every
    // folder from the top of the file system again.
    let mut at = Path::new(root).to_owned();
    let mut linked = false;
    for part in relative.split('/') {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                linked = true;
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    if !linked {
        return relative.to_owned();
    }
    let Ok(real_root) = std::fs::canonicalize(root) else {
        return relative.to_owned();
    };
    // The deepest part of the path that exists, followed; the rest appended as it is.
    let mut existing = Path::new(root).join(relative);
    let mut rest = Vec::new();
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            break real;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(up)) => {
                rest.push(name.to_string_lossy().into_owned());
                existing = up.to_owned();
            }
            _ => return relative.to_owned(),
        }
    };
    let rest = rest.iter().rev().map(String::as_str);
    match real.strip_prefix(&real_root) {
        Ok(inner) => {
            let inner = inner.to_string_lossy();
            let parts = inner.split('/').filter(|p| !p.is_empty()).chain(rest);
            parts.collect::<Vec<_>>().join("/")
        }
        Err(_) => {
            let real = real.to_string_lossy().into_owned();
            std::iter::once(real.as_str())
                .chain(rest)
                .collect::<Vec<_>>()
                .join("/")
        }
    }
}

/// Whether `path` is absolute, on Unix or on Windows (`C:\`, `C:/`, `\\server`).
pub fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    path.starts_with('/')
        || path.starts_with('\\')
        || (bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'/' | b'\\'))
}

/// Whether `path` is a Windows path (a drive letter or a UNC server).
fn is_windows(path: &str) -> bool {
    is_absolute(path) && !path.starts_with('/')
}

/// `path` with `/` separators (for a Windows path), without `.` components, with `..` resolved
/// against the component before it (at the root it stays at the root), without a trailing `/`.
pub fn clean(path: &str) -> String {
    let windows = is_windows(path);
    let path = if windows {
        path.replace('\\', "/")
    } else {
        path.to_owned()
    };
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    // Leading `..` of a relative path are kept: it climbs out of wherever it is read from.
    let mut climbs = 0;
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                let is_drive = windows && parts.len() == 1 && parts[0].ends_with(':');
                if parts.is_empty() || is_drive {
                    climbs += usize::from(!absolute && !windows);
                } else {
                    parts.pop();
                }
            }
            _ => parts.push(part),
        }
    }
    let mut out = String::new();
    if absolute {
        out.push('/');
        // A UNC path keeps its two slashes.
        if windows && path.starts_with("//") {
            out.push('/');
        }
    }
    out.push_str(&vec![".."; climbs].join("/"));
    if climbs > 0 && !parts.is_empty() {
        out.push('/');
    }
    out.push_str(&parts.join("/"));
    if out.is_empty() && absolute {
        out.push('/');
    }
    out
}

/// What follows `root` in `path` (both cleaned up): `Some("")` for the root itself, `None` for a
/// path outside it. A Windows path compares without regard to case.
fn under<'p>(path: &'p str, root: &str) -> Option<&'p str> {
    let head = path.get(..root.len())?;
    let same = if is_windows(root) {
        head.eq_ignore_ascii_case(root)
    } else {
        head == root
    };
    if !same {
        return None;
    }
    let rest = &path[root.len()..];
    if rest.is_empty() {
        Some("")
    } else if root.ends_with('/') {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// The folder holding `path` (cleaned up), or `None` at a root (`/`, `C:`, `//server`).
fn parent(path: &str) -> Option<&str> {
    let cut = path.rfind('/')?;
    let up = &path[..cut];
    if up.is_empty() || up.ends_with(':') || up == "/" {
        return None;
    }
    Some(up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots<'a>(worktrees: &[&str], files: &'a [&'a str]) -> Roots<'a> {
        let worktrees: Vec<PathBuf> = worktrees.iter().map(PathBuf::from).collect();
        Roots::new(&worktrees, move |p| files.contains(&p))
    }

    #[test]
    fn links_inside_the_folder_are_followed_and_outside_paths_are_told() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("secrets")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::os::unix::fs::symlink("secrets", root.join("vault")).unwrap();
        std::os::unix::fs::symlink("../../secrets", root.join("src/deep/keys")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let root = root.to_str().unwrap();
        assert_eq!(follow_links(root, "vault/prod.txt"), "secrets/prod.txt");
        assert_eq!(follow_links(root, "vault"), "secrets");
        assert_eq!(follow_links(root, "src/new.rs"), "src/new.rs");
        // A link further down the path, and one under a folder that is not there.
        assert_eq!(
            follow_links(root, "src/deep/keys/prod.txt"),
            "secrets/prod.txt"
        );
        assert_eq!(follow_links(root, "src/gone/keys/x"), "src/gone/keys/x");
        assert_eq!(follow_links(root, "src/deep/new/x.rs"), "src/deep/new/x.rs");
        let out = follow_links(root, "out/x.txt");
        assert!(is_absolute(&out) && out.ends_with("/x.txt"), "{out}");
        assert_eq!(follow_links("/no/such/folder", "vault/x"), "vault/x");
        let roots = Roots::new(&[PathBuf::from(root)], |_| false);
        let relative = |path: &str| roots.relative(Some(root), root, path);
        assert_eq!(
            relative(&format!("{root}/sub/../vault//prod.txt")),
            "secrets/prod.txt"
        );
        assert_eq!(relative("sub/../vault/prod.txt"), "secrets/prod.txt");
        for (path, inside) in [
            ("src/a.rs", true),
            ("../x", false),
            ("..", false),
            ("/etc/passwd", false),
            ("C:/x", false),
            ("..a/b", true),
            ("~/.ssh/config", false),
        ] {
            assert_eq!(inside_repository(path), inside, "{path}");
        }
        assert!(!inside_repository(&relative("../../../root/.ssh/config")));
        assert!(!inside_repository(&relative("~/.ssh/config")));
    }

    #[test]
    fn clean_up_is_lexical() {
        assert_eq!(clean("/r/app/./src/../lib.rs"), "/r/app/lib.rs");
        assert_eq!(clean("/r/app/"), "/r/app");
        assert_eq!(clean("/../etc/passwd"), "/etc/passwd");
        assert_eq!(clean("src/../../x"), "../x");
        assert_eq!(clean("C:\\src\\app\\..\\lib\\a.rs"), "C:/src/lib/a.rs");
        assert_eq!(clean("C:\\..\\a"), "C:/a");
        assert_eq!(clean("\\\\server\\share\\a"), "//server/share/a");
        assert_eq!(clean("/"), "/");
    }

    #[test]
    fn a_cwd_in_a_worktree_has_that_worktree_as_root() {
        let r = roots(
            &["/w/app", "/w/app/.worktrees/3", "/elsewhere/feature"],
            &[],
        );
        assert_eq!(
            r.of("/w/app/src", "/w/app/src/a.rs").as_deref(),
            Some("/w/app")
        );
        assert_eq!(
            r.of("/w/app/.worktrees/3", "/x").as_deref(),
            Some("/w/app/.worktrees/3")
        );
        assert_eq!(
            r.of("/elsewhere/feature/sub/", "").as_deref(),
            Some("/elsewhere/feature")
        );
    }

    #[test]
    fn a_foreign_cwd_is_its_root_unless_a_path_says_it_is_a_subfolder() {
        let files = ["src/a.rs", "app/models.py", "cmd/tool/main.go"];
        let r = roots(&["/w/app"], &files);
        // A session at the root of another machine's clone.
        assert_eq!(
            r.of("/Users/dev/app", "/Users/dev/app/src/a.rs").as_deref(),
            Some("/Users/dev/app")
        );
        // A top-level folder named like the clone: the deepest root that names a file wins.
        assert_eq!(
            r.of("/Users/dev/app", "/Users/dev/app/app/models.py")
                .as_deref(),
            Some("/Users/dev/app")
        );
        // Started in a subfolder.
        assert_eq!(
            r.of("/Users/dev/x/cmd/tool", "/Users/dev/x/cmd/tool/main.go")
                .as_deref(),
            Some("/Users/dev/x")
        );
        // A new file, or one outside: nothing tells yet.
        assert_eq!(r.of("/Users/dev/app", "/Users/dev/app/new.rs"), None);
        assert_eq!(r.of("/Users/dev/app", "/Users/dev/src/a.rs"), None);
        assert_eq!(r.of("/Users/dev/app", "/etc/hosts"), None);
        assert_eq!(r.of("", "/Users/dev/app/src/a.rs"), None);
        // Windows, any case of the drive.
        assert_eq!(
            r.of("C:\\Users\\dev\\app", "c:\\Users\\dev\\app\\src\\a.rs")
                .as_deref(),
            Some("C:/Users/dev/app")
        );
    }

    #[test]
    fn paths_are_made_relative_to_the_root_or_kept_absolute() {
        let r = roots(&["/w/app"], &[]);
        let rel = |root: Option<&str>, cwd: &str, p: &str| r.relative(root, cwd, p);
        assert_eq!(
            rel(Some("/Users/dev/app"), "", "/Users/dev/app/src/a.rs"),
            "src/a.rs"
        );
        assert_eq!(
            rel(Some("/Users/dev/app"), "", "/Users/dev/app"),
            "/Users/dev/app"
        );
        assert_eq!(
            rel(Some("/Users/dev/app"), "", "/Users/dev/app/../app2/a.rs"),
            "/Users/dev/app2/a.rs"
        );
        assert_eq!(
            rel(Some("/Users/dev/app"), "", "/Users/dev/apple/a"),
            "/Users/dev/apple/a"
        );
        assert_eq!(
            rel(Some("C:/src/app"), "", "C:\\SRC\\app\\lib\\a.rs"),
            "lib/a.rs"
        );
        // Not known yet: the cwd stands in, else the worktree holding the path.
        assert_eq!(
            rel(None, "/Users/dev/app", "/Users/dev/app/new.rs"),
            "new.rs"
        );
        assert_eq!(rel(None, "", "/w/app/src/a.rs"), "src/a.rs");
        assert_eq!(rel(None, "", "/tmp/a.rs"), "/tmp/a.rs");
        assert_eq!(rel(None, "", "src/./a.rs"), "src/a.rs");
        assert!(is_absolute("C:/x") && is_absolute("\\\\s\\x") && !is_absolute("C:x"));
    }
}
