//! Which lines each annotated commit added, as content hashes, and who owns a file's lines at
//! HEAD by those hashes alone: a blame restricted to the commits that carry reasoning, with no
//! walk of history (docs/commands.md, "The retrieval index").
//!
//! A line is hashed trimmed of surrounding white space, so re-indented code keeps its owner.
//! Lines too plain to tell apart (`}`, `end`, blank) are *trivial*: they are matched only near
//! the other lines their commit added.

use std::collections::HashMap;
use std::sync::LazyLock;

use gix::ObjectId;
use gix::diff::blob::{Algorithm, Diff, InternedInput, sources::byte_lines};

use crate::retrieve::binary::is_text;
use crate::store::{self, git_error};

/// Blobs larger than this are not indexed (generated files, data).
const MAX_BLOB: usize = 4 << 20;

/// A line as the index keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineHash {
    pub hash: u64,
    /// Too plain to identify the line by itself.
    pub trivial: bool,
}

impl LineHash {
    pub fn of(line: &[u8]) -> LineHash {
        let trimmed = line.trim_ascii();
        let alnum = trimmed.iter().filter(|b| b.is_ascii_alphanumeric()).count();
        LineHash {
            hash: xxhash_rust::xxh3::xxh3_64(trimmed),
            trivial: trimmed.len() < 5 || alnum < 3,
        }
    }

    /// `0123456789abcdef`, or `~0123456789abcdef` when trivial.
    pub fn encode(self) -> String {
        if self.trivial {
            format!("~{:016x}", self.hash)
        } else {
            format!("{:016x}", self.hash)
        }
    }

    pub fn decode(text: &str) -> Option<LineHash> {
        let (trivial, hex) = match text.strip_prefix('~') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Some(LineHash {
            hash: u64::from_str_radix(hex, 16).ok()?,
            trivial,
        })
    }
}

/// Whether the index keeps the lines of this content: text, and not oversized.
fn indexable(data: &[u8]) -> bool {
    data.len() <= MAX_BLOB && is_text(data)
}

/// The lines of a text, hashed; `None` for binary or oversized content.
pub fn hash_lines(data: &[u8]) -> Option<Vec<LineHash>> {
    indexable(data).then(|| byte_lines(data).map(LineHash::of).collect())
}

/// What one commit did to one file: the lines it added, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub path: String,
    /// The added lines' numbers in the commit's file, from 1, in order.
    pub numbers: Vec<usize>,
    pub lines: Vec<LineHash>,
    /// Names the added lines define (`fn parse_range`, `class Cache`, …).
    pub symbols: Vec<String>,
}

/// The files `commit` changed (against its first parent) and the lines it added to each.
/// Deleted and binary files are left out. A merge adds only the lines that differ from every
/// parent, as git's blame sees it: what it brought in from a parent is that parent's.
pub fn added_by(repo: &gix::Repository, commit: ObjectId) -> store::Result<Vec<Added>> {
    let (tree, parent_tree) = crate::retrieve::diff::with_parent(repo, commit)?;
    let c = repo
        .find_commit(commit)
        .map_err(git_error(format!("read commit {commit}")))?;
    let other_parents: Vec<gix::Tree<'_>> = crate::store::history::parents(repo, &c)
        .into_iter()
        .skip(1)
        .map(|p| {
            repo.find_commit(p)
                .and_then(|p| p.tree())
                .map_err(git_error(format!("read a parent of {commit}")))
        })
        .collect::<store::Result<_>>()?;
    let options = gix::diff::Options::default().with_rewrites(None);
    let changes = repo
        .diff_tree_to_tree(parent_tree.as_ref(), &tree, options)
        .map_err(git_error(format!("diff {commit} with its parent")))?;
    let mut out = Vec::new();
    for change in changes {
        use gix::object::tree::diff::ChangeDetached as C;
        let (path, old, new) = match change {
            C::Addition {
                location,
                entry_mode,
                id,
                ..
            } if entry_mode.is_blob() => (location, None, id),
            C::Modification {
                location,
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
                ..
            } if entry_mode.is_blob() => (
                location,
                previous_entry_mode.is_blob().then_some(previous_id),
                id,
            ),
            _ => continue,
        };
        let path = path.to_string();
        let new_data = repo
            .find_blob(new)
            .map_err(git_error(format!("read {path} at {commit}")))?;
        if !indexable(&new_data.data) {
            continue;
        }
        let old_data = match old {
            Some(id) => Some(
                repo.find_blob(id)
                    .map_err(git_error(format!("read {path} before {commit}")))?,
            ),
            None => None,
        };
        let before: &[u8] = old_data.as_ref().map_or(&[], |b| &b.data);
        let mut added = added_at(before, &new_data.data);
        for other in &other_parents {
            let theirs = other
                .lookup_entry_by_path(&path)
                .ok()
                .flatten()
                .filter(|e| e.mode().is_blob())
                .and_then(|e| e.object().ok());
            let theirs: &[u8] = theirs.as_ref().map_or(&[], |b| &b.data);
            let new_there = added_at(theirs, &new_data.data);
            added.retain(|i| new_there.contains(i));
        }
        if added.is_empty() {
            continue;
        }
        let lines: Vec<(&[u8], LineHash)> = byte_lines(&new_data.data)
            .enumerate()
            .filter(|(i, _)| added.contains(i))
            .map(|(_, line)| (line, LineHash::of(line)))
            .collect();
        let mut defined: Vec<String> = Vec::new();
        for line in lines
            .iter()
            .filter_map(|(text, _)| std::str::from_utf8(text).ok())
        {
            for cap in SYMBOL.captures_iter(line) {
                defined.push(cap[1].to_owned());
            }
        }
        defined.sort();
        defined.dedup();
        out.push(Added {
            path,
            numbers: added.iter().map(|i| i + 1).collect(),
            lines: lines.into_iter().map(|(_, h)| h).collect(),
            symbols: defined,
        });
    }
    Ok(out)
}

/// The lines of `after` that are not in `before`, by a histogram diff, with their hashes.
pub fn added_lines<'a>(before: &[u8], after: &'a [u8]) -> Vec<(&'a [u8], LineHash)> {
    let added = added_at(before, after);
    byte_lines(after)
        .enumerate()
        .filter(|(i, _)| added.contains(i))
        .map(|(_, line)| (line, LineHash::of(line)))
        .collect()
}

/// The positions (from 0) of the lines of `after` that are not in `before`, by a histogram
/// diff, in order.
fn added_at(before: &[u8], after: &[u8]) -> std::collections::BTreeSet<usize> {
    let input = InternedInput::new(byte_lines(before), byte_lines(after));
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    // Slide hunks the way git does, so that a block's closing line goes with the block.
    diff.postprocess_lines(&input);
    (0..byte_lines(after).count())
        .filter(|i| diff.is_added(*i as u32))
        .collect()
}

/// Definitions in the common languages: a keyword, then the name it defines.
static SYMBOL: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:fn|def|class|struct|enum|trait|type|interface|func|function|module|impl|const|static|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]{2,})",
    )
    .expect("the symbol pattern compiles")
});

/// What the index knows of one annotated commit's work on a file.
#[derive(Debug, Clone)]
pub struct Entry {
    pub commit: ObjectId,
    /// Commit time, seconds since the epoch.
    pub seconds: i64,
    pub lines: Vec<LineHash>,
}

/// For each line of the file at HEAD (`head`), the entry that owns it, if any: the newest
/// annotated commit that added a line with that content. Each added line owns at most one line
/// at HEAD. Lines that are not trivial are matched by content alone; a trivial line is looked
/// for after the line its commit added before it (as matched at HEAD) and before the next one,
/// so that a commit's `}` is the one that closes its own block.
pub fn owners(head: &[LineHash], entries: &[Entry]) -> Vec<Option<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; head.len()];
    // Where each content occurs at HEAD, in order, until an added line claims it.
    let mut unclaimed: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, h) in head.iter().enumerate().filter(|(_, h)| !h.trivial) {
        unclaimed.entry(h.hash).or_default().push(i);
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        (entries[b].seconds, entries[b].commit).cmp(&(entries[a].seconds, entries[a].commit))
    });
    for &e in &order {
        let added = &entries[e].lines;
        // Where each added line landed at HEAD.
        let mut at: Vec<Option<usize>> = vec![None; added.len()];
        // A repeated line: the first occurrence after the commit's previous line, if any.
        let mut cursor = 0;
        for (k, h) in added.iter().enumerate().filter(|(_, h)| !h.trivial) {
            let Some(places) = unclaimed.get_mut(&h.hash).filter(|p| !p.is_empty()) else {
                continue;
            };
            let n = places.iter().position(|&i| i >= cursor).unwrap_or(0);
            let i = places.remove(n);
            owner[i] = Some(e);
            at[k] = Some(i);
            cursor = i + 1;
        }
        // A commit whose plain lines are all gone keeps none of its trivial ones.
        let anchored = at.iter().any(Option::is_some);
        if !anchored && added.iter().any(|h| !h.trivial) {
            continue;
        }
        // The last added line placed at HEAD: (its index among the added, its line at HEAD).
        let mut last: Option<(usize, usize)> = None;
        for k in 0..added.len() {
            if !added[k].trivial {
                last = at[k].map(|i| (k, i)).or(last);
                continue;
            }
            let next = (k + 1..added.len()).find_map(|j| at[j].map(|i| (j, i)));
            let wanted = |i: &usize| {
                *i < head.len()
                    && head[*i].trivial
                    && head[*i].hash == added[k].hash
                    && owner[*i].is_none()
            };
            // Where it would be if the lines it was added with are still together: just after
            // the line before it, or just before the line after it.
            let after_last = last.map(|(j, i)| i + (k - j));
            let before_next = next.and_then(|(j, i)| i.checked_sub(j - k));
            let near = [after_last, before_next].into_iter().flatten().find(wanted);
            // Else the nearest one between them.
            let found = near.or_else(|| match (last, next) {
                (Some((_, l)), _) => (l + 1..next.map_or(head.len(), |n| n.1)).find(wanted),
                (None, Some((_, n))) => (0..n).rev().find(wanted),
                (None, None) => (0..head.len()).find(wanted),
            });
            if let Some(i) = found {
                owner[i] = Some(e);
                last = Some((k, i));
            }
        }
    }
    owner
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hashes(text: &str) -> Vec<LineHash> {
        hash_lines(text.as_bytes()).unwrap()
    }

    fn entry(n: u8, seconds: i64, added: &str) -> Entry {
        Entry {
            commit: ObjectId::from_bytes_or_panic(&[n; 20]),
            seconds,
            lines: hashes(added),
        }
    }

    #[test]
    fn newer_commits_own_the_lines_they_added_and_trivial_lines_follow() {
        let head =
            hashes("fn parse() {\n    let a = read();\n}\nfn other() {\n    rewrite();\n}\n");
        let entries = [
            entry(1, 100, "fn parse() {\n    let a = read();\n}\n"),
            // Later: the same first line again, and the second function.
            entry(2, 200, "fn parse() {\nfn other() {\n}\n"),
        ];
        let owners = owners(&head, &entries);
        assert_eq!(
            owners,
            [Some(1), Some(0), Some(0), Some(1), None, Some(1)],
            "the newest adder owns a line; a line no annotated commit added has no owner"
        );
        // A file of short lines: matched in order.
        let head = hashes("a\nb\nC\nd\n");
        assert_eq!(
            super::owners(&head, &[entry(1, 100, "a\nb\nc\nd\n")]),
            [Some(0), Some(0), None, Some(0)]
        );
    }

    #[test]
    fn re_indented_lines_keep_their_hash_and_binary_is_refused() {
        assert_eq!(LineHash::of(b"  let x = 1;"), LineHash::of(b"let x = 1;\t"));
        assert!(LineHash::of(b"}").trivial);
        assert!(hash_lines(b"a\0b").is_none());
        let h = LineHash::of(b"return value;");
        assert_eq!(LineHash::decode(&h.encode()), Some(h));
        let t = LineHash::of(b"}");
        assert_eq!(LineHash::decode(&t.encode()), Some(t));
    }

    #[test]
    fn added_lines_are_the_insertions_of_a_diff() {
        let added: Vec<&[u8]> = added_lines(b"a\nb\nc\n", b"a\nx\nb\nc\ny\n")
            .into_iter()
            .map(|(l, _)| l)
            .collect();
        assert_eq!(added, [&b"x\n"[..], &b"y\n"[..]]);
    }
}
