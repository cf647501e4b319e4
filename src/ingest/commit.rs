//! What a new or rewritten commit triggers — the work of the git hooks (docs/linking.md).
//!
//! **post-commit** runs inside the agent's `git commit`, before any Claude Code hook. When the
//! session is known — `CLAUDE_CODE_SESSION_ID` (Claude Code sets it in every Bash subprocess) or
//! Codex CLI's `CODEX_SESSION_ID` — it only records that the session made the commit, then and
//! there (one line, [`link::defer`]), so that the agent's commit waits for nothing; reading the
//! transcript up to then and attaching the session's pending events to the commit ([`finish`])
//! follows in a process of its own, and whatever reads the session next (its next hook, an
//! `extract`) does it if that process could not. Without a session, every session active in
//! this worktree lately (`link.active_minutes`) whose edits meet the commit's files is read and
//! linked at once. During a rebase it does nothing (git carries the notes, see
//! `notes.rewriteRef`); during a cherry-pick it copies the picked commit's note, and attaches
//! nothing else.
//!
//! **post-rewrite** (after `commit --amend` and `rebase`) carries notes from the old commits to
//! the new ones (git already does when configured; merging by id makes that a no-op) and points
//! the attached index at the new commits, so later versions of those events find them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use gix::ObjectId;

use super::{Error, Options, TranscriptReport, transcript};
use crate::event::Event;
use crate::store::{self, Store, graph, link, notes, sessions};
use crate::transcript::locate::{self, Homes};

/// What the post-commit hook knows from its environment.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    /// The session that runs the commit, when its agent says it: `CLAUDE_CODE_SESSION_ID`,
    /// Codex CLI's `CODEX_SESSION_ID`.
    pub session_id: Option<String>,
    /// Where the agents keep their sessions.
    pub homes: Homes,
}

/// What the post-commit hook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostCommit {
    /// A rebase is picking commits: their notes are git's to carry.
    Rebase,
    /// A cherry-pick: the picked commit's events, copied.
    CherryPick { from: ObjectId, events: usize },
    /// Sessions read and linked: (session, events attached to the new commit or before it).
    Linked { sessions: Vec<(String, usize)> },
    /// The agent's session made it: recorded, its events to be attached by [`finish`].
    Deferred { session: String },
}

/// Run the post-commit work for HEAD.
pub fn post_commit(store: &Store, env: &Environment) -> Result<(ObjectId, PostCommit), Error> {
    let repo = store.repo();
    let head = repo
        .head_id()
        .map_err(store::git_error("read HEAD"))?
        .detach();
    let git_dir = repo.git_dir();
    if git_dir.join("rebase-merge").is_dir() || git_dir.join("rebase-apply").is_dir() {
        return Ok((head, PostCommit::Rebase));
    }
    if let Some(from) = cherry_picked_from(git_dir) {
        // Under the lock, as every graph update: it settles what other runs owe.
        let _lock = store.lock()?;
        let batch = [(head, notes::read_id(store, from)?)];
        let copied = notes::attach_all(store, &batch)?;
        graph::update(store, &sessions_of(&batch))?;
        return Ok((
            head,
            PostCommit::CherryPick {
                from,
                events: copied.added + copied.updated,
            },
        ));
    }
    if let Some(session) = &env.session_id {
        link::defer(store, session, head)?;
        return Ok((
            head,
            PostCommit::Deferred {
                session: session.clone(),
            },
        ));
    }
    let _lock = store.lock()?;
    let mut active: BTreeSet<String> = BTreeSet::new();
    for path in active_transcripts(store, env) {
        if let Some(session) = read(store, &path)?
            .map(|r| r.session_id)
            .filter(|s| !s.is_empty())
        {
            active.insert(session);
        }
    }
    let mut linked = Vec::new();
    for session in active {
        let to_head = link::session_to(store, &session, head, true)?;
        linked.push((session, to_head.events));
    }
    graph::settle(store)?;
    Ok((head, PostCommit::Linked { sessions: linked }))
}

/// The rest of the post-commit work for the commits `session` made ([`PostCommit::Deferred`]):
/// read its transcripts up to now and attach its pending events to them, each commit taking
/// those before its hook ran; how many events were attached.
pub fn finish(store: &Store, env: &Environment, session: &str) -> Result<usize, Error> {
    let _lock = store.lock()?;
    for path in session_transcripts(store, env, session) {
        read(store, &path)?;
    }
    let linked = link::session(store, session)?.events;
    graph::settle(store)?;
    Ok(linked)
}

/// Extract one transcript, leaving the linking and the graph to the caller
/// ([`graph::settle`]); a transcript that has gone away is skipped (`None`).
pub(crate) fn read(store: &Store, path: &Path) -> Result<Option<TranscriptReport>, Error> {
    let options = Options {
        link: None,
        ..Options::default()
    };
    match transcript(store, path, options) {
        Ok(report) => Ok(Some(report)),
        Err(Error::Transcript { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The transcripts of `session`: from the registry (with the subagents' beside them, which
/// hooks do not name), else from the project folders.
pub fn session_transcripts(store: &Store, env: &Environment, session: &str) -> Vec<PathBuf> {
    if let Some(entry) = sessions::get(store, session) {
        let mut known: Vec<PathBuf> = entry
            .transcripts
            .into_iter()
            .filter(|p| p.is_file())
            .collect();
        if !known.is_empty() {
            for sub in known.clone().iter().flat_map(|p| locate::subagents_of(p)) {
                if !known.contains(&sub) {
                    known.push(sub);
                }
            }
            locate::reading_order(&mut known);
            return known;
        }
    }
    match store.workdir() {
        Some(workdir) => env
            .homes
            .session_transcripts(workdir, &store.nested_worktrees(), session),
        None => Vec::new(),
    }
}

/// Transcripts of sessions that ran in this worktree and were written to lately.
fn active_transcripts(store: &Store, env: &Environment) -> BTreeSet<PathBuf> {
    let Some(workdir) = store.workdir() else {
        return BTreeSet::new();
    };
    let since = SystemTime::now() - Duration::from_secs(store.config().link_active_seconds());
    let recent = |p: &PathBuf| {
        fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since)
    };
    let nested = store.nested_worktrees();
    let mut out: BTreeSet<PathBuf> = env
        .homes
        .recent_transcripts(workdir, &nested, since)
        .into_iter()
        .collect();
    for entry in sessions::all(store).unwrap_or_default() {
        if crate::transcript::root::within(Path::new(&entry.cwd), workdir, &nested) {
            out.extend(entry.transcripts.into_iter().filter(recent));
        }
    }
    out
}

/// The commit a cherry-pick is taking `head` from: `CHERRY_PICK_HEAD`, which git keeps while
/// it picks. (Not the `(cherry picked from commit …)` line of `-x`: an amended or squashed
/// commit may carry it too, and is the session's own work.)
fn cherry_picked_from(git_dir: &Path) -> Option<ObjectId> {
    let text = fs::read_to_string(git_dir.join("CHERRY_PICK_HEAD")).ok()?;
    ObjectId::from_hex(text.trim().as_bytes()).ok()
}

/// Run the post-rewrite work: `pairs` are (old, new) commits as git lists them on the hook's
/// stdin. Returns how many events were carried to new commits.
pub fn post_rewrite(store: &Store, pairs: &[(ObjectId, ObjectId)]) -> Result<usize, Error> {
    let _lock = store.lock()?;
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut batches: BTreeMap<ObjectId, Vec<Event>> = BTreeMap::new();
    for (old, new) in pairs {
        let events = reader.events(*old)?;
        if !events.is_empty() {
            batches.entry(*new).or_default().extend(events);
        }
    }
    // The index first: if this run dies, later versions of the events already go to the new
    // commits, and merging them into a note git did not copy puts them there.
    let moved: BTreeMap<ObjectId, ObjectId> = pairs.iter().copied().collect();
    link::rewrite_index(store, &moved)?;
    let batches: Vec<_> = batches.into_iter().collect();
    let carried = notes::attach_all(store, &batches)?;
    graph::update(store, &sessions_of(&batches))?;
    Ok(carried.added + carried.updated)
}

/// The sessions of each batch's events, each with the commits they are on: what the graph
/// must update once they are there.
pub(crate) fn sessions_of(
    batches: &[(ObjectId, Vec<Event>)],
) -> BTreeMap<String, BTreeSet<ObjectId>> {
    let mut touched: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    for (commit, events) in batches {
        for e in events {
            touched
                .entry(e.session_id.clone())
                .or_default()
                .insert(*commit);
        }
    }
    touched
}

/// The (old, new) pairs of a post-rewrite hook's stdin: `<old> <new> [<extra>]` per line.
pub fn rewritten_pairs(input: &str) -> Vec<(ObjectId, ObjectId)> {
    input
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let old = ObjectId::from_hex(words.next()?.as_bytes()).ok()?;
            let new = ObjectId::from_hex(words.next()?.as_bytes()).ok()?;
            Some((old, new))
        })
        .collect()
}
