//! The retrieval index: a local cache in `$GIT_COMMON_DIR/agent-context/index/`, derived from
//! the notes and kept up to date incrementally, so that a query reads a few small files instead
//! of every note or any history (docs/commands.md, "The retrieval index"; docs/performance.md).
//!
//! ```text
//! state                 format, the notes commit it reflects, document count and length
//! terms/<xx>.tsv        <term> TAB <commit> TAB <event> TAB <tf> TAB <length>   keyword postings
//! files/<xx>.tsv        <path> TAB <commit> TAB <time> TAB <line hashes>        lines added
//! symbols/<xx>.tsv      <symbol> TAB <commit> TAB <path>                         names defined
//! commits/<xx>.tsv      <commit> TAB <path> TAB <symbols>                        files changed
//! paths.tsv             <path> TAB <annotated commits that changed it>
//! ```
//!
//! `<xx>` is a bucket: the first byte of the XXH3-64 of the key, in hex. Every line has the
//! commit first or second, so a commit's lines can be taken out when its note changes. The index is
//! brought up to the notes ref's tip before it is read ([`open`]) and after writes: the notes
//! that changed since (a diff of the two notes trees, which visits only the changed fan-out
//! folders) have the postings their old note had and their new one has not dropped, and the new
//! ones added (a note that grows is appended to its buckets), and a newly annotated commit's
//! diff is hashed once. Fetching notes from another clone is caught up
//! the same way. The result is the same as building it from nothing ([`rebuild`]).
//!
//! A note that cannot be read (its object damaged or missing) is left out, not taken for an
//! empty one: the state lists it (`unread <commit> <blob> <why>`), each refresh tries it again
//! until it can be read, and [`Index::unread`] tells the reader what is missing.

pub mod lines;
pub mod terms;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gix::ObjectId;

use crate::event::Event;
use crate::event::note::decode;
use crate::store::{self, Result, Store, git_error, io_error, notes, write_cache};
use lines::{Entry, LineHash};

const DIR: &str = "index";
/// Format 2: a merge commit adds only the lines that differ from every parent. A change to
/// what a note's postings are (its terms, their lines) changes the format: the lines of a
/// changed note are taken out as its old note gives them again.
const FORMAT: &str = "git-agent-context index 2";
/// The most changed notes a hook takes into the index (a first build counts them all); more, as
/// after a large fetch, are left to the next command, which need not stay within a hook's
/// budget.
pub const HOOK_MOST: usize = 20;
/// The line that marks an index being written: it is not to be trusted.
const DIRTY: &str = "dirty";

/// A keyword posting: `tf` occurrences of a term in an event of `len` terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting<'t> {
    /// The event: `<commit> TAB <event id>` (see [`event_of`]).
    pub doc: &'t str,
    pub tf: u32,
    pub len: u32,
}

/// The commit and id of a posting's event.
pub fn event_of(doc: &str) -> Option<(ObjectId, &str)> {
    let (commit, id) = doc.split_once('\t')?;
    Some((ObjectId::from_hex(commit.as_bytes()).ok()?, id))
}

/// The index as of one notes commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    notes: Option<ObjectId>,
    docs: u64,
    length: u64,
    /// The notes of that commit that could not be read, so none of their events is indexed:
    /// by commit, the note's blob and why.
    unread: BTreeMap<ObjectId, (ObjectId, String)>,
    /// Annotated commits this clone did not have when their notes were indexed (notes fetched
    /// before their branch): what they added is indexed once they are here.
    absent: BTreeSet<ObjectId>,
}

/// A note the index left out because it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub commit: ObjectId,
    pub why: String,
}

impl State {
    fn read(dir: &Path) -> Option<State> {
        let text = fs::read_to_string(dir.join("state")).ok()?;
        let mut lines = text.lines();
        if lines.next()? != FORMAT {
            return None;
        }
        let mut state = State::default();
        for line in lines {
            let (key, value) = line.split_once(' ')?;
            match key {
                "notes" => state.notes = Some(ObjectId::from_hex(value.as_bytes()).ok()?),
                "docs" => state.docs = value.parse().ok()?,
                "length" => state.length = value.parse().ok()?,
                "unread" => {
                    let mut fields = value.splitn(3, ' ');
                    let mut id = || ObjectId::from_hex(fields.next()?.as_bytes()).ok();
                    let (commit, blob) = (id()?, id()?);
                    let why = fields.next().unwrap_or_default().to_owned();
                    state.unread.insert(commit, (blob, why));
                }
                "absent" => {
                    state
                        .absent
                        .insert(ObjectId::from_hex(value.as_bytes()).ok()?);
                }
                _ => {}
            }
        }
        Some(state)
    }

    fn encode(&self) -> String {
        let mut text = format!("{FORMAT}\n");
        if let Some(n) = self.notes {
            text.push_str(&format!("notes {n}\n"));
        }
        text.push_str(&format!("docs {}\nlength {}\n", self.docs, self.length));
        for (commit, (blob, why)) in &self.unread {
            text.push_str(&format!(
                "unread {commit} {blob} {}\n",
                why.replace('\n', " ")
            ));
        }
        for commit in &self.absent {
            text.push_str(&format!("absent {commit}\n"));
        }
        text
    }

    /// Whether a note the index left out can be read now: worth a refresh.
    fn readable_again(&self, repo: &gix::Repository) -> bool {
        self.unread
            .values()
            .any(|(blob, _)| note_events(repo, *blob).is_ok())
            || self.absent.iter().any(|c| repo.has_object(*c))
    }
}

/// Read access to the index.
#[derive(Debug)]
pub struct Index {
    dir: PathBuf,
    /// `None`: no index, or one being written (marked dirty): nothing in it is to be trusted,
    /// and it reads as empty.
    state: Option<State>,
}

/// The index, brought up to the notes ref first. When another process holds the store for
/// longer than the store's patience, the index is read as it is (at worst one update behind).
pub fn open(store: &Store) -> Result<Index> {
    match refresh(store) {
        Ok(()) | Err(store::Error::Busy) => {}
        Err(e) => return Err(e),
    }
    Ok(read(store))
}

/// The index as it is, not brought up to the notes: what a Claude Code hook reads, which
/// must answer within its budget (git hooks and every command that writes notes keep it up).
pub fn read(store: &Store) -> Index {
    let dir = store.dir().join(DIR);
    let state = State::read(&dir);
    Index { dir, state }
}

/// Make the index again from nothing; the caller holds the store lock.
pub fn rebuild(store: &Store) -> Result<()> {
    let dir = store.dir().join(DIR);
    remove_dir(&dir)?;
    update(store, &dir, None).map(|_| ())
}

/// Bring the index up to the notes ref, if it is behind: what every command that writes notes
/// does once it has let go of the store lock.
pub fn refresh(store: &Store) -> Result<()> {
    refresh_within(store, None).map(|_| ())
}

/// [`refresh`], unless more than `most` notes changed (a first build of a repository with many
/// notes, a large fetch): what a hook does, which must stay fast and leaves large updates to the
/// next command that reads. A first build of a few notes it makes, so that the hooks of a new
/// repository find the reasoning of its first commits by their files. False when it left the
/// update.
pub fn refresh_within(store: &Store, most: Option<usize>) -> Result<bool> {
    let dir = store.dir().join(DIR);
    let repo = store.repo();
    let tip = notes::tip(&repo)?;
    let state = State::read(&dir);
    if state
        .as_ref()
        .is_some_and(|s| s.notes == tip && !s.readable_again(&repo))
        || (tip.is_none() && !dir.exists())
    {
        return Ok(true);
    }
    // A first build of many notes is left to a command, told before the lock is taken.
    if let (None, Some(most), Some(tip)) = (&state, most, tip)
        && !few_notes(&repo, tip, most)?
    {
        return Ok(false);
    }
    let _lock = store.lock()?;
    update(store, &dir, most)
}

/// Whether the notes at `tip` number at most `most`, told from the top of their tree alone: a
/// tree with fan-out folders holds hundreds.
fn few_notes(repo: &gix::Repository, tip: ObjectId, most: usize) -> Result<bool> {
    let tree = repo
        .find_commit(tip)
        .and_then(|c| c.tree())
        .map_err(git_error(format!("read {}", notes::REF)))?;
    let mut notes = 0;
    for entry in tree.iter() {
        let entry = entry.map_err(git_error(format!("read {}", notes::REF)))?;
        if entry.mode().is_tree() {
            return Ok(false);
        }
        notes += 1;
        if notes > most {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Remove the index, its state first: a removal cut short leaves no index that looks whole.
fn remove_dir(dir: &Path) -> Result<()> {
    let state = dir.join("state");
    gone(fs::remove_file(&state), &state)?;
    gone(fs::remove_dir_all(dir), dir)
}

/// The outcome of removing `path`: already gone is as good as removed.
fn gone(removal: io::Result<()>, path: &Path) -> Result<()> {
    match removal {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("cannot remove", path)(e)),
        _ => Ok(()),
    }
}

/// Lines to take out of (by commit, or these very lines) and put into one bucket file.
#[derive(Default)]
struct BucketEdit {
    drop: HashSet<ObjectId>,
    drop_lines: HashSet<String>,
    add: Vec<String>,
}

/// Edits to the index's files, by file (relative to the index folder).
#[derive(Default)]
struct Edits(BTreeMap<String, BucketEdit>);

impl Edits {
    /// The edit of the bucket that holds `key`'s lines of this `kind`.
    fn of(&mut self, kind: &str, key: &str) -> &mut BucketEdit {
        self.0.entry(bucket(kind, key)).or_default()
    }

    fn drop(&mut self, kind: &str, key: &str, commit: ObjectId) {
        self.of(kind, key).drop.insert(commit);
    }

    fn drop_line(&mut self, kind: &str, key: &str, line: String) {
        self.of(kind, key).drop_lines.insert(line);
    }

    fn add(&mut self, kind: &str, key: &str, line: String) {
        self.of(kind, key).add.push(line);
    }
}

fn bucket(kind: &str, key: &str) -> String {
    format!("{kind}/{}.tsv", store::bucket(key))
}

/// Under the store lock: catch the index up with the notes ref (from nothing when it has no
/// usable state).
fn update(store: &Store, dir: &Path, most: Option<usize>) -> Result<bool> {
    let repo = store.repo();
    let tip = notes::tip(&repo)?;
    let state = State::read(dir);
    let mut state = match state {
        Some(s) if s.notes == tip && !s.readable_again(&repo) => return Ok(true),
        Some(s) => s,
        None => {
            remove_dir(dir)?;
            State::default()
        }
    };
    let old_state = state.clone();
    let changes = match notes_changed(&repo, state.notes, tip)? {
        Some(changes) => changes,
        // The notes the index was made from are gone from the object store (a forced update
        // and a gc): start again from nothing.
        None => {
            remove_dir(dir)?;
            return update(store, dir, most);
        }
    };
    if most.is_some_and(|most| changes.len() > most) {
        return Ok(false);
    }
    let mut edits = Edits::default();
    let mut paths: BTreeMap<String, i64> = BTreeMap::new();
    catch_up(&repo, &mut state, &changes, &mut edits, &mut paths);
    for (commit, (old, new)) in changes {
        let change = Change { commit, old, new };
        if !change.apply(&repo, dir, &mut state, &mut edits, &mut paths)? {
            // The old note is gone from the object store: start again from nothing.
            remove_dir(dir)?;
            return update(store, dir, most);
        }
    }
    // Buckets are appended to in place: until the new state is written, a crash leaves the
    // index marked, and the next update makes it again from nothing.
    write_cache(
        &dir.join("state"),
        format!("{}{DIRTY}\n", old_state.encode()).as_bytes(),
    )?;
    if !write_edits(dir, edits)? {
        remove_dir(dir)?;
        return update(store, dir, most);
    }
    if !paths.is_empty() {
        write_paths(dir, paths)?;
    }
    state.notes = tip;
    write_cache(&dir.join("state"), state.encode().as_bytes())?;
    Ok(true)
}

/// What did not wait for the notes to change: the notes left out before whose note did not
/// change since, tried again; annotated commits that arrived since their notes were indexed
/// (and keep their notes).
fn catch_up(
    repo: &gix::Repository,
    state: &mut State,
    changes: &BTreeMap<ObjectId, NoteChange>,
    edits: &mut Edits,
    paths: &mut BTreeMap<String, i64>,
) {
    let retried: Vec<(ObjectId, ObjectId)> = state
        .unread
        .iter()
        .filter(|(commit, _)| !changes.contains_key(*commit))
        .map(|(commit, (blob, _))| (*commit, *blob))
        .collect();
    for (commit, blob) in retried {
        if let Ok(events) = note_events(repo, blob) {
            state.unread.remove(&commit);
            NotePostings::of(commit, &events).replace(NotePostings::default(), state, edits);
        }
    }
    let arrived: Vec<ObjectId> = state
        .absent
        .iter()
        .filter(|c| repo.has_object(**c))
        .filter(|c| changes.get(*c).is_none_or(|(_, new)| new.is_some()))
        .copied()
        .collect();
    for commit in arrived {
        state.absent.remove(&commit);
        add_lines(repo, commit, edits, paths);
    }
}

/// One commit's note changed: from `old` to `new` (blobs; `None` for no note).
struct Change {
    commit: ObjectId,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
}

impl Change {
    /// Take the old note's terms out and put the new one's in; index the lines of a commit
    /// newly annotated, take out those of one no longer. `false` when the old note is gone
    /// from the object store (the index cannot take out what it put in).
    fn apply(
        &self,
        repo: &gix::Repository,
        dir: &Path,
        state: &mut State,
        edits: &mut Edits,
        paths: &mut BTreeMap<String, i64>,
    ) -> Result<bool> {
        let commit = self.commit;
        // A note left out put nothing in the index to take out.
        let left_out = state.unread.remove(&commit).map(|(blob, _)| blob);
        let mut was = NotePostings::default();
        if let Some(blob) = self.old.filter(|b| left_out != Some(*b)) {
            let Ok(events) = note_events(repo, blob) else {
                return Ok(false);
            };
            was = NotePostings::of(commit, &events);
        }
        let mut now = NotePostings::default();
        if let Some(blob) = self.new {
            match note_events(repo, blob) {
                Ok(events) => now = NotePostings::of(commit, &events),
                // Not indexed as empty: left out, and tried again by the next refresh.
                Err(e) => {
                    let why = match e {
                        store::Error::Git { message, .. } => message,
                        e => store::error_chain(&e),
                    };
                    state.unread.insert(commit, (blob, why));
                }
            }
        }
        now.replace(was, state, edits);
        // What the commit added does not change with its note: hashed when it is first
        // annotated, taken out (as the index recorded it) when its note goes.
        let hex = commit.to_string();
        if self.new.is_none() {
            state.absent.remove(&commit);
            edits.drop("commits", &hex, commit);
            let prefix = format!("{hex}\t");
            for line in read_lines(&dir.join(bucket("commits", &hex))) {
                let Some(rest) = line.strip_prefix(&prefix) else {
                    continue;
                };
                let mut fields = rest.split('\t');
                let path = fields.next().unwrap_or_default();
                *paths.entry(path.to_owned()).or_default() -= 1;
                edits.drop("files", path, commit);
                for symbol in fields.next().unwrap_or_default().split_whitespace() {
                    edits.drop("symbols", symbol, commit);
                }
            }
        } else if self.old.is_none() {
            match repo.has_object(commit) {
                true => add_lines(repo, commit, edits, paths),
                // A note on a commit this clone does not have explains no line of it yet.
                false => {
                    state.absent.insert(commit);
                }
            }
        }
        Ok(true)
    }
}

/// Apply `edits` to the buckets: appended to when nothing is taken out, else written again.
/// `false` when a line to take out is not in its bucket: the index does not hold what the
/// notes it was made from say, and is to be made again.
fn write_edits(dir: &Path, edits: Edits) -> Result<bool> {
    for (file, edit) in edits.0 {
        let path = dir.join(&file);
        if edit.drop.is_empty() && edit.drop_lines.is_empty() {
            append_lines(&path, &edit.add)?;
            continue;
        }
        let lines = read_existing_lines(&path)?;
        let found = lines
            .iter()
            .filter(|l| edit.drop_lines.contains(*l))
            .count();
        if found < edit.drop_lines.len() {
            return Ok(false);
        }
        let mut kept: Vec<String> = lines
            .into_iter()
            .filter(|l| !edit.drop_lines.contains(l))
            .filter(|l| {
                // The commit is the first column of `commits/`, the second of the others.
                let column = usize::from(!file.starts_with("commits/"));
                !l.split('\t')
                    .nth(column)
                    .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
                    .is_some_and(|c| edit.drop.contains(&c))
            })
            .collect();
        kept.extend(edit.add);
        write_lines(&path, kept)?;
    }
    Ok(true)
}

/// Add `deltas` to the count of annotated commits per path (`paths.tsv`).
fn write_paths(dir: &Path, deltas: BTreeMap<String, i64>) -> Result<()> {
    let file = dir.join("paths.tsv");
    let mut counts: BTreeMap<String, i64> = read_existing_lines(&file)?
        .iter()
        .filter_map(|l| {
            let (p, n) = l.split_once('\t')?;
            Some((p.to_owned(), n.parse().ok()?))
        })
        .collect();
    for (path, delta) in deltas {
        *counts.entry(path).or_default() += delta;
    }
    let lines = counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(p, n)| format!("{p}\t{n}"))
        .collect();
    write_lines(&file, lines)
}

/// Index what `commit` added: its files' added lines, its symbols.
fn add_lines(
    repo: &gix::Repository,
    commit: ObjectId,
    edits: &mut Edits,
    paths: &mut BTreeMap<String, i64>,
) {
    let hex = commit.to_string();
    let seconds = repo
        .find_commit(commit)
        .ok()
        .and_then(|c| c.time().ok())
        .map_or(0, |t| t.seconds);
    for a in lines::added_by(repo, commit).unwrap_or_default() {
        *paths.entry(a.path.clone()).or_default() += 1;
        let hashes: Vec<String> = a.lines.iter().map(|h| h.encode()).collect();
        let line = format!("{}\t{commit}\t{seconds}\t{}", a.path, hashes.join(" "));
        edits.add("files", &a.path, line);
        let line = format!("{hex}\t{}\t{}", a.path, a.symbols.join(" "));
        edits.add("commits", &hex, line);
        for s in &a.symbols {
            edits.add("symbols", s, format!("{s}\t{commit}\t{}", a.path));
        }
    }
}

/// A commit's note blob before and after (`None`: no note).
type NoteChange = (Option<ObjectId>, Option<ObjectId>);

/// The notes that differ between the notes ref at `old` and at `new`, by commit; `None` when
/// the old notes cannot be read any more (the index is then made again from nothing).
fn notes_changed(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
) -> Result<Option<BTreeMap<ObjectId, NoteChange>>> {
    let mut out: BTreeMap<ObjectId, NoteChange> = BTreeMap::new();
    let Some(old) = old else {
        for (commit, blob) in notes::notes_at(repo, new)? {
            out.insert(commit, (None, Some(blob)));
        }
        return Ok(Some(out));
    };
    let Some(old_tree) = repo.find_commit(old).ok().and_then(|c| c.tree().ok()) else {
        return Ok(None);
    };
    let new_tree = match new {
        Some(n) => Some(
            repo.find_commit(n)
                .and_then(|c| c.tree())
                .map_err(git_error(format!("read {}", notes::REF)))?,
        ),
        None => None,
    };
    let options = gix::diff::Options::default().with_rewrites(None);
    let changes = repo
        .diff_tree_to_tree(&old_tree, new_tree.as_ref(), options)
        .map_err(git_error(format!("diff the notes of {}", notes::REF)))?;
    for change in changes {
        use gix::object::tree::diff::ChangeDetached as C;
        // A note's path may move between fan-outs: its removal and addition meet by commit.
        if !change.entry_mode().is_blob() {
            continue;
        }
        let Some(commit) = notes::commit_of_path(change.location()) else {
            continue;
        };
        let slot = out.entry(commit).or_default();
        match change {
            C::Addition { id, .. } => slot.1 = Some(id),
            C::Deletion { id, .. } => slot.0 = Some(id),
            C::Modification {
                previous_id, id, ..
            } => *slot = (Some(previous_id), Some(id)),
            C::Rewrite { .. } => {}
        }
    }
    out.retain(|_, (before, after)| before != after);
    Ok(Some(out))
}

/// The events of a note blob, or why it cannot be read.
fn note_events(repo: &gix::Repository, blob: ObjectId) -> Result<Vec<Event>> {
    let data = repo
        .find_blob(blob)
        .map_err(git_error(format!("read the note blob {blob}")))?;
    Ok(decode(&data.data).0)
}

/// A note's keyword postings: each term's line in `terms/`, and the documents' count and
/// length.
#[derive(Default)]
struct NotePostings {
    lines: HashMap<String, String>,
    docs: u64,
    length: u64,
}

impl NotePostings {
    fn of(commit: ObjectId, events: &[Event]) -> NotePostings {
        let mut out = NotePostings::default();
        for (terms, e) in documents(events) {
            let len: u32 = terms.values().sum();
            out.docs += 1;
            out.length += u64::from(len);
            for (term, tf) in terms {
                let line = format!("{term}\t{commit}\t{}\t{tf}\t{len}", e.id);
                out.lines.insert(line, term);
            }
        }
        out
    }

    /// Put these postings in the place of `was`, the same commit's: only the lines that differ
    /// are taken out or put in, so that a note that grows (the usual change) appends to its
    /// buckets rather than writing them again.
    fn replace(self, was: NotePostings, state: &mut State, edits: &mut Edits) {
        state.docs = state.docs.saturating_sub(was.docs) + self.docs;
        state.length = state.length.saturating_sub(was.length) + self.length;
        for (line, term) in &was.lines {
            if !self.lines.contains_key(line) {
                edits.drop_line("terms", term, line.clone());
            }
        }
        let mut added: Vec<(String, String)> = (self.lines.into_iter())
            .filter(|(line, _)| !was.lines.contains_key(line))
            .collect();
        // In a stable order, for the buckets' sake.
        added.sort_unstable();
        for (line, term) in added {
            edits.add("terms", &term, line);
        }
    }
}

/// The keyword documents of a note: each reasoning event with its term frequencies.
fn documents(events: &[Event]) -> Vec<(BTreeMap<String, u32>, &Event)> {
    events
        .iter()
        .filter(|e| e.kind.is_reason())
        .map(|e| {
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            for t in terms::event_terms(e) {
                *tf.entry(t).or_default() += 1;
            }
            (tf, e)
        })
        .collect()
}

/// The lines of a file that must be read whole to be rewritten: any error but its absence is
/// one.
fn read_existing_lines(path: &Path) -> Result<Vec<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().map(str::to_owned).collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io_error("cannot read", path)(e)),
    }
}

/// The lines of a file, none if it cannot be read: what a reader of the cache makes do with.
fn read_lines(path: &Path) -> Vec<String> {
    read_existing_lines(path).unwrap_or_default()
}

/// Add lines at the end of a bucket.
fn append_lines(path: &Path, lines: &[String]) -> Result<()> {
    let dir = path.parent().expect("index files live in a folder");
    fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
    let mut text = lines.join("\n");
    text.push('\n');
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(io_error("cannot write", path))
}

/// Replace a bucket; an empty one is removed.
fn write_lines(path: &Path, lines: Vec<String>) -> Result<()> {
    if lines.is_empty() {
        return gone(fs::remove_file(path), path);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    write_cache(path, text.as_bytes())
}

impl Index {
    /// The notes left out of the index because they could not be read, by commit.
    pub fn unread(&self) -> Vec<Unread> {
        let Some(state) = &self.state else {
            return Vec::new();
        };
        state
            .unread
            .iter()
            .map(|(commit, (_, why))| Unread {
                commit: *commit,
                why: why.clone(),
            })
            .collect()
    }

    /// What [`Index::unread`] lists, in one line; `None` when nothing was left out.
    pub fn unread_line(&self) -> Option<String> {
        let unread = self.unread();
        let (first, rest) = unread.split_first()?;
        let first = format!("the note of {} ({})", first.commit, first.why);
        if rest.is_empty() {
            return Some(format!(
                "{first} cannot be read: left out of the retrieval index until it can be"
            ));
        }
        let others: Vec<String> = rest
            .iter()
            .map(|u| u.commit.to_hex_with_len(12).to_string())
            .collect();
        Some(format!(
            "{} notes cannot be read, left out of the retrieval index until they can be: {first}, and those of {}",
            unread.len(),
            others.join(", ")
        ))
    }

    /// Events indexed.
    pub fn docs(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.docs)
    }

    /// The average length of an indexed event, in terms.
    pub fn average_length(&self) -> f64 {
        let length = self.state.as_ref().map_or(0, |s| s.length);
        length as f64 / self.docs().max(1) as f64
    }

    /// The index file `name`, read whole; empty when it cannot be read or the index is not to
    /// be trusted.
    fn file(&self, name: &str) -> String {
        match self.state {
            Some(_) => fs::read_to_string(self.dir.join(name)).unwrap_or_default(),
            None => String::new(),
        }
    }

    /// The bucket `key` is in, read whole.
    fn bucket(&self, kind: &str, key: &str) -> String {
        self.file(&bucket(kind, key))
    }

    /// A reader of terms' postings that reads each bucket once: a long prompt's terms share
    /// many.
    pub fn terms(&self) -> Terms<'_> {
        Terms {
            index: self,
            read: HashMap::new(),
        }
    }

    /// The annotated commits that changed `path`, with the lines each added.
    pub fn entries(&self, path: &str) -> Vec<Entry> {
        keyed(&self.bucket("files", path), path)
            .filter_map(|rest| {
                let mut f = rest.split('\t');
                Some(Entry {
                    commit: ObjectId::from_hex(f.next()?.as_bytes()).ok()?,
                    seconds: f.next()?.parse().ok()?,
                    lines: f
                        .next()
                        .unwrap_or("")
                        .split(' ')
                        .filter_map(LineHash::decode)
                        .collect(),
                })
            })
            .collect()
    }

    /// The files `commit` changed, if it is annotated.
    pub fn paths_of(&self, commit: ObjectId) -> Vec<String> {
        let hex = commit.to_string();
        keyed(&self.bucket("commits", &hex), &hex)
            .filter_map(|rest| rest.split('\t').next().map(str::to_owned))
            .collect()
    }

    /// Paths whose annotated history defines `symbol`.
    pub fn symbol_paths(&self, symbol: &str) -> Vec<String> {
        let mut paths: Vec<String> = keyed(&self.bucket("symbols", symbol), symbol)
            .filter_map(|rest| rest.rsplit('\t').next().map(str::to_owned))
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// Every path some annotated commit changed.
    pub fn paths(&self) -> Vec<String> {
        self.file("paths.tsv")
            .lines()
            .filter_map(|l| l.split_once('\t').map(|(p, _)| p.to_owned()))
            .collect()
    }
}

/// What follows `key` and a tab on the lines of `text` that start so.
fn keyed<'t>(text: &'t str, key: &str) -> impl Iterator<Item = &'t str> {
    let prefix = format!("{key}\t");
    text.lines()
        .filter_map(move |l| l.strip_prefix(prefix.as_str()))
}

/// Reads terms' postings ([`Index::terms`]), each bucket once.
pub struct Terms<'i> {
    index: &'i Index,
    /// The buckets read so far, by file name.
    read: HashMap<String, Rc<str>>,
}

impl Terms<'_> {
    /// Where `term` occurs.
    pub fn postings(&mut self, term: &str) -> Postings {
        let text = self
            .read
            .entry(bucket("terms", term))
            .or_insert_with_key(|name| self.index.file(name).into());
        Postings {
            text: Rc::clone(text),
            term: term.to_owned(),
        }
    }
}

/// The postings of a term, read from its bucket and parsed as they are visited.
pub struct Postings {
    text: Rc<str>,
    term: String,
}

impl Postings {
    pub fn iter(&self) -> impl Iterator<Item = Posting<'_>> {
        keyed(&self.text, &self.term).filter_map(|rest| {
            let mut f = rest.rsplitn(3, '\t');
            let len = f.next()?.parse().ok()?;
            let tf = f.next()?.parse().ok()?;
            Some(Posting {
                doc: f.next()?,
                tf,
                len,
            })
        })
    }
}

/// Who owns the lines of a file at HEAD, by the index: the file's lines hashed, and per line
/// the annotated commit that owns it, among those `owns` lets own lines (a commit pruned from
/// the repository, or not in HEAD's history, owns nothing: what holds its lines there does).
#[derive(Debug, Default)]
pub struct Ownership {
    pub entries: Vec<Entry>,
    /// Per line of the file at HEAD, an index into `entries`.
    pub owners: Vec<Option<usize>>,
    /// Lines at HEAD each commit owns.
    counts: HashMap<ObjectId, u32>,
}

impl Ownership {
    pub fn of(
        index: &Index,
        path: &str,
        head: &[u8],
        owns: impl Fn(&Entry) -> bool,
    ) -> Option<Ownership> {
        let hashes = lines::hash_lines(head)?;
        let mut entries = index.entries(path);
        entries.retain(owns);
        let owners = lines::owners(&hashes, &entries);
        let mut counts: HashMap<ObjectId, u32> = HashMap::new();
        for e in owners.iter().flatten() {
            *counts.entry(entries[*e].commit).or_default() += 1;
        }
        Some(Ownership {
            entries,
            owners,
            counts,
        })
    }

    /// Lines at HEAD `commit` owns.
    pub fn lines_of(&self, commit: ObjectId) -> u32 {
        self.counts.get(&commit).copied().unwrap_or(0)
    }

    /// The commits that own lines `first..=last` (1-based; past the end, none), with how many
    /// of them each owns, most first.
    pub fn owners_of_lines(&self, first: usize, last: usize) -> Vec<(u32, ObjectId)> {
        let end = last.min(self.owners.len());
        let mut counts: HashMap<ObjectId, u32> = HashMap::new();
        for e in self
            .owners
            .get(first.max(1) - 1..end)
            .into_iter()
            .flatten()
            .flatten()
        {
            *counts.entry(self.entries[*e].commit).or_default() += 1;
        }
        let mut commits: Vec<(u32, ObjectId)> = counts.into_iter().map(|(c, n)| (n, c)).collect();
        commits.sort_by(|a, b| b.cmp(a));
        commits
    }
}
