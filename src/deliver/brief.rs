//! The brief a session starts with (`SessionStart` on `startup` and `clear`; seed 004): the
//! latest sessions of the work at hand and what they did, the work they and the sessions not
//! yet committed on this branch left open, and their standing decisions — read from the graph
//! and the pending queue, never from the notes or the transcripts, so that it fits a
//! prompt-time budget.
//!
//! The work at hand is the branch's own commits: those the default branch does not have,
//! whoever made them (on the default branch, those not pushed yet). The latest sessions of
//! merged work are seldom what a new task touches (docs/quality.md). Where HEAD is the default
//! branch and there is no remote's to compare with, every commit of its history counts.
//!
//! The brief is kept in the store with what it was made from ([`keep`]): the commits HEAD, the
//! default branch and the graph are at, HEAD's branch, and how many times the pending queues
//! changed. While they are as they were, the brief is the same, and a session's first hook
//! reads it rather than making it again. The process a turn's end or an agent's commit leaves
//! its work to makes it once that work is done, so the next session finds it ready.

use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};

use gix::ObjectId;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::classify::extractor::REVERTED;
use crate::deliver::Result;
use crate::event::summary::Summary;
use crate::event::{Kind, Origin};
use crate::ingest::recorded::PEOPLE;
use crate::render::templates::{self, BRIEF, within};
use crate::store::graph::node::DecisionNode;
use crate::store::graph::{self, View};
use crate::store::{Store, history, pending, ref_tip, remove_file, write_cache};

/// Sessions shown, at most.
const SESSIONS: usize = 3;
/// Commits of the current branch walked back to find them, at most: newest first, through
/// every parent, so that the commits a merge brought in count, and sessions hundreds of
/// commits back are still found.
const COMMITS: usize = 10_000;
/// Annotated commits whose times are read to end the walk early, at most.
const ANNOTATED_READ: usize = 2_000;
/// Commits walked before the walk is bounded by the oldest annotated commit.
const FAR: usize = 500;
/// Standing decisions shown, at most.
const DECISIONS: usize = 6;
/// Sessions not yet committed shown, at most.
const UNCOMMITTED: usize = 2;
/// Queue files read to find them, at most: the newest.
const QUEUES_READ: usize = 8;
/// Tokens the brief is given at most.
const TOKENS: usize = 1_500;

/// A session as the brief shows it: the short form of what it was asked, completed and left
/// open.
#[derive(Debug, Serialize)]
pub struct Session {
    id: String,
    when: String,
    request: String,
    completed: Vec<String>,
    pending: Vec<String>,
    files: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Decision {
    /// `decision`, or `rejection` for a rejection that stands alone.
    kind: String,
    choice: String,
    rejected: Vec<String>,
    files: Vec<String>,
    session: String,
    /// The first commit it came with, and when it was made.
    commit: String,
    when: String,
}

/// The brief for `current` (the session starting, left out of it), or nothing when there is
/// nothing recorded; and whether it is the one kept ([`keep`]). One made here is kept in turn.
pub fn brief(store: &Store, current: &str) -> Result<(Option<String>, bool)> {
    let Some(inputs) = Inputs::now(store) else {
        return Ok((make(store, Some(current))?.text, false));
    };
    // Kept for no session in particular; made for `current` in the rare case that it tells
    // of it (a session cleared keeps its id).
    let tells = |sessions: &[String]| sessions.iter().any(|s| s == current);
    match Kept::read(store, &inputs) {
        Some(kept) if tells(&kept.sessions) => Ok((make(store, Some(current))?.text, false)),
        Some(kept) => Ok((kept.text, true)),
        None => {
            let made = make(store, None)?;
            // A cache: the brief can always be made again.
            let _ = made.keep_if_still(store, inputs);
            match tells(&made.sessions) {
                true => Ok((make(store, Some(current))?.text, false)),
                false => Ok((made.text, false)),
            }
        }
    }
}

/// Make the brief a session starting now is given and keep it, unless the one kept was made
/// from what is there now; whether it kept one. For the processes that change what it is made
/// from, once they are done.
pub fn keep(store: &Store) -> Result<bool> {
    let Some(inputs) = Inputs::now(store) else {
        return Ok(false);
    };
    if Kept::read(store, &inputs).is_some() {
        return Ok(false);
    }
    Ok(make(store, None)?.keep_if_still(store, inputs)?)
}

/// Remove the brief kept: for what takes events out of the store (`forget`, `rebuild`), so
/// that no copy of their text stays behind.
pub fn discard(store: &Store) -> crate::store::Result<()> {
    remove_file(&store.dir().join(KEPT))
}

/// Where the brief is kept, in the store.
const KEPT: &str = "brief.json";

/// What the brief is made from: while each is as it was, it is the same brief.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Inputs {
    /// The build that made it ([`build`]).
    build: String,
    head: Option<String>,
    branch: Option<String>,
    /// Each ref the default branch may be ([`history::default_branches`]), and where it points.
    default_branch: Vec<(String, Option<String>)>,
    graph: Option<String>,
    /// How many times the pending queues changed ([`pending::changes`]), and when their
    /// folder last did (in nanoseconds): a queue file added or removed by other means.
    queue_changes: u64,
    queues_folder: Option<u64>,
}

impl Inputs {
    /// What the brief would be made from now; nothing when it is not to be kept: the
    /// repository has its own template (which the working tree may change at any time), or
    /// the graph's ref cannot be read.
    fn now(store: &Store) -> Option<Inputs> {
        if templates::overridden(store, &BRIEF) {
            return None;
        }
        // Read before the queues are: a change made while the brief is made counts.
        let queue_changes = pending::changes(store);
        let queues_folder = (std::fs::metadata(store.dir().join(pending::DIR)))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as u64);
        let repo = store.repo();
        // Where each ref points, followed through symbolic refs but not peeled: peeling would
        // open the object database to learn that a commit is one.
        let followed = |mut reference: gix::Reference<'_>| {
            Some(reference.follow_to_object().ok()?.to_hex().to_string())
        };
        let found = |name: &str| repo.find_reference(name).ok().and_then(followed);
        let head = repo.find_reference("HEAD").ok()?;
        Some(Inputs {
            build: build()?,
            branch: (head.target().try_name()).map(|name| name.as_bstr().to_string()),
            head: followed(head),
            default_branch: (history::default_branches(&repo).iter())
                .map(|(name, _)| (name.clone(), found(name)))
                .collect(),
            graph: ref_tip(&repo, graph::REF)
                .ok()?
                .map(|id| id.to_hex().to_string()),
            queue_changes,
            queues_folder,
        })
    }
}

/// The build that makes the brief: its version, and its binary's size and when that was
/// written, for another build of the same version may make another brief.
fn build() -> Option<String> {
    let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let written = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH);
    let written = written.ok()?.as_nanos();
    Some(format!(
        "{} {} {written}",
        env!("CARGO_PKG_VERSION"),
        meta.len()
    ))
}

/// The brief as it is kept: made for no session in particular.
#[derive(Serialize, Deserialize)]
struct Kept {
    inputs: Inputs,
    /// Every session it tells of.
    sessions: Vec<String>,
    text: Option<String>,
}

impl Kept {
    /// The brief kept, if it was made from `now`.
    fn read(store: &Store, now: &Inputs) -> Option<Kept> {
        let bytes = std::fs::read(store.dir().join(KEPT)).ok()?;
        serde_json::from_slice::<Kept>(&bytes)
            .ok()
            .filter(|kept| kept.inputs == *now)
    }
}

/// A brief made, and the sessions it tells of.
struct Made {
    text: Option<String>,
    sessions: Vec<String>,
}

impl Made {
    /// Keep this brief, made from `inputs`, if they are still what is there: one made while
    /// something changed is not kept. Whether it was. Under the store's lock, when it is free
    /// at once: a `forget` holds it while it takes events out and removes the brief kept, so
    /// none made before can be written after.
    fn keep_if_still(&self, store: &Store, inputs: Inputs) -> crate::store::Result<bool> {
        let Some(_lock) = store.lock_if_free() else {
            return Ok(false);
        };
        if Inputs::now(store).as_ref() != Some(&inputs) {
            return Ok(false);
        }
        let kept = Kept {
            inputs,
            sessions: self.sessions.clone(),
            text: self.text.clone(),
        };
        let bytes = serde_json::to_vec(&kept).expect("a brief serializes");
        write_cache(&store.dir().join(KEPT), &bytes)?;
        Ok(true)
    }
}

/// Make the brief for `current` (or for no session in particular).
fn make(store: &Store, current: Option<&str>) -> Result<Made> {
    let (mut sessions, decisions, found) = committed(store, current, true)?;
    // A person's records give their decisions; they are no session to tell of.
    sessions.retain(|s| s.id != PEOPLE);
    let shown: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let open = uncommitted(store, current, &shown)?;
    // Every session it found, even one it could not describe: made for one of them, it
    // would find another in its place.
    let told = found.into_iter().chain(open.iter().map(|s| s.id.clone()));
    let told: Vec<String> = told.collect();
    if sessions.is_empty() && open.is_empty() && decisions.is_empty() {
        return Ok(Made {
            text: None,
            sessions: told,
        });
    }
    let text = templates::render(
        store,
        &BRIEF,
        &json!({"sessions": sessions, "decisions": decisions, "open": open}),
    )?;
    Ok(Made {
        text: Some(within(text, TOKENS)),
        sessions: told,
    })
}

/// The latest sessions with commits in HEAD's history (newest first), whether or not the
/// default branch has them, then the latest sessions whose events wait for a commit: what
/// `session_summary` lists.
pub fn latest(store: &Store) -> Result<Vec<Session>> {
    let (mut sessions, _, _) = committed(store, None, false)?;
    let shown: Vec<String> = sessions.iter().map(|s| s.id.clone()).collect();
    let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    sessions.extend(uncommitted(store, None, &shown)?);
    Ok(sessions)
}

/// The latest sessions (newest first) and their standing decisions (those no later decision
/// superseded): of the work at hand when `at_hand`, else of HEAD's history; and the sessions
/// found, those the graph could not describe too.
fn committed(
    store: &Store,
    current: Option<&str>,
    at_hand: bool,
) -> crate::store::Result<(Vec<Session>, Vec<Decision>, Vec<String>)> {
    let repo = store.repo();
    let Ok(head) = repo.head_id() else {
        return Ok(Default::default());
    };
    let mut view = View::open(&repo)?;
    let pairs = view.commits()?;
    if pairs.is_empty() {
        return Ok(Default::default());
    }
    let by_commit = sessions_by_commit(&pairs);
    let head = head.detach();
    let own = at_hand.then(|| history::own_commits(&repo, head)).flatten();
    let found = match &own {
        Some(own) => {
            let mut found = Vec::new();
            for s in own.iter().filter_map(|c| by_commit.get(c)).flatten() {
                take(&mut found, s, current);
            }
            found.truncate(SESSIONS);
            found
        }
        None => met_first(&repo, head, &by_commit, current),
    };
    let own: Option<HashSet<ObjectId>> = own.map(HashSet::from_iter);
    let (sessions, decisions) = described(&mut view, found.clone(), own.as_ref())?;
    Ok((sessions, decisions, found))
}

/// Each annotated commit's sessions (a person's records are one, `recorded-by-people`).
fn sessions_by_commit<'p>(pairs: &[(&str, &'p str)]) -> HashMap<ObjectId, Vec<&'p str>> {
    let mut by_commit: HashMap<ObjectId, Vec<&str>> = HashMap::new();
    for (commit, session) in pairs {
        if let Ok(id) = ObjectId::from_hex(commit.as_bytes()) {
            by_commit.entry(id).or_default().push(session);
        }
    }
    by_commit
}

/// How many different `sessions` there are, counted up to `most`: a repository's thousands
/// of annotated commits are not all read to tell that there are three.
fn distinct_up_to<'s>(sessions: impl Iterator<Item = &'s &'s str>, most: usize) -> usize {
    let mut seen: Vec<&str> = Vec::with_capacity(most);
    for s in sessions {
        if seen.len() == most {
            break;
        }
        if !seen.contains(s) {
            seen.push(s);
        }
    }
    seen.len()
}

/// Add session `s` to `found` unless it is there or is the `current` one.
fn take(found: &mut Vec<String>, s: &str, current: Option<&str>) {
    if Some(s) != current && !found.iter().any(|f| f == s) {
        found.push(s.to_owned());
    }
}

/// The sessions of the annotated commits (`sessions_of`) that HEAD's history meets first,
/// newest first, `current` left out; at most [`SESSIONS`].
fn met_first(
    repo: &gix::Repository,
    head: ObjectId,
    sessions_of: &HashMap<ObjectId, Vec<&str>>,
    current: Option<&str>,
) -> Vec<String> {
    // The walk is over once every session it could find is found, and nothing older than the
    // oldest annotated commit can be one (their times read when there are few enough).
    let findable = distinct_up_to(
        (sessions_of.values().flatten()).filter(|s| Some(**s) != current),
        SESSIONS,
    );
    // Read only for a walk that goes far: most find their sessions in the first commits.
    let oldest_annotated = || match sessions_of.len() <= ANNOTATED_READ {
        true => (sessions_of.keys())
            .filter_map(|id| repo.find_commit(*id).ok())
            .filter_map(|c| c.committer().ok().map(|s| s.seconds()))
            .min(),
        false => None,
    };
    let mut oldest = None;
    // Newest first, each commit read once, when it is queued: its time and its parents
    // (history::Commits).
    let mut found: Vec<String> = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue: BinaryHeap<history::Queued> = BinaryHeap::new();
    let commits = history::Commits::new(repo);
    let mut push = |id: ObjectId, queue: &mut BinaryHeap<history::Queued>| {
        if seen.insert(id)
            && let Some(queued) = commits.queued(id)
        {
            queue.push(queued);
        }
    };
    push(head, &mut queue);
    for step in 0..COMMITS {
        let Some((time, id, parents)) = queue.pop() else {
            break;
        };
        if step == FAR {
            oldest = oldest_annotated();
        }
        if oldest.is_some_and(|oldest| time < oldest) {
            break;
        }
        for s in sessions_of.get(&id).into_iter().flatten() {
            take(&mut found, s, current);
        }
        if found.len() >= findable {
            break;
        }
        for parent in parents {
            push(parent, &mut queue);
        }
    }
    found.truncate(SESSIONS);
    found
}

/// The sessions `found`, as the graph has them, and their standing decisions (those no later
/// decision superseded), what was ruled out first. Of the decisions, only those made on the
/// `own` commits when there are some to tell.
fn described(
    view: &mut View<'_>,
    found: Vec<String>,
    own: Option<&HashSet<ObjectId>>,
) -> crate::store::Result<(Vec<Session>, Vec<Decision>)> {
    let (mut sessions, mut decisions) = (Vec::new(), Vec::new());
    let on_own = |commits: &[String]| {
        own.is_none_or(|own| {
            (commits.iter())
                .any(|c| ObjectId::from_hex(c.as_bytes()).is_ok_and(|id| own.contains(&id)))
        })
    };
    for id in found {
        let Some(node) = view.session(&id)? else {
            continue;
        };
        for d in node.decisions.iter().rev() {
            if decisions.len() >= DECISIONS {
                break;
            }
            let Some(decision) = view.decision(d)? else {
                continue;
            };
            if briefed(&decision) && on_own(&decision.commits) && view.superseded_by(d)?.is_none() {
                decisions.push(Decision {
                    commit: decision.commits.first().cloned().unwrap_or_default(),
                    when: decision.timestamp,
                    kind: decision.kind,
                    choice: decision.choice,
                    rejected: decision.rejected,
                    files: decision.files,
                    session: id.clone(),
                });
            }
        }
        let summary = node.summary;
        sessions.push(Session {
            id,
            when: node.end,
            request: node.request,
            completed: summary.completed,
            pending: node.unfinished,
            files: node.files,
        });
    }
    // What was ruled out first: the cheapest mistake to repeat.
    decisions.sort_by_key(|d| d.kind != "rejection");
    Ok((sessions, decisions))
}

/// Whether a standing decision is told before the task is known: what was ruled out, and
/// what was decided on purpose (recorded by the agent or a person). A decision read out of a
/// transcript comes when the session reads or changes its files, or names it: given to every
/// session that starts, it was seldom about the task (docs/quality.md). So does an edit undone
/// after a check failed: even with the reason the session gave, it is about the file it
/// changed, and the file's hook gives it when the file is read or changed (older notes' undone
/// edits tell only that a command failed).
fn briefed(decision: &DecisionNode) -> bool {
    match decision.origin {
        Some(Origin::Agent | Origin::Human) => true,
        Some(Origin::ToolSequence) => false,
        // A node written before nodes kept their origin tells an undone edit by its words.
        None if (std::iter::once(&decision.choice).chain(&decision.rejected))
            .any(|t| t.starts_with(REVERTED)) =>
        {
            false
        }
        _ => decision.kind == "rejection",
    }
}

/// The latest sessions whose events wait for a commit (the newest first), other than `current`,
/// those `shown` already and those that ran on another branch: what they were asked, changed
/// and left open.
fn uncommitted(store: &Store, current: Option<&str>, shown: &[&str]) -> Result<Vec<Session>> {
    // A session that ran on another branch (as of its latest event) is other work; on a
    // detached HEAD none is.
    let branch = (store.repo().head_name().ok().flatten()).map(|name| name.shorten().to_string());
    let elsewhere = |events: &[crate::event::Event]| {
        let ran_on = (events.iter().rev())
            .map(|e| e.session.branch.as_str())
            .find(|b| !b.is_empty());
        matches!((ran_on, &branch), (Some(ran_on), Some(branch)) if ran_on != branch)
    };
    let mut files = store.files_modified(pending::DIR, "jsonl")?;
    // The newest first; those changed at once (an import) by name, whatever the folder's order.
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut open = Vec::new();
    let mut seen = BTreeSet::new();
    for (_, path) in files.into_iter().take(QUEUES_READ) {
        if open.len() >= UNCOMMITTED {
            break;
        }
        let Ok(events) = pending::events_in(&path) else {
            continue;
        };
        let Some(session) = events.first().map(|e| e.session_id.clone()) else {
            continue;
        };
        if Some(session.as_str()) == current
            || shown.contains(&session.as_str())
            || !seen.insert(session.clone())
            || elsewhere(&events)
        {
            continue;
        }
        let refs: Vec<_> = events.iter().collect();
        let summary = Summary::of(&refs);
        if summary.pending.is_empty() && !events.iter().any(|e| e.kind == Kind::Write) {
            continue;
        }
        let when = events.iter().map(|e| e.timestamp.as_str()).max();
        open.push(Session {
            id: session,
            when: when.unwrap_or_default().to_owned(),
            request: summary.request,
            completed: summary.completed,
            pending: summary.pending,
            files: summary.files_edited,
        });
    }
    Ok(open)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, origin: Option<Origin>) -> DecisionNode {
        DecisionNode {
            kind: kind.to_owned(),
            origin,
            ..DecisionNode::default()
        }
    }

    #[test]
    fn the_brief_tells_rejections_and_what_was_decided_on_purpose() {
        assert!(briefed(&node("rejection", Some(Origin::Thinking))));
        assert!(
            briefed(&node("rejection", None)),
            "a node written before origins"
        );
        assert!(briefed(&node("decision", Some(Origin::Agent))));
        assert!(briefed(&node("decision", Some(Origin::Human))));
        assert!(!briefed(&node("decision", Some(Origin::Text))));
        // "Reverted the change to x.go after `make test` failed": a command failed, no reason.
        assert!(!briefed(&node("rejection", Some(Origin::ToolSequence))));
        let before_origins = DecisionNode {
            rejected: vec!["Reverted the change to x.go after `make test` failed".to_owned()],
            ..node("rejection", None)
        };
        assert!(!briefed(&before_origins));
    }

    #[test]
    fn sessions_are_counted_up_to_the_most_asked() {
        let sessions = ["a", "b", "a", "c", "d", "a"];
        assert_eq!(distinct_up_to(sessions.iter(), 3), 3);
        assert_eq!(distinct_up_to(sessions.iter(), 10), 4);
        assert_eq!(distinct_up_to(["a", "a"].iter(), 3), 1);
        assert_eq!(distinct_up_to([].iter(), 3), 0);
    }
}
