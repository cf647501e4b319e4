//! Walking commit history back in time, bounded: the ancestry that linking (commits made during
//! a session) and the graph (which work built on which) need.

use std::collections::HashSet;

use gix::ObjectId;

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
