//! The tree at HEAD as a query reads it: many paths looked up in few folders, so each folder
//! is read from the object store once.

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;

/// The largest working tree file read, in place of HEAD's blob or for the lines a prompt names:
/// a source file's size.
pub const COPY_MAX: u64 = 8 << 20;

pub struct HeadTree<'r> {
    repo: &'r gix::Repository,
    /// Folders by path ("" for the root); `None` where HEAD has no such folder.
    folders: HashMap<String, Option<gix::Tree<'r>>>,
}

impl<'r> HeadTree<'r> {
    pub fn new(repo: &'r gix::Repository) -> HeadTree<'r> {
        HeadTree {
            repo,
            folders: HashMap::new(),
        }
    }

    /// The folder `dir` at HEAD.
    fn folder(&mut self, dir: &str) -> Option<&gix::Tree<'r>> {
        if !self.folders.contains_key(dir) {
            let tree = match dir.rsplit_once('/').unwrap_or(("", dir)) {
                ("", "") => self.repo.head_commit().ok().and_then(|c| c.tree().ok()),
                (parent, name) => self
                    .folder(parent)
                    .and_then(|t| t.find_entry(name))
                    .filter(|e| e.mode().is_tree())
                    .and_then(|e| e.object().ok())
                    .map(gix::Object::into_tree),
            };
            self.folders.insert(dir.to_owned(), tree);
        }
        self.folders[dir].as_ref()
    }

    /// The repository whose HEAD this is.
    pub fn repo(&self) -> &'r gix::Repository {
        self.repo
    }

    /// The blob at `path` in HEAD's tree, if it is a file there.
    pub fn blob(&mut self, path: &str) -> Option<ObjectId> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if name.is_empty() {
            return None;
        }
        let entry = self.folder(dir)?.find_entry(name)?;
        entry.mode().is_blob().then(|| entry.object_id())
    }

    /// The content of the file at `path` at HEAD: the working tree's copy when it is HEAD's
    /// blob byte for byte (it hashes to its id), which is read from a file rather than
    /// inflated out of a pack's chain of deltas; else the blob. Only a plain file is read
    /// there, of a size a blob of source has: not a link, a pipe or a device.
    pub fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        let id = self.blob(path)?;
        let copy = (self.repo.workdir()).and_then(|dir| working_copy(&dir.join(path), COPY_MAX));
        if let Some(data) = copy {
            let hash =
                gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, &data);
            if hash.is_ok_and(|h| h == id) {
                return Some(data);
            }
        }
        Some(self.repo.find_blob(id).ok()?.detach().data)
    }
}

/// The working tree's file `file`, when it is a plain file of at most `most` bytes: not a
/// link, which could lead out of the working tree, and a regular file checked again on the
/// handle opened, since a pipe or a device put in its place would hang the reader or never
/// end (docs/security.md). A path a prompt names is read so, and HEAD's copy of a file.
pub fn working_copy(file: &Path, most: u64) -> Option<Vec<u8>> {
    let file = crate::transcript::open_unlinked(file).ok()?;
    if !file.metadata().is_ok_and(|m| m.len() <= most) {
        return None;
    }
    let mut data = Vec::new();
    // A file that grows as it is read stops at the size it may have.
    std::io::Read::read_to_end(&mut std::io::Read::take(file, most), &mut data).ok()?;
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn finds_files_in_nested_folders_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let status = Command::new("git")
                .current_dir(dir.path())
                .args(args)
                .status();
            assert!(status.unwrap().success(), "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("a/b/c.rs"), "fn c() {}\n").unwrap();
        std::fs::write(dir.path().join("top.md"), "top\n").unwrap();
        git(&["add", "."]);
        git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "one",
        ]);
        let repo = gix::open(dir.path()).unwrap();
        let mut head = HeadTree::new(&repo);
        assert_eq!(head.read("a/b/c.rs").unwrap(), b"fn c() {}\n");
        assert_eq!(head.read("top.md").unwrap(), b"top\n");
        // The working tree's copy is read when it is HEAD's blob: with the blob gone from the
        // object store, the file is still there to read.
        let id = head.blob("top.md").unwrap().to_string();
        let object = dir
            .path()
            .join(".git/objects")
            .join(&id[..2])
            .join(&id[2..]);
        std::fs::remove_file(object).unwrap();
        let mut head = HeadTree::new(&repo);
        assert_eq!(head.read("top.md").unwrap(), b"top\n");
        // A link to the same content is not followed.
        std::fs::remove_file(dir.path().join("top.md")).unwrap();
        std::fs::write(dir.path().join("elsewhere.md"), "top\n").unwrap();
        std::os::unix::fs::symlink("elsewhere.md", dir.path().join("top.md")).unwrap();
        let mut head = HeadTree::new(&repo);
        assert_eq!(head.read("top.md"), None);
        std::fs::remove_file(dir.path().join("top.md")).unwrap();
        // A copy that is not HEAD's, changed or gone, is not read for it.
        std::fs::write(dir.path().join("top.md"), "changed\n").unwrap();
        std::fs::remove_file(dir.path().join("a/b/c.rs")).unwrap();
        let mut head = HeadTree::new(&repo);
        assert_eq!(head.read("top.md"), None);
        assert_eq!(head.read("a/b/c.rs").unwrap(), b"fn c() {}\n");
        for missing in ["a/b", "a", "a/b/", "a/x/c.rs", "c.rs", "", "top.md/x"] {
            assert!(head.blob(missing).is_none(), "{missing}");
        }
    }
}
