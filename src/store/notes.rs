//! Events on commits: one git note per commit under `refs/notes/agent-context`.
//!
//! Written with gix, read by plain git (`git notes --ref=agent-context show <commit>`,
//! `git log --notes=agent-context`), and reading what git wrote, fan-out trees included.
//! Every update is read-modify-write under a compare-and-swap of the notes ref: if another
//! writer moved the ref in between, the work is redone on top of theirs, so no writer loses
//! another's events.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

pub use gix::ObjectId;
use gix::refs::transaction::PreviousValue;

use super::{Error, Result, Store, commit, expecting, git_error, point, ref_tip, signature, told};
use crate::event::note::{Glance, decode, decode_kinds, encode, union};
use crate::event::{Event, Link, Merged, fingerprint, merge};

/// The notes ref the events live on.
pub const REF: &str = "refs/notes/agent-context";

/// The notes ref a remote's notes are fetched into (by `sync`, or by `git fetch` with the
/// refspec `install --sync` adds).
pub fn tracking(remote: &str) -> String {
    format!("refs/notes/remotes/{remote}/agent-context")
}

/// How often an update is redone after losing a race before giving up.
const ATTEMPTS: usize = 100;

/// The commit of this repository that a full or abbreviated hex id names, if exactly one.
pub(crate) fn resolve_commit(repo: &gix::Repository, hex: &str) -> Option<ObjectId> {
    let width = repo.object_hash().len_in_hex();
    let id = if hex.len() == width {
        ObjectId::from_hex(hex.as_bytes()).ok()?
    } else {
        // A prefix of the repository's kind of id: `Prefix::from_hex` takes a short one for
        // SHA-1, which a SHA-256 repository's objects never match.
        let padded = ObjectId::from_hex(format!("{hex:0<width$}").as_bytes()).ok()?;
        let prefix = gix::hash::Prefix::new(&padded, hex.len()).ok()?;
        repo.objects.lookup_prefix(prefix, None).ok()??.ok()?
    };
    repo.find_commit(id).ok().map(|c| c.id)
}

/// [`resolve_commit`], or an error that names `hex`.
fn commit_id(repo: &gix::Repository, hex: &str) -> Result<ObjectId> {
    resolve_commit(repo, hex).ok_or_else(|| {
        Error::git(
            format!("find commit {hex:?}"),
            "no commit of this repository has this id",
        )
    })
}

/// The notes ref's commit, if the ref exists.
pub(crate) fn tip(repo: &gix::Repository) -> Result<Option<ObjectId>> {
    ref_tip(repo, REF)
}

/// The note state (a lazily loaded notes tree) at `tip`.
fn state_at(repo: &gix::Repository, tip: Option<ObjectId>) -> Result<gix::note::plumbing::State> {
    let tree = match tip {
        Some(commit) => repo
            .find_commit(commit)
            .map_err(git_error(format!("read {REF}")))?
            .tree_id()
            .map_err(git_error(format!("read the tree of {REF}")))?
            .detach(),
        None => ObjectId::empty_tree(repo.object_hash()),
    };
    gix::note::plumbing::State::new(tree, &repo.objects)
        .map_err(git_error(format!("read the notes tree of {REF}")))
}

fn note_of(
    repo: &gix::Repository,
    state: &mut gix::note::plumbing::State,
    commit: &ObjectId,
) -> Result<Vec<Event>> {
    Ok(decode(&note_bytes(repo, state, commit)?).0)
}

/// The text of `commit`'s note as `state` finds it (empty for none).
fn note_bytes(
    repo: &gix::Repository,
    state: &mut gix::note::plumbing::State,
    commit: &ObjectId,
) -> Result<Vec<u8>> {
    let blob = state
        .get(commit, &repo.objects)
        .map_err(git_error(format!("look up the note of {commit}")))?;
    note_text(repo, *commit, blob)
}

/// Create the notes ref, empty, if it does not exist: with `notes.rewriteRef` set, git warns
/// on every amend and rebase while the ref is missing. True when it was created.
pub fn ensure_ref(store: &Store) -> Result<bool> {
    let repo = store.repo();
    if tip(&repo)?.is_some() {
        return Ok(false);
    }
    let signature = signature(&repo);
    let message = "agent-context: notes start here";
    let empty = repo
        .write_object(gix::objs::Tree::empty())
        .map_err(git_error("write the empty tree"))?
        .detach();
    let new = commit(&repo, &signature, REF, message, empty, None)?;
    match point(
        &repo,
        &signature,
        REF,
        new,
        PreviousValue::MustNotExist,
        message,
    ) {
        Ok(_) => Ok(true),
        // Another writer made it first.
        Err(_) if tip(&repo)?.is_some() => Ok(false),
        Err(e) => Err(git_error(format!("create {REF}"))(e)),
    }
}

/// The events attached to `commit` (a full or abbreviated hex id).
pub fn read(store: &Store, commit: &str) -> Result<Vec<Event>> {
    read_id(store, commit_id(&store.repo(), commit)?)
}

/// The events attached to the commit `id`.
pub fn read_id(store: &Store, id: ObjectId) -> Result<Vec<Event>> {
    let repo = store.repo();
    Reader::new(&repo)?.events(id)
}

/// Reads notes as they are at the notes ref's tip, keeping what it loaded of the notes tree
/// from one read to the next.
pub(crate) struct Reader<'r> {
    repo: &'r gix::Repository,
    /// The notes ref's tip the notes are read at.
    tip: Option<ObjectId>,
    state: gix::note::plumbing::State,
}

impl<'r> Reader<'r> {
    pub(crate) fn new(repo: &'r gix::Repository) -> Result<Reader<'r>> {
        let tip = tip(repo)?;
        let state = state_at(repo, tip)?;
        Ok(Reader { repo, tip, state })
    }

    pub(crate) fn events(&mut self, id: ObjectId) -> Result<Vec<Event>> {
        note_of(self.repo, &mut self.state, &id)
    }

    /// The events of the kinds `kinds` takes whole attached to `id`, and a glance at those it
    /// glances at ([`crate::event::note::decode_kinds`]): from what `kept` keeps of the note
    /// when it was made from the note as it is ([`super::told`]), else from the note, kept there
    /// for the next reader.
    pub(crate) fn of_kinds(
        &mut self,
        id: ObjectId,
        kinds: told::Kinds,
        kept: &Path,
    ) -> Result<(Vec<Event>, Vec<Glance>)> {
        let blob = (self.state.get(&id, &self.repo.objects))
            .map_err(git_error(format!("look up the note of {id}")))?;
        let Some(blob) = blob else {
            told::remove(kept, id);
            return Ok((Vec::new(), Vec::new()));
        };
        if let Some(read) = told::read(kept, id, blob, kinds) {
            return Ok(read);
        }
        let note = note_text(self.repo, id, Some(blob))?;
        let read = decode_kinds(&note, kinds.whole, kinds.glanced);
        told::write(kept, id, blob, kinds, &read);
        // The notes changed meanwhile (a forget, which removes every copy once it has changed
        // them): this copy, of a note no longer there, goes too.
        if tip(self.repo).ok() != Some(self.tip) {
            told::remove(kept, id);
        }
        Ok(read)
    }
}

/// The text of `commit`'s note whose blob is `blob` (empty for none).
fn note_text(repo: &gix::Repository, commit: ObjectId, blob: Option<ObjectId>) -> Result<Vec<u8>> {
    let Some(blob) = blob else {
        return Ok(Vec::new());
    };
    Ok(repo
        .find_blob(blob)
        .map_err(git_error(format!("read the note of {commit}")))?
        .detach()
        .data)
}

/// Every commit that has a note, whatever fan-out the notes tree uses.
pub(crate) fn annotated(repo: &gix::Repository) -> Result<Vec<ObjectId>> {
    Ok(notes_at(repo, tip(repo)?)?
        .into_iter()
        .map(|(c, _)| c)
        .collect())
}

/// Every note of the notes ref at `tip`: the commit and the note's blob.
pub(crate) fn notes_at(
    repo: &gix::Repository,
    tip: Option<ObjectId>,
) -> Result<Vec<(ObjectId, ObjectId)>> {
    let Some(tip) = tip else {
        return Ok(Vec::new());
    };
    let tree = repo
        .find_commit(tip)
        .and_then(|c| c.tree())
        .map_err(git_error(format!("read {REF}")))?;
    let entries = tree
        .traverse()
        .breadthfirst
        .files()
        .map_err(git_error(format!("list the notes of {REF}")))?;
    Ok(entries
        .iter()
        .filter(|e| e.mode.is_blob())
        .filter_map(|e| Some((commit_of_path(e.filepath.as_ref())?, e.oid)))
        .collect())
}

/// The commit a note's path in the notes tree is for: its hex id, split into fan-out folders
/// or not.
pub(crate) fn commit_of_path(path: &gix::bstr::BStr) -> Option<ObjectId> {
    let hex: Vec<u8> = path.iter().copied().filter(|&b| b != b'/').collect();
    ObjectId::from_hex(&hex).ok()
}

/// Attach `events` to `commit` (a full or abbreviated hex id), merging them into its note by
/// event id.
pub fn attach(store: &Store, commit: &str, events: &[Event]) -> Result<Merged> {
    let id = commit_id(&store.repo(), commit)?;
    attach_to(store, id, events)
}

/// [`attach`] for a commit id already known to be a commit of this repository.
pub(crate) fn attach_to(store: &Store, id: ObjectId, events: &[Event]) -> Result<Merged> {
    attach_all(store, &[(id, events.to_vec())])
}

/// Attach each batch of events to its commit (ids known to be commits of this repository), all
/// in one commit on the notes ref; nothing is written when no note changes.
pub fn attach_all(store: &Store, batches: &[(ObjectId, Vec<Event>)]) -> Result<Merged> {
    attach_all_keeping(store, batches, &HashSet::new())
}

/// [`attach_all`], except that an event whose id is in `keep` only joins a note that does not
/// hold it yet: the version already there stays. For copies that may be older than what the
/// note holds (a queue line a crashed run left behind, or one a hook appended late).
pub(crate) fn attach_all_keeping(
    store: &Store,
    batches: &[(ObjectId, Vec<Event>)],
    keep: &HashSet<&str>,
) -> Result<Merged> {
    let commits: Vec<ObjectId> = batches.iter().map(|(c, _)| *c).collect();
    rewrite(store, &commits, |i, old| {
        let held: HashSet<String> = old
            .iter()
            .filter(|e| keep.contains(e.id.as_str()))
            .map(|e| e.id.clone())
            .collect();
        // How the commit was linked: the better founded of what the note says and what this
        // run found (a run that did not link the commit says nothing).
        let linked: HashMap<String, Link> = old
            .iter()
            .filter_map(|e| Some((e.id.clone(), e.link?)))
            .collect();
        let new = batches[i]
            .1
            .iter()
            .filter(|e| !held.contains(&e.id))
            .map(|e| {
                let mut e = e.clone();
                e.link = Link::stronger(e.link, linked.get(&e.id).copied());
                // A note keeps a sample of a write's lines.
                if e.lines.len() > fingerprint::SAMPLE_MAX {
                    e.lines = fingerprint::smallest(e.lines, fingerprint::SAMPLE_MAX);
                }
                e
            });
        merge(old, new)
    })
}

/// Take the events with the given ids off each commit's note, all in one commit on the notes
/// ref (a note left empty goes).
pub(crate) fn remove_all(store: &Store, removals: &[(ObjectId, HashSet<&str>)]) -> Result<Merged> {
    let commits: Vec<ObjectId> = removals.iter().map(|(c, _)| *c).collect();
    rewrite(store, &commits, |i, old| {
        without(old, |id| removals[i].1.contains(id))
    })
}

/// `events` without those whose id is `gone`, and how many went.
fn without(events: Vec<Event>, gone: impl Fn(&str) -> bool) -> (Vec<Event>, Merged) {
    let before = events.len();
    let kept: Vec<Event> = events.into_iter().filter(|e| !gone(&e.id)).collect();
    let removed = before - kept.len();
    (
        kept,
        Merged {
            removed,
            ..Merged::default()
        },
    )
}

/// Rewrite the notes of `commits` with `edit` (given the index in `commits` and the events
/// there now, it returns the events to keep and what changed), in one commit on the notes ref,
/// redone on top of another writer's commit if the ref moved in between.
fn rewrite(
    store: &Store,
    commits: &[ObjectId],
    mut edit: impl FnMut(usize, Vec<Event>) -> (Vec<Event>, Merged),
) -> Result<Merged> {
    if commits.is_empty() {
        return Ok(Merged::default());
    }
    let repo = store.repo();
    let signature = signature(&repo);
    for attempt in 0..ATTEMPTS {
        let old_tip = tip(&repo)?;
        let mut state = state_at(&repo, old_tip)?;
        let mut total = Merged::default();
        let mut changed: Vec<&ObjectId> = Vec::new();
        for (i, id) in commits.iter().enumerate() {
            let old = note_of(&repo, &mut state, id)?;
            let (events, counts) = edit(i, old);
            if !counts.changed() {
                continue;
            }
            total.added += counts.added;
            total.updated += counts.updated;
            total.removed += counts.removed;
            changed.push(id);
            let blob = if events.is_empty() {
                None
            } else {
                let blob = repo
                    .write_blob(encode(&events))
                    .map_err(git_error("write a note"))?;
                Some(blob.detach())
            };
            state
                .edit(*id, blob, &repo.objects)
                .map_err(git_error("edit the notes tree"))?;
        }
        if changed.is_empty() {
            return Ok(total);
        }
        let tree = state
            .write(&repo.objects)
            .map_err(git_error("write the notes tree"))?;
        let target = match changed[..] {
            [id] => id.to_hex_with_len(12).to_string(),
            _ => format!("{} commits", changed.len()),
        };
        let mut message = format!(
            "agent-context: {} new, {} updated",
            total.added, total.updated
        );
        if total.removed > 0 {
            message.push_str(&format!(", {} removed", total.removed));
        }
        message.push_str(&format!(" on {target}"));
        let new = commit(&repo, &signature, REF, &message, tree, old_tip)?;
        match point(
            &repo,
            &signature,
            REF,
            new,
            expecting(old_tip),
            message.as_str(),
        ) {
            Ok(_) => return Ok(total),
            // Another writer moved the ref, or held its lock: redo the work on top of theirs.
            Err(e) => store.retry_update(&repo, REF, old_tip, e, attempt)?,
        }
    }
    Err(Error::Contended {
        refname: REF,
        attempts: ATTEMPTS,
    })
}

/// What [`merge_from`] did to our notes: the notes that changed here, and the events they
/// gained or saw updated.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Merge {
    pub notes: usize,
    pub events: usize,
}

/// Merge the notes at `theirs` (a commit of a notes ref fetched from another clone) into ours:
/// the union of both by event id, note by note ([`union`]), leaving out the events `dropped`
/// names (those forgotten here) and keeping our own events whole where theirs are only the
/// shared copies `copy_of` makes of them. The result is a commit with both tips as parents — so that
/// pushing it to where `theirs` came from is a fast-forward — or our ref moved to `theirs`
/// when ours is behind it and nothing is left out. Nothing happens when ours already holds
/// `theirs`. Like every update of the ref, it is redone if another writer moves the ref.
pub fn merge_from(
    store: &Store,
    theirs: ObjectId,
    dropped: impl Fn(&str) -> bool,
    copy_of: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> Result<Merge> {
    let repo = store.repo();
    let signature = signature(&repo);
    for attempt in 0..ATTEMPTS {
        let ours = tip(&repo)?;
        let mut done = Merge::default();
        if ours.is_some_and(|ours| is_ancestor(&repo, theirs, ours)) {
            return Ok(done);
        }
        let held: HashMap<ObjectId, ObjectId> = notes_at(&repo, ours)?.into_iter().collect();
        let their_notes = notes_at(&repo, Some(theirs))?;
        // What both had when they last met: a note of theirs unchanged since was merged then
        // (and what this clone took out of it since stays out).
        let base = ours.and_then(|ours| repo.merge_base(ours, theirs).ok().flatten());
        let met: HashMap<ObjectId, ObjectId> = notes_at(&repo, base.map(|b| b.detach()))?
            .into_iter()
            .collect();
        // Whether the union is exactly their notes: then ours, if behind, just moves to theirs.
        let theirs_hold: HashSet<ObjectId> = their_notes.iter().map(|(c, _)| *c).collect();
        let mut same_as_theirs = held.keys().all(|c| theirs_hold.contains(c));
        let mut state = state_at(&repo, ours)?;
        for (commit, blob) in their_notes {
            let mine = held.get(&commit).copied();
            if mine == Some(blob) || met.get(&commit) == Some(&blob) {
                continue;
            }
            let their_text = note_text(&repo, commit, Some(blob))?;
            let mine = note_text(&repo, commit, mine)?;
            let (merged, brought) = union(&mine, &their_text, &dropped, &copy_of);
            same_as_theirs &= merged == their_text;
            if brought.is_empty() {
                continue;
            }
            done.notes += 1;
            done.events += brought.len();
            let blob = repo
                .write_blob(&merged)
                .map_err(git_error("write a note"))?
                .detach();
            state
                .edit(commit, Some(blob), &repo.objects)
                .map_err(git_error("edit the notes tree"))?;
        }
        let behind = ours.is_none_or(|ours| is_ancestor(&repo, ours, theirs));
        let new = if behind && same_as_theirs {
            theirs
        } else {
            let tree = state
                .write(&repo.objects)
                .map_err(git_error("write the notes tree"))?;
            let message = format!(
                "agent-context: merged fetched notes, {} events new on {} commits",
                done.events, done.notes
            );
            commit(
                &repo,
                &signature,
                REF,
                &message,
                tree,
                ours.into_iter().chain([theirs]),
            )?
        };
        match point(
            &repo,
            &signature,
            REF,
            new,
            expecting(ours),
            "agent-context: merge fetched notes",
        ) {
            Ok(_) => return Ok(done),
            Err(e) => store.retry_update(&repo, REF, ours, e, attempt)?,
        }
    }
    Err(Error::Contended {
        refname: REF,
        attempts: ATTEMPTS,
    })
}

/// What [`derive()`] gives of a note: `filter` makes the note's shared form (`level` names it),
/// and the events `forgotten` names (`count` of them) are left out.
#[derive(Clone, Copy)]
pub struct Giving<'a> {
    pub level: &'a str,
    pub filter: &'a dyn Fn(&[u8]) -> Vec<u8>,
    pub forgotten: &'a dyn Fn(&str) -> bool,
    pub count: usize,
}

/// The notes to give to where `theirs` came from: for each of our notes, what `share` keeps of
/// it, in union with the note `theirs` holds for the same commit, less the events `dropped`
/// names (those forgotten here, which thus leave the remote too). Written as a commit whose one
/// parent is `theirs` — pushing it is a fast-forward — at `refname`, which keeps it from gc;
/// `None` when `theirs` holds all of it already. When `theirs` holds what was given last time,
/// only the notes written since are looked at; otherwise (a first sync, a push that lost, a
/// forget since) every note is.
pub fn derive(
    store: &Store,
    refname: &'static str,
    theirs: Option<ObjectId>,
    giving: Giving<'_>,
) -> Result<Option<ObjectId>> {
    let repo = store.repo();
    let our_tip = tip(&repo)?;
    let ours: HashMap<ObjectId, ObjectId> = notes_at(&repo, our_tip)?.into_iter().collect();
    let their_notes: HashMap<ObjectId, ObjectId> = notes_at(&repo, theirs)?.into_iter().collect();
    // The notes given last time, if the remote holds them (and neither the level nor what is
    // forgotten changed since): only our notes written since then need giving.
    let given_from = ref_tip(&repo, refname)?.and_then(|last| {
        let commit = repo.find_commit(last).ok()?;
        let message = commit.message_raw_sloppy().to_string();
        let from = message.lines().find_map(|l| l.strip_prefix("from "))?;
        let forgotten = message.lines().find_map(|l| l.strip_prefix("forgotten "))?;
        let level = message.lines().find_map(|l| l.strip_prefix("level "))?;
        let held = theirs.is_some_and(|t| is_ancestor(&repo, last, t));
        (held && forgotten.parse() == Ok(giving.count) && level == giving.level)
            .then(|| ObjectId::from_hex(from.as_bytes()).ok())
            .flatten()
    });
    let since: Option<HashMap<ObjectId, ObjectId>> = match given_from {
        Some(from) => Some(notes_at(&repo, Some(from))?.into_iter().collect()),
        None => None,
    };
    let mut state = state_at(&repo, theirs)?;
    let mut given = 0;
    let mut commits: Vec<ObjectId> = ours
        .iter()
        .filter(|(c, b)| since.as_ref().is_none_or(|since| since.get(*c) != Some(*b)))
        .map(|(c, _)| *c)
        .collect();
    if since.is_none() && giving.count > 0 {
        commits.extend(their_notes.keys().filter(|c| !ours.contains_key(*c)));
    }
    for commit in commits {
        let shared = match ours.get(&commit) {
            Some(&blob) => (giving.filter)(&note_text(&repo, commit, Some(blob))?),
            None => Vec::new(),
        };
        let note = match their_notes.get(&commit) {
            Some(&held) => {
                let held = note_text(&repo, commit, Some(held))?;
                let (merged, _) = union(&held, &shared, giving.forgotten, |_| None);
                if merged == held {
                    continue;
                }
                merged
            }
            None if shared.is_empty() => continue,
            None => shared,
        };
        let blob = match note.is_empty() {
            true => None,
            false => Some(
                repo.write_blob(&note)
                    .map_err(git_error("write a note"))?
                    .detach(),
            ),
        };
        state
            .edit(commit, blob, &repo.objects)
            .map_err(git_error("edit the notes tree"))?;
        given += 1;
    }
    if given == 0 {
        return Ok(None);
    }
    let tree = state
        .write(&repo.objects)
        .map_err(git_error("write the notes tree"))?;
    let signature = signature(&repo);
    // Where the next derive starts from.
    let from = our_tip.map_or_else(|| "none".to_owned(), |t| t.to_string());
    let message = format!(
        "agent-context: {given} notes to share\n\nfrom {from}\nlevel {}\nforgotten {}\n",
        giving.level, giving.count
    );
    let new = commit(&repo, &signature, refname, &message, tree, theirs)?;
    // The ref is this clone's alone; a lock a killed writer left is cleared as for ours.
    for attempt in 0..ATTEMPTS {
        let current = ref_tip(&repo, refname)?;
        let any = PreviousValue::Any;
        match point(&repo, &signature, refname, new, any, &message) {
            Ok(_) => return Ok(Some(new)),
            Err(e) => store.retry_update(&repo, refname, current, e, attempt)?,
        }
    }
    Err(Error::Contended {
        refname,
        attempts: ATTEMPTS,
    })
}

/// The sessions whose events differ between the notes at `from` and at `to`, each with the
/// commits whose notes differ for it: what the graph must take in after the ref moved from one
/// to the other outside the writers that update it as they go (a merge of fetched notes).
pub fn sessions_changed(
    store: &Store,
    from: Option<ObjectId>,
    to: Option<ObjectId>,
) -> Result<BTreeMap<String, BTreeSet<ObjectId>>> {
    let repo = store.repo();
    let before: HashMap<ObjectId, ObjectId> = notes_at(&repo, from)?.into_iter().collect();
    let mut touched: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
    let mut old = state_at(&repo, from)?;
    for (commit, blob) in notes_at(&repo, to)? {
        if before.get(&commit) == Some(&blob) {
            continue;
        }
        let was: HashMap<String, Event> = note_of(&repo, &mut old, &commit)?
            .into_iter()
            .map(|e| (e.id.clone(), e))
            .collect();
        for e in decode(&note_text(&repo, commit, Some(blob))?).0 {
            if was.get(&e.id) != Some(&e) {
                touched.entry(e.session_id).or_default().insert(commit);
            }
        }
    }
    Ok(touched)
}

/// Whether commit `a` is `b` or one of its ancestors.
fn is_ancestor(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> bool {
    a == b
        || repo
            .merge_base(a, b)
            .ok()
            .flatten()
            .is_some_and(|base| base.detach() == a)
}
