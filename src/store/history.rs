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
    let commits = Commits::new(repo);
    let mut out = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue = vec![from];
    while let Some(id) = queue.pop() {
        if seen.len() >= max || !seen.insert(id) {
            continue;
        }
        let Some((time, _, parents)) = commits.queued(id) else {
            continue;
        };
        if time < since {
            continue;
        }
        out.push((time, id));
        queue.extend(parents);
    }
    out
}

/// `head` and the commits before it along first parents, `n` in all at most (fewer where the
/// history ends).
pub(crate) fn first_parents(repo: &gix::Repository, head: ObjectId, n: usize) -> Vec<ObjectId> {
    let commits = Commits::new(repo);
    let mut out = Vec::with_capacity(n);
    let mut next = Some(head);
    while let Some(id) = next.filter(|_| out.len() < n) {
        out.push(id);
        next = commits
            .queued(id)
            .and_then(|(_, _, parents)| parents.first().copied());
    }
    out
}

/// The commits of the repository as history walks read them: each one's commit time and
/// parents from git's commit-graph (`objects/info/commit-graph`, or the layers of
/// `objects/info/commit-graphs/`, which `git gc`, `git maintenance` and [`super::pack`] keep)
/// when it holds the commit, with nothing to decode, else from the commit's object; its parents
/// as git sees them ([`parents`]).
pub(crate) struct Commits<'r> {
    repo: &'r gix::Repository,
    graph: Option<gix::commitgraph::Graph>,
    /// A shallow clone's boundary, read once.
    boundary: Vec<ObjectId>,
}

impl<'r> Commits<'r> {
    pub(crate) fn new(repo: &'r gix::Repository) -> Commits<'r> {
        let boundary: Vec<ObjectId> = (repo.shallow_commits().ok().flatten())
            .map(|shallow| shallow.iter().copied().collect())
            .unwrap_or_default();
        // As git, none in a shallow clone: a commit's parents there may not be here.
        let graph = match boundary.is_empty() {
            true => repo.commit_graph_if_enabled().ok().flatten(),
            false => None,
        };
        Commits {
            repo,
            graph,
            boundary,
        }
    }

    /// `id` as a newest-first walk queues it: its commit time, its id and its parents; `None`
    /// when it cannot be read.
    pub(crate) fn queued(&self, id: ObjectId) -> Option<Queued> {
        if let Some(graph) = &self.graph
            && let Some(commit) = graph.commit_by_id(id)
        {
            let parents = (commit.iter_parents())
                .map(|p| p.ok().map(|p| graph.id_at(p).to_owned()))
                .collect::<Option<Vec<ObjectId>>>();
            // A damaged file is read no further for this commit: its object says.
            if let Some(parents) = parents {
                return Some((commit.committer_timestamp() as i64, id, parents));
            }
        }
        let commit = self.repo.find_commit(id).ok()?;
        let time = commit.committer().map_or(0, |s| s.seconds());
        let parents = match self.boundary.contains(&id) {
            true => Vec::new(),
            false => commit.parent_ids().map(|p| p.detach()).collect(),
        };
        Some((time, id, parents))
    }
}

/// What [`Commits::queued`] gives.
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
        commits: Commits::new(repo),
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
    commits: Commits<'r>,
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
            let Some(queued) = self.commits.queued(id) else {
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

/// HEAD's commits that the default branch does not have, newest first: a branch's own work,
/// whoever made it, or on the default branch what is not pushed yet. `None` where that cannot
/// be told: there is no remote's default branch and HEAD has nothing the local one does not (one
/// person's repository, all of whose history is their own), there is no default branch, or
/// HEAD is too far apart from it ([`OWN_WALK`]).
pub(crate) fn own_commits(repo: &gix::Repository, head: ObjectId) -> Option<Vec<ObjectId>> {
    let (tip, remote) = default_tip(repo)?;
    let own = if tip == head {
        Vec::new()
    } else {
        apart(repo, head, tip, OWN_WALK)?
    };
    (remote || !own.is_empty()).then_some(own)
}

/// Commits walked to tell HEAD's own commits from the default branch's, at most: past them, a
/// checkout far behind the default branch (an old tag, a bisection) or apart from it (an orphan
/// branch).
const OWN_WALK: usize = 1_000;

/// The tip of the default branch, and whether it is a remote's: the first of
/// [`default_branches`] that is there.
pub(crate) fn default_tip(repo: &gix::Repository) -> Option<(ObjectId, bool)> {
    default_branches(repo)
        .into_iter()
        .find_map(|(name, remote)| {
            let mut reference = repo.find_reference(name.as_str()).ok()?;
            Some((reference.peel_to_id().ok()?.detach(), remote))
        })
}

/// Where the default branch may be, in the order looked: a remote's `HEAD`, else its branch
/// that `init.defaultBranch` names, `main` or `master` (`origin` first, then the other remotes
/// by name), else the local branch of that name; each with whether it is a remote's.
pub(crate) fn default_branches(repo: &gix::Repository) -> Vec<(String, bool)> {
    let configured = repo.config_snapshot().string("init.defaultBranch");
    let names = (configured.iter().map(|n| n.to_string()))
        .chain(["main".to_owned(), "master".to_owned()])
        .collect::<Vec<_>>();
    let others = repo.remote_names().into_iter().map(|r| r.to_string());
    let remotes: Vec<String> = std::iter::once("origin".to_owned())
        .chain(others.filter(|r| r != "origin"))
        .collect();
    let remote = remotes.iter().flat_map(|r| {
        let branches = std::iter::once("HEAD").chain(names.iter().map(String::as_str));
        branches.map(move |n| (format!("refs/remotes/{r}/{n}"), true))
    });
    let local = names.iter().map(|n| (format!("refs/heads/{n}"), false));
    remote.chain(local).collect()
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
    // Queued by commit time (from the commit-graph where it has them); a commit's object is
    // decoded once, for its author's time, when it is taken.
    let commits = Commits::new(repo);
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue: BinaryHeap<Queued> = BinaryHeap::new();
    let mut push = |id: ObjectId, queue: &mut BinaryHeap<Queued>| {
        if seen.insert(id)
            && let Some(queued) = commits.queued(id)
        {
            queue.push(queued);
        }
    };
    for tip in tips {
        push(tip, &mut queue);
    }
    let mut out = Vec::new();
    while let Some((committer, id, parents)) = queue.pop() {
        if committer < since {
            break;
        }
        if out.len() >= most {
            return (out, false);
        }
        let author = (repo.find_commit(id).ok())
            .and_then(|c| c.author().ok().map(|a| a.seconds()))
            .unwrap_or(committer);
        out.push(Recent {
            id,
            author,
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    /// A time git takes as seconds since the epoch.
    const T: i64 = 1_700_000_000;

    /// git in `dir`, as a user without configuration of their own runs it: its output.
    pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A commit on the current branch, committed at `at`.
    fn commit(dir: &Path, message: &str, at: i64) {
        let date = format!("{at} +0000");
        let out = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["commit", "-q", "--allow-empty", "-m", message])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_COMMITTER_DATE", &date)
            .env("GIT_AUTHOR_DATE", &date)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    /// What git says of each commit of the repository: its commit time and parents.
    fn as_git_says(dir: &Path) -> Vec<Queued> {
        let log = git(dir, &["log", "--all", "--format=%ct %H %P"]);
        log.lines()
            .map(|line| {
                let mut words = line.split(' ');
                let time = words.next().unwrap().parse().unwrap();
                let id = ObjectId::from_hex(words.next().unwrap().as_bytes()).unwrap();
                let parents = (words.filter(|p| !p.is_empty()))
                    .map(|p| ObjectId::from_hex(p.as_bytes()).unwrap());
                (time, id, parents.collect())
            })
            .collect()
    }

    #[test]
    fn a_walk_reads_the_commit_graph_where_it_holds_a_commit_and_the_objects_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        git(dir, &["init", "-q", "-b", "main"]);
        commit(dir, "root", T + 1_000);
        git(dir, &["checkout", "-q", "-b", "side"]);
        commit(dir, "side", T + 3_000);
        git(dir, &["checkout", "-q", "main"]);
        // Committed before its parent's time, as a wrong clock does.
        commit(dir, "main", T + 2_000);
        git(dir, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
        git(dir, &["commit-graph", "write", "--reachable"]);
        // Made after the commit-graph was written: not in it.
        commit(dir, "later", T + 5_000);
        let repo = gix::open(dir).unwrap();
        let commits = Commits::new(&repo);
        let graph = commits.graph.as_ref().expect("the commit-graph is read");
        let truth = as_git_says(dir);
        assert_eq!(truth.len(), 5);
        let in_graph = truth.iter().filter(|c| graph.commit_by_id(c.1).is_some());
        assert_eq!(in_graph.count(), 4);
        for expected in &truth {
            assert_eq!(commits.queued(expected.1).as_ref(), Some(expected));
        }
        let walked = since(&repo, truth[0].1, 0, 100);
        assert_eq!(walked.len(), 5);
        // Without the file, the objects say the same.
        std::fs::remove_file(dir.join(".git/objects/info/commit-graph")).unwrap();
        let repo = gix::open(dir).unwrap();
        let commits = Commits::new(&repo);
        assert!(commits.graph.is_none());
        for expected in &truth {
            assert_eq!(commits.queued(expected.1).as_ref(), Some(expected));
        }
        assert_eq!(since(&repo, truth[0].1, 0, 100), walked);
    }

    #[test]
    fn a_shallow_clones_boundary_commit_has_no_parents_whatever_its_commit_graph_says() {
        let origin = tempfile::tempdir().unwrap();
        let origin = origin.path();
        git(origin, &["init", "-q", "-b", "main"]);
        for (n, at) in [T + 1_000, T + 2_000, T + 3_000].into_iter().enumerate() {
            commit(origin, &format!("c{n}"), at);
        }
        git(origin, &["commit-graph", "write", "--reachable"]);
        let clone = tempfile::tempdir().unwrap();
        let url = format!("file://{}", origin.display());
        let into = clone.path().join("c");
        git(clone.path(), &["clone", "-q", "--depth", "2", &url, "c"]);
        // A commit-graph written before the clone was made shallow would name the parent.
        std::fs::create_dir_all(into.join(".git/objects/info")).unwrap();
        std::fs::copy(
            origin.join(".git/objects/info/commit-graph"),
            into.join(".git/objects/info/commit-graph"),
        )
        .unwrap();
        let repo = gix::open(&into).unwrap();
        let commits = Commits::new(&repo);
        assert!(commits.graph.is_none());
        let boundary = git(&into, &["rev-parse", "HEAD~1"]);
        let boundary = ObjectId::from_hex(boundary.trim().as_bytes()).unwrap();
        let (time, _, parents) = commits.queued(boundary).unwrap();
        assert_eq!((time, parents), (T + 2_000, Vec::new()));
    }
}
