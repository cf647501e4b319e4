//! Walking commit history back in time, bounded: the ancestry that linking (commits made during
//! a session) and the graph (which work built on which) need. A commit whose parents are not
//! here (a shallow clone's boundary) ends the walk along its line, as in git.

use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;

/// The parents of `commit` as git sees them: none for a commit on a shallow clone's boundary
/// (listed in `$GIT_DIR/shallow`), whose parents are not in the repository, which git takes
/// for a root commit (`git show` diffs it against the empty tree, `git blame` gives it every
/// line it reaches).
pub(crate) fn parents(repo: &gix::Repository, commit: &gix::Commit<'_>) -> Vec<ObjectId> {
    let boundary = repo
        .shallow_commits()
        .ok()
        .flatten()
        .is_some_and(|shallow| shallow.contains(&commit.id));
    if boundary {
        return Vec::new();
    }
    commit.parent_ids().map(|p| p.detach()).collect()
}

/// `from` and the commits it descends from that were made at `since` or later, each with its
/// commit time; at most `max` commits are visited. Commits whose time is earlier end the walk
/// along their line.
pub(crate) fn since(
    repo: &gix::Repository,
    from: ObjectId,
    since: i64,
    max: usize,
) -> Vec<(i64, ObjectId)> {
    let mut out = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue = vec![from];
    while let Some(id) = queue.pop() {
        if seen.len() >= max || !seen.insert(id) {
            continue;
        }
        let Ok(commit) = repo.find_commit(id) else {
            continue;
        };
        let Ok(time) = commit.time() else { continue };
        if time.seconds < since {
            continue;
        }
        out.push((time.seconds, id));
        queue.extend(commit.parent_ids().map(|p| p.detach()));
    }
    out
}

/// A commit as a newest-first walk queues it: its commit time, its id and its parents as git
/// sees them ([`parents`]); `None` when it cannot be read.
pub(crate) fn queued(repo: &gix::Repository, id: ObjectId) -> Option<Queued> {
    let commit = repo.find_commit(id).ok()?;
    let time = commit.committer().map_or(0, |s| s.seconds());
    Some((time, id, parents(repo, &commit)))
}

/// What [`queued`] gives.
pub(crate) type Queued = (i64, ObjectId, Vec<ObjectId>);

/// The commits of `head`'s history that `tip`'s does not have, newest first. Both histories
/// are walked together, newest first, until what is left to walk is reached from `tip` (as git
/// finds a merge base); `None` past `most` commits.
pub(crate) fn apart(
    repo: &gix::Repository,
    head: ObjectId,
    tip: ObjectId,
    most: usize,
) -> Option<Vec<ObjectId>> {
    let mut walk = Apart {
        repo,
        color: HashMap::new(),
        queue: BinaryHeap::new(),
        ours_left: 0,
    };
    walk.paint(head, Apart::OURS);
    walk.paint(tip, Apart::THEIRS);
    let mut own = Vec::new();
    for _ in 0..most {
        if walk.ours_left == 0 {
            return Some(own);
        }
        let (_, id, parents) = walk.queue.pop()?;
        let c = walk.color[&id];
        if c == Apart::OURS {
            own.push(id);
            walk.ours_left -= 1;
            walk.color.insert(id, Apart::OURS | Apart::TAKEN);
        }
        for parent in parents {
            walk.paint(parent, c);
        }
    }
    (walk.ours_left == 0).then_some(own)
}

/// The state of [`apart`]'s walk.
struct Apart<'r> {
    repo: &'r gix::Repository,
    /// Whence each commit met was reached.
    color: HashMap<ObjectId, u8>,
    /// The commits to walk, newest first, with their parents.
    queue: BinaryHeap<Queued>,
    /// Queued commits reached from `head` alone: the walk is over when there are none.
    ours_left: usize,
}

impl Apart<'_> {
    const OURS: u8 = 1;
    const THEIRS: u8 = 2;
    /// Reached from `head` alone and taken as its own: a later path from `tip` (clocks that
    /// disagree) leaves it so.
    const TAKEN: u8 = 4;

    /// Mark `id` as reached from where `c` says, and queue it the first time.
    fn paint(&mut self, id: ObjectId, c: u8) {
        let old = self.color.get(&id).copied().unwrap_or(0);
        let new = old | c;
        if new == old {
            return;
        }
        self.color.insert(id, new);
        if old == 0 {
            let Some(queued) = queued(self.repo, id) else {
                return;
            };
            self.queue.push(queued);
        } else if old == Apart::OURS {
            self.ours_left -= 1;
        }
        if new == Apart::OURS {
            self.ours_left += 1;
        }
    }
}

/// A commit [`recent`] found.
pub(crate) struct Recent {
    pub id: ObjectId,
    pub author: i64,
    pub committer: i64,
    pub parents: usize,
}

/// How many commits [`recent`] visits at most.
pub(crate) const RECENT_WALK_MAX: usize = 50_000;

/// The commits of every branch, remote-tracking branch and tag, and HEAD, committed at `since`
/// or later (seconds since the epoch): the `max` committed first. A commit committed earlier
/// ends the walk along its line.
pub(crate) fn recent(repo: &gix::Repository, since: i64, max: usize) -> Vec<Recent> {
    let (mut found, _) = walk_refs(repo, since, RECENT_WALK_MAX);
    found.sort_by_key(|c| c.committer);
    found.truncate(max);
    found
}

/// The commits reachable from a branch, a remote-tracking branch, a tag or the HEAD of a
/// worktree that were committed at `since` or later, newest first; `None` when there are more
/// than `most`.
pub(crate) fn reachable_since(
    repo: &gix::Repository,
    since: i64,
    most: usize,
) -> Option<Vec<Recent>> {
    let (found, complete) = walk_refs(repo, since, most);
    complete.then_some(found)
}

/// The commits [`recent`] and [`reachable_since`] walk, newest first, and whether the walk
/// reached `since` on every line (it stops after `most` commits).
fn walk_refs(repo: &gix::Repository, since: i64, most: usize) -> (Vec<Recent>, bool) {
    let mut tips: Vec<ObjectId> = Vec::new();
    if let Ok(head) = repo.head_id() {
        tips.push(head.detach());
    }
    // The HEADs of the other worktrees: one may be detached on a commit no branch has.
    if let Ok(entries) = std::fs::read_dir(repo.common_dir().join("worktrees")) {
        for entry in entries.flatten() {
            let head = std::fs::read_to_string(entry.path().join("HEAD")).unwrap_or_default();
            if let Ok(id) = ObjectId::from_hex(head.trim().as_bytes()) {
                tips.push(id);
            }
        }
    }
    if let Ok(refs) = repo.references() {
        let prefixed = ["refs/heads/", "refs/remotes/", "refs/tags/"]
            .into_iter()
            .filter_map(|p| refs.prefixed(p).ok())
            .flatten();
        for mut reference in prefixed.flatten() {
            // A tag names its commit through a tag object.
            let commit = reference
                .peel_to_id()
                .ok()
                .and_then(|id| id.object().ok())
                .and_then(|o| o.peel_to_commit().ok());
            if let Some(commit) = commit {
                tips.push(commit.id);
            }
        }
    }
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue: std::collections::BinaryHeap<(i64, ObjectId)> = Default::default();
    let mut push = |id: ObjectId, queue: &mut std::collections::BinaryHeap<(i64, ObjectId)>| {
        if seen.insert(id)
            && let Ok(commit) = repo.find_commit(id)
            && let Ok(time) = commit.committer().map(|c| c.seconds())
        {
            queue.push((time, id));
        }
    };
    for tip in tips {
        push(tip, &mut queue);
    }
    let mut out = Vec::new();
    while let Some((committer, id)) = queue.pop() {
        if committer < since {
            break;
        }
        if out.len() >= most {
            return (out, false);
        }
        let Ok(commit) = repo.find_commit(id) else {
            continue;
        };
        let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        out.push(Recent {
            id,
            author: commit.author().map_or(committer, |a| a.seconds()),
            committer,
            parents: parents.len(),
        });
        for parent in parents {
            push(parent, &mut queue);
        }
    }
    (out, true)
}

/// The repository's objects as a history walk in a shallow clone must see them: the commits of
/// the boundary read without their `parent` lines, which name commits that are not here (what
/// git's shallow grafts do). Given to gix's blame, which would otherwise fail on the first
/// missing parent.
pub(crate) struct Grafted<'a> {
    objects: &'a gix::OdbHandle,
    boundary: Vec<ObjectId>,
}

impl<'a> Grafted<'a> {
    pub(crate) fn new(repo: &'a gix::Repository, boundary: Vec<ObjectId>) -> Grafted<'a> {
        Grafted {
            objects: &repo.objects,
            boundary,
        }
    }
}

impl gix::objs::Find for Grafted<'_> {
    fn try_find<'b>(
        &self,
        id: &gix::oid,
        buffer: &'b mut Vec<u8>,
    ) -> gix::Result<Option<gix::objs::Data<'b>>> {
        if !self.boundary.iter().any(|b| b.as_ref() == id) {
            return self.objects.try_find(id, buffer);
        }
        let mut found = Vec::new();
        let Some(data) = self.objects.try_find(id, &mut found)? else {
            return Ok(None);
        };
        let (kind, object_hash, text) = (data.kind, data.object_hash, data.data);
        buffer.clear();
        if kind == gix::objs::Kind::Commit {
            // The header ends at the first empty line; the message after it is kept as it is.
            let header_end = text
                .windows(2)
                .position(|w| w == b"\n\n")
                .map_or(text.len(), |at| at + 1);
            for line in text[..header_end].split_inclusive(|b| *b == b'\n') {
                if !line.starts_with(b"parent ") {
                    buffer.extend_from_slice(line);
                }
            }
            buffer.extend_from_slice(&text[header_end..]);
        } else {
            buffer.extend_from_slice(text);
        }
        Ok(Some(gix::objs::Data {
            kind,
            object_hash,
            data: buffer,
        }))
    }
}

impl gix::objs::FindHeader for Grafted<'_> {
    fn try_header(&self, id: &gix::oid) -> gix::Result<Option<gix::objs::Header>> {
        self.objects.try_header(id)
    }
}
