//! Notes follow the work when its commits do not (docs/linking.md, "Squash merges, rebase
//! merges, force-pushes"): a squash merge, a rebase merge or a force-push — local or done on the server
//! and fetched — puts a session's lines in new commits and leaves the annotated ones behind,
//! soon unreachable and later pruned.
//!
//! - [`carry_to`]: a new commit that adds again most of the lines an annotated commit added
//!   (as the retrieval index keeps them) gets that commit's events too, union-merged. The
//!   git hooks run it for the commits they see arrive (post-commit, post-merge).
//! - [`repair`]: every annotated commit no longer reachable from a branch, a remote-tracking
//!   branch, a tag or HEAD has its events carried to the reachable commit that now holds its
//!   lines; once it is gone from the repository (pruned), its own note is taken off. The
//!   attached index and the graph follow. One with no such commit keeps its note and is
//!   reported. The hooks do not look again at a commit a repair dealt with; the command does.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;

use super::Error;
use super::commit::sessions_of;
use crate::event::{Event, Kind, Link, Signal};
use crate::retrieve::index::{self, Index, lines::LineHash};
use crate::store::history;
use crate::store::{self, Store, graph, link, notes};

/// The share of an annotated commit's lines that a commit must add again to hold its work.
const SHARE_MIN: f32 = 0.5;

/// How many of those lines, at least (all of them when it added fewer).
const LINES_MIN: usize = 3;

/// How far before an unreachable commit a commit that holds its lines may be committed:
/// clocks of two machines differ.
const CLOCK_SKEW_SECONDS: i64 = 3600;

/// What [`repair`] did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Repaired {
    /// Unreachable annotated commits whose events went to a reachable one: (from, to, share).
    pub carried: Vec<(ObjectId, ObjectId, f32)>,
    /// Unreachable annotated commits no reachable commit holds the lines of.
    pub left: Vec<ObjectId>,
    /// Annotated commits checked.
    pub annotated: usize,
}

/// The lines `commit` adds, per file, as the retrieval index hashes them: only those that tell
/// a line apart.
fn added_by(repo: &gix::Repository, commit: ObjectId) -> HashMap<String, HashSet<u64>> {
    index::lines::added_by(repo, commit)
        .unwrap_or_default()
        .into_iter()
        .map(|a| {
            let telling = a.lines.iter().filter(|h| !h.trivial).map(|h| h.hash);
            (a.path, telling.collect())
        })
        .collect()
}

/// How many of the lines that tell of `entry` (an annotated commit's lines in one file)
/// `added` adds again.
fn held(entry: &[LineHash], added: Option<&HashSet<u64>>) -> usize {
    let telling = entry.iter().filter(|h| !h.trivial);
    added.map_or(0, |a| telling.filter(|h| a.contains(&h.hash)).count())
}

/// Whether `held` of `telling` lines is enough; the share.
fn enough(held: usize, telling: usize) -> Option<f32> {
    let share = held as f32 / telling.max(1) as f32;
    (held > 0 && held >= LINES_MIN.min(telling) && share >= SHARE_MIN).then_some(share)
}

/// The annotated commits (other than `commit`) most of whose lines `commit` adds again, with
/// the share, by the index.
fn holds(repo: &gix::Repository, index: &Index, commit: ObjectId) -> Vec<(ObjectId, f32)> {
    let added = added_by(repo, commit);
    let mut held_by: BTreeMap<ObjectId, usize> = BTreeMap::new();
    for path in added.keys() {
        for entry in index.entries(path) {
            if entry.commit != commit {
                *held_by.entry(entry.commit).or_default() += held(&entry.lines, added.get(path));
            }
        }
    }
    held_by
        .into_iter()
        .filter_map(|(from, h)| {
            enough(h, telling(&entries_of(index, from))).map(|share| (from, share))
        })
        .collect()
}

/// The index's entries of the annotated commit `from`, one per file it changed.
fn entries_of(index: &Index, from: ObjectId) -> Vec<(String, index::lines::Entry)> {
    index
        .paths_of(from)
        .into_iter()
        .flat_map(|path| {
            index
                .entries(&path)
                .into_iter()
                .filter(|e| e.commit == from)
                .map(move |e| (path.clone(), e))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// How many lines that tell an annotated commit added, over its `entries` (every file it
/// changed).
fn telling(entries: &[(String, index::lines::Entry)]) -> usize {
    entries
        .iter()
        .map(|(_, e)| e.lines.iter().filter(|h| !h.trivial).count())
        .sum()
}

/// When `commit` was committed, if it is in the repository.
fn committed(repo: &gix::Repository, commit: ObjectId) -> Option<i64> {
    Some(repo.find_commit(commit).ok()?.committer().ok()?.seconds())
}

/// Give each of `commits` the events of the annotated commits whose lines it adds again
/// (half of its lines, at least three). Returns (from, to, share) for each carry.
pub fn carry_to(
    store: &Store,
    commits: &[ObjectId],
) -> Result<Vec<(ObjectId, ObjectId, f32)>, Error> {
    let repo = store.repo();
    let index = index::read(store);
    let mut pairs = Vec::new();
    for &commit in commits {
        let found = holds(&repo, &index, commit);
        // A commit that moves its ancestors' lines (a file renamed, code moved) does not
        // take their reasoning: blame gives it the lines, and their notes stay theirs.
        let oldest = found
            .iter()
            .filter_map(|(from, _)| committed(&repo, *from))
            .min();
        let ancestors: HashSet<ObjectId> = match oldest {
            Some(oldest) => {
                history::since(&repo, commit, oldest - CLOCK_SKEW_SECONDS, ANCESTORS_MAX)
                    .into_iter()
                    .map(|(_, id)| id)
                    .collect()
            }
            None => HashSet::new(),
        };
        for (from, share) in found.into_iter().filter(|(f, _)| !ancestors.contains(f)) {
            pairs.push((from, commit, share));
        }
    }
    if pairs.is_empty() {
        return Ok(pairs);
    }
    let _lock = store.lock()?;
    carry(store, &pairs)?;
    Ok(pairs)
}

/// Put the events of each `from` on its `to` (the session event saying how it came there),
/// and bring the graph up to date.
fn carry(store: &Store, pairs: &[(ObjectId, ObjectId, f32)]) -> Result<(), Error> {
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut batches: BTreeMap<ObjectId, Vec<Event>> = BTreeMap::new();
    for &(from, to, score) in pairs {
        for mut e in reader.events(from)? {
            if e.kind == Kind::Session {
                let signal = Signal::Content;
                e.link = Some(Link { signal, score });
                e.commits.push(to.to_string());
            }
            batches.entry(to).or_default().push(e);
        }
    }
    let batches: Vec<(ObjectId, Vec<Event>)> = batches.into_iter().collect();
    notes::attach_all(store, &batches)?;
    graph::update(store, &sessions_of(&batches))?;
    Ok(())
}

/// How many commits the git hooks walk to tell which annotated commits are unreachable; past
/// that they leave the repair to the command.
pub const HOOK_WALK_MAX: usize = 10_000;

/// Carry the notes of annotated commits no longer reachable to the reachable commits that hold
/// their lines, and take them off the unreachable ones. `walk_most` bounds the walk of history
/// that tells which are reachable: past it, nothing is done (`None`).
pub fn repair_within(store: &Store, walk_most: usize) -> Result<Option<Repaired>, Error> {
    let repo = store.repo();
    let index = index::open(store)?;
    let annotated = notes::annotated(&repo)?;
    let mut report = Repaired {
        annotated: annotated.len(),
        ..Repaired::default()
    };
    // When each annotated commit was made: from the commit, else (pruned) from the index.
    let mut made: HashMap<ObjectId, i64> = HashMap::new();
    for &commit in &annotated {
        let time = committed(&repo, commit)
            .or_else(|| entries_of(&index, commit).first().map(|(_, e)| e.seconds));
        if let Some(time) = time {
            made.insert(commit, time);
        }
    }
    let Some(oldest) = made.values().min().copied() else {
        return Ok(Some(report));
    };
    let Some(mut walked) = history::reachable_since(&repo, oldest - CLOCK_SKEW_SECONDS, walk_most)
    else {
        return Ok(None);
    };
    let reachable: HashSet<ObjectId> = walked.iter().map(|c| c.id).collect();
    // Those a hook dealt with before are the command's to look at again.
    let seen = if walk_most < history::RECENT_WALK_MAX {
        dealt_with(store)
    } else {
        HashSet::new()
    };
    let gone: Vec<ObjectId> = annotated
        .iter()
        .copied()
        .filter(|c| !reachable.contains(c) && !seen.contains(c))
        .collect();
    if gone.is_empty() {
        return Ok(Some(report));
    }
    // The reachable commits that could hold their lines: made after the oldest of them.
    let since = gone
        .iter()
        .filter_map(|c| made.get(c))
        .min()
        .copied()
        .unwrap_or(oldest);
    // Of the commits walked already (committed since the oldest annotated one), oldest first.
    walked.retain(|c| c.committer >= since - CLOCK_SKEW_SECONDS);
    walked.sort_by_key(|c| c.committer);
    let mut pairs = Vec::new();
    let mut holders = Holders {
        repo: &repo,
        candidates: &walked,
        added: HashMap::new(),
    };
    for &from in &gone {
        let after = made.get(&from).copied().unwrap_or(since) - CLOCK_SKEW_SECONDS;
        match holders.best(&entries_of(&index, from), after) {
            Some((to, share)) => pairs.push((from, to, share)),
            None => report.left.push(from),
        }
    }
    let _lock = store.lock()?;
    if !pairs.is_empty() {
        carry_off(store, &repo, &pairs)?;
    }
    remember(
        store,
        pairs
            .iter()
            .map(|(f, _, _)| *f)
            .chain(report.left.iter().copied()),
    )?;
    report.carried = pairs;
    Ok(Some(report))
}

/// The reachable commits that may hold an unreachable one's lines, and the lines each added
/// (read once, when first asked).
struct Holders<'r> {
    repo: &'r gix::Repository,
    /// Oldest first.
    candidates: &'r [history::Recent],
    added: HashMap<ObjectId, HashMap<String, HashSet<u64>>>,
}

impl Holders<'_> {
    /// The commit made after `after` that holds most of `entries`' lines, enough of them, and
    /// the share it holds.
    fn best(
        &mut self,
        entries: &[(String, index::lines::Entry)],
        after: i64,
    ) -> Option<(ObjectId, f32)> {
        let telling = telling(entries);
        let paths: BTreeSet<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
        let mut best: Option<(ObjectId, f32)> = None;
        for c in (self.candidates.iter()).filter(|c| c.parents <= 1 && c.committer >= after) {
            if link::changed(self.repo, c.id, &paths).is_empty() {
                continue;
            }
            let repo = self.repo;
            let theirs = (self.added.entry(c.id)).or_insert_with(|| added_by(repo, c.id));
            let held: usize = entries
                .iter()
                .map(|(p, e)| held(&e.lines, theirs.get(p.as_str())))
                .sum();
            if let Some(share) = enough(held, telling)
                && best.is_none_or(|(_, s)| share > s)
            {
                best = Some((c.id, share));
            }
        }
        best
    }
}

/// Carry the notes of `pairs` (from, to, share) and take them off the commits gone; the caller
/// holds the lock.
fn carry_off(
    store: &Store,
    repo: &gix::Repository,
    pairs: &[(ObjectId, ObjectId, f32)],
) -> Result<(), Error> {
    // The attached index first: later versions of the events go to the new commits.
    let moved: BTreeMap<ObjectId, ObjectId> = pairs.iter().map(|(f, t, _)| (*f, *t)).collect();
    link::rewrite_index(store, &moved)?;
    carry(store, pairs)?;
    // A note is taken off only a commit that is gone from the repository: one this clone does
    // not reach may be on a branch another clone has (the notes are shared), so it keeps its
    // note beside the copy.
    let mut reader = notes::Reader::new(repo)?;
    let mut pruned: Vec<(ObjectId, Vec<Event>)> = Vec::new();
    for &(from, _, _) in pairs.iter().filter(|(from, _, _)| !repo.has_object(*from)) {
        pruned.push((from, reader.events(from)?));
    }
    let removals: Vec<(ObjectId, HashSet<&str>)> = pruned
        .iter()
        .map(|(c, events)| (*c, events.iter().map(|e| e.id.as_str()).collect()))
        .collect();
    notes::remove_all(store, &removals)?;
    graph::update(store, &sessions_of(&pruned))?;
    Ok(())
}

/// Where the unreachable commits a repair dealt with are listed, one id per line: the hooks do
/// not look at them again (the command does).
const DEALT_WITH: &str = "repaired";

fn dealt_with(store: &Store) -> HashSet<ObjectId> {
    std::fs::read_to_string(store.dir().join(DEALT_WITH))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
        .collect()
}

fn remember(store: &Store, commits: impl Iterator<Item = ObjectId>) -> Result<(), Error> {
    let mut all = dealt_with(store);
    let before = all.len();
    all.extend(commits);
    if all.len() == before {
        return Ok(());
    }
    let mut lines: Vec<String> = all.iter().map(|c| format!("{c}\n")).collect();
    lines.sort();
    store::write_atomic(&store.dir().join(DEALT_WITH), lines.concat().as_bytes())?;
    Ok(())
}

/// [`repair_within`] the longest walk a command makes; more is an error.
pub fn repair(store: &Store) -> Result<Repaired, Error> {
    repair_within(store, history::RECENT_WALK_MAX)?.ok_or_else(|| {
        store::Error::git(
            "walk the history",
            format!(
                "more than {} commits since the oldest note",
                history::RECENT_WALK_MAX
            ),
        )
        .into()
    })
}

/// How many commits of history a hook walks, at most, to tell a commit's ancestors.
const ANCESTORS_MAX: usize = 10_000;

/// How many commits a merge brought that the post-merge hook looks at, at most.
const ARRIVED_MAX: usize = 200;

/// The commits a merge or a pull brought in: those of `head` back to `before` (ORIG_HEAD),
/// merges left out; at most 200, and none committed a day before `before` or
/// earlier.
pub fn arrived(repo: &gix::Repository, before: ObjectId, head: ObjectId) -> Vec<ObjectId> {
    let Some(since) = committed(repo, before).map(|t| t - 86_400) else {
        return Vec::new();
    };
    let ids = |from| -> HashSet<ObjectId> {
        history::since(repo, from, since, ANCESTORS_MAX)
            .into_iter()
            .map(|(_, id)| id)
            .collect()
    };
    // What was here before the merge did not arrive with it.
    let old = ids(before);
    let mut out: Vec<ObjectId> = ids(head)
        .into_iter()
        .filter(|id| !old.contains(id))
        .filter(|id| {
            repo.find_commit(*id)
                .is_ok_and(|c| c.parent_ids().count() <= 1)
        })
        .collect();
    out.sort();
    out.truncate(ARRIVED_MAX);
    out
}
