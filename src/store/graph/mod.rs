//! The decision graph on `refs/agent-context` (docs/format.md): a chain of commits whose tree holds
//! one readable TOML file per session and per decision, and two small indexes:
//!
//! ```text
//! README.md                  what this ref is
//! sessions/<session>.toml    request, prompts, start/end, commits, files, decisions, built-on
//! decisions/<id>.toml        subject, choice, rationale, rejected, trade-offs, files, commits,
//!                            depends_on / supersedes / conflicts_with
//! index/files.tsv            <path> TAB session|decision TAB <id>, sorted
//! index/commits.tsv          <commit> TAB <session>, sorted
//! index/edges/<xx>.tsv       <earlier decision> TAB <edge> TAB <time> TAB <later decision>
//!                            TAB <its first commit>
//! ```
//!
//! The edges index is split in 256 buckets by the earlier decision (`<xx>`: the first byte of
//! the XXH3-64 of its id), so that asking what superseded a decision reads a few kilobytes, and
//! an update rewrites only the buckets it changes, however many decisions the graph holds.
//!
//! Everything in it is derived from the notes, so [`rebuild`] can always make it again; writers
//! [`update`] the sessions whose notes they changed. Each update is one commit on the ref,
//! made with a compare-and-swap and redone on top of another writer's if it lost the race, so
//! concurrent writers never lose one another's work. `git log refs/agent-context` tells the
//! story; `git show refs/agent-context:<path>` shows any node.

pub mod node;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::path::Path;

use gix::ObjectId;

use super::{Error, Result, Store, git_error, history, notes, pending, point, ref_tip, signature};
use crate::event::{Event, Kind};
use node::{DecisionNode, SessionEvents, SessionNode};

pub const REF: &str = "refs/agent-context";
const ATTEMPTS: usize = 100;
/// The most commits one ancestry walk visits.
const WALK_MAX: usize = 100_000;
const FILES_INDEX: &str = "index/files.tsv";
const COMMITS_INDEX: &str = "index/commits.tsv";
const EDGES_INDEX: &str = "index/edges";
/// The edge index as versions before the buckets kept it, in one file: replaced when met.
const OLD_EDGES_INDEX: &str = "index/edges.tsv";

const README: &str = "\
# refs/agent-context

The decision graph of git-agent-context: why this repository's code is the way it is, as
recorded from its Claude Code sessions. Derived from the notes on refs/notes/agent-context
(`git agent-context rebuild` makes it again).

- sessions/<session>.toml: what a session was asked, its prompts, commits, files and decisions
- decisions/<id>.toml: a decision, its rationale, the alternatives rejected, and its edges
  (depends_on, supersedes, conflicts_with)
- index/files.tsv: file -> sessions and decisions; index/commits.tsv: commit -> session;
  index/edges/<xx>.tsv: decision -> the later decisions with an edge to it, in buckets by
  the first byte of the XXH3-64 of the decision's id

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
    /// The blobs of each folder read so far: the `decisions` folder of a large graph is a tree
    /// of thousands of entries, decoded once rather than per node.
    folders: RefCell<HashMap<String, Folder>>,
    /// Nodes read so far (`None`: not in the graph), each parsed once.
    decisions: RefCell<HashMap<String, Option<DecisionNode>>>,
    sessions: RefCell<HashMap<String, Option<SessionNode>>>,
}

/// The blobs of a folder of the graph, by name: the names in one string and a list sorted by
/// name, two allocations where the graph's folders hold thousands of nodes.
#[derive(Default)]
struct Folder {
    names: String,
    /// Where each name is in `names`, and its blob.
    entries: Vec<(Range<usize>, ObjectId)>,
}

impl Folder {
    fn of<'n>(blobs: impl Iterator<Item = (&'n [u8], ObjectId)>) -> Folder {
        let mut blobs: Vec<(Cow<'n, str>, ObjectId)> = blobs
            .map(|(name, id)| (String::from_utf8_lossy(name), id))
            .collect();
        // git keeps a tree's entries sorted; a tree another tool wrote may not be.
        if !blobs.is_sorted_by(|a, b| a.0 <= b.0) {
            blobs.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let mut folder = Folder {
            names: String::with_capacity(blobs.iter().map(|b| b.0.len()).sum()),
            entries: Vec::with_capacity(blobs.len()),
        };
        for (name, id) in blobs {
            // A name listed twice (a tree another tool wrote, names that are not UTF-8 made
            // the same) is its last blob, once.
            if let Some((at, last)) = folder.entries.last_mut()
                && folder.names[at.clone()] == *name
            {
                *last = id;
                continue;
            }
            let start = folder.names.len();
            folder.names.push_str(&name);
            folder.entries.push((start..folder.names.len(), id));
        }
        folder
    }

    fn get(&self, name: &str) -> Option<ObjectId> {
        let at = (self.entries)
            .binary_search_by(|(at, _)| self.names[at.clone()].cmp(name))
            .ok()?;
        Some(self.entries[at].1)
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(at, _)| &self.names[at.clone()])
    }
}

impl<'r> Snapshot<'r> {
    /// The graph at the ref's tip. A ref that names no commit that can be read (a blob put
    /// there by hand, a commit gone from the object store) is an error that says how to mend
    /// it: [`rebuild`] replaces it.
    fn at_tip(repo: &'r gix::Repository) -> Result<Snapshot<'r>> {
        let tip = ref_tip(repo, REF)?;
        let tree = match tip {
            Some(t) => repo
                .find_commit(t)
                .and_then(|c| c.tree_id())
                .map_err(|e| {
                    let mut e = git_error(format!("read {REF}"))(e);
                    if let Error::Git { message, .. } = &mut e {
                        *message = format!(
                            "{}; run 'git agent-context rebuild' to make the graph again from the notes",
                            message.trim_end_matches('.')
                        );
                    }
                    e
                })?
                .detach(),
            None => ObjectId::empty_tree(repo.object_hash()),
        };
        Ok(Snapshot::of(repo, tip, tree))
    }

    fn of(repo: &'r gix::Repository, tip: Option<ObjectId>, tree: ObjectId) -> Snapshot<'r> {
        Snapshot {
            repo,
            tip,
            tree,
            folders: RefCell::new(HashMap::new()),
            decisions: RefCell::new(HashMap::new()),
            sessions: RefCell::new(HashMap::new()),
        }
    }

    /// The decision node `id`, if the graph has it.
    fn decision(&self, id: &str) -> Result<Option<DecisionNode>> {
        if let Some(d) = self.decisions.borrow().get(id) {
            return Ok(d.clone());
        }
        let mut d: Option<DecisionNode> = self.toml(&decision_path(id))?;
        // A node written before what it ruled out was said once each may say it twice.
        if let Some(d) = &mut d {
            d.rejected = node::said_once(std::mem::take(&mut d.rejected));
        }
        self.decisions.borrow_mut().insert(id.to_owned(), d.clone());
        Ok(d)
    }

    /// The session node of `session`, if the graph has it.
    fn session(&self, session: &str) -> Result<Option<SessionNode>> {
        if let Some(s) = self.sessions.borrow().get(session) {
            return Ok(s.clone());
        }
        let s: Option<SessionNode> = self.toml(&session_path(session))?;
        self.sessions
            .borrow_mut()
            .insert(session.to_owned(), s.clone());
        Ok(s)
    }

    /// The blobs of the folder `dir` (or of the root, for ""), by name.
    fn folder(&self, dir: &str) -> Result<()> {
        if self.folders.borrow().contains_key(dir) {
            return Ok(());
        }
        let root = self
            .repo
            .find_tree(self.tree)
            .map_err(git_error(format!("read {REF}")))?;
        let tree = match dir {
            "" => Some(root),
            _ => root
                .lookup_entry_by_path(dir)
                .map_err(git_error(format!("read {REF}:{dir}")))?
                .filter(|e| e.mode().is_tree())
                .map(|e| e.object().map(|o| o.into_tree()))
                .transpose()
                .map_err(git_error(format!("read {REF}:{dir}")))?,
        };
        let folder = match tree {
            Some(tree) => Folder::of(
                tree.decode()
                    .map_err(git_error(format!("read {REF}:{dir}")))?
                    .entries
                    .iter()
                    .filter(|e| e.mode.is_blob())
                    .map(|e| (e.filename.as_ref(), e.oid.to_owned())),
            ),
            None => Folder::default(),
        };
        self.folders.borrow_mut().insert(dir.to_owned(), folder);
        Ok(())
    }

    fn file(&self, path: &str) -> Result<Option<String>> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        self.folder(dir)?;
        let Some(id) = self.folders.borrow()[dir].get(name) else {
            return Ok(None);
        };
        let blob = self
            .repo
            .find_blob(id)
            .map_err(git_error(format!("read {REF}:{path}")))?;
        Ok(Some(String::from_utf8_lossy(&blob.data).into_owned()))
    }

    /// The names of the blobs in folder `dir`.
    fn names(&self, dir: &str) -> Result<Vec<String>> {
        self.folder(dir)?;
        Ok(self.folders.borrow()[dir]
            .names()
            .map(str::to_owned)
            .collect())
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

/// The bucket of the edges index holding the edges to decision `id`.
fn edges_bucket(id: &str) -> String {
    format!("{EDGES_INDEX}/{}.tsv", super::bucket(id))
}

/// Read access to the graph at the ref's tip, for retrieval: nodes read once each.
pub struct View<'r> {
    snapshot: Snapshot<'r>,
    files: Option<String>,
    commits: Option<String>,
    /// Buckets of the edges index read so far.
    edges: HashMap<String, String>,
}

impl<'r> View<'r> {
    pub fn open(repo: &'r gix::Repository) -> Result<View<'r>> {
        Ok(View {
            snapshot: Snapshot::at_tip(repo)?,
            files: None,
            commits: None,
            edges: HashMap::new(),
        })
    }

    pub fn decision(&mut self, id: &str) -> Result<Option<DecisionNode>> {
        self.snapshot.decision(id)
    }

    pub fn session(&mut self, id: &str) -> Result<Option<SessionNode>> {
        self.snapshot.session(id)
    }

    /// The sessions (`"session"`) and decisions (`"decision"`) of `path`: `(kind, id)` pairs.
    pub fn of_file(&mut self, path: &str) -> Result<Vec<(String, String)>> {
        if self.files.is_none() {
            self.files = Some(self.snapshot.file(FILES_INDEX)?.unwrap_or_default());
        }
        Ok(lookup(self.files.as_deref().unwrap_or_default(), path)
            .filter_map(|rest| {
                let (kind, id) = rest.split_once('\t')?;
                Some((kind.to_owned(), id.to_owned()))
            })
            .collect())
    }

    /// The ids of the decision nodes, sorted.
    pub fn decision_ids(&mut self) -> Result<Vec<String>> {
        self.ids("decisions")
    }

    /// The ids of the session nodes (as their file names have them), sorted.
    pub fn session_ids(&mut self) -> Result<Vec<String>> {
        self.ids("sessions")
    }

    fn ids(&mut self, folder: &str) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self
            .snapshot
            .names(folder)?
            .into_iter()
            .filter_map(|n| n.strip_suffix(".toml").map(str::to_owned))
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Each commit whose note holds events (full hex id) with each session of them, by
    /// commit.
    pub fn commits(&mut self) -> Result<Vec<(&str, &str)>> {
        if self.commits.is_none() {
            self.commits = Some(self.snapshot.file(COMMITS_INDEX)?.unwrap_or_default());
        }
        Ok((self.commits.as_deref().unwrap_or_default().lines())
            .filter_map(|l| l.split_once('\t'))
            .collect())
    }

    /// The later decisions with an edge to decision `id`.
    fn edges_to(&mut self, id: &str) -> Result<Vec<Edge>> {
        let path = edges_bucket(id);
        if !self.edges.contains_key(&path) {
            let text = self.snapshot.file(&path)?.unwrap_or_default();
            self.edges.insert(path.clone(), text);
        }
        Ok(lookup(&self.edges[&path], id)
            .filter_map(|rest| {
                let mut f = rest.split('\t');
                Some(Edge {
                    kind: f.next()?.to_owned(),
                    timestamp: f.next()?.to_owned(),
                    later: f.next()?.to_owned(),
                    commit: f.next().unwrap_or_default().to_owned(),
                })
            })
            .collect())
    }

    /// The newest decision that supersedes decision `id`, if one does.
    pub fn superseded_by(&mut self, id: &str) -> Result<Option<Edge>> {
        Ok(self
            .edges_to(id)?
            .into_iter()
            .filter(|e| e.kind == "supersedes")
            .max_by(|a, b| (&a.timestamp, &a.later).cmp(&(&b.timestamp, &b.later))))
    }
}

/// An edge from a later decision, as the edges index has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// `supersedes`, `conflicts_with` or `depends_on`.
    pub kind: String,
    /// When the later decision was made.
    pub timestamp: String,
    /// The later decision's id.
    pub later: String,
    /// The first commit carrying the later decision.
    pub commit: String,
}

/// In sorted tab-separated lines, what follows `key` and a tab on the lines that start so:
/// found with one substring search, without splitting the file (it has a line per decision).
fn lookup<'t>(text: &'t str, key: &str) -> impl Iterator<Item = &'t str> {
    let needle = format!("\n{key}\t");
    let start = if text.starts_with(&needle[1..]) {
        Some(0)
    } else {
        memchr::memmem::find(text.as_bytes(), needle.as_bytes()).map(|i| i + 1)
    };
    let prefix = needle[1..].to_owned();
    text[start.unwrap_or(text.len())..]
        .lines()
        .map_while(move |l| l.strip_prefix(prefix.as_str()))
}

/// Recompute the nodes of the sessions in `touched` — each with commits whose notes now carry
/// its events, besides those the graph already lists — and of the sessions [`owe`]d, and
/// commit the result to the ref. The caller holds the store lock.
pub fn update(store: &Store, touched: &BTreeMap<String, BTreeSet<ObjectId>>) -> Result<Updated> {
    let owed = owed(store);
    if touched.is_empty() && owed.is_empty() {
        return Ok(Updated::default());
    }
    let was_owed = !owed.is_empty();
    let mut all = owed;
    for (session, commits) in touched {
        all.entry(session.clone()).or_default().extend(commits);
    }
    let updated = write(store, Start::Tip, &all)?;
    // Nothing can have been owed since it was read: the caller holds the lock.
    if was_owed {
        clear_owed(store)?;
    }
    Ok(updated)
}

/// Bring the graph up to the notes of the sessions [`owe`]d, if any: what a run that wrote
/// notes and left the graph for later does before it ends.
pub fn settle(store: &Store) -> Result<Updated> {
    update(store, &BTreeMap::new())
}

/// Note that the nodes of the sessions in `touched` must follow their notes: written before
/// the notes change, so that a run that changes notes several times updates the graph once
/// ([`settle`], or any [`update`]), and one that dies before it leaves the update to the next
/// run. The caller holds the store lock.
pub fn owe(store: &Store, touched: &BTreeMap<String, BTreeSet<ObjectId>>) -> Result<()> {
    let path = store.dir().join(OWED);
    append_owed(&path, touched).map_err(super::io_error("cannot write", &path))
}

/// Where [`owe`] writes: `<session>\t<commit>` lines.
const OWED: &str = "graph-owed";

/// Append to the file at `path` the lines of `touched` it does not hold yet (a graph that
/// cannot be written would otherwise grow it each run), ending first a line that a dead run
/// cut short, so that it is not joined to the next.
fn append_owed(path: &Path, touched: &BTreeMap<String, BTreeSet<ObjectId>>) -> std::io::Result<()> {
    use std::io::Write;
    let written = std::fs::read_to_string(path).unwrap_or_default();
    let held: HashSet<&str> = written.lines().collect();
    let mut lines = String::new();
    for (session, commits) in touched {
        for commit in commits {
            let line = format!("{session}\t{commit}");
            if !held.contains(line.as_str()) {
                lines.push_str(&line);
                lines.push('\n');
            }
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    if !written.is_empty() && !written.ends_with('\n') {
        lines.insert(0, '\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(lines.as_bytes()))
}

/// The sessions whose nodes are behind their notes ([`owe`]), with their commits: empty but
/// for a run that died, or a graph that cannot be written. A line that cannot be read names
/// nothing.
pub fn owed(store: &Store) -> BTreeMap<String, BTreeSet<ObjectId>> {
    read_owed(&store.dir().join(OWED))
}

fn read_owed(path: &Path) -> BTreeMap<String, BTreeSet<ObjectId>> {
    let mut owed: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    let text = std::fs::read_to_string(path).unwrap_or_default();
    for line in text.lines() {
        if let Some((session, commit)) = line.split_once('\t')
            && let Ok(commit) = ObjectId::from_hex(commit.as_bytes())
        {
            owed.entry(session.to_owned()).or_default().insert(commit);
        }
    }
    owed
}

/// Empty the file rather than remove it: a hook that owes and settles on every turn would
/// otherwise create a file each time, which is slow for a while after many were deleted.
fn clear_owed(store: &Store) -> Result<()> {
    let path = store.dir().join(OWED);
    match std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
    {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(super::io_error("cannot empty", &path)(e))
        }
        _ => Ok(()),
    }
}

/// Make the graph again from every note, as one commit on the ref (none if nothing differs).
pub fn rebuild(store: &Store) -> Result<Updated> {
    rebuild_for(store, "rebuilt from the notes")
}

/// [`rebuild`], its commit message saying why (`forgot 2 events, rebuilt from the notes`).
pub(crate) fn rebuild_for(store: &Store, why: &str) -> Result<Updated> {
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut by_session: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    for commit in notes::annotated(&repo)? {
        for e in reader.events(commit)? {
            by_session.entry(e.session_id).or_default().insert(commit);
        }
    }
    let updated = write(store, Start::Empty(why), &by_session)?;
    // Made from every note: nothing is owed any more.
    clear_owed(store)?;
    Ok(updated)
}

/// The commit at the tip of the graph's ref, if it exists.
pub fn tip(store: &Store) -> Result<Option<ObjectId>> {
    ref_tip(&store.repo(), REF)
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
    let old: Option<SessionNode> = snapshot.session(session)?;
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

/// What a write starts from: the graph at the ref's tip, or nothing (a rebuild, and why).
#[derive(Clone, Copy)]
enum Start<'a> {
    Tip,
    Empty(&'a str),
}

/// The edits that make the nodes of `touched` what their notes say, and the commit message.
fn plan(
    repo: &gix::Repository,
    snapshot: &Snapshot<'_>,
    touched: &BTreeMap<String, BTreeSet<ObjectId>>,
) -> Result<(Edits, String, Updated)> {
    let files_index = snapshot.lines(FILES_INDEX)?;
    let built = to_build(repo, snapshot, touched, &files_index)?;
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
    let known = known_decisions(snapshot, &files_index, &files, &old_decisions, &rebuilt)?;
    let mut ancestry = Ancestry::new(repo);
    ancestry.prepare(
        decisions
            .iter()
            .chain(&known)
            .filter_map(|d| d.commits.first())
            .filter_map(|c| ObjectId::from_hex(c.as_bytes()).ok()),
    );
    node::link_decisions(&mut decisions, &known, &mut |a, b| ancestry.check(a, b));

    let index = edits.index(
        snapshot,
        &files_index,
        &old_decisions,
        &sessions,
        &decisions,
    )?;
    let theirs: Vec<Vec<(String, String)>> = sessions
        .iter()
        .map(|s| built_on_candidates(&index, s))
        .collect();
    ancestry.prepare(
        sessions
            .iter()
            .filter_map(|s| s.commits.first())
            .chain(theirs.iter().flatten().map(|(_, c)| c))
            .filter_map(|c| ObjectId::from_hex(c.as_bytes()).ok()),
    );
    for (session, theirs) in sessions.iter_mut().zip(theirs) {
        session.built_on = built_on(&mut ancestry, session, theirs);
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

/// A session to make again: its old node, its id, its events with their commits.
type ToBuild = (Option<SessionNode>, String, Vec<(Event, String)>);

/// The sessions to make again: those `touched` (those that left an event on a commit), and
/// the later sessions on their files, which draw their edges and `built_on` to them — when
/// they are older than some of those (a session linked late).
fn to_build(
    repo: &gix::Repository,
    snapshot: &Snapshot<'_>,
    touched: &BTreeMap<String, BTreeSet<ObjectId>>,
    files_index: &[String],
) -> Result<Vec<ToBuild>> {
    let mut reader = notes::Reader::new(repo)?;
    let mut built = Vec::new();
    for (session, commits) in touched {
        // No event of the session on any commit (a hook named a session that left none): no
        // node, as a rebuild would make none.
        if let Some((old, events)) = gather(snapshot, &mut reader, session, commits)? {
            built.push((old, session.clone(), events));
        }
    }
    let earliest = built
        .iter()
        .flat_map(|(_, _, events)| events.iter().map(|(e, _)| e.timestamp.as_str()))
        .filter(|t| !t.is_empty())
        .min()
        .map(str::to_owned);
    let Some(earliest) = earliest else {
        return Ok(built);
    };
    // The files the files index has for them: those they changed and their decisions' (not
    // those they only read).
    let files: BTreeSet<String> = built
        .iter()
        .flat_map(|(_, _, events)| events.iter())
        .filter(|(e, _)| matches!(e.kind, Kind::Write | Kind::Session) || e.kind.stands())
        .flat_map(|(e, _)| e.files_affected.clone())
        .collect();
    let mut later: BTreeSet<String> = BTreeSet::new();
    for line in files_index {
        let mut parts = line.split('\t');
        let (Some(path), Some(kind), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if !files.contains(path) {
            continue;
        }
        let session = match kind {
            "session" => Some(id.to_owned()),
            _ => snapshot.decision(id)?.map(|d| d.session),
        };
        if let Some(session) = session.filter(|s| !touched.contains_key(s)) {
            later.insert(session);
        }
    }
    for session in later {
        let Some(node) = snapshot.session(&session)? else {
            continue;
        };
        if node.start.as_str() > earliest.as_str()
            && let Some((old, events)) = gather(snapshot, &mut reader, &session, &BTreeSet::new())?
        {
            built.push((old, session, events));
        }
    }
    Ok(built)
}

/// Decisions already in the graph that new ones may have edges with: those of other sessions
/// (not `rebuilt`) on the same `files`, but the `old` ones the rebuilt sessions replace.
fn known_decisions(
    snapshot: &Snapshot<'_>,
    files_index: &[String],
    files: &BTreeSet<&str>,
    old: &BTreeSet<&str>,
    rebuilt: &BTreeSet<&str>,
) -> Result<Vec<DecisionNode>> {
    let mut known: Vec<DecisionNode> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for line in files_index {
        let mut parts = line.split('\t');
        let (Some(path), Some("decision"), Some(id)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if files.contains(path)
            && !old.contains(id)
            && seen.insert(id)
            && let Some(d) = snapshot.decision(id)?
            && !rebuilt.contains(d.session.as_str())
        {
            known.push(d);
        }
    }
    Ok(known)
}

/// The sessions `session` may have built on, with their commits: those that touched one of
/// its files.
fn built_on_candidates(index: &Index, session: &SessionNode) -> Vec<(String, String)> {
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
    index
        .commits
        .iter()
        .filter_map(|l| {
            let (commit, s) = l.split_once('\t')?;
            (candidates.contains(s) && commit != first).then(|| (s.to_owned(), commit.to_owned()))
        })
        .collect()
}

/// Of the candidates, the sessions whose commits `session`'s first commit descends from: the
/// work it built on.
fn built_on(
    ancestry: &mut Ancestry<'_>,
    session: &SessionNode,
    theirs: Vec<(String, String)>,
) -> Vec<String> {
    let Some(first) = session.commits.first() else {
        return Vec::new();
    };
    let mut out: Vec<String> = theirs
        .into_iter()
        .filter(|(_, c)| ancestry.check(c, first))
        .map(|(s, _)| s)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether one commit descends from another. [`Ancestry::prepare`] answers for a whole set of
/// commits with one walk of the history between them: each commit visited is painted with the
/// set of prepared commits it is reachable from (children before parents). Other questions walk
/// back from the younger commit no further than the older one's time; answers are remembered.
struct Ancestry<'r> {
    repo: &'r gix::Repository,
    /// Commit times and parents, from the commit-graph when it has them.
    commits: history::Commits<'r>,
    known: HashMap<(String, String), bool>,
    /// The prepared commits, each with its bit.
    bit: HashMap<ObjectId, usize>,
    /// Per prepared commit: the bits of the prepared commits that descend from it.
    descendants: HashMap<ObjectId, Vec<u64>>,
}

impl<'r> Ancestry<'r> {
    fn new(repo: &'r gix::Repository) -> Self {
        Ancestry {
            repo,
            commits: history::Commits::new(repo),
            known: HashMap::new(),
            bit: HashMap::new(),
            descendants: HashMap::new(),
        }
    }

    /// Answer every question about `commits` (and those prepared before) from one walk.
    fn prepare(&mut self, commits: impl IntoIterator<Item = ObjectId>) {
        let mut all: Vec<ObjectId> = self.bit.keys().copied().collect();
        let before = all.len();
        all.extend(commits.into_iter().filter(|c| !self.bit.contains_key(c)));
        if all.len() == before {
            return;
        }
        all.sort();
        all.dedup();
        let Some(since) = all.iter().filter_map(|c| self.time(*c)).min() else {
            return;
        };
        // The history between them: each commit once, with its parents.
        let mut parents: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
        let mut queue: Vec<ObjectId> = all.clone();
        while let Some(id) = queue.pop() {
            if parents.len() >= WALK_MAX || parents.contains_key(&id) {
                continue;
            }
            let Some((time, _, ps)) = self.commits.queued(id) else {
                continue;
            };
            if time < since {
                continue;
            }
            queue.extend(ps.iter().copied());
            parents.insert(id, ps);
        }
        let words = all.len().div_ceil(64);
        let bit: HashMap<ObjectId, usize> = all.iter().enumerate().map(|(i, c)| (*c, i)).collect();
        // Children first: a commit is painted once all its children (in the walk) are.
        let mut children: HashMap<ObjectId, usize> = HashMap::new();
        for ps in parents.values() {
            for p in ps.iter().filter(|p| parents.contains_key(*p)) {
                *children.entry(*p).or_default() += 1;
            }
        }
        let mut paint: HashMap<ObjectId, Vec<u64>> = HashMap::new();
        let mut ready: Vec<ObjectId> = parents
            .keys()
            .filter(|c| !children.contains_key(*c))
            .copied()
            .collect();
        let mut descendants = HashMap::new();
        while let Some(id) = ready.pop() {
            let mut bits = paint.remove(&id).unwrap_or_else(|| vec![0; words]);
            if let Some(&i) = bit.get(&id) {
                bits[i / 64] |= 1 << (i % 64);
                descendants.insert(id, bits.clone());
            }
            for p in parents[&id].iter().filter(|p| parents.contains_key(*p)) {
                let theirs = paint.entry(*p).or_insert_with(|| vec![0; words]);
                for (t, b) in theirs.iter_mut().zip(&bits) {
                    *t |= b;
                }
                let left = children.get_mut(p).expect("counted above");
                *left -= 1;
                if *left == 0 {
                    ready.push(*p);
                }
            }
        }
        self.bit = bit;
        self.descendants = descendants;
    }

    /// Whether `b` is `a` or descends from it.
    fn check(&mut self, a: &str, b: &str) -> bool {
        if a == b {
            return true;
        }
        if let (Ok(x), Ok(y)) = (
            ObjectId::from_hex(a.as_bytes()),
            ObjectId::from_hex(b.as_bytes()),
        ) && let (Some(bits), Some(&i)) = (self.descendants.get(&x), self.bit.get(&y))
        {
            return bits[i / 64] & (1 << (i % 64)) != 0;
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
        Some(
            history::since(self.repo, b, since, WALK_MAX)
                .iter()
                .any(|(_, id)| *id == a),
        )
    }

    /// The commit time of `id`.
    fn time(&self, id: ObjectId) -> Option<i64> {
        self.commits.queued(id).map(|(time, _, _)| time)
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
        self.edges(snapshot, old_decisions, decisions)?;
        self.put(FILES_INDEX.to_owned(), lines(&files));
        self.put(COMMITS_INDEX.to_owned(), lines(&commits));
        self.put("README.md".to_owned(), README.to_owned());
        Ok(Index { files, commits })
    }

    /// The edge index: edges are kept on the later decision, and this is the reverse view, in
    /// buckets by the earlier one. The buckets written again: those with edges of the old
    /// decisions, and those the new edges go to.
    fn edges(
        &mut self,
        snapshot: &Snapshot<'_>,
        old_decisions: &BTreeSet<&str>,
        decisions: &[DecisionNode],
    ) -> Result<()> {
        let mut buckets: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        // An edge stays unless it is one of the old decisions' (their new ones are added).
        let kept = |line: &str| {
            line.split('\t')
                .nth(3)
                .is_some_and(|later| !old_decisions.contains(later))
        };
        // An old node that cannot be read, or the single-file edge index of an earlier
        // version, leaves no way to tell which buckets hold the lines: then all are made again.
        let single = snapshot.lines(OLD_EDGES_INDEX)?;
        let migrating = !single.is_empty();
        let mut all = migrating;
        for id in old_decisions {
            match snapshot.decision(id)? {
                Some(node) => {
                    for (_, earlier) in node.edges() {
                        buckets.entry(edges_bucket(earlier)).or_default();
                    }
                }
                None => all = true,
            }
        }
        if all {
            for name in snapshot.names(EDGES_INDEX)? {
                buckets.entry(format!("{EDGES_INDEX}/{name}")).or_default();
            }
            for line in single.into_iter().filter(|l| kept(l)) {
                let earlier = line.split('\t').next().unwrap_or_default();
                buckets
                    .entry(edges_bucket(earlier))
                    .or_default()
                    .insert(line);
            }
            if migrating {
                self.remove(OLD_EDGES_INDEX.to_owned());
            }
        }
        for d in decisions {
            for (kind, earlier) in d.edges() {
                buckets
                    .entry(edges_bucket(earlier))
                    .or_default()
                    .insert(format!(
                        "{earlier}\t{kind}\t{}\t{}\t{}",
                        d.timestamp,
                        d.id,
                        d.commits.first().map_or("", String::as_str)
                    ));
            }
        }
        for (path, mut edges) in buckets {
            let old = snapshot.lines(&path)?;
            let existed = !old.is_empty();
            edges.extend(old.into_iter().filter(|l| kept(l)));
            match edges.is_empty() {
                true if existed => self.remove(path),
                true => {}
                false => self.put(path, lines(&edges)),
            }
        }
        Ok(())
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
    start: Start<'_>,
    touched: &BTreeMap<String, BTreeSet<ObjectId>>,
) -> Result<Updated> {
    let repo = store.repo();
    let signature = signature(&repo);
    let empty = ObjectId::empty_tree(repo.object_hash());
    for attempt in 0..ATTEMPTS {
        // The snapshot to build on, the tree at the tip (`None`: no readable tree) and the
        // value the ref must still have when it is updated.
        let (snapshot, tip_tree, expected) = match start {
            Start::Tip => {
                let tip = Snapshot::at_tip(&repo)?;
                let (tree, expected) = (tip.tree, tip.tip);
                (tip, Some(tree), expected)
            }
            Start::Empty(_) => match Snapshot::at_tip(&repo) {
                Ok(tip) => (Snapshot::of(&repo, tip.tip, empty), Some(tip.tree), tip.tip),
                // A ref that names no readable commit: made again without a parent, replacing
                // the value it has (the graph derives from the notes alone).
                Err(_) => (Snapshot::of(&repo, None, empty), None, ref_tip(&repo, REF)?),
            },
        };
        let (edits, mut message, mut updated) = plan(&repo, &snapshot, touched)?;
        if let Start::Empty(why) = start {
            message = format!(
                "agent-context: {why}: {} sessions, {} decisions",
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
        if Some(tree) == tip_tree {
            return Ok(updated);
        }
        let new = super::commit(&repo, &signature, REF, &message, tree, snapshot.tip)?;
        match point(
            &repo,
            &signature,
            REF,
            new,
            super::expecting(expected),
            message.as_str(),
        ) {
            Ok(_) => {
                updated.commit = Some(new);
                return Ok(updated);
            }
            // Another writer moved the ref, or held its lock: redo the work on top of theirs.
            Err(e) => store.retry_update(&repo, REF, expected, e, attempt)?,
        }
    }
    Err(Error::Contended {
        refname: REF,
        attempts: ATTEMPTS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(n: u8) -> ObjectId {
        ObjectId::from_hex(format!("{n:040x}").as_bytes()).unwrap()
    }

    #[test]
    fn what_is_owed_is_written_once_and_a_line_cut_short_does_not_swallow_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(OWED);
        let owes = |session: &str, n: u8| {
            BTreeMap::from([(session.to_owned(), BTreeSet::from([commit(n)]))])
        };
        // A run died in the middle of its line.
        std::fs::write(&path, "s1\t00000000").unwrap();
        append_owed(&path, &owes("s2", 2)).unwrap();
        assert_eq!(read_owed(&path), owes("s2", 2));
        // Owed again (a graph that could not be written): the file does not grow.
        let before = std::fs::read_to_string(&path).unwrap();
        append_owed(&path, &owes("s2", 2)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        append_owed(&path, &owes("s2", 3)).unwrap();
        assert_eq!(
            read_owed(&path),
            BTreeMap::from([("s2".to_owned(), BTreeSet::from([commit(2), commit(3)]))])
        );
    }

    #[test]
    fn a_folder_finds_each_blob_by_name_in_whatever_order_its_tree_lists_them() {
        let id = |n: u8| ObjectId::from_bytes_or_panic(&[n; 20]);
        let listed = [("b.toml", 2), ("a.toml", 1), ("c.toml", 3), ("ab.toml", 4)];
        let folder = Folder::of(listed.iter().map(|(name, n)| (name.as_bytes(), id(*n))));
        for (name, n) in listed {
            assert_eq!(folder.get(name), Some(id(n)), "{name}");
        }
        assert_eq!(folder.get("d.toml"), None);
        assert_eq!(folder.get(""), None);
        assert_eq!(
            folder.names().collect::<Vec<_>>(),
            ["a.toml", "ab.toml", "b.toml", "c.toml"]
        );
        assert_eq!(Folder::default().get("a.toml"), None);
        // A name listed twice is its last blob, once.
        let twice = [("a.toml", 1), ("b.toml", 2), ("a.toml", 3)];
        let folder = Folder::of(twice.iter().map(|(name, n)| (name.as_bytes(), id(*n))));
        assert_eq!(folder.get("a.toml"), Some(id(3)));
        assert_eq!(folder.names().collect::<Vec<_>>(), ["a.toml", "b.toml"]);
    }
}
