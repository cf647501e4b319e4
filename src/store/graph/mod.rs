//! The decision graph on `refs/agent-context` (DESIGN §7): a chain of commits whose tree holds
//! one readable TOML file per session and per decision, and two small indexes:
//!
//! ```text
//! README.md                  what this ref is
//! sessions/<session>.toml    request, prompts, start/end, commits, files, decisions, built-on
//! decisions/<id>.toml        subject, choice, rationale, rejected, trade-offs, files, commits,
//!                            depends_on / supersedes / conflicts_with
//! index/files.tsv            <path> TAB session|decision TAB <id>, sorted
//! index/commits.tsv          <commit> TAB <session>, sorted
//! ```
//!
//! Everything in it is derived from the notes, so [`rebuild`] can always make it again; writers
//! [`update`] the sessions whose notes they changed. Each update is one commit on the ref,
//! made with a compare-and-swap and redone on top of another writer's if it lost the race, so
//! concurrent writers never lose one another's work. `git log refs/agent-context` tells the
//! story; `git show refs/agent-context:<path>` shows any node.

pub mod node;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use gix::refs::transaction::PreviousValue;

use super::{Error, Result, Store, backoff, git_error, history, notes, pending, signature};
use crate::event::Event;
use node::{DecisionNode, SessionEvents, SessionNode};

pub const REF: &str = "refs/agent-context";
const ATTEMPTS: usize = 100;
/// The most commits one ancestry walk visits.
const WALK_MAX: usize = 100_000;
const FILES_INDEX: &str = "index/files.tsv";
const COMMITS_INDEX: &str = "index/commits.tsv";

const README: &str = "\
# refs/agent-context

The decision graph of git-agent-context: why this repository's code is the way it is, as
recorded from its Claude Code sessions. Derived from the notes on refs/notes/agent-context
(`git agent-context rebuild` makes it again).

- sessions/<session>.toml: what a session was asked, its prompts, commits, files and decisions
- decisions/<id>.toml: a decision, its rationale, the alternatives rejected, and its edges
  (depends_on, supersedes, conflicts_with)
- index/files.tsv: file -> sessions and decisions; index/commits.tsv: commit -> session

Format: docs/format.md of git-agent-context.
";

/// What an update or rebuild did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Updated {
    pub sessions: usize,
    pub decisions: usize,
    /// The new commit on the ref; `None` when nothing changed.
    pub commit: Option<ObjectId>,
}

pub fn session_path(session: &str) -> String {
    format!(
        "sessions/{}",
        pending::file_name(session).replace(".jsonl", ".toml")
    )
}

pub fn decision_path(id: &str) -> String {
    format!("decisions/{id}.toml")
}

/// The graph as of one commit of the ref: read access to its files.
struct Snapshot<'r> {
    repo: &'r gix::Repository,
    tip: Option<ObjectId>,
    tree: ObjectId,
}

impl<'r> Snapshot<'r> {
    fn at_tip(repo: &'r gix::Repository) -> Result<Snapshot<'r>> {
        let reference = repo
            .try_find_reference(REF)
            .map_err(git_error(format!("read {REF}")))?;
        let tip = reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned));
        let tree = match tip {
            Some(t) => repo
                .find_commit(t)
                .and_then(|c| c.tree_id())
                .map_err(git_error(format!("read {REF}")))?
                .detach(),
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        Ok(Snapshot { repo, tip, tree })
    }

    fn file(&self, path: &str) -> Result<Option<String>> {
        let tree = self
            .repo
            .find_tree(self.tree)
            .map_err(git_error(format!("read {REF}")))?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .map_err(git_error(format!("read {REF}:{path}")))?
        else {
            return Ok(None);
        };
        let blob = entry
            .object()
            .map_err(git_error(format!("read {REF}:{path}")))?;
        Ok(Some(String::from_utf8_lossy(&blob.data).into_owned()))
    }

    fn toml<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<Option<T>> {
        // A node another tool wrote badly is skipped, not fatal: the notes can remake it.
        Ok(self.file(path)?.and_then(|text| toml::from_str(&text).ok()))
    }

    fn lines(&self, path: &str) -> Result<Vec<String>> {
        Ok(self
            .file(path)?
            .map(|t| t.lines().map(str::to_owned).collect())
            .unwrap_or_default())
    }
}

/// Read access to the graph at the ref's tip, for retrieval: nodes read once each.
pub struct View<'r> {
    snapshot: Snapshot<'r>,
    files: Option<Vec<(String, String, String)>>,
    decisions: HashMap<String, Option<DecisionNode>>,
    sessions: HashMap<String, Option<SessionNode>>,
}

impl<'r> View<'r> {
    pub fn open(repo: &'r gix::Repository) -> Result<View<'r>> {
        Ok(View {
            snapshot: Snapshot::at_tip(repo)?,
            files: None,
            decisions: HashMap::new(),
            sessions: HashMap::new(),
        })
    }

    pub fn decision(&mut self, id: &str) -> Result<Option<DecisionNode>> {
        if let Some(d) = self.decisions.get(id) {
            return Ok(d.clone());
        }
        let d: Option<DecisionNode> = self.snapshot.toml(&decision_path(id))?;
        self.decisions.insert(id.to_owned(), d.clone());
        Ok(d)
    }

    pub fn session(&mut self, id: &str) -> Result<Option<SessionNode>> {
        if let Some(s) = self.sessions.get(id) {
            return Ok(s.clone());
        }
        let s: Option<SessionNode> = self.snapshot.toml(&session_path(id))?;
        self.sessions.insert(id.to_owned(), s.clone());
        Ok(s)
    }

    /// The sessions (`"session"`) and decisions (`"decision"`) of `path`: `(kind, id)` pairs.
    pub fn of_file(&mut self, path: &str) -> Result<Vec<(String, String)>> {
        if self.files.is_none() {
            let lines = self.snapshot.lines(FILES_INDEX)?;
            self.files = Some(
                lines
                    .iter()
                    .filter_map(|l| {
                        let mut f = l.split('\t');
                        Some((
                            f.next()?.to_owned(),
                            f.next()?.to_owned(),
                            f.next()?.to_owned(),
                        ))
                    })
                    .collect(),
            );
        }
        let files = self.files.as_deref().unwrap_or_default();
        let first = files.partition_point(|(p, _, _)| p.as_str() < path);
        Ok(files[first..]
            .iter()
            .take_while(|(p, _, _)| p == path)
            .map(|(_, k, id)| (k.clone(), id.clone()))
            .collect())
    }
}

/// Recompute the nodes of the sessions in `touched` — each with commits whose notes now carry
/// its events, besides those the graph already lists — and commit the result to the ref.
pub fn update(store: &Store, touched: &BTreeMap<String, BTreeSet<ObjectId>>) -> Result<Updated> {
    if touched.is_empty() {
        return Ok(Updated::default());
    }
    write(store, Start::Tip, touched)
}

/// Make the graph again from every note, as one commit on the ref (none if nothing differs).
pub fn rebuild(store: &Store) -> Result<Updated> {
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut by_session: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    for commit in notes::annotated(&repo)? {
        for e in reader.events(commit)? {
            by_session.entry(e.session_id).or_default().insert(commit);
        }
    }
    write(store, Start::Empty, &by_session)
}

/// The graph's tip and how many sessions and decisions it holds, if the ref exists.
pub fn summary(store: &Store) -> Result<Option<(ObjectId, usize, usize)>> {
    let repo = store.repo();
    let snapshot = Snapshot::at_tip(&repo)?;
    let Some(tip) = snapshot.tip else {
        return Ok(None);
    };
    let count = |dir: &str| -> Result<usize> {
        let tree = repo
            .find_tree(snapshot.tree)
            .map_err(git_error(format!("read {REF}")))?;
        let Some(entry) = tree
            .lookup_entry_by_path(dir)
            .map_err(git_error(format!("read {REF}:{dir}")))?
        else {
            return Ok(0);
        };
        let sub = entry
            .object()
            .map_err(git_error(format!("read {REF}:{dir}")))?
            .into_tree();
        Ok(sub.iter().count())
    };
    Ok(Some((tip, count("sessions")?, count("decisions")?)))
}

/// A session's node as the graph has it, and its events with the commit each is on.
type Gathered = (Option<SessionNode>, Vec<(Event, String)>);

/// The old node of `session` and its events, from the notes of `commits` and of the commits the
/// node lists; `None` when there are no events.
fn gather(
    snapshot: &Snapshot<'_>,
    reader: &mut notes::Reader<'_>,
    session: &str,
    commits: &BTreeSet<ObjectId>,
) -> Result<Option<Gathered>> {
    let old: Option<SessionNode> = snapshot.toml(&session_path(session))?;
    let mut all: BTreeSet<ObjectId> = commits.clone();
    if let Some(old) = &old {
        all.extend(
            old.commits
                .iter()
                .filter_map(|c| ObjectId::from_hex(c.as_bytes()).ok()),
        );
    }
    let mut events: Vec<(Event, String)> = Vec::new();
    for commit in all {
        let hex = commit.to_string();
        for e in reader.events(commit)? {
            if e.session_id == session {
                events.push((e, hex.clone()));
            }
        }
    }
    Ok((!events.is_empty()).then_some((old, events)))
}

/// What a write starts from: the graph at the ref's tip, or nothing (a rebuild).
#[derive(Clone, Copy)]
enum Start {
    Tip,
    Empty,
}

/// The edits that make the nodes of `touched` what their notes say, and the commit message.
fn plan(
    repo: &gix::Repository,
    snapshot: &Snapshot<'_>,
    touched: &BTreeMap<String, BTreeSet<ObjectId>>,
) -> Result<(Edits, String, Updated)> {
    let mut reader = notes::Reader::new(repo)?;
    let files_index = snapshot.lines(FILES_INDEX)?;
    let mut built = Vec::new();
    for (session, commits) in touched {
        // No event of the session on any commit (a hook named a session that left none): no
        // node, as a rebuild would make none.
        if let Some((old, events)) = gather(snapshot, &mut reader, session, commits)? {
            built.push((old, session.clone(), events));
        }
    }
    // Later sessions on the same files draw their edges and `built_on` to these: when these are
    // older than some of them (a session linked late), those are made again too.
    let earliest = built
        .iter()
        .flat_map(|(_, _, events)| events.iter().map(|(e, _)| e.timestamp.as_str()))
        .filter(|t| !t.is_empty())
        .min()
        .map(str::to_owned);
    let files: BTreeSet<String> = built
        .iter()
        .flat_map(|(_, _, events)| events.iter().flat_map(|(e, _)| e.files_affected.clone()))
        .collect();
    if let Some(earliest) = earliest {
        let mut later: BTreeSet<String> = BTreeSet::new();
        for line in &files_index {
            let mut parts = line.split('\t');
            let (Some(path), Some(kind), Some(id)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if !files.contains(path) {
                continue;
            }
            let session = match kind {
                "session" => Some(id.to_owned()),
                _ => snapshot
                    .toml::<DecisionNode>(&decision_path(id))?
                    .map(|d| d.session),
            };
            if let Some(session) = session.filter(|s| !touched.contains_key(s)) {
                later.insert(session);
            }
        }
        for session in later {
            let Some(node) = snapshot.toml::<SessionNode>(&session_path(&session))? else {
                continue;
            };
            if node.start.as_str() > earliest.as_str()
                && let Some((old, events)) =
                    gather(snapshot, &mut reader, &session, &BTreeSet::new())?
            {
                built.push((old, session, events));
            }
        }
    }
    let mut sessions = Vec::new();
    let mut decisions = Vec::new();
    let mut edits = Edits::default();
    let mut old_decisions: BTreeSet<&str> = BTreeSet::new();
    for (old, session, events) in &built {
        let input = SessionEvents {
            session: session.as_str(),
            events: events.iter().map(|(e, c)| (e, c.as_str())).collect(),
        };
        let (node, ds) = node::build(&input);
        if let Some(old) = old {
            for id in &old.decisions {
                edits.remove(decision_path(id));
                old_decisions.insert(id.as_str());
            }
        }
        sessions.push(node);
        decisions.extend(ds);
    }
    decisions.sort_by(|a, b| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)));
    // Decisions already in the graph that the new ones may have edges with: those of other
    // sessions on the same files.
    let rebuilt: BTreeSet<&str> = sessions.iter().map(|s| s.session.as_str()).collect();
    let files: BTreeSet<&str> = decisions
        .iter()
        .flat_map(|d| d.files.iter().map(String::as_str))
        .collect();
    let mut known: Vec<DecisionNode> = Vec::new();
    for line in &files_index {
        let mut parts = line.split('\t');
        let (Some(path), Some("decision"), Some(id)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if files.contains(path)
            && !known.iter().any(|k| k.id == id)
            && let Some(d) = snapshot.toml::<DecisionNode>(&decision_path(id))?
            && !rebuilt.contains(d.session.as_str())
        {
            known.push(d);
        }
    }
    let mut ancestry = Ancestry::new(repo);
    node::link_decisions(&mut decisions, &known, &mut |a, b| ancestry.check(a, b));

    let index = edits.index(
        snapshot,
        &files_index,
        &old_decisions,
        &sessions,
        &decisions,
    )?;
    for session in &mut sessions {
        session.built_on = built_on(&mut ancestry, &index, session);
    }
    let message = describe(&sessions, &decisions);
    for d in &decisions {
        edits.put(decision_path(&d.id), to_toml(d));
    }
    for s in &sessions {
        edits.put(session_path(&s.session), to_toml(s));
    }
    let updated = Updated {
        sessions: sessions.len(),
        decisions: decisions.len(),
        commit: None,
    };
    Ok((edits, message, updated))
}

/// Sessions whose commits `session`'s first commit descends from and that touched one of its
/// files: the work it built on.
fn built_on(ancestry: &mut Ancestry<'_>, index: &Index, session: &SessionNode) -> Vec<String> {
    let Some(first) = session.commits.first() else {
        return Vec::new();
    };
    let mut candidates: BTreeSet<&str> = BTreeSet::new();
    for line in &index.files {
        let mut parts = line.split('\t');
        if let (Some(path), Some("session"), Some(id)) = (parts.next(), parts.next(), parts.next())
            && id != session.session
            && session.files.iter().any(|f| f == path)
        {
            candidates.insert(id);
        }
    }
    let theirs: Vec<(&str, ObjectId)> = index
        .commits
        .iter()
        .filter_map(|l| {
            let (commit, s) = l.split_once('\t')?;
            let id = ObjectId::from_hex(commit.as_bytes()).ok()?;
            (candidates.contains(s) && commit != first).then_some((s, id))
        })
        .collect();
    // One walk back from the first commit, as far as the oldest of theirs, answers for all.
    let Some(since) = theirs.iter().filter_map(|(_, c)| ancestry.time(*c)).min() else {
        return Vec::new();
    };
    let Ok(first) = ObjectId::from_hex(first.as_bytes()) else {
        return Vec::new();
    };
    let before = ancestry.reachable(first, since);
    let mut out: Vec<String> = theirs
        .iter()
        .filter(|(_, c)| before.contains(c))
        .map(|(s, _)| s.to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether one commit descends from another, walking history back from the younger one no
/// further than the older one's time; answers are remembered.
struct Ancestry<'r> {
    repo: &'r gix::Repository,
    known: HashMap<(String, String), bool>,
}

impl<'r> Ancestry<'r> {
    fn new(repo: &'r gix::Repository) -> Self {
        Ancestry {
            repo,
            known: HashMap::new(),
        }
    }

    /// Whether `b` is `a` or descends from it.
    fn check(&mut self, a: &str, b: &str) -> bool {
        if a == b {
            return true;
        }
        let key = (a.to_owned(), b.to_owned());
        if let Some(&answer) = self.known.get(&key) {
            return answer;
        }
        let answer = self.walk(a, b).unwrap_or(false);
        self.known.insert(key, answer);
        answer
    }

    fn walk(&self, a: &str, b: &str) -> Option<bool> {
        let a = ObjectId::from_hex(a.as_bytes()).ok()?;
        let b = ObjectId::from_hex(b.as_bytes()).ok()?;
        let since = self.time(a)?;
        Some(self.reachable(b, since).contains(&a))
    }

    /// The commit time of `id`.
    fn time(&self, id: ObjectId) -> Option<i64> {
        Some(self.repo.find_commit(id).ok()?.time().ok()?.seconds)
    }

    /// `from` and the commits it descends from, back to those made before `since`.
    fn reachable(&self, from: ObjectId, since: i64) -> HashSet<ObjectId> {
        history::since(self.repo, from, since, WALK_MAX)
            .into_iter()
            .map(|(_, id)| id)
            .collect()
    }
}

/// The commit message of an update: what changed, in a line.
fn describe(sessions: &[SessionNode], decisions: &[DecisionNode]) -> String {
    let edges: usize = decisions
        .iter()
        .map(|d| d.supersedes.len() + d.conflicts_with.len())
        .sum();
    let names: Vec<String> = sessions
        .iter()
        .map(|s| s.session.chars().take(8).collect())
        .collect();
    let mut line = format!(
        "agent-context: session{} {}: {} decision{}",
        if sessions.len() == 1 { "" } else { "s" },
        names.join(", "),
        decisions.len(),
        if decisions.len() == 1 { "" } else { "s" }
    );
    if edges > 0 {
        line.push_str(&format!(", {edges} superseding or conflicting"));
    }
    line
}

fn to_toml<T: serde::Serialize>(value: &T) -> String {
    toml::to_string_pretty(value).expect("graph nodes serialize")
}

/// Changes to make to the tree of the ref.
#[derive(Default)]
struct Edits {
    put: BTreeMap<String, String>,
    remove: BTreeSet<String>,
}

impl Edits {
    fn put(&mut self, path: String, content: String) {
        self.remove.remove(&path);
        self.put.insert(path, content);
    }

    fn remove(&mut self, path: String) {
        self.put.remove(&path);
        self.remove.insert(path);
    }

    /// Replace the index lines of `sessions` (and of their `old_decisions`) by their new
    /// ones, given the files index as it was; returns the indexes as they will be.
    fn index(
        &mut self,
        snapshot: &Snapshot<'_>,
        files_index: &[String],
        old_decisions: &BTreeSet<&str>,
        sessions: &[SessionNode],
        decisions: &[DecisionNode],
    ) -> Result<Index> {
        let names: BTreeSet<&str> = sessions.iter().map(|s| s.session.as_str()).collect();
        let mut files: BTreeSet<String> = files_index
            .iter()
            .filter(|l| {
                let mut parts = l.split('\t').skip(1);
                match (parts.next(), parts.next()) {
                    (Some("session"), Some(id)) => !names.contains(id),
                    (Some("decision"), Some(id)) => !old_decisions.contains(id),
                    _ => false,
                }
            })
            .cloned()
            .collect();
        for s in sessions {
            files.extend(
                s.files
                    .iter()
                    .map(|f| format!("{f}\tsession\t{}", s.session)),
            );
        }
        for d in decisions {
            files.extend(d.files.iter().map(|f| format!("{f}\tdecision\t{}", d.id)));
        }
        let mut commits: BTreeSet<String> = snapshot
            .lines(COMMITS_INDEX)?
            .into_iter()
            .filter(|l| l.split_once('\t').is_some_and(|(_, s)| !names.contains(s)))
            .collect();
        for s in sessions {
            commits.extend(s.commits.iter().map(|c| format!("{c}\t{}", s.session)));
        }
        self.put(FILES_INDEX.to_owned(), lines(&files));
        self.put(COMMITS_INDEX.to_owned(), lines(&commits));
        self.put("README.md".to_owned(), README.to_owned());
        Ok(Index { files, commits })
    }
}

/// The lines of the two indexes.
struct Index {
    files: BTreeSet<String>,
    commits: BTreeSet<String>,
}

fn lines(set: &BTreeSet<String>) -> String {
    set.iter().map(|l| format!("{l}\n")).collect()
}

/// Commit the nodes of `touched` to the ref, starting from its tip or from nothing — redone on
/// top of another writer's commit when the ref moved in between.
fn write(
    store: &Store,
    start: Start,
    touched: &BTreeMap<String, BTreeSet<ObjectId>>,
) -> Result<Updated> {
    let mut repo = store.repo();
    let signature = signature(&mut repo)?;
    for attempt in 0..ATTEMPTS {
        let tip = Snapshot::at_tip(&repo)?;
        let snapshot = match start {
            Start::Tip => Snapshot { ..tip },
            Start::Empty => Snapshot {
                tree: ObjectId::empty_tree(repo.object_hash()),
                ..tip
            },
        };
        let (edits, mut message, mut updated) = plan(&repo, &snapshot, touched)?;
        if let Start::Empty = start {
            message = format!(
                "agent-context: rebuilt from the notes: {} sessions, {} decisions",
                updated.sessions, updated.decisions
            );
        }
        let mut editor = repo
            .edit_tree(snapshot.tree)
            .map_err(git_error(format!("edit the tree of {REF}")))?;
        for path in &edits.remove {
            editor
                .remove(path.as_str())
                .map_err(git_error(format!("edit {REF}:{path}")))?;
        }
        for (path, content) in &edits.put {
            let blob = repo
                .write_blob(content.as_bytes())
                .map_err(git_error(format!("write {REF}:{path}")))?;
            editor
                .upsert(path.as_str(), gix::object::tree::EntryKind::Blob, blob)
                .map_err(git_error(format!("edit {REF}:{path}")))?;
        }
        let tree = editor
            .write()
            .map_err(git_error(format!("write the tree of {REF}")))?
            .detach();
        let old_tree = match snapshot.tip {
            Some(_) => Snapshot::at_tip(&repo)?.tree,
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        if tree == old_tree {
            return Ok(updated);
        }
        let mut time = gix::date::parse::TimeBuf::default();
        let who = signature.to_ref(&mut time);
        let commit = repo
            .new_commit_as(who, who, &message, tree, snapshot.tip)
            .map_err(git_error(format!("commit to {REF}")))?;
        let expected = match snapshot.tip {
            Some(t) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(t)),
            None => PreviousValue::MustNotExist,
        };
        match repo.reference(REF, commit.id, expected, message.as_str()) {
            Ok(_) => {
                updated.commit = Some(commit.id);
                return Ok(updated);
            }
            Err(_) if Snapshot::at_tip(&repo)?.tip != snapshot.tip => backoff(attempt),
            // A dead writer's lock file: gone now, try again.
            Err(_) if store.clear_dead_ref_lock(REF) => {}
            Err(e) => return Err(git_error(format!("update {REF}"))(e)),
        }
    }
    Err(Error::Git {
        action: format!("update {REF}"),
        message: format!("lost the race {ATTEMPTS} times"),
    })
}
