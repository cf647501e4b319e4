//! Code review with the reasoning beside the diff (docs/commands.md, "Code review"): `show` (one
//! commit),
//! `review` (a branch's change set) and `log` (commits with their decisions underneath).
//!
//! A review is the net diff of a range and the reasoning in the notes of the commits in it.
//! Each piece of reasoning goes with the files it names; one that names none of the changed
//! files concerns the change as a whole. Within a file it is placed before the hunk it
//! explains when that can be told — the only hunk holding lines its commit added, else the one
//! whose changed lines share the most words with it — and before the file's first hunk
//! otherwise. Decisions a later one superseded (the decision graph's edges) say so.
//!
//! Ranges read as git reads them: `A..B` diffs A's tree with B's, `A...B` diffs their merge
//! base with B (what a pull request shows), a lone `A` means `A..HEAD`; the commits are those
//! B reaches and A does not.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use serde::Serialize;

use crate::event::time::rfc3339;
use crate::event::{Event, Kind};
use crate::retrieve::diff::{self, FileDiff, Hunk};
use crate::retrieve::index::lines::{LineHash, added_lines};
use crate::retrieve::index::terms::terms;
use crate::retrieve::said_once;
use crate::sanitise;
use crate::store::graph::View;
use crate::store::{self, Store, git_error, history, notes};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}: unknown revision or not a commit")]
    UnknownRevision(String),
    #[error("{spec}: the two sides have no common ancestor")]
    NoMergeBase { spec: String },
    #[error("this repository has no commit yet")]
    NoHead,
    #[error("{0}: ^!, ^@ and ^-<n> are not supported; write the range out (A~1..A, A^1..A)")]
    Unsupported(String),
    #[error("cannot write the output")]
    Output(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A commit as a review shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitInfo {
    pub id: String,
    pub short: String,
    pub parents: Vec<String>,
    /// `Name <email>`
    pub author: String,
    /// The author date as `git show` prints it: `Mon Jan 5 10:00:00 2026 +0000`.
    pub date: String,
    /// The author date in UTC, RFC 3339.
    pub timestamp: String,
    pub subject: String,
    /// The whole message, trailing white space trimmed.
    pub message: String,
}

/// A session that made commits of a review.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo {
    pub id: String,
    /// What it was asked to do, when known.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// The agent that ran it (`codex`, `gemini-cli`); absent for Claude Code.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub agent: String,
    /// Its commits in the review, oldest first (short ids).
    pub commits: Vec<String>,
}

/// The decision that superseded one.
#[derive(Debug, Clone, Serialize)]
pub struct Superseded {
    pub id: String,
    pub summary: String,
    /// The first commit carrying it (short id).
    pub commit: String,
}

/// One piece of reasoning.
#[derive(Debug, Clone, Serialize)]
pub struct Reason {
    pub id: String,
    pub kind: Kind,
    pub summary: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub rationale: String,
    /// Alternatives named as not taken, each with the rejection that said why when one of
    /// the same turn did (that rejection is then not listed on its own).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub considered: Vec<Considered>,
    /// The prompt it answered.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub prompt: String,
    pub session: String,
    /// The agent that ran the session (`codex`, `gemini-cli`); absent for Claude Code.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub agent: String,
    /// The commit whose note holds it (short id).
    pub commit: String,
    pub timestamp: String,
    /// The files it names; given for reasoning about the change as a whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The index of the hunk it explains, in its file's `hunks`; absent: the file as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunk: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<Superseded>,
    /// Set when its text reads as an instruction to an agent (`sanitise::reads_as_instruction`):
    /// what people are told of it. Agents are never given it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<&'static str>,
}

/// An alternative that was not taken.
#[derive(Debug, Clone, Serialize)]
pub struct Considered {
    pub option: String,
    /// Why it was ruled out: the summary of the rejection that said so.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub rejected: String,
    /// That rejection's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<String>,
}

/// A changed file and the reasoning about it.
#[derive(Debug, Clone, Serialize)]
pub struct FileReview {
    #[serde(flatten)]
    pub diff: FileDiff,
    pub reasons: Vec<Reason>,
}

impl FileReview {
    /// The reasons placed before hunk `index` (`None`: before the first hunk, for the file).
    pub fn reasons_at(&self, index: Option<usize>) -> impl Iterator<Item = &Reason> {
        self.reasons.iter().filter(move |r| r.hunk == index)
    }
}

/// What a review holds, counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub commits: usize,
    pub sessions: usize,
    pub decisions: usize,
    pub rejections: usize,
    pub tradeoffs: usize,
    /// Every piece of reasoning, each counted once.
    pub reasons: usize,
    pub files: usize,
    pub additions: u32,
    pub deletions: u32,
    pub files_without_reasoning: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Review {
    /// The range as asked (`main...feature`, or the commit for `show`).
    pub range: String,
    /// The commit the diff starts from; absent for a root commit (the empty tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub head: String,
    /// The commits of the range, oldest first.
    pub commits: Vec<CommitInfo>,
    pub sessions: Vec<SessionInfo>,
    /// Reasoning that names none of the changed files.
    pub general: Vec<Reason>,
    pub files: Vec<FileReview>,
    pub totals: Totals,
}

/// One commit of `log` and its standing reasoning.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    pub commit: CommitInfo,
    pub sessions: Vec<String>,
    /// Its decisions, rejections and trade-offs.
    pub reasons: Vec<Reason>,
}

/// `show <rev>`: the commit against its first parent (the empty tree for a root commit, or
/// one on a shallow clone's boundary, as `git show` shows it).
pub fn show(store: &Store, rev: &str, musings: bool) -> Result<Review, Error> {
    let repo = store.repo();
    let commit = resolve(&repo, rev)?;
    let c = repo
        .find_commit(commit)
        .map_err(git_error(format!("read commit {commit}")))?;
    let base = history::parents(&repo, &c).first().copied();
    build(&repo, rev, base, commit, vec![commit], musings)
}

/// `review <range>`: the net diff of the range and the reasoning of its commits.
pub fn review(store: &Store, spec: &str, musings: bool) -> Result<Review, Error> {
    let repo = store.repo();
    let (base, head, merge_bases) = resolve_range(&repo, spec)?;
    // Of several merge bases (criss-cross merges), the first, as `git diff A...B` takes.
    let from = match merge_bases {
        None => base,
        Some(bases) => *bases.first().ok_or_else(|| Error::NoMergeBase {
            spec: spec.to_owned(),
        })?,
    };
    let mut commits = walk(&repo, &[head], &[base], None, &mut |_| Ok(true))?;
    commits.reverse();
    build(&repo, spec, Some(from), head, commits, musings)
}

/// `log [<range>] [-- <paths>]`: the commits newest first, each with its decisions,
/// rejections and trade-offs, given to `each` as the walk finds them (so that the first
/// screen shows at once on a long history); only those with some when `reasoned`; at most
/// `max`.
pub fn log(
    store: &Store,
    range: Option<&str>,
    paths: &[String],
    max: Option<usize>,
    reasoned: bool,
    each: &mut dyn FnMut(LogEntry) -> Result<(), Error>,
) -> Result<(), Error> {
    let repo = store.repo();
    let (heads, hidden) = match range {
        None => (vec![resolve(&repo, "HEAD")?], Vec::new()),
        Some(spec) if spec.contains("..") => match resolve_range(&repo, spec)? {
            // Both sides' own commits, as `git log A...B` lists them.
            (base, head, Some(merge_bases)) => (vec![base, head], merge_bases),
            (base, head, None) => (vec![head], vec![base]),
        },
        Some(rev) => (vec![resolve(&repo, rev)?], Vec::new()),
    };
    let mut reader = notes::Reader::new(&repo)?;
    let mut graph = View::open(&repo)?;
    walk(&repo, &heads, &hidden, max, &mut |c| {
        if !paths.is_empty() && !touches(&repo, c, paths)? {
            return Ok(false);
        }
        let events = reader.events(c)?;
        if reasoned && !events.iter().any(|e| e.kind.stands()) {
            return Ok(false);
        }
        each(log_entry(&repo, &mut graph, c, &events)?)?;
        Ok(true)
    })?;
    Ok(())
}

fn log_entry(
    repo: &gix::Repository,
    graph: &mut View<'_>,
    commit: ObjectId,
    events: &[Event],
) -> Result<LogEntry, Error> {
    let info = commit_info(repo, commit)?;
    let mut sessions: Vec<String> = events.iter().map(|e| e.session_id.clone()).collect();
    sessions.sort();
    sessions.dedup();
    let mut reasons: Vec<Reason> = said_once(events, false)
        .iter()
        .filter(|e| e.kind.stands())
        .map(|e| Ok(reason(e, &info.short, superseded(graph, e)?)))
        .collect::<Result<_, Error>>()?;
    sort_reasons(&mut reasons);
    fold_rejections(&mut reasons);
    Ok(LogEntry {
        commit: info,
        sessions,
        reasons,
    })
}

/// What a range names.
struct RangeSpec<'a> {
    base: &'a str,
    head: &'a str,
    symmetric: bool,
}

/// `A..B`, `A...B` (either side may be left out for HEAD), or `A` for `A..HEAD`.
fn parse_range(spec: &str) -> RangeSpec<'_> {
    fn side(s: &str) -> &str {
        if s.is_empty() { "HEAD" } else { s }
    }
    for (separator, symmetric) in [("...", true), ("..", false)] {
        if let Some((a, b)) = spec.split_once(separator) {
            return RangeSpec {
                base: side(a),
                head: side(b),
                symmetric,
            };
        }
    }
    RangeSpec {
        base: spec,
        head: "HEAD",
        symmetric: false,
    }
}

/// The two ends of a range, and for `A...B` their merge bases (none, one, or several after
/// criss-cross merges).
type Ends = (ObjectId, ObjectId, Option<Vec<ObjectId>>);

/// The base and head commits `spec` names, and their merge bases for `A...B`.
fn resolve_range(repo: &gix::Repository, spec: &str) -> Result<Ends, Error> {
    let range = parse_range(spec);
    let head = resolve(repo, range.head)?;
    let base = resolve(repo, range.base)?;
    let merge_base = if range.symmetric {
        let found = repo
            .merge_bases_many(base, &[head])
            .map_err(git_error(format!("find the merge bases of {spec}")))?;
        Some(found.into_iter().map(|id| id.detach()).collect())
    } else {
        None
    };
    Ok((base, head, merge_base))
}

/// The commit `rev` names (peeling tags). The suffixes that name a range rather than a commit
/// are refused: gix reads `A^!` as `A`.
pub(crate) fn resolve(repo: &gix::Repository, rev: &str) -> Result<ObjectId, Error> {
    if ["^!", "^@", "^-"].iter().any(|s| rev.contains(s)) {
        return Err(Error::Unsupported(rev.to_owned()));
    }
    if rev == "HEAD" && repo.head_id().is_err() {
        return Err(Error::NoHead);
    }
    let unknown = || Error::UnknownRevision(rev.to_owned());
    let id = repo.rev_parse_single(rev).map_err(|_| unknown())?;
    let object = id.object().map_err(|_| unknown())?;
    let commit = object.peel_to_commit().map_err(|_| unknown())?;
    Ok(commit.id)
}

/// The commits `heads` reach and none of `hidden` do, newest first (by commit time, as
/// `git log`), those `keep` keeps; at most `max`.
fn walk(
    repo: &gix::Repository,
    heads: &[ObjectId],
    hidden: &[ObjectId],
    max: Option<usize>,
    keep: &mut dyn FnMut(ObjectId) -> Result<bool, Error>,
) -> Result<Vec<ObjectId>, Error> {
    use gix::revision::walk::Sorting;
    use gix::traverse::commit::simple::CommitTimeOrder;
    let failed = || git_error(format!("walk the history of {}", heads[0]));
    let walk = repo
        .rev_walk(heads.iter().copied())
        .sorting(Sorting::ByCommitTime(CommitTimeOrder::NewestFirst))
        .with_hidden(hidden.iter().copied())
        .all()
        .map_err(failed())?;
    let mut out = Vec::new();
    for info in walk {
        if max.is_some_and(|m| out.len() >= m) {
            break;
        }
        let id = info.map_err(failed())?.id;
        if keep(id)? {
            out.push(id);
        }
    }
    Ok(out)
}

/// Whether `commit` changed one of `paths` (files or folders) against its first parent.
fn touches(repo: &gix::Repository, commit: ObjectId, paths: &[String]) -> Result<bool, Error> {
    let (tree, parent_tree) = diff::with_parent(repo, commit)?;
    let entry = |tree: Option<&gix::Tree<'_>>, path: &str| -> Result<Option<ObjectId>, Error> {
        let Some(tree) = tree else {
            return Ok(None);
        };
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(git_error(format!("look up {path} in {commit}")))?
            .map(|e| e.object_id()))
    };
    for path in paths {
        let path = path.trim_end_matches('/');
        if path.is_empty() {
            return Ok(true);
        }
        if entry(Some(&tree), path)? != entry(parent_tree.as_ref(), path)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn commit_info(repo: &gix::Repository, commit: ObjectId) -> Result<CommitInfo, Error> {
    let c = repo
        .find_commit(commit)
        .map_err(git_error(format!("read commit {commit}")))?;
    let decoded = c
        .decode()
        .map_err(git_error(format!("read commit {commit}")))?;
    let author = decoded
        .author()
        .map_err(git_error(format!("read the author of {commit}")))?;
    let time = author.time().unwrap_or_default();
    let message = decoded.message.to_string();
    let message = message.trim_end().to_owned();
    Ok(CommitInfo {
        id: commit.to_string(),
        short: short(&commit),
        parents: history::parents(repo, &c)
            .iter()
            .map(ToString::to_string)
            .collect(),
        author: format!("{} <{}>", author.name, author.email),
        date: time.format_or_unix(gix::date::time::format::DEFAULT),
        timestamp: rfc3339(time.seconds),
        subject: message.lines().next().unwrap_or_default().to_owned(),
        message,
    })
}

fn short(id: &ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// The sessions of `events` (on the commit `short`), added to `sessions` or to what is known of
/// them: their commits, and the request each was given.
fn add_sessions(sessions: &mut Vec<SessionInfo>, events: &[Event], short: &str) {
    for e in events {
        let s = match sessions.iter().position(|s| s.id == e.session_id) {
            Some(i) => &mut sessions[i],
            None => {
                sessions.push(SessionInfo {
                    id: e.session_id.clone(),
                    request: String::new(),
                    agent: e.session.agent.clone(),
                    commits: Vec::new(),
                });
                sessions.last_mut().expect("just pushed")
            }
        };
        if !s.commits.iter().any(|c| c == short) {
            s.commits.push(short.to_owned());
        }
        if e.kind == Kind::Session && s.request.is_empty() {
            s.request = e.summary.clone();
        }
    }
}

/// A file of the change with its reasoning (`found`, with the commit each is on), each placed
/// beside the hunk it explains.
fn file_review(
    repo: &gix::Repository,
    diff: FileDiff,
    mut found: Vec<(ObjectId, Reason)>,
    commits: usize,
) -> Result<FileReview, Error> {
    // The hunks holding lines each commit added, found once per commit; a single commit's
    // are all of them, and say nothing.
    let mut candidates: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    if commits > 1 && !found.is_empty() {
        let added: Vec<Vec<u64>> = diff
            .hunks
            .iter()
            .map(|h| {
                h.lines
                    .iter()
                    .filter_map(|l| l.strip_prefix('+'))
                    .map(|l| LineHash::of(l.as_bytes()))
                    .filter(|h| !h.trivial)
                    .map(|h| h.hash)
                    .collect()
            })
            .collect();
        for &(commit, _) in &found {
            if let Entry::Vacant(slot) = candidates.entry(commit) {
                let lines = lines_added_by(repo, commit, &diff)?;
                slot.insert(
                    (0..added.len())
                        .filter(|&h| added[h].iter().any(|l| lines.contains(l)))
                        .collect(),
                );
            }
        }
    }
    let words = if found.is_empty() {
        Vec::new()
    } else {
        hunk_words(&diff.hunks)
    };
    for (commit, reason) in &mut found {
        let these = candidates.get(commit).map_or(&[][..], Vec::as_slice);
        reason.hunk = place(reason, &words, these);
    }
    let mut reasons = Vec::new();
    for group in found.chunk_by_mut(|a, b| a.0 == b.0) {
        let mut list: Vec<Reason> = group.iter().map(|(_, r)| r.clone()).collect();
        sort_reasons(&mut list);
        reasons.extend(list);
    }
    Ok(FileReview { diff, reasons })
}

/// The review of the change from `base` to `head`, made by `commits` (oldest first).
fn build(
    repo: &gix::Repository,
    range: &str,
    base: Option<ObjectId>,
    head: ObjectId,
    commits: Vec<ObjectId>,
    musings: bool,
) -> Result<Review, Error> {
    let diffs = diff::between(repo, base, head)?;
    let mut reader = notes::Reader::new(repo)?;
    let mut graph = View::open(repo)?;
    // Paths before and after the change, by either name.
    let mut by_path: HashMap<&str, usize> = HashMap::new();
    for (i, f) in diffs.iter().enumerate() {
        by_path.insert(&f.path, i);
        if let Some(old) = &f.old_path {
            by_path.insert(old, i);
        }
    }
    let mut infos = Vec::new();
    let mut sessions: Vec<SessionInfo> = Vec::new();
    let mut general = Vec::new();
    // Each file's reasoning with the commit it is on, in the order of the commits.
    let mut per_file: Vec<Vec<(ObjectId, Reason)>> = vec![Vec::new(); diffs.len()];
    for &c in &commits {
        let info = commit_info(repo, c)?;
        let mut events = reader.events(c)?;
        events.sort_by(|a, b| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)));
        add_sessions(&mut sessions, &events, &info.short);
        let mut commit_general = Vec::new();
        // What the sessions explored is narration beside a diff: for JSON only (`musings`), as
        // `why --json` has it.
        for e in &said_once(&events, musings) {
            let reason = reason(e, &info.short, superseded(&mut graph, e)?);
            let mut files: Vec<usize> = e
                .files_affected
                .iter()
                .filter_map(|p| by_path.get(p.as_str()).copied())
                .collect();
            files.sort();
            files.dedup();
            if files.is_empty() {
                commit_general.push(Reason {
                    files: e.files_affected.clone(),
                    ..reason
                });
                continue;
            }
            for i in files {
                per_file[i].push((c, reason.clone()));
            }
        }
        sort_reasons(&mut commit_general);
        general.extend(commit_general);
        infos.push(info);
    }
    let mut files = Vec::new();
    for (diff, found) in diffs.into_iter().zip(per_file) {
        files.push(file_review(repo, diff, found, commits.len())?);
    }
    // Counted before rejections are folded under their decisions: each is one still.
    let totals = totals(&infos, &sessions, &general, &files);
    fold_rejections(&mut general);
    for f in &mut files {
        fold_rejections(&mut f.reasons);
    }
    Ok(Review {
        range: range.to_owned(),
        base: base.map(|b| b.to_string()),
        head: head.to_string(),
        commits: infos,
        sessions,
        general,
        files,
        totals,
    })
}

fn totals(
    commits: &[CommitInfo],
    sessions: &[SessionInfo],
    general: &[Reason],
    files: &[FileReview],
) -> Totals {
    let mut seen: BTreeMap<&str, Kind> = BTreeMap::new();
    for r in general.iter().chain(files.iter().flat_map(|f| &f.reasons)) {
        seen.insert(&r.id, r.kind);
    }
    let count = |kind: Kind| seen.values().filter(|&&k| k == kind).count();
    Totals {
        commits: commits.len(),
        sessions: sessions.len(),
        decisions: count(Kind::Decision),
        rejections: count(Kind::Rejection),
        tradeoffs: count(Kind::Tradeoff),
        reasons: seen.len(),
        files: files.len(),
        additions: files.iter().map(|f| f.diff.additions).sum(),
        deletions: files.iter().map(|f| f.diff.deletions).sum(),
        files_without_reasoning: files
            .iter()
            .filter(|f| f.reasons.is_empty())
            .map(|f| f.diff.path.clone())
            .collect(),
    }
}

/// Within a commit: by turn (the prompt, in the order the turns began), then in the order of
/// [`Kind::rank`], each kind in time order — a turn's reasoning stays together.
fn sort_reasons(reasons: &mut [Reason]) {
    let mut began: HashMap<String, String> = HashMap::new();
    for r in reasons.iter() {
        let t = began
            .entry(r.prompt.clone())
            .or_insert_with(|| r.timestamp.clone());
        if r.timestamp < *t {
            *t = r.timestamp.clone();
        }
    }
    reasons.sort_by(|a, b| {
        fn key<'a>(began: &'a HashMap<String, String>, r: &'a Reason) -> (&'a str, &'a str, u8) {
            (began[&r.prompt].as_str(), r.prompt.as_str(), r.kind.rank())
        }
        key(&began, a)
            .cmp(&key(&began, b))
            .then_with(|| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)))
    });
}

/// Put each rejection under the decision of its commit and session that names the option it
/// rejects (most of the option's words are in it), as why that option was not taken.
fn fold_rejections(reasons: &mut Vec<Reason>) {
    let mut folded = Vec::new();
    for (i, r) in reasons.iter().enumerate() {
        if r.kind != Kind::Rejection || !r.considered.is_empty() {
            continue;
        }
        let said: HashSet<String> = terms(&r.summary).into_iter().collect();
        let target = reasons.iter().enumerate().find_map(|(j, d)| {
            if d.kind != Kind::Decision || d.commit != r.commit || d.session != r.session {
                return None;
            }
            let k = d.considered.iter().position(|c| {
                let words: HashSet<String> = terms(&c.option).into_iter().collect();
                let shared = words.iter().filter(|w| said.contains(*w)).count();
                c.rejection.is_none() && shared > 0 && shared * 2 >= words.len()
            })?;
            Some((j, k))
        });
        if let Some((j, k)) = target
            && !folded.iter().any(|&(_, jj, kk)| (jj, kk) == (j, k))
        {
            folded.push((i, j, k));
        }
    }
    for &(i, j, k) in &folded {
        let (summary, id) = (reasons[i].summary.clone(), reasons[i].id.clone());
        let c = &mut reasons[j].considered[k];
        c.rejected = summary;
        c.rejection = Some(id);
    }
    let gone: HashSet<usize> = folded.iter().map(|&(i, _, _)| i).collect();
    *reasons = std::mem::take(reasons)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !gone.contains(i))
        .map(|(_, r)| r)
        .collect();
}

/// The hunks of `file` holding lines `commit` added to it (by its path then, or before a
/// rename), as hashes of the lines that are not trivial.
fn lines_added_by(
    repo: &gix::Repository,
    commit: ObjectId,
    file: &FileDiff,
) -> Result<HashSet<u64>, Error> {
    let (tree, parent_tree) = diff::with_parent(repo, commit)?;
    let blob = |tree: Option<&gix::Tree<'_>>| -> Result<Vec<u8>, Error> {
        let Some(tree) = tree else {
            return Ok(Vec::new());
        };
        for path in std::iter::once(&file.path).chain(&file.old_path) {
            let entry = tree
                .lookup_entry_by_path(path)
                .map_err(git_error(format!("look up {path} in {commit}")))?;
            if let Some(entry) = entry.filter(|e| e.mode().is_blob()) {
                let data = entry
                    .object()
                    .map_err(git_error(format!("read {path} in {commit}")))?;
                return Ok(data.detach().data);
            }
        }
        Ok(Vec::new())
    };
    let after = blob(Some(&tree))?;
    let before = blob(parent_tree.as_ref())?;
    Ok(added_lines(&before, &after)
        .into_iter()
        .filter(|(_, h)| !h.trivial)
        .map(|(_, h)| h.hash)
        .collect())
}

/// The hunk `reason` explains: the only candidate (a hunk holding lines its commit added),
/// else the hunk among the candidates (all, when there are none) whose changed lines share
/// the most words with it, if one shares more than the others.
/// `hunks` holds the words of each hunk's changed lines ([`hunk_words`]).
fn place(reason: &Reason, hunks: &[HashSet<String>], candidates: &[usize]) -> Option<usize> {
    if let [only] = candidates {
        return Some(*only);
    }
    if hunks.len() == 1 {
        return Some(0);
    }
    let pool: Vec<usize> = if candidates.is_empty() {
        (0..hunks.len()).collect()
    } else {
        candidates.to_vec()
    };
    let mut said: BTreeSet<String> = BTreeSet::new();
    for text in [&reason.summary, &reason.rationale]
        .into_iter()
        .chain(reason.considered.iter().map(|c| &c.option))
    {
        said.extend(terms(text).into_iter().filter(|t| t.len() >= 3));
    }
    let mut scores: Vec<(usize, usize)> = pool
        .into_iter()
        .map(|h| (said.iter().filter(|t| hunks[h].contains(*t)).count(), h))
        .collect();
    scores.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    match scores.as_slice() {
        [(best, h), rest @ ..] if *best > 0 && rest.first().is_none_or(|r| r.0 < *best) => Some(*h),
        _ => None,
    }
}

/// The words of each hunk's changed lines, for [`place`].
fn hunk_words(hunks: &[Hunk]) -> Vec<HashSet<String>> {
    hunks
        .iter()
        .map(|h| h.changed().flat_map(terms).collect())
        .collect()
}

/// The decision that superseded `event`, if the graph has one (no graph supersedes nothing).
fn superseded(graph: &mut View<'_>, event: &Event) -> Result<Option<Superseded>, Error> {
    let edge = match event.kind {
        Kind::Decision | Kind::Rejection => graph.superseded_by(&event.id)?,
        _ => None,
    };
    let Some(edge) = edge else {
        return Ok(None);
    };
    let summary = graph
        .decision(&edge.later)?
        .map(|d| {
            if d.choice.is_empty() {
                d.subject
            } else {
                d.choice
            }
        })
        .unwrap_or_default();
    Ok(Some(Superseded {
        id: edge.later,
        summary,
        commit: edge.commit.chars().take(7).collect(),
    }))
}

/// `event`, found on commit `short`, as a review shows it.
fn reason(event: &Event, short: &str, superseded_by: Option<Superseded>) -> Reason {
    Reason {
        id: event.id.clone(),
        kind: event.kind,
        summary: event.summary.clone(),
        rationale: if event.rationale == event.summary {
            String::new()
        } else {
            event.rationale.clone()
        },
        considered: event
            .alternatives
            .iter()
            .map(|a| Considered {
                option: a.clone(),
                rejected: String::new(),
                rejection: None,
            })
            .collect(),
        prompt: event.prompt_context.clone(),
        session: event.session_id.clone(),
        agent: event.session.agent.clone(),
        commit: short.to_owned(),
        timestamp: event.timestamp.clone(),
        files: Vec::new(),
        hunk: None,
        superseded_by,
        flag: sanitise::flag(event.texts()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Origin;

    #[test]
    fn ranges_as_git_reads_them() {
        let r = parse_range("main...feature");
        assert_eq!((r.base, r.head, r.symmetric), ("main", "feature", true));
        let r = parse_range("main..");
        assert_eq!((r.base, r.head, r.symmetric), ("main", "HEAD", false));
        let r = parse_range("..topic");
        assert_eq!((r.base, r.head), ("HEAD", "topic"));
        let r = parse_range("v1.0");
        assert_eq!((r.base, r.head, r.symmetric), ("v1.0", "HEAD", false));
    }

    fn hunk(lines: &[&str]) -> Hunk {
        Hunk {
            header: String::new(),
            old_start: 1,
            old_lines: 1,
            new_start: 1,
            new_lines: 1,
            lines: lines.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn reasoning_goes_before_the_hunk_it_names() {
        let hunks = hunk_words(&[
            hunk(&[" fn get() {", "+    let fresh = ttl_check();"]),
            hunk(&["+const MAX_ENTRIES: usize = 10_000;", " struct Cache;"]),
        ]);
        let event = Event::new(
            "s",
            "m",
            Kind::Decision,
            Origin::Text,
            "Cap the cache at 10,000 entries",
            "t",
        );
        let mut e = reason(&event, "c", None);
        assert_eq!(place(&e, &hunks, &[]), Some(1));
        // The only hunk with the commit's lines wins over words.
        assert_eq!(place(&e, &hunks, &[0]), Some(0));
        // Nothing in common: the file as a whole.
        e.summary = "Prefer clarity".to_owned();
        assert_eq!(place(&e, &hunks, &[]), None);
        // A tie is not a placement.
        e.summary = "fresh entries".to_owned();
        assert_eq!(place(&e, &hunks, &[]), None);
    }
}
