//! The changes between two trees as a reviewer reads them: per file, what happened to it
//! (added, deleted, modified, renamed, mode changed) and its unified hunks with three lines of
//! context, as `git diff` shows them.
//!
//! The trees are compared by gix, renames found as git finds them by default (50 % similar);
//! the lines by gix's diff (Myers, as git) with git's slider heuristics, so that the hunks are
//! the ones `git diff` prints — `similar`, tried first, placed an ambiguous change elsewhere
//! than git in three of five commits of this repository. A file git would call binary (a NUL in its first 8,000 bytes) gets no
//! hunks. Submodules are shown as git shows them: `Subproject commit <id>` lines.

use gix::ObjectId;
use gix::diff::blob::sources::byte_lines;
use gix::diff::blob::{Algorithm, Diff, InternedInput};
use gix::object::tree::EntryKind;
use serde::Serialize;

use crate::retrieve::binary::is_text;
use crate::store::{self, git_error};

/// Lines of context around each change, as git's default.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Added,
    Deleted,
    Modified,
    Renamed,
}

/// One file's change.
#[derive(Debug, Clone, Serialize)]
pub struct FileDiff {
    /// The file's path after the change (before it, for a deleted file).
    pub path: String,
    /// The path before a rename.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: Status,
    /// Modes as git writes them (`100644`); absent on the side where the file does not exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_id: Option<String>,
    /// How alike the two sides of a rename are, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u32>,
    pub binary: bool,
    pub additions: u32,
    pub deletions: u32,
    pub hunks: Vec<Hunk>,
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, Serialize)]
pub struct Hunk {
    /// `@@ -<old start>,<old lines> +<new start>,<new lines> @@`
    pub header: String,
    /// 1-based first line on each side (0 for an empty side), and line counts.
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    /// Each line as a unified diff has it: `' '`, `'+'` or `'-'` then the text, without its
    /// `\n` (a CR stays); `\ No newline at end of file` after a line that has none.
    pub lines: Vec<String>,
}

impl Hunk {
    /// The text of the lines this hunk adds or removes.
    pub fn changed(&self) -> impl Iterator<Item = &str> {
        self.lines
            .iter()
            .filter(|l| l.starts_with(['+', '-']))
            .map(|l| &l[1..])
    }
}

/// The tree of `commit` and that of its first parent (`None` for a root commit, or one on a
/// shallow clone's boundary, whose parents are not here: git takes it for a root).
pub fn with_parent(
    repo: &gix::Repository,
    commit: ObjectId,
) -> store::Result<(gix::Tree<'_>, Option<gix::Tree<'_>>)> {
    let c = repo
        .find_commit(commit)
        .map_err(git_error(format!("read commit {commit}")))?;
    let tree = c
        .tree()
        .map_err(git_error(format!("read the tree of {commit}")))?;
    let parent = match crate::store::history::parents(repo, &c).first() {
        Some(&p) => Some(
            repo.find_commit(p)
                .and_then(|p| p.tree())
                .map_err(git_error(format!("read the parent of {commit}")))?,
        ),
        None => None,
    };
    Ok((tree, parent))
}

/// The files that differ between the trees of `old` and `new` (`None`: the empty tree), in
/// path order.
pub fn between(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: ObjectId,
) -> store::Result<Vec<FileDiff>> {
    let tree_of = |commit: ObjectId| {
        repo.find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(git_error(format!("read the tree of {commit}")))
    };
    let new_tree = tree_of(new)?;
    let old_tree = old.map(tree_of).transpose()?;
    let options = gix::diff::Options::default().with_rewrites(Some(Default::default()));
    let changes = repo
        .diff_tree_to_tree(old_tree.as_ref(), &new_tree, options)
        .map_err(git_error(format!("diff the trees of {new}")))?;
    let mut files = Vec::new();
    for change in changes {
        use gix::object::tree::diff::ChangeDetached as C;
        let (old, new, path, old_path, similarity) = match change {
            C::Addition {
                location,
                entry_mode,
                id,
                ..
            } => (None, Some((entry_mode, id)), location, None, None),
            C::Deletion {
                location,
                entry_mode,
                id,
                ..
            } => (Some((entry_mode, id)), None, location, None, None),
            C::Modification {
                location,
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
            } => (
                Some((previous_entry_mode, previous_id)),
                Some((entry_mode, id)),
                location,
                None,
                None,
            ),
            C::Rewrite {
                source_location,
                source_entry_mode,
                source_id,
                diff,
                entry_mode,
                id,
                location,
                copy,
                ..
            } => {
                let similarity = diff.map_or(100, |d| (d.similarity * 100.0).floor() as u32);
                let from = (!copy).then(|| source_location.to_string());
                (
                    Some((source_entry_mode, source_id)),
                    Some((entry_mode, id)),
                    location,
                    from,
                    Some(similarity),
                )
            }
        };
        // Folders come with the files in them, so a file that became a folder (or the
        // reverse) is a deletion, or an addition, here.
        let old = old.filter(|(mode, _)| !mode.is_tree());
        let new = new.filter(|(mode, _)| !mode.is_tree());
        let path = path.to_string();
        match (old, new) {
            (None, None) => {}
            // A file that became a symlink or a submodule (or the reverse): git shows a
            // deletion and an addition, not a mode change.
            (Some(old), Some(new)) if kind(old.0) != kind(new.0) => {
                files.push(file_diff(repo, &path, None, Some(old), None, None)?);
                files.push(file_diff(repo, &path, None, None, Some(new), None)?);
            }
            (old, new) => files.push(file_diff(repo, &path, old_path, old, new, similarity)?),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

type Side = (gix::object::tree::EntryMode, ObjectId);

/// What an entry is, as far as a diff goes: a file (executable or not), a symlink or a
/// submodule.
fn kind(mode: gix::object::tree::EntryMode) -> EntryKind {
    match mode.kind() {
        EntryKind::BlobExecutable => EntryKind::Blob,
        other => other,
    }
}

fn file_diff(
    repo: &gix::Repository,
    path: &str,
    old_path: Option<String>,
    old: Option<Side>,
    new: Option<Side>,
    similarity: Option<u32>,
) -> store::Result<FileDiff> {
    let status = match (&old, &new, &old_path) {
        (None, _, _) => Status::Added,
        (_, None, _) => Status::Deleted,
        (_, _, Some(_)) => Status::Renamed,
        _ => Status::Modified,
    };
    let before = content(repo, path, old)?;
    let after = content(repo, path, new)?;
    let binary = !is_text(&before) || !is_text(&after);
    let hunks = if binary || before == after {
        Vec::new()
    } else {
        hunks(&before, &after)
    };
    let count = |sign: char| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.starts_with(sign))
            .count() as u32
    };
    let mode = |side: &Option<Side>| side.map(|(m, _)| format!("{:06o}", m.value()));
    let id = |side: &Option<Side>| side.map(|(_, id)| id.to_string());
    Ok(FileDiff {
        path: path.to_owned(),
        old_path,
        status,
        old_mode: mode(&old),
        new_mode: mode(&new),
        old_id: id(&old),
        new_id: id(&new),
        similarity,
        binary,
        additions: count('+'),
        deletions: count('-'),
        hunks,
    })
}

/// What a side of a change holds: a blob's bytes, or a submodule's commit as git shows it.
fn content(repo: &gix::Repository, path: &str, side: Option<Side>) -> store::Result<Vec<u8>> {
    let Some((mode, id)) = side else {
        return Ok(Vec::new());
    };
    if mode.kind() == EntryKind::Commit {
        return Ok(format!("Subproject commit {id}\n").into_bytes());
    }
    Ok(repo
        .find_blob(id)
        .map_err(git_error(format!("read {path} ({id})")))?
        .detach()
        .data)
}

/// The unified hunks that turn `before` into `after`.
pub fn hunks(before: &[u8], after: &[u8]) -> Vec<Hunk> {
    let input = InternedInput::new(byte_lines(before), byte_lines(after));
    let old: Vec<&[u8]> = input.before.iter().map(|&t| input.interner[t]).collect();
    let new: Vec<&[u8]> = input.after.iter().map(|&t| input.interner[t]).collect();
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    // git's sliders: an ambiguous change moved where a person would put it (the indent
    // heuristic, on by default since git 2.14).
    diff.postprocess_lines(&input);
    let changes: Vec<gix::diff::blob::Hunk> = diff.hunks().collect();
    // Changes closer than twice the context share a hunk, as in git.
    let mut groups: Vec<&[gix::diff::blob::Hunk]> = Vec::new();
    let mut start = 0;
    for i in 1..=changes.len() {
        let apart = changes.get(i).is_none_or(|next| {
            (next.before.start - changes[i - 1].before.end) as usize > 2 * CONTEXT
        });
        if apart {
            groups.push(&changes[start..i]);
            start = i;
        }
    }
    let mut out = Vec::new();
    for group in groups {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let lead = (first.before.start as usize).min(CONTEXT);
        let trail = (old.len() - last.before.end as usize).min(CONTEXT);
        let old_from = first.before.start as usize - lead;
        let old_to = last.before.end as usize + trail;
        let new_from = first.after.start as usize - lead;
        let new_to = last.after.end as usize + trail;
        let mut lines = Vec::new();
        let mut at = old_from;
        for change in group {
            for line in &old[at..change.before.start as usize] {
                push_line(&mut lines, ' ', line);
            }
            for line in &old[change.before.start as usize..change.before.end as usize] {
                push_line(&mut lines, '-', line);
            }
            for line in &new[change.after.start as usize..change.after.end as usize] {
                push_line(&mut lines, '+', line);
            }
            at = change.before.end as usize;
        }
        for line in &old[at..old_to] {
            push_line(&mut lines, ' ', line);
        }
        let (old_start, old_lines) = range(old_from, old_to);
        let (new_start, new_lines) = range(new_from, new_to);
        out.push(Hunk {
            header: format!(
                "@@ -{} +{} @@",
                range_text(old_start, old_lines),
                range_text(new_start, new_lines)
            ),
            old_start,
            old_lines,
            new_start,
            new_lines,
            lines,
        });
    }
    out
}

/// A line of a hunk: its sign, its text without the `\n` (a CR before it is kept, as git keeps
/// it: a change from LF to CRLF must show), and git's marker after a last line that has none.
fn push_line(lines: &mut Vec<String>, sign: char, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let ended = text.ends_with('\n');
    let text = text.strip_suffix('\n').unwrap_or(&text);
    lines.push(format!("{sign}{text}"));
    if !ended {
        lines.push("\\ No newline at end of file".to_owned());
    }
}

/// A 0-based half-open range of lines as a hunk header counts it: 1-based start (the line
/// before, for an empty range) and length.
fn range(from: usize, to: usize) -> (u32, u32) {
    let len = (to - from) as u32;
    let start = if len == 0 { from } else { from + 1 };
    (start as u32, len)
}

fn range_text(start: u32, len: u32) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_as_git_writes_them() {
        // Changes six lines apart share a hunk; seven apart, they do not (git diff's output).
        let joined = hunks(
            b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
            b"a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk",
        );
        assert_eq!(joined.len(), 1, "{joined:?}");
        assert_eq!(joined[0].header, "@@ -1,10 +1,11 @@");
        let before = b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nl\n";
        let after = b"a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nl\nk";
        let h = hunks(before, after);
        assert_eq!(h.len(), 2, "{h:?}");
        assert_eq!(h[0].header, "@@ -1,7 +1,7 @@");
        assert_eq!(h[0].lines[3..5], ["-d", "+D"]);
        assert_eq!(h[1].header, "@@ -9,3 +9,4 @@");
        assert_eq!(
            h[1].lines,
            [" i", " j", " l", "+k", "\\ No newline at end of file"]
        );
        assert_eq!(h[0].changed().collect::<Vec<_>>(), ["d", "D"]);
    }

    #[test]
    fn a_new_and_an_emptied_file() {
        let added = hunks(b"", b"one\ntwo\n");
        assert_eq!(added[0].header, "@@ -0,0 +1,2 @@");
        assert_eq!((added[0].old_start, added[0].new_start), (0, 1));
        let removed = hunks(b"one\n", b"");
        assert_eq!(removed[0].header, "@@ -1 +0,0 @@");
        assert_eq!(removed[0].lines, ["-one"]);
    }
}
