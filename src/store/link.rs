//! Linking pending events to the commits their session produced (docs/linking.md).
//!
//! Signals, most trusted first, each recorded on the commit's copy of the session event
//! ([`Signal`]):
//! 1. commits the session named itself — `toolUseResult.gitOperation.commit.sha`, `[branch
//!    sha]` in the output of `git commit`, or `git log --oneline` after `git commit -q` — when
//!    the id resolves to a commit of this repository ([`session`]); when it does not (the
//!    commit was rebased or amended since), the one commit with the subject the session wrote;
//! 2. the post-commit hook: a commit the session made, which the hook wrote down ([`defer`],
//!    linked by [`session`]), or one made while it was running, in its worktree
//!    ([`session_to`]);
//! 3. commits on any branch that add the lines the session's writes added, whatever their
//!    dates but for a clock's error: not committed more than ten minutes before a write they
//!    hold ([`session`]);
//! 4. last, for what is left, commits whose author or committer time falls inside the session
//!    and that change a file the session changed before them.
//!
//! A session's events, in time order, go to the commits of 1 and 3 ordered together, each
//! taking those from the previous one's up to the event that names it or its last write; what
//! is left goes to the first commit of 4 at or after it. The session event ([`Kind::Session`])
//! goes to every commit of the session as it stood when that commit was linked, listing the
//! session's commits so far: the newest commit carries the most complete one, and no link
//! rewrites the notes of older commits. Events after the last commit stay pending until a later
//! commit takes them.
//!
//! Attached events leave the pending queue; `attached/<session>.jsonl` remembers where each
//! went (`<id> <commit>` per line), so that a later, more complete version of an event (a turn
//! that was still going when it was first extracted) updates its note instead of waiting for
//! another commit. Crash safety: the index is written first, then what the graph owes
//! ([`graph::owe`]), then the notes, then the queue is trimmed; pending events the index already
//! places go where it says. Every step is idempotent, so a re-run — by `extract` or by the next
//! commit's hook — completes an interrupted one on the same commits. The graph follows the notes
//! once per run, when the caller settles it ([`graph::settle`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gix::ObjectId;

use super::{Result, Store, forgotten, graph, history, io_error, notes, pending, write_atomic};
use crate::event::time::{now_seconds, unix_seconds};
use crate::event::{Event, Key, Kind, Link, Origin, Signal, fingerprint};

pub const DIR: &str = "attached";

/// What linking did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Linked {
    pub commits: usize,
    pub events: usize,
}

fn index_file(store: &Store, session: &str) -> PathBuf {
    pending::session_path(store, DIR, session, "jsonl")
}

/// Where the events of `session` already went: event id → commit, for a reader.
fn read_index(store: &Store, session: &str) -> Result<HashMap<String, ObjectId>> {
    Ok(load_index(store, session)?.0)
}

/// [`read_index`], for a writer holding the store lock: an index made again from the notes is
/// written down, and the log says so, once.
pub(super) fn read_index_to_write(
    store: &Store,
    session: &str,
) -> Result<HashMap<String, ObjectId>> {
    let (index, remade) = load_index(store, session)?;
    if remade {
        write_index(store, session, &index)?;
        let what = format!("{DIR}/{}", pending::file_name(session));
        let why = format!(
            "unreadable, made again from the notes ({} events)",
            index.len()
        );
        let _ = super::log::append(store, &what, &why);
    }
    Ok(index)
}

/// The attached index of `session`, and whether it had to be made again: a file that cannot
/// be read as one (not UTF-8, a line that is not `<id> <commit>`: a disk's or a hand's
/// damage) is made from the notes, which hold every attached event, rather than stop every
/// extraction until it is deleted, or forget where events went (their later versions would
/// go to a second commit).
fn load_index(store: &Store, session: &str) -> Result<(HashMap<String, ObjectId>, bool)> {
    let path = index_file(store, session);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((HashMap::new(), false)),
        Err(e) => return Err(io_error("cannot read", &path)(e)),
    };
    let parsed: Option<HashMap<String, ObjectId>> =
        std::str::from_utf8(&bytes).ok().and_then(|text| {
            text.lines()
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let (id, commit) = l.split_once(' ')?;
                    let commit = ObjectId::from_hex(commit.trim().as_bytes()).ok()?;
                    Some((id.to_owned(), commit))
                })
                .collect()
        });
    match parsed {
        Some(index) => Ok((index, false)),
        None => Ok((index_from_notes(store, session)?, true)),
    }
}

/// Where the events of `session` are, by the notes: each event but the session's own (which
/// is on every commit of the session and not in the index) with its commit.
fn index_from_notes(store: &Store, session: &str) -> Result<HashMap<String, ObjectId>> {
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut index = HashMap::new();
    for commit in notes::annotated(&repo)? {
        for e in reader.events(commit)? {
            if e.session_id == session && e.kind != Kind::Session {
                index.insert(e.id, commit);
            }
        }
    }
    Ok(index)
}

pub(super) fn write_index(
    store: &Store,
    session: &str,
    index: &HashMap<String, ObjectId>,
) -> Result<()> {
    let mut lines: Vec<String> = index.iter().map(|(id, c)| format!("{id} {c}")).collect();
    lines.sort();
    let mut out = lines.join("\n");
    out.push('\n');
    write_atomic(&index_file(store, session), out.as_bytes())
}

/// Whether event `id` of `session` is attached to a commit.
pub fn is_attached(store: &Store, session: &str, id: &str) -> Result<bool> {
    Ok(read_index(store, session)?.contains_key(id))
}

/// The events of `session` already attached to commits, from their notes (those of a commit
/// since rewritten or gone are not found), every version of each (an event may be on several).
pub fn attached_events(store: &Store, session: &str) -> Result<Vec<Event>> {
    let index = read_index(store, session)?;
    let commits: BTreeSet<ObjectId> = index.values().copied().collect();
    if commits.is_empty() {
        return Ok(Vec::new());
    }
    let repo = store.repo();
    let mut reader = notes::Reader::new(&repo)?;
    let mut out: Vec<Event> = Vec::new();
    for commit in commits {
        out.extend(
            reader
                .events(commit)?
                .into_iter()
                .filter(|e| e.session_id == session),
        );
    }
    Ok(out)
}

/// Point the attached index at rewritten commits (`moved`: old → new), for every session.
pub fn rewrite_index(store: &Store, moved: &BTreeMap<ObjectId, ObjectId>) -> Result<()> {
    for path in store.files_in(DIR, "jsonl")? {
        let Some(session) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let mut index = read_index_to_write(store, session)?;
        let mut changed = false;
        for commit in index.values_mut() {
            if let Some(new) = moved.get(commit) {
                *commit = *new;
                changed = true;
            }
        }
        if changed {
            write_index(store, session, &index)?;
        }
    }
    Ok(())
}

/// Take events that no longer exist — provisional events of a turn that ended otherwise —
/// off the notes they were attached to; returns how many were there.
pub fn detach(store: &Store, gone: &HashSet<Key>) -> Result<usize> {
    let mut by_session: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    for Key { session, id } in gone {
        by_session.entry(session).or_default().insert(id);
    }
    let mut removed = 0;
    for (session, ids) in by_session {
        let mut index = read_index_to_write(store, session)?;
        let mut on: BTreeMap<ObjectId, HashSet<&str>> = BTreeMap::new();
        for id in &ids {
            if let Some(commit) = index.remove(*id) {
                on.entry(commit).or_default().insert(id);
            }
        }
        if on.is_empty() {
            continue;
        }
        let commits: BTreeSet<ObjectId> = on.keys().copied().collect();
        let removals: Vec<(ObjectId, HashSet<&str>)> = on.into_iter().collect();
        // One commit on the notes ref for all of them.
        removed += notes::remove_all(store, &removals)?.removed;
        // The graph before the index: once the index drops the events, a re-run would not
        // know which commits to look at again.
        graph::update(store, &BTreeMap::from([(session.to_owned(), commits)]))?;
        write_index(store, session, &index)?;
    }
    Ok(removed)
}

/// Split fresh events: those already attached go to their commit's note now (returned count),
/// the others are returned for the pending queue. The graph is left owed
/// ([`graph::settle`]).
pub fn route(store: &Store, events: Vec<Event>) -> Result<(usize, Vec<Event>)> {
    let mut by_session: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for e in events {
        by_session.entry(e.session_id.clone()).or_default().push(e);
    }
    let mut rest = Vec::new();
    let mut batches: Vec<(ObjectId, Vec<Event>)> = Vec::new();
    let mut touched: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    for (session, events) in by_session {
        let index = read_index_to_write(store, &session)?;
        for e in events {
            match index.get(&e.id) {
                Some(commit) => {
                    // The graph is owed even when the note already was: a writer killed
                    // between the note and the graph leaves this to the next run.
                    touched.entry(session.clone()).or_default().insert(*commit);
                    place(&mut batches, *commit, e);
                }
                None => rest.push(e),
            }
        }
    }
    // The graph follows once the run settles it: a run that reads several turns, or links
    // the session next, updates it once.
    graph::owe(store, &touched)?;
    let updated = notes::attach_all(store, &batches)?.updated;
    Ok((updated, rest))
}

/// How many commits the time-and-files rule looks at, newest first, at most.
const WINDOW_COMMITS_MAX: usize = 1000;

/// Where the events that no named commit took go.
enum Rest {
    /// To commits found by `Signals`; else they wait.
    Found(Signals),
    /// To this commit, which the session made. With `files_must_meet`, only if the events
    /// changed none of files or one the commit changes; with `upto`, only the events up to
    /// that time (seconds since the epoch).
    Commit {
        id: ObjectId,
        files_must_meet: bool,
        upto: Option<i64>,
    },
}

/// Attach the pending events of `session` that a commit of the session now takes: commits its
/// post-commit hooks wrote down ([`defer`]), commits it named, then commits that fit its time
/// and files. The graph is left owed ([`graph::settle`]), as by every link.
pub fn session(store: &Store, session: &str) -> Result<Linked> {
    session_by(store, session, Signals::All)
}

/// Which signals a link tries past the commits the session's post-commit hooks wrote down and
/// those it named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signals {
    /// Its commits' subjects and its lines, then time and files.
    All,
    /// Subjects and lines, not time and files: a run that reads many sessions links each so
    /// first, then each by [`Signals::Time`], so that which session's commit a commit is does
    /// not depend on the order they are read in (time and files leave a commit to another
    /// developer's session that holds it by a surer signal).
    ButTime,
    /// Time and files alone, after [`Signals::ButTime`].
    Time,
}

/// [`session`], by `signals`.
pub fn session_by(store: &Store, session: &str, signals: Signals) -> Result<Linked> {
    let mut linked = Linked::default();
    if let Some(claimed) = claim_deferred(store, session)? {
        for d in claimed.iter().filter(|d| d.session == session) {
            let done = link(
                store,
                session,
                Rest::Commit {
                    id: d.commit,
                    files_must_meet: false,
                    upto: Some(d.at),
                },
            )?;
            linked.commits += done.commits;
            linked.events += done.events;
        }
        let others: Vec<&Deferred> = claimed.iter().filter(|d| d.session != session).collect();
        release_deferred(store, &others)?;
    }
    let rest = link(store, session, Rest::Found(signals))?;
    linked.commits += rest.commits;
    linked.events += rest.events;
    Ok(linked)
}

/// Under the store lock: when `session` has deferred commits, take the whole file aside
/// (hooks that find the store busy go on appending to a new one) and return its lines. A file
/// left aside by a run that died is put back first.
fn claim_deferred(store: &Store, session: &str) -> Result<Option<Vec<Deferred>>> {
    let path = store.dir().join(DEFERRED);
    let aside = store.dir().join(DEFERRED_CLAIMED);
    if aside.exists() {
        release_deferred(store, &read_deferred(&aside).iter().collect::<Vec<_>>())?;
    }
    if !read_deferred(&path).iter().any(|d| d.session == session) {
        return Ok(None);
    }
    fs::rename(&path, &aside).map_err(io_error("cannot move", &path))?;
    Ok(Some(read_deferred(&aside)))
}

/// Give back the claimed lines not dealt with (appended, as hooks do) and drop the claim.
fn release_deferred(store: &Store, rest: &[&Deferred]) -> Result<()> {
    for d in rest {
        append_deferred(store, &d.session, d.commit, d.at)?;
    }
    let aside = store.dir().join(DEFERRED_CLAIMED);
    fs::remove_file(&aside).map_err(io_error("cannot remove", &aside))
}

/// Where the commits a hook could not link wait, one `<session> <commit> <time>` line each.
const DEFERRED: &str = "deferred";
/// The deferred commits a run has taken to link.
const DEFERRED_CLAIMED: &str = "deferred.claimed";

/// A commit a hook could not link: `session` made `commit`, and the hook ran at `at` (seconds
/// since the epoch): the events up to then led to it.
struct Deferred {
    session: String,
    commit: ObjectId,
    at: i64,
}

/// Remember that `session` made `commit`, for the next run to link (the post-commit hook of an
/// agent's commit, which leaves the linking to a process of its own). Appends one short line,
/// without the lock: such appends do not interleave.
pub fn defer(store: &Store, session: &str, commit: ObjectId) -> Result<()> {
    append_deferred(store, session, commit, now_seconds())
}

fn append_deferred(store: &Store, session: &str, commit: ObjectId, at: i64) -> Result<()> {
    let path = store.dir().join(DEFERRED);
    fs::create_dir_all(store.dir()).map_err(io_error("cannot create", store.dir()))?;
    let file = open_deferred(&path)?;
    append_line(&path, file, &format!("{session} {commit} {at}\n"), || {
        open_deferred(&path)
    })
}

fn open_deferred(path: &Path) -> Result<fs::File> {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_error("cannot open", path))
}

/// Append `line` to `file`, opened as `path` (`reopen` opens it again). A run that claims the
/// deferred commits (it renames the file aside, reads it, and removes it) may do so between the
/// open and the write and never see the line: then it is written again, to the new file, until
/// it lands in a file that was still `path` after the write. A line read twice links its commit
/// twice, which changes nothing the second time. A line that never lands is an error, not a
/// commit silently left unlinked.
fn append_line(
    path: &Path,
    mut file: fs::File,
    line: &str,
    mut reopen: impl FnMut() -> Result<fs::File>,
) -> Result<()> {
    use std::io::Write;
    let mut attempts = 1;
    loop {
        file.write_all(line.as_bytes())
            .map_err(io_error("cannot write", path))?;
        if !renamed_away(&file, path) {
            return Ok(());
        }
        if attempts == APPEND_ATTEMPTS {
            return Err(io_error("cannot write", path)(std::io::Error::other(
                format!("the file was claimed under each of {APPEND_ATTEMPTS} writes"),
            )));
        }
        attempts += 1;
        file = reopen()?;
    }
}

/// How many times a deferred line is written, at most, while its file is claimed under it:
/// more claims than that in the moment of one append do not happen, as each takes the store's
/// lock.
const APPEND_ATTEMPTS: usize = 8;

/// Whether `path` no longer names the file `file` is open on.
#[cfg(unix)]
fn renamed_away(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(open), Ok(named)) => (open.dev(), open.ino()) != (named.dev(), named.ino()),
        (Ok(_), Err(e)) => e.kind() == std::io::ErrorKind::NotFound,
        (Err(_), _) => false,
    }
}

#[cfg(not(unix))]
fn renamed_away(_file: &fs::File, _path: &Path) -> bool {
    false
}

fn read_deferred(path: &Path) -> Vec<Deferred> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(Deferred {
                session: words.next()?.to_owned(),
                commit: ObjectId::from_hex(words.next()?.as_bytes()).ok()?,
                at: words.next()?.parse().ok()?,
            })
        })
        .collect()
}

/// Attach the pending events of `session` to the commits it named, and those left to
/// `commit` (which the session just made). With `files_must_meet` (the session is only known
/// to be active in this worktree), a session that changed files but none of the commit's keeps
/// its events pending.
pub fn session_to(
    store: &Store,
    session: &str,
    commit: ObjectId,
    files_must_meet: bool,
) -> Result<Linked> {
    link(
        store,
        session,
        Rest::Commit {
            id: commit,
            files_must_meet,
            upto: None,
        },
    )
}

/// Where a session's events go: (commit, events), in the order first placed.
type Batches = Vec<(ObjectId, Vec<Event>)>;

/// The session's events in order, and where the commits it named cut them: each commit takes
/// the events up to the one naming it (an index into `flat`).
struct Cuts {
    flat: Vec<Event>,
    at: Vec<(usize, ObjectId)>,
}

fn link(store: &Store, session: &str, rest: Rest) -> Result<Linked> {
    let (events, summary) = queued(store, session)?;
    // Linking may read the files a session wrote at each commit since it started.
    let repo = store.repo_for_history();
    let index = read_index_to_write(store, session)?;
    let mut batches: Batches = Vec::new();
    // Events the index already places go where it says, never to a second commit: a run that
    // died before trimming the queue left them, or a hook appended one to the queue (see
    // [`pending::append`]) while this event was being attached. Either copy may be older than
    // the note's, which a later extraction updates in place: it only fills a gap.
    let mut replayed: HashSet<String> = HashSet::new();
    let mut unplaced = Vec::new();
    for e in events {
        match index.get(&e.id) {
            Some(commit) => {
                replayed.insert(e.id.clone());
                place(&mut batches, *commit, e);
            }
            None => unplaced.push(e),
        }
    }
    let mut cuts = cut(store, &repo, unplaced)?;
    // How each commit linked now was found, the first signal to find it (a named commit is
    // told from its events when they are written).
    let mut links: HashMap<ObjectId, Link> = HashMap::new();
    // The commits that may hold the session's work, walked once for every signal below.
    let recent = match rest {
        Rest::Found(signals) => {
            let recent = recent_for(&repo, &cuts.flat, &cuts.at);
            // After a run by the other signals, they find nothing new.
            if signals != Signals::Time {
                by_message_and_content(&repo, &recent, &mut cuts, &index, &mut links);
            }
            recent
        }
        Rest::Commit { .. } => Vec::new(),
    };
    let mut taken = 0;
    for &(at, commit) in &cuts.at {
        let upto = (at + 1).max(taken);
        place_all(&mut batches, commit, cuts.flat[taken..upto].to_vec());
        taken = upto;
    }
    let mut batch: Vec<Event> = cuts.flat.split_off(taken);
    match rest {
        Rest::Found(Signals::All | Signals::Time) if !batch.is_empty() => {
            let known: HashSet<ObjectId> = batches
                .iter()
                .map(|(c, _)| *c)
                .chain(index.values().copied())
                .collect();
            let grace = store.config().link_grace_seconds();
            let cwd = summary
                .iter()
                .chain(&batch)
                .find(|e| !e.session.cwd.is_empty())
                .map(|e| e.session.cwd.clone())
                .unwrap_or_default();
            // What the session wrote: on the commits found for it in this run, and as its
            // session event lists it, every file it changed in any run.
            let wrote = Wrote {
                placed: (batches.iter())
                    .flat_map(|(_, events)| written(events))
                    .map(str::to_owned)
                    .collect(),
                listed: summary.as_ref().map_or(&[], |s| &s.files_affected),
            };
            let found = by_time_and_files(&repo, &recent, &cwd, &mut batch, wrote, &known, grace);
            for (commit, events, score) in found {
                let signal = Signal::Time;
                links.entry(commit).or_insert(Link { signal, score });
                batches.push((commit, events));
            }
        }
        Rest::Found(_) => {}
        Rest::Commit {
            id,
            files_must_meet,
            upto,
        } => {
            let meets =
                !files_must_meet || !batch.is_empty() && files_meet(&repo, id, &written(&batch));
            if meets {
                to_the_commit(&mut batches, &mut links, id, files_must_meet, upto, batch);
            }
        }
    }
    let written = Written {
        session,
        index,
        replayed,
        links,
        summary,
    };
    written.write(store, batches)
}

/// The session's pending events, its session event taken out; a read or a search that
/// `PostToolUse` appended without the lock as a `forget` took it out of the queue is forgotten
/// all the same: it leaves the queue, for no commit.
fn queued(store: &Store, session: &str) -> Result<(Vec<Event>, Option<Event>)> {
    let mut events = pending::session_events(store, session)?;
    let forgotten = forgotten::all(store)?;
    if events.iter().any(|e| forgotten.contains_key(&e.id)) {
        let (gone, kept): (Vec<Event>, Vec<Event>) = events
            .into_iter()
            .partition(|e| forgotten.contains_key(&e.id));
        let gone = gone.iter().map(Key::of).collect();
        pending::remove(store, &gone)?;
        events = kept;
    }
    let summary = events
        .iter()
        .position(|e| e.kind == Kind::Session)
        .map(|i| events.remove(i));
    Ok((events, summary))
}

/// `events` cut by the commits they name. In a shallow clone, a commit the session named that
/// is not here is most likely beyond the shallow boundary: the events that led to it do not
/// go to the next commit as well. Those its note (fetched with the notes) holds leave the
/// queue; the others wait until the history is deepened.
fn cut(store: &Store, repo: &gix::Repository, events: Vec<Event>) -> Result<Cuts> {
    let mut flat: Vec<Event> = Vec::new();
    let mut at: Vec<(usize, ObjectId)> = Vec::new();
    let shallow = repo.is_shallow().unwrap_or(false);
    let mut beyond: HashSet<Key> = HashSet::new();
    // The annotated commits, listed once, when the first such commit asks.
    let mut annotated: Option<Vec<ObjectId>> = None;
    for e in events {
        let named = match e.origin {
            Origin::Commit if shallow => e.commits.clone(),
            _ => Vec::new(),
        };
        let commit = match e.origin {
            Origin::Commit => e
                .commits
                .iter()
                .find_map(|c| notes::resolve_commit(repo, c)),
            _ => None,
        };
        flat.push(e);
        if let Some(commit) = commit {
            at.push((flat.len() - 1, commit));
        } else if !named.is_empty() {
            let annotated =
                annotated.get_or_insert_with(|| notes::annotated(repo).unwrap_or_default());
            let noted = noted_beyond(repo, annotated, &named);
            let from = at.last().map_or(0, |(at, _)| at + 1);
            beyond.extend(
                flat.drain(from..)
                    .filter(|e| noted.contains(&e.id))
                    .map(|e| Key::of(&e)),
            );
        }
    }
    if !beyond.is_empty() {
        pending::remove(store, &beyond)?;
    }
    Ok(Cuts { flat, at })
}

/// Cut the events at the commits found by their subject (a commit the session named that is
/// not here, rebased or amended since: the one commit with the subject it wrote) and by their
/// lines, among `recent`.
fn by_message_and_content(
    repo: &gix::Repository,
    recent: &[history::Recent],
    cuts: &mut Cuts,
    index: &HashMap<String, ObjectId>,
    links: &mut HashMap<ObjectId, Link>,
) {
    let named: HashSet<usize> = cuts.at.iter().map(|(at, _)| *at).collect();
    let known: HashSet<ObjectId> = cuts.at.iter().map(|(_, c)| *c).collect();
    for (at, commit) in by_subject(repo, recent, &cuts.flat, &named, &known) {
        let signal = Signal::Message;
        links.insert(commit, Link { signal, score: 1.0 });
        cuts.at.push((at, commit));
    }
    // Commits named now or linked before carry the session already.
    let mut known: HashSet<ObjectId> = cuts.at.iter().map(|(_, c)| *c).collect();
    known.extend(index.values().copied());
    let named_at: Vec<usize> = cuts.at.iter().map(|(at, _)| *at).collect();
    for (at, commit, score) in by_content(repo, recent, &cuts.flat, &known, &named_at) {
        let signal = Signal::Content;
        links.insert(commit, Link { signal, score });
        cuts.at.push((at, commit));
    }
    // By position; a named commit before a commit found by its lines at the same event.
    cuts.at.sort_by_key(|(at, _)| *at);
}

/// What is left goes to the commit the session made: known to be its own (without
/// `files_must_meet`), it takes the session event even with nothing else, and every event up
/// to `upto` (a deferred commit's later events wait); else all of them.
fn to_the_commit(
    batches: &mut Batches,
    links: &mut HashMap<ObjectId, Link>,
    id: ObjectId,
    files_must_meet: bool,
    upto: Option<i64>,
    mut batch: Vec<Event>,
) {
    let taken = match files_must_meet {
        true => batch.len(),
        false => batch
            .iter()
            .take_while(|e| {
                upto.is_none_or(|upto| unix_seconds(&e.timestamp).is_none_or(|t| t <= upto))
            })
            .count(),
    };
    let signal = match files_must_meet {
        true => Signal::Active,
        false => Signal::Hook,
    };
    links.entry(id).or_insert(Link { signal, score: 1.0 });
    place_all(batches, id, batch.drain(..taken).collect());
}

/// What a link writes: where each event went (the attached index), the notes, the graph.
struct Written<'s> {
    session: &'s str,
    index: HashMap<String, ObjectId>,
    /// Events the index placed already: their notes' copies are kept.
    replayed: HashSet<String>,
    links: HashMap<ObjectId, Link>,
    /// The session event, which goes to each commit linked now.
    summary: Option<Event>,
}

impl Written<'_> {
    fn write(mut self, store: &Store, mut batches: Batches) -> Result<Linked> {
        let mut linked = Linked::default();
        let mut moved: HashSet<Key> = HashSet::new();
        for (commit, events) in &batches {
            linked.events += events.len();
            for e in events {
                self.index.insert(e.id.clone(), *commit);
                moved.insert(Key::of(e));
            }
        }
        linked.commits = batches.iter().map(|(c, _)| c).collect::<HashSet<_>>().len();
        if batches.is_empty() {
            return Ok(linked);
        }
        self.name_the_named(&batches);
        // The session as it stands goes to each commit linked now.
        if let Some(mut summary) = self.summary.take() {
            let mut commits: BTreeSet<ObjectId> = self.index.values().copied().collect();
            commits.extend(batches.iter().map(|(c, _)| *c));
            summary.commits = commits.iter().map(ToString::to_string).collect();
            for (commit, events) in &mut batches {
                let mut copy = summary.clone();
                copy.link = self.links.get(commit).copied();
                events.push(copy);
            }
        }
        // Where each event goes is written down first: a run that dies after it sends them
        // there.
        if !moved.is_empty() {
            write_index(store, self.session, &self.index)?;
        }
        // The graph follows when the run settles it, once for all it linked: owed before the
        // notes change, so that a run that dies after them leaves it to the next.
        let commits: BTreeSet<ObjectId> = batches.iter().map(|(c, _)| *c).collect();
        graph::owe(store, &BTreeMap::from([(self.session.to_owned(), commits)]))?;
        let keep: HashSet<&str> = self.replayed.iter().map(String::as_str).collect();
        notes::attach_all_keeping(store, &batches, &keep)?;
        pending::remove(store, &moved)?;
        Ok(linked)
    }

    /// A commit whose events name it was named, whichever run first placed them there (one
    /// that completes an interrupted run knows only where they go).
    fn name_the_named(&mut self, batches: &Batches) {
        for (commit, events) in batches {
            let hex = commit.to_string();
            let named = events.iter().any(|e| {
                e.origin == Origin::Commit
                    && e.commits
                        .iter()
                        .any(|c| c.len() >= 7 && hex.starts_with(c.as_str()))
            });
            if named {
                let link = Link {
                    signal: Signal::Named,
                    score: 1.0,
                };
                self.links.insert(*commit, link);
            }
        }
    }
}

/// The ids of the events in the note of the commit `names` (full or abbreviated ids) name,
/// when that commit is not in this repository but its note is, among the `noted` commits (a
/// shallow clone's notes name commits beyond its boundary).
fn noted_beyond(repo: &gix::Repository, noted: &[ObjectId], names: &[String]) -> HashSet<String> {
    let commit = names.iter().find_map(|name| {
        let mut found = noted
            .iter()
            .filter(|c| c.to_string().starts_with(name.as_str()));
        let first = found.next()?;
        found.next().is_none().then_some(*first)
    });
    let events = commit.and_then(|c| notes::Reader::new(repo).ok()?.events(c).ok());
    events
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.id)
        .collect()
}

/// Add `event` to the batch of `commit`, starting one if there is none.
fn place(batches: &mut Vec<(ObjectId, Vec<Event>)>, commit: ObjectId, event: Event) {
    match batches.iter_mut().find(|(c, _)| *c == commit) {
        Some((_, events)) => events.push(event),
        None => batches.push((commit, vec![event])),
    }
}

/// Add `events` to the batch of `commit`, starting one if there is none (a commit that takes
/// no event still carries the session).
fn place_all(batches: &mut Vec<(ObjectId, Vec<Event>)>, commit: ObjectId, events: Vec<Event>) {
    match batches.iter_mut().find(|(c, _)| *c == commit) {
        Some((_, held)) => held.extend(events),
        None => batches.push((commit, events)),
    }
}

/// The files `events` changed.
fn written(events: &[Event]) -> BTreeSet<&str> {
    events
        .iter()
        .filter(|e| e.kind == Kind::Write)
        .flat_map(|e| e.files_affected.iter().map(String::as_str))
        .collect()
}

/// How far before a session's first event (or a write of it) a commit that carries its work may
/// be committed: clocks of two machines differ, by seconds when they keep time. An hour let a
/// commit made half an hour before a session take it for the one that made it, when the
/// session wrote the same lines again (docs/quality.md, "Which commit gets which session").
const CLOCK_SKEW_SECONDS: i64 = 600;

/// How many of a write's sampled lines a commit must add for the write to be in it (all of
/// them when fewer are sampled).
const LINES_TO_MATCH: usize = 3;

/// The share of a write's lines, or of the lines a commit adds to the file, that the two must
/// have in common.
const SHARE_MIN: f32 = 0.5;

/// A line that more commits than this add, in one file, within the window tells nothing.
const COMMON_LINE_COMMITS: usize = 5;

/// The commits on any branch that may hold the work of `events` — committed since
/// [`CLOCK_SKEW_SECONDS`] before the first of them, merges left out — when a signal needs them:
/// `events` wrote a file, or name a commit that is not here (not among the `cuts`).
fn recent_for(
    repo: &gix::Repository,
    events: &[Event],
    cuts: &[(usize, ObjectId)],
) -> Vec<history::Recent> {
    let lost = events.iter().enumerate().any(|(at, e)| {
        e.origin == Origin::Commit && !e.commits.is_empty() && !cuts.iter().any(|(c, _)| *c == at)
    });
    let Some((first, _)) = span(events).filter(|_| lost || !written(events).is_empty()) else {
        return Vec::new();
    };
    history::recent(repo, first - CLOCK_SKEW_SECONDS, WINDOW_COMMITS_MAX)
        .into_iter()
        .filter(|c| c.parents <= 1)
        .collect()
}

/// The first and last times of `events`, when any can be read.
fn span(events: &[Event]) -> Option<(i64, i64)> {
    let times = events.iter().filter_map(|e| unix_seconds(&e.timestamp));
    times.fold(None, |span, t| {
        Some(span.map_or((t, t), |(a, b): (i64, i64)| (a.min(t), b.max(t))))
    })
}

/// The commit events of `events` (not at the positions `named`, whose commit is here) whose
/// commit is gone — rebased or amended since — each with the one commit on any branch,
/// committed since [`CLOCK_SKEW_SECONDS`] before it and not `known`, whose subject is the one
/// the session wrote. A subject that several such commits share names none.
fn by_subject(
    repo: &gix::Repository,
    recent: &[history::Recent],
    events: &[Event],
    named: &HashSet<usize>,
    known: &HashSet<ObjectId>,
) -> Vec<(usize, ObjectId)> {
    let lost: Vec<(usize, &Event)> = events
        .iter()
        .enumerate()
        .filter(|(at, e)| {
            e.origin == Origin::Commit
                && !e.commits.is_empty()
                && !named.contains(at)
                && !e.summary.ends_with('…')
        })
        .collect();
    if lost.is_empty() {
        return Vec::new();
    }
    let mut by_title: HashMap<String, Vec<(i64, ObjectId)>> = HashMap::new();
    for c in recent.iter().filter(|c| !known.contains(&c.id)) {
        let Ok(commit) = repo.find_commit(c.id) else {
            continue;
        };
        let title = commit
            .message_raw_sloppy()
            .to_string()
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned();
        by_title.entry(title).or_default().push((c.committer, c.id));
    }
    lost.into_iter()
        .filter_map(|(at, e)| {
            let written = unix_seconds(&e.timestamp)?;
            let mut found = by_title
                .get(e.summary.trim())?
                .iter()
                .filter(|(t, _)| *t >= written - CLOCK_SKEW_SECONDS);
            let (_, commit) = found.next()?;
            found.next().is_none().then_some((at, *commit))
        })
        .collect()
}

/// A person as a commit names them: a name and an email, each trimmed and lowercased (either
/// may be empty).
struct Person {
    name: String,
    email: String,
}

impl Person {
    fn of(signature: gix::actor::SignatureRef<'_>) -> Person {
        let fold = |s: &gix::bstr::BStr| s.to_string().trim().to_lowercase();
        Person {
            name: fold(signature.name),
            email: fold(signature.email),
        }
    }

    /// The same person: the same name or the same email, one that is not empty.
    fn is(&self, other: &Person) -> bool {
        !self.name.is_empty() && self.name == other.name
            || !self.email.is_empty() && self.email == other.email
    }
}

/// Who wrote `commit` and who committed it.
fn people_of(repo: &gix::Repository, commit: ObjectId) -> Vec<Person> {
    let Ok(commit) = repo.find_commit(commit) else {
        return Vec::new();
    };
    [commit.author(), commit.committer()]
        .into_iter()
        .flatten()
        .map(Person::of)
        .filter(|p| !p.name.is_empty() || !p.email.is_empty())
        .collect()
}

fn author(repo: &gix::Repository, commit: ObjectId) -> Option<Person> {
    Some(Person::of(repo.find_commit(commit).ok()?.author().ok()?))
}

/// The files a session wrote, for [`by_time_and_files`].
struct Wrote<'s> {
    /// Those of the events placed on commits found by the other signals, or by time earlier.
    placed: BTreeSet<String>,
    /// Those its session event lists: every file it changed, in this run or an earlier one.
    listed: &'s [String],
}

/// The last resort: commits on any branch made between the first of `events` and `grace`
/// seconds after the last (`link.grace_minutes`: the user commits what the session left in
/// the working tree), by author or committer date, that change a file the events before them
/// changed — after a stretch that wrote nothing, a file the session had written by then
/// ([`Wrote`], less what only the events after the commit write) — and, when the session's
/// other commits are known (`known`), written by one of those who wrote or committed them (by
/// name or email, whatever the case): one developer runs a session, and a teammate's commit of
/// the same hours to the same files is theirs. Who committed counts too, for an agent that
/// commits as an author of its own. When the session has no other commit, a commit that holds
/// another developer's session by a surer signal ([`claimed`]) is theirs. `cwd` is the folder
/// the session ran in. Takes the events each such commit led to out of `events`; with each
/// commit, the share of the files it was told by that it changes. A session none of whose
/// `events` write is not looked for here: nothing of its work is left to commit.
fn by_time_and_files(
    repo: &gix::Repository,
    recent: &[history::Recent],
    cwd: &str,
    events: &mut Vec<Event>,
    mut wrote: Wrote<'_>,
    known: &HashSet<ObjectId>,
    grace: i64,
) -> Vec<(ObjectId, Vec<Event>, f32)> {
    let Some((first, last)) = span(events).filter(|_| !written(events).is_empty()) else {
        return Vec::new();
    };
    // The commit's date that falls in the session counts.
    let in_window = |t: i64| t >= first && t <= last + grace;
    let mut by_time: Vec<(i64, ObjectId)> = recent
        .iter()
        .filter(|c| !known.contains(&c.id))
        .filter_map(|c| {
            let time = [c.author, c.committer]
                .into_iter()
                .find(|t| in_window(*t))?;
            Some((time, c.id))
        })
        .collect();
    by_time.sort();
    // Read once a commit is found by its time and files, which most sessions' never are.
    let people: std::cell::OnceCell<Vec<Person>> = std::cell::OnceCell::new();
    let mut notes = None;
    let mut out = Vec::new();
    for (time, commit) in by_time {
        // Events with no readable time stay with their neighbours.
        let led_to = events
            .iter()
            .take_while(|e| unix_seconds(&e.timestamp).is_none_or(|t| t <= time))
            .count();
        if led_to == 0 {
            continue;
        }
        // The session's writes that led to the commit; after a stretch that wrote nothing
        // (a commit made again in a rebase, a follow-up), those it wrote before: a commit of
        // files the session never wrote is not its work, whenever it was made.
        let stretch = written(&events[..led_to]);
        let files = if stretch.is_empty() {
            let later = written(&events[led_to..]);
            (wrote.placed.iter().map(String::as_str))
                .chain(
                    (wrote.listed.iter())
                        .map(String::as_str)
                        .filter(|f| !later.contains(f)),
                )
                .collect()
        } else {
            stretch.clone()
        };
        let met = changed(repo, commit, &files).len();
        if met == 0 {
            continue;
        }
        let people =
            people.get_or_init(|| known.iter().flat_map(|c| people_of(repo, *c)).collect());
        let theirs = |author: Person| people.iter().any(|p| p.is(&author));
        if !people.is_empty() && !author(repo, commit).is_some_and(theirs) {
            continue;
        }
        // Who wrote the session's other commits tells its developer better than its folder:
        // one person's machines may name their home folders differently.
        if people.is_empty() && claimed(repo, &mut notes, commit, cwd) {
            continue;
        }
        let score = met as f32 / files.len() as f32;
        wrote.placed.extend(stretch.into_iter().map(str::to_owned));
        out.push((commit, events.drain(..led_to).collect(), score));
    }
    out
}

/// Whether the note of `commit` holds a session of another developer than the session run
/// from `cwd`, linked to it by a signal surer than time and files: that session named the
/// commit, wrote its subject, ran it or was at work where it was made (the post-commit hook),
/// or wrote its lines. A developer is
/// told by the account the session ran under ([`account`]); where either is not known, no
/// session is another developer's. One developer's sessions may share a commit (one commits
/// what the other wrote too); a teammate's commit of the same hours and files is theirs.
/// `notes` is read at the first commit asked about.
fn claimed<'r>(
    repo: &'r gix::Repository,
    notes: &mut Option<Option<notes::Reader<'r>>>,
    commit: ObjectId,
    cwd: &str,
) -> bool {
    let Some(ours) = account(cwd) else {
        return false;
    };
    let Some(reader) = notes.get_or_insert_with(|| notes::Reader::new(repo).ok()) else {
        return false;
    };
    let events = reader.events(commit).unwrap_or_default();
    events.iter().any(|e| {
        e.kind == Kind::Session
            && account(&e.session.cwd).is_some_and(|theirs| theirs != ours)
            && e.link.is_some_and(|l| {
                matches!(
                    l.signal,
                    Signal::Named
                        | Signal::Message
                        | Signal::Hook
                        | Signal::Active
                        | Signal::Content
                )
            })
    })
}

/// The account a session ran under, from its folder: the name of the home folder it is in
/// (`/Users/<name>/…`, `/home/<name>/…`, `C:\Users\<name>\…`, and as WSL, Windows' long
/// paths and Fedora's atomic desktops write them: `/mnt/c/Users/<name>`, `\\?\C:\Users\<name>`,
/// `/var/home/<name>`), whatever the case. macOS's `/Users/Shared` is no one's.
fn account(cwd: &str) -> Option<String> {
    let mut parts = cwd.split(['/', '\\']).filter(|p| !p.is_empty()).peekable();
    // What comes before the folder of homes: `\\?\`, a drive (`C:`, WSL's `mnt/c`), `var`.
    parts.next_if_eq(&"?");
    if parts.next_if_eq(&"mnt").is_some() {
        parts.next_if(|p| p.len() == 1);
    }
    parts.next_if(|p| p.len() == 2 && p.ends_with(':'));
    parts.next_if_eq(&"var");
    let homes = parts.next()?;
    if !homes.eq_ignore_ascii_case("users") && !homes.eq_ignore_ascii_case("home") {
        return None;
    }
    let name = parts.next()?.to_lowercase();
    (name != "shared").then_some(name)
}

/// The commits on any branch, not `known`, that add lines the write events of `events` added
/// to the same file, whatever their dates; each with the position in `events` up to which it
/// takes them: its last such write, or its author date when later; and the largest share of
/// one write's lines it holds.
fn by_content(
    repo: &gix::Repository,
    recent: &[history::Recent],
    events: &[Event],
    known: &HashSet<ObjectId>,
    named_at: &[usize],
) -> Vec<(usize, ObjectId, f32)> {
    if !events
        .iter()
        .any(|e| e.kind == Kind::Write && !e.lines.is_empty())
    {
        return Vec::new();
    }
    let candidates: Vec<&history::Recent> =
        recent.iter().filter(|c| !known.contains(&c.id)).collect();
    let wrote = lines_written(events);
    // What each candidate adds to the files the session wrote. A file's version is read and
    // hashed once, though it is one commit's new version and the next one's old.
    let mut blobs = Blobs::new(repo);
    let added: Vec<(usize, BTreeMap<String, Added>)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let by_file = added_lines(repo, &mut blobs, c.id, &wrote);
            (!by_file.is_empty()).then_some((i, by_file))
        })
        .collect();
    let mut adders: HashMap<(&str, u32), usize> = HashMap::new();
    for (_, by_file) in &added {
        for (file, a) in by_file {
            for h in &a.wrote {
                *adders.entry((file.as_str(), *h)).or_default() += 1;
            }
        }
    }
    // Per matching commit: the position of the last event it holds, and the best share.
    let mut last_held: BTreeMap<usize, (usize, f32)> = BTreeMap::new();
    for (at, e) in events.iter().enumerate() {
        let Some(file) = e.files_affected.first() else {
            continue;
        };
        if e.kind != Kind::Write {
            continue;
        }
        let telling: Vec<u32> = e
            .lines
            .iter()
            .copied()
            .filter(|h| {
                adders
                    .get(&(file.as_str(), *h))
                    .is_none_or(|n| *n <= COMMON_LINE_COMMITS)
            })
            .collect();
        if telling.is_empty() {
            continue;
        }
        let written_at = unix_seconds(&e.timestamp);
        for (i, by_file) in &added {
            let Some(a) = by_file.get(file) else {
                continue;
            };
            let held = telling.iter().filter(|h| a.wrote.contains(h)).count();
            let committed = candidates[*i].committer;
            // Enough of the write's lines (all of them when it added fewer); and most of what
            // the write added, or of what the commit adds there.
            let needed = LINES_TO_MATCH.min(telling.len());
            let share = held as f32 / telling.len() as f32;
            let of_commit = held as f32 / a.count as f32;
            if held >= needed.max(1)
                && share.max(of_commit) >= SHARE_MIN
                && written_at.is_none_or(|t| committed >= t - CLOCK_SKEW_SECONDS)
            {
                let best = last_held.get(i).map_or(share, |(_, s)| s.max(share));
                last_held.insert(*i, (at, best));
            }
        }
    }
    // Where the other commits take their events: a commit's author date does not take it past
    // the next one's.
    let mut stops: Vec<usize> = last_held.values().map(|(at, _)| *at).collect();
    stops.extend(named_at);
    last_held
        .into_iter()
        .map(|(i, (at, share))| {
            let authored = candidates[i].author;
            let by_date = events
                .iter()
                .take_while(|e| unix_seconds(&e.timestamp).is_none_or(|t| t <= authored))
                .count();
            let next = stops.iter().copied().filter(|s| *s > at).min();
            let by_date = by_date
                .saturating_sub(1)
                .min(next.map_or(usize::MAX, |n| n - 1));
            (at.max(by_date), candidates[i].id, share)
        })
        .collect()
}

/// The hashes of the lines `events` wrote, per file: of what a commit adds, only these can
/// match.
fn lines_written(events: &[Event]) -> BTreeMap<String, HashSet<u32>> {
    let mut wrote: BTreeMap<String, HashSet<u32>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == Kind::Write) {
        if let Some(file) = e.files_affected.first() {
            wrote.entry(file.clone()).or_default().extend(&e.lines);
        }
    }
    wrote
}

/// What a commit adds to a file: how many lines (with a hash), and which of them the session
/// wrote there.
struct Added {
    count: usize,
    wrote: HashSet<u32>,
}

/// The line hashes of the versions of files read so far, by blob.
struct Blobs<'r> {
    repo: &'r gix::Repository,
    read: HashMap<ObjectId, Rc<BTreeSet<u32>>>,
}

impl<'r> Blobs<'r> {
    fn new(repo: &'r gix::Repository) -> Blobs<'r> {
        Blobs {
            repo,
            read: HashMap::new(),
        }
    }

    /// The hashes of the lines of blob `id` (none when there is no such blob).
    fn hashes(&mut self, id: Option<ObjectId>) -> Rc<BTreeSet<u32>> {
        let Some(id) = id else {
            return Rc::default();
        };
        let repo = self.repo;
        self.read
            .entry(id)
            .or_insert_with(|| {
                let data = repo
                    .find_object(id)
                    .map(|o| o.detach().data)
                    .unwrap_or_default();
                Rc::new(fingerprint::hashes(&String::from_utf8_lossy(&data)))
            })
            .clone()
    }
}

/// What `commit` adds (against its first parent) to each file of `wrote` it changes, with the
/// lines the session wrote there among them.
fn added_lines(
    repo: &gix::Repository,
    blobs: &mut Blobs<'_>,
    commit: ObjectId,
    wrote: &BTreeMap<String, HashSet<u32>>,
) -> BTreeMap<String, Added> {
    let mut out = BTreeMap::new();
    let Some((tree, parent)) = tree_ids(repo, commit) else {
        return out;
    };
    let paths: Vec<&str> = wrote.keys().map(String::as_str).collect();
    let mut changed = Vec::new();
    changed_blobs(repo, Some(tree), parent, "", &paths, &mut changed);
    for (path, now, before) in changed {
        let Some(lines) = wrote.get(&path).filter(|_| now.is_some()) else {
            continue;
        };
        let (now, before) = (blobs.hashes(now), blobs.hashes(before));
        let added = now.iter().filter(|h| !before.contains(h));
        let (count, wrote) = added.fold((0, HashSet::new()), |(n, mut wrote), h| {
            if lines.contains(h) {
                wrote.insert(*h);
            }
            (n + 1, wrote)
        });
        if count > 0 {
            out.insert(path, Added { count, wrote });
        }
    }
    out
}

/// The tree of `commit` and that of its first parent (none for a root commit), by id.
fn tree_ids(repo: &gix::Repository, commit: ObjectId) -> Option<(ObjectId, Option<ObjectId>)> {
    let commit = repo.find_commit(commit).ok()?;
    let parent = (commit.parent_ids().next())
        .and_then(|p| repo.find_commit(p).ok())
        .and_then(|p| p.tree_id().ok())
        .map(gix::Id::detach);
    Some((commit.tree_id().ok()?.detach(), parent))
}

/// Of `paths` (relative to `prefix`, the folder whose trees `now` and `before` are; cleaned
/// up, as events name files: no `//`, `./` or trailing `/`), those whose blob differs between
/// the two trees, with both blobs (none where there is no blob; a link or a submodule is none):
/// the trees are read together, and a folder whose tree is the same in both is not entered — a
/// commit changes few of the folders a session wrote in.
fn changed_blobs(
    repo: &gix::Repository,
    now: Option<ObjectId>,
    before: Option<ObjectId>,
    prefix: &str,
    paths: &[&str],
    out: &mut Vec<(String, Option<ObjectId>, Option<ObjectId>)>,
) {
    if now == before || paths.is_empty() {
        return;
    }
    // Each name this folder holds that a path goes through or ends at: blob and subtree.
    let wanted: BTreeSet<&str> = paths
        .iter()
        .map(|p| p.split_once('/').map_or(*p, |(first, _)| first))
        .collect();
    let entries = |tree: Option<ObjectId>| -> HashMap<String, (bool, ObjectId)> {
        let Some(data) = tree.and_then(|t| repo.find_object(t).ok()) else {
            return HashMap::new();
        };
        gix::objs::TreeRefIter::from_bytes(&data.data, repo.object_hash())
            .filter_map(std::result::Result::ok)
            .filter(|e| e.mode.is_blob() || e.mode.is_tree())
            .filter_map(|e| {
                let name = std::str::from_utf8(e.filename.as_ref()).ok()?;
                wanted
                    .contains(name)
                    .then(|| (name.to_owned(), (e.mode.is_tree(), e.oid.to_owned())))
            })
            .collect()
    };
    let (now, before) = (entries(now), entries(before));
    let of = |map: &HashMap<String, (bool, ObjectId)>, name: &str, tree: bool| {
        map.get(name).filter(|(t, _)| *t == tree).map(|(_, id)| *id)
    };
    for name in wanted {
        let (blob_now, blob_before) = (of(&now, name, false), of(&before, name, false));
        if paths.contains(&name) && blob_now != blob_before {
            out.push((format!("{prefix}{name}"), blob_now, blob_before));
        }
        let inside: Vec<&str> = (paths.iter())
            .filter_map(|p| p.strip_prefix(name)?.strip_prefix('/'))
            .collect();
        let (tree_now, tree_before) = (of(&now, name, true), of(&before, name, true));
        if !inside.is_empty() && (tree_now.is_some() || tree_before.is_some()) {
            let prefix = format!("{prefix}{name}/");
            changed_blobs(repo, tree_now, tree_before, &prefix, &inside, out);
        }
    }
}

/// Whether `files` is empty or `commit` changes one of them (against its first parent).
fn files_meet(repo: &gix::Repository, commit: ObjectId, files: &BTreeSet<&str>) -> bool {
    files.is_empty() || !changed(repo, commit, files).is_empty()
}

/// Those of `files` whose blob `commit` changes against its first parent (one added, removed
/// or replaced): the two trees read together once, whatever the number of files. Files as
/// events name them, that is: a path that is a folder, a link or a submodule on both sides
/// is not a file that changed.
pub(crate) fn changed(
    repo: &gix::Repository,
    commit: ObjectId,
    files: &BTreeSet<&str>,
) -> BTreeSet<String> {
    let Some((tree, parent)) = tree_ids(repo, commit) else {
        return BTreeSet::new();
    };
    let paths: Vec<&str> = files.iter().copied().collect();
    let mut out = Vec::new();
    changed_blobs(repo, Some(tree), parent, "", &paths, &mut out);
    out.into_iter().map(|(path, _, _)| path).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::error_chain;
    use crate::store::history::tests::git;

    #[test]
    fn a_sessions_account_is_its_home_folders_name() {
        for (cwd, account) in [
            ("/Users/Ana/src/app", Some("ana")),
            ("/home/ana/app", Some("ana")),
            ("C:\\Users\\ana\\app", Some("ana")),
            ("c:/users/ana/app", Some("ana")),
            ("/mnt/c/Users/Ana/app", Some("ana")),
            ("\\\\?\\C:\\Users\\ana\\app", Some("ana")),
            ("/var/home/ana/app", Some("ana")),
            ("/Users", None),
            ("/Users/Shared/app", None),
            ("/root/app", None),
            ("/srv/app", None),
            ("/tmp/home/ana", None),
            ("", None),
        ] {
            assert_eq!(super::account(cwd).as_deref(), account, "{cwd}");
        }
    }

    #[test]
    fn the_files_a_commit_changes_are_those_git_diff_tree_names_with_other_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        git(dir, &["init", "-q", "-b", "main"]);
        let write = |path: &str, text: &str| {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        let asked = [
            "a.rs",
            "src/b.rs",
            "src/deep/c.rs",
            "src/deep/d.rs",
            "docs",
            "docs/e.md",
            "gone.rs",
            "src/deep",
            "f/g.rs",
            "never.rs",
        ];
        write("a.rs", "a\n");
        write("src/b.rs", "b\n");
        write("src/deep/c.rs", "c\n");
        write("src/deep/d.rs", "d\n");
        write("src/other.rs", "o\n");
        write("docs", "a file first\n");
        write("gone.rs", "g\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "root"]);
        // Each commit changes some of the asked files, in folders left alone or not, turns a
        // file into a folder, removes one and adds one in a new folder.
        let steps: [&[(&str, Option<&str>)]; 4] = [
            &[
                ("src/deep/c.rs", Some("c2\n")),
                ("src/other.rs", Some("o2\n")),
            ],
            &[
                ("a.rs", Some("a2\n")),
                ("gone.rs", None),
                ("f/g.rs", Some("g\n")),
            ],
            &[
                ("docs", None),
                ("docs/e.md", Some("e\n")),
                ("src/b.rs", Some("b2\n")),
            ],
            &[("src/other.rs", Some("o3\n"))],
        ];
        let repo = gix::open(dir).unwrap();
        let mut compared = 0;
        for step in steps {
            for (path, text) in step {
                match text {
                    Some(text) => write(path, text),
                    None => fs::remove_file(dir.join(path)).unwrap(),
                }
            }
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", "step"]);
            let head = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).trim().as_bytes());
            let head = head.unwrap();
            let (tree, parent) = tree_ids(&repo, head).unwrap();
            let mut found = Vec::new();
            changed_blobs(&repo, Some(tree), parent, "", &asked, &mut found);
            found.sort();
            // git's own account: the blobs on each side of every changed file asked about.
            let raw = git(
                dir,
                &["diff-tree", "-r", "--no-renames", "--raw", "HEAD^", "HEAD"],
            );
            let mut expected: Vec<(String, Option<ObjectId>, Option<ObjectId>)> = raw
                .lines()
                .filter_map(|line| {
                    let (meta, path) = line.split_once('\t')?;
                    let fields: Vec<&str> = meta.split(' ').collect();
                    let blob = |hex: &str| {
                        let id = ObjectId::from_hex(hex.as_bytes()).unwrap();
                        (!id.is_null()).then_some(id)
                    };
                    let (before, now) = (blob(fields[2]), blob(fields[3]));
                    asked
                        .contains(&path)
                        .then(|| (path.to_owned(), now, before))
                })
                .collect();
            expected.sort();
            compared += expected.len();
            assert_eq!(found, expected);
            // The files a commit changes, by name, are those.
            let names: BTreeSet<String> = expected.into_iter().map(|(path, ..)| path).collect();
            assert_eq!(changed(&repo, head, &asked.into_iter().collect()), names);
        }
        // c.rs; a.rs, gone.rs, f/g.rs; docs, docs/e.md, b.rs; none.
        assert_eq!(compared, 7);
    }

    #[test]
    fn a_deferred_line_written_as_the_file_is_claimed_reaches_the_next_claim() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DEFERRED);
        let claimed = dir.path().join(DEFERRED_CLAIMED);
        fs::write(&path, "s1 0000000000000000000000000000000000000001 1\n").unwrap();
        // A hook opens the file to append its line; a run takes the file aside and reads it
        // before the line is written; then the hook writes.
        let file = open_deferred(&path).unwrap();
        fs::rename(&path, &claimed).unwrap();
        let seen = fs::read_to_string(&claimed).unwrap();
        let line = "s2 0000000000000000000000000000000000000002 2\n";
        append_line(&path, file, line, || open_deferred(&path)).unwrap();
        // The claim saw one line and removes the file; the hook's line waits for the next.
        assert_eq!(seen.lines().count(), 1);
        fs::remove_file(&claimed).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), line);
        // Undisturbed, a line is written once.
        append_line(&path, open_deferred(&path).unwrap(), line, || {
            open_deferred(&path)
        })
        .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), line.repeat(2));
    }

    #[test]
    fn a_deferred_line_claimed_away_under_every_write_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DEFERRED);
        // Every file the line is written to is claimed between its open and the write.
        let mut claims = 0;
        let mut open_and_claim = || {
            let file = open_deferred(&path)?;
            claims += 1;
            fs::rename(&path, dir.path().join(format!("claim{claims}"))).unwrap();
            Ok(file)
        };
        let first = open_and_claim().unwrap();
        let line = "s1 0000000000000000000000000000000000000001 1\n";
        let err = append_line(&path, first, line, open_and_claim).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot write"),
            "{}",
            error_chain(&err)
        );
        assert!(
            error_chain(&err).contains("claimed under each of 8 writes"),
            "{}",
            error_chain(&err)
        );
        assert_eq!(claims, APPEND_ATTEMPTS);
    }
}
