//! `why <path>[:<start>-<end>]`: which commits own the lines of a file at HEAD, and the
//! reasoning attached to them — their notes, and the sessions they came from.
//!
//! Line ownership comes from git's blame (gix) when HEAD's history back to the file's oldest
//! annotated commit is short (5,000 commits): exact, at a bounded cost. Past that,
//! from the index of the lines each annotated commit added ([`index`]): no walk of history, so
//! it costs the same on a repository of 50 commits or 500,000, and it is close to the blame
//! (tested against it). [`By`] forces one or the other.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::event::time::rfc3339;
use crate::event::{Event, Kind};
use crate::retrieve::index::{self, Ownership, lines};
use crate::retrieve::{binary, head, said_once};
use crate::store::{self, Store, history, notes, pending};

/// How far before an annotated commit's own time its ancestors may have been committed: clocks
/// of two machines differ.
const CLOCK_SKEW_SECONDS: i64 = 86_400;

/// How many commits of HEAD's history `why` walks, at most, to use git's blame; past that, the
/// index answers alone.
const BLAME_WALK_MAX: usize = 5_000;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}: not a file tracked at HEAD")]
    NotTracked(String),
    #[error("{0}: binary file; no lines to explain")]
    Binary(String),
    #[error("{path}: lines {start}-{end} are outside the file ({lines} lines)")]
    OutOfRange {
        path: String,
        start: u32,
        end: u32,
        lines: u32,
    },
    #[error("this repository has no commit yet")]
    NoHead,
    #[error("{0:?}: a line range is <start>-<end>, counting from 1")]
    BadRange(String),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A 1-based, inclusive line range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lines {
    pub start: u32,
    pub end: u32,
}

/// A session an explained commit came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRef {
    pub id: String,
    /// Its first prompt, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// The agent that ran it (`codex`, `gemini-cli`); absent for Claude Code.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
}

/// One commit that owns lines of the file, and its reasoning.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Owner {
    pub commit: String,
    pub date: String,
    pub subject: String,
    pub lines: Vec<Lines>,
    pub sessions: Vec<SessionRef>,
    /// Reasoning first (decisions, rejections, trade-offs), findings next, explorations last.
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Why {
    pub path: String,
    /// Lines of the file at HEAD.
    pub lines: u32,
    /// The lines asked about.
    pub range: Lines,
    /// Commits with reasoning, newest first.
    pub owners: Vec<Owner>,
    /// Lines of the range owned by commits without reasoning.
    pub unexplained_lines: u32,
    /// The working tree's version of the file, where it differs from HEAD's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncommitted: Option<Uncommitted>,
}

/// Lines changed in the working tree and not committed, and the pending reasoning of the
/// sessions that changed the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Uncommitted {
    /// Lines of the working tree's file that are not in HEAD's.
    pub lines: u32,
    pub sessions: Vec<SessionRef>,
    pub events: Vec<Event>,
}

/// The reasons among `events`, in the order they are shown: what was decided and ruled out
/// first, explorations last, each kind in time order; of a thing said twice, the first.
fn reasons<'e>(events: impl IntoIterator<Item = &'e Event>) -> Vec<Event> {
    let mut out: Vec<&Event> = events.into_iter().collect();
    out.sort_by(|a, b| {
        (a.kind.rank(), &a.timestamp, &a.id).cmp(&(b.kind.rank(), &b.timestamp, &b.id))
    });
    said_once(out, true)
}

/// How `why` tells which commit owns a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Git's blame when the history to walk is short, else the index.
    Either,
    /// Git's blame, however long the history.
    Blame,
    /// The index alone, without a walk of history.
    Index,
}

/// Explain `path` (relative to the top of the working tree, `/`-separated), or the lines
/// `range` of it.
pub fn why(store: &Store, path: &str, range: Option<(u32, u32)>, by: By) -> Result<Why, Error> {
    let repo = store.repo();
    let head = repo.head_id().map_err(|_| Error::NoHead)?.detach();
    let tree = repo
        .head_commit()
        .and_then(|c| c.tree())
        .map_err(store::git_error("read HEAD's tree"))?;
    let entry = tree
        .lookup_entry_by_path(path)
        .map_err(store::git_error(format!("look up {path} at HEAD")))?
        .filter(|e| e.mode().is_blob())
        .ok_or_else(|| Error::NotTracked(path.to_owned()))?;
    let blob = entry
        .object()
        .map_err(store::git_error(format!("read {path} at HEAD")))?;
    if !binary::is_text(&blob.data) {
        return Err(Error::Binary(path.to_owned()));
    }
    let lines = line_count(&blob.data);
    let (start, end) = range.unwrap_or((1, lines.max(1)));
    if lines == 0 && range.is_none() {
        return Ok(Why {
            path: path.to_owned(),
            lines,
            range: Lines { start: 1, end: 0 },
            owners: Vec::new(),
            unexplained_lines: 0,
            uncommitted: uncommitted(store, path, &blob.data)?,
        });
    }
    if start == 0 || start > end || end > lines {
        return Err(Error::OutOfRange {
            path: path.to_owned(),
            start,
            end,
            lines,
        });
    }
    let by_commit = match by {
        By::Blame => blamed(&repo, head, path, (start, end), None)?,
        By::Index | By::Either => indexed(store, path, &blob.data, start, end, by == By::Either)?,
    };
    let mut reader = notes::Reader::new(&repo)?;
    let mut owners = Vec::new();
    let mut explained_lines = 0;
    for (commit, mut ranges) in by_commit {
        let events = reader.events(commit)?;
        let owned: u32 = ranges.iter().map(|l| l.end - l.start + 1).sum();
        let reasons = reasons(&events);
        if reasons.is_empty() {
            continue;
        }
        explained_lines += owned;
        let mut sessions: Vec<SessionRef> = Vec::new();
        let known: BTreeSet<&str> = reasons.iter().map(|e| e.session_id.as_str()).collect();
        for id in known {
            let request = events
                .iter()
                .find(|e| e.kind == Kind::Session && e.session_id == id)
                .map(|e| e.summary.clone())
                .unwrap_or_default();
            let agent = (reasons.iter())
                .find(|e| e.session_id == id)
                .map(|e| e.session.agent.clone())
                .unwrap_or_default();
            sessions.push(SessionRef {
                id: id.to_owned(),
                request,
                agent,
            });
        }
        ranges.sort_by_key(|l| l.start);
        let (date, subject, seconds) = describe(&repo, commit);
        owners.push((
            seconds,
            Owner {
                commit: commit.to_string(),
                date,
                subject,
                lines: merge_ranges(ranges),
                sessions,
                events: reasons,
            },
        ));
    }
    owners.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.commit.cmp(&b.1.commit)));
    Ok(Why {
        path: path.to_owned(),
        lines,
        range: Lines { start, end },
        owners: owners.into_iter().map(|(_, o)| o).collect(),
        unexplained_lines: (end - start + 1).saturating_sub(explained_lines),
        uncommitted: uncommitted(store, path, &blob.data)?,
    })
}

/// The lines `start..=end` of `path` at HEAD by the commit that owns them, by git's blame.
fn blamed(
    repo: &gix::Repository,
    head: ObjectId,
    path: &str,
    (start, end): (u32, u32),
    since: Option<i64>,
) -> Result<BTreeMap<ObjectId, Vec<Lines>>, Error> {
    let ranges = gix::blame::BlameRanges::from_one_based_inclusive_range(start..=end)
        .map_err(|e| store::Error::git(format!("blame {path}"), e.to_string()))?;
    // Commits older than `since` (than every annotated commit) own nothing worth telling apart.
    let since = since.map(|seconds| gix::date::Time { seconds, offset: 0 });
    let options = gix::repository::blame_file::Options {
        ranges,
        since,
        ..Default::default()
    };
    let outcome =
        blame(repo, head, path, options).map_err(store::git_error(format!("blame {path}")))?;
    let mut by_commit: BTreeMap<ObjectId, Vec<Lines>> = BTreeMap::new();
    for e in &outcome.entries {
        let first = e.start_in_blamed_file + 1;
        by_commit.entry(e.commit_id).or_default().push(Lines {
            start: first,
            end: first + e.len.get() - 1,
        });
    }
    // The blame gives what is older than `since` to the first commit it meets that is older,
    // whatever it changed (git's "boundary" commit): those lines are no commit's here.
    if let Some(since) = since {
        by_commit.retain(|id, _| {
            let time = repo.find_commit(*id).ok().and_then(|c| c.time().ok());
            time.is_none_or(|t| t.seconds >= since.seconds)
        });
    }
    Ok(by_commit)
}

/// gix's blame of `path` from `head`. In a shallow clone the walk stops at the boundary, whose
/// commits own every line they reach, as `git blame` gives them (marked `^`): the boundary
/// commits are read without their parents ([`history::Grafted`]), and the commit-graph, which
/// git does not write for a shallow clone, is not used.
fn blame(
    repo: &gix::Repository,
    head: ObjectId,
    path: &str,
    options: gix::repository::blame_file::Options,
) -> gix::Result<gix::blame::Outcome> {
    let Some(boundary) = repo.shallow_commits()? else {
        return repo.blame_file(path.into(), head, options);
    };
    let options = gix::blame::Options {
        diff_algorithm: match options.diff_algorithm {
            Some(algorithm) => algorithm,
            None => repo.diff_algorithm()?,
        },
        ranges: options.ranges,
        since: options.since,
        rewrites: options.rewrites,
        debug_track_path: false,
    };
    gix::blame::file(
        history::Grafted::new(repo, boundary.iter().copied().collect()),
        gix::blame::Start::Commit(head),
        None,
        &mut repo.diff_resource_cache_for_tree_diff()?,
        path.into(),
        options,
    )
}

/// The lines `start..=end` of `path` at HEAD (`head` holds them) by the annotated commit that
/// owns them; lines no annotated commit owns are left out. By the index; with `or_blame`, by
/// git's blame when HEAD's history back to the file's oldest annotated commit is short
/// ([`BLAME_WALK_MAX`]).
fn indexed(
    store: &Store,
    path: &str,
    head: &[u8],
    start: u32,
    end: u32,
    or_blame: bool,
) -> Result<BTreeMap<ObjectId, Vec<Lines>>, Error> {
    let index = index::open(store)?;
    let repo = store.repo();
    let Some(oldest) = index.entries(path).iter().map(|e| e.seconds).min() else {
        return Ok(BTreeMap::new());
    };
    if or_blame {
        let tip = repo.head_id().map_err(|_| Error::NoHead)?.detach();
        let since = oldest - CLOCK_SKEW_SECONDS;
        if history::since(&repo, tip, since, BLAME_WALK_MAX + 1).len() <= BLAME_WALK_MAX {
            return blamed(&repo, tip, path, (start, end), Some(since));
        }
    }
    // A commit no longer in the repository (its branch was squash-merged and deleted) owns
    // nothing.
    let ownership =
        Ownership::of(&index, path, head, |e| repo.has_object(e.commit)).unwrap_or_default();
    let mut by_commit: BTreeMap<ObjectId, Vec<Lines>> = BTreeMap::new();
    for line in start..=end {
        if let Some(Some(e)) = ownership.owners.get(line as usize - 1) {
            by_commit
                .entry(ownership.entries[*e].commit)
                .or_default()
                .push(Lines {
                    start: line,
                    end: line,
                });
        }
    }
    Ok(by_commit)
}

/// What the working tree changed in `path` since HEAD (`head` holds HEAD's version), and the
/// pending events that changed it; `None` when nothing is uncommitted.
fn uncommitted(store: &Store, path: &str, head: &[u8]) -> Result<Option<Uncommitted>, Error> {
    let Some(workdir) = store.workdir() else {
        return Ok(None);
    };
    // Only a plain file: a pipe put in its place would hang `why`.
    let Some(current) = head::working_copy(&workdir.join(path), u64::MAX) else {
        return Ok(None);
    };
    if current == head {
        return Ok(None);
    }
    let lines = lines::added_lines(head, &current).len() as u32;
    let events = reasons(&pending::touching(store, path)?);
    let mut sessions: Vec<SessionRef> = Vec::new();
    for e in &events {
        if !sessions.iter().any(|s| s.id == e.session_id) {
            sessions.push(SessionRef {
                id: e.session_id.clone(),
                request: String::new(),
                agent: e.session.agent.clone(),
            });
        }
    }
    Ok(Some(Uncommitted {
        lines,
        sessions,
        events,
    }))
}

fn line_count(data: &[u8]) -> u32 {
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u32;
    if data.last().is_some_and(|&b| b != b'\n') {
        newlines + 1
    } else {
        newlines
    }
}

/// Adjacent ranges made one.
fn merge_ranges(ranges: Vec<Lines>) -> Vec<Lines> {
    let mut out: Vec<Lines> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end + 1 => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A commit's date (committer, UTC), subject and time in seconds.
pub(crate) fn describe(repo: &gix::Repository, commit: ObjectId) -> (String, String, i64) {
    let Ok(c) = repo.find_commit(commit) else {
        return (String::new(), String::new(), 0);
    };
    let seconds = c.time().map(|t| t.seconds).unwrap_or(0);
    let subject = c
        .message()
        .map(|m| m.summary().to_string())
        .unwrap_or_default();
    (rfc3339(seconds), subject, seconds)
}

/// What `why` is asked about: a path and maybe a line range (1-based, inclusive).
#[derive(Debug, PartialEq, Eq)]
pub struct Target<'a> {
    pub path: &'a str,
    pub range: Option<(u32, u32)>,
}

/// `path[:start[-end]]` split into the path and the range, if one is given and well formed.
pub fn parse_target(target: &str) -> Result<Target<'_>, Error> {
    let whole = Target {
        path: target,
        range: None,
    };
    let Some((path, lines)) = target.rsplit_once(':') else {
        return Ok(whole);
    };
    if lines.is_empty() || !lines.chars().all(|c| c.is_ascii_digit() || c == '-') {
        // A colon that is part of the file name.
        return Ok(whole);
    }
    let bad = || Error::BadRange(target.to_owned());
    let (start, end) = match lines.split_once('-') {
        Some((s, e)) => (s.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?),
        None => {
            let n = lines.parse().map_err(|_| bad())?;
            (n, n)
        }
    };
    Ok(Target {
        path,
        range: Some((start, end)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_with_and_without_a_range() {
        let target = |path, range| Some(Target { path, range });
        assert_eq!(parse_target("src/a.rs").ok(), target("src/a.rs", None));
        assert_eq!(
            parse_target("src/a.rs:3-9").ok(),
            target("src/a.rs", Some((3, 9)))
        );
        assert_eq!(
            parse_target("src/a.rs:7").ok(),
            target("src/a.rs", Some((7, 7)))
        );
        assert_eq!(
            parse_target("notes:draft.md").ok(),
            target("notes:draft.md", None)
        );
        assert!(parse_target("src/a.rs:3-").is_err());
        assert!(parse_target("src/a.rs:-4").is_err());
    }

    #[test]
    fn lines_are_counted_like_git_and_ranges_merged() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"a\nb\n"), 2);
        assert_eq!(line_count(b"a\nb"), 2);
        let merged = merge_ranges(vec![
            Lines { start: 1, end: 2 },
            Lines { start: 3, end: 5 },
            Lines { start: 8, end: 8 },
        ]);
        assert_eq!(
            merged,
            [Lines { start: 1, end: 5 }, Lines { start: 8, end: 8 }]
        );
    }
}
