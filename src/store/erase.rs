//! Forgetting events (docs/security.md, "Forgetting, and purging what was pushed"): taking them out of
//! every place the store keeps them — the notes on `refs/notes/agent-context`, the pending queue,
//! the attached index — and making the decision graph again from what is left, since every node and
//! index line of it derives from the notes.
//!
//! A `--match` also takes its text out of the local copies that are not events: the saved
//! extraction states (`cursors/`), which hold the open turn's prompt, messages and drafts and
//! would give it to the turn's later events, and the log ([`scrub`]).
//!
//! History is not rewritten: the notes ref and the graph ref each get one new commit, whose
//! message says how many events went, never what they said. Their older commits still hold
//! the text; purging those is the user's to do with plain git (docs/security.md says how).
//!
//! Forgotten ids stay listed in `forgotten` (`super::forgotten`) (`<event id> TAB <session>` a line; ids are hashes
//! of where an event came from, never its text), and extraction drops events with those ids
//! ([`forgotten::without`]): the open turn of a live session is extracted again on every run, and a
//! transcript replaced or truncated is read again from its start, either of which would bring a
//! forgotten event back. So does the `PostToolUse` hook ([`forgotten::contains`]), whose reads and
//! searches have one id per session and file or pattern, and the linker, which takes a
//! forgotten event the hook appended as a forget ran out of the queue instead of to a commit.
//! Until that session links again, such an event waits in the queue, where local reads (`why`,
//! `query`, `status`) can still see it: the hook checks without the lock, so a check made just
//! before a forget and an append just after it cannot be kept apart.
//!
//! While a forget runs, `forgetting` exists: a forget that finds it completes the one that
//! died ([`interrupted`]) before doing its own, from the ids remembered. The patterns of a
//! `--match` are not kept (they are the text): its text replacement ([`scrub`]) is completed
//! by running the same command again.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;

use gix::ObjectId;
use regex::Regex;

use super::{
    Result, Store, forgotten, graph, io_error, link, log, notes, pending, state, write_atomic,
};
use crate::event::{Event, Key, Kind};

/// Present while a forget is under way.
const FORGETTING: &str = "forgetting";

/// A stored event, as a forget lists it: every version of it found (a note merged from two
/// clones may hold two) and every place it is kept.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: String,
    pub session: String,
    pub kind: Kind,
    pub timestamp: String,
    pub summary: String,
    /// The commits whose notes hold it.
    pub commits: BTreeSet<ObjectId>,
    /// Whether the pending queue holds it.
    pub pending: bool,
    /// Whether a version of it matched one of the patterns the inventory was taken with.
    pub matched: bool,
}

/// A line of the pending queue that cannot be read as an event (half written by a hook that
/// died, say) and that a pattern matches: it holds the text all the same.
#[derive(Debug, Clone)]
pub struct RawLine {
    /// The queue file's name (`<session>.jsonl`).
    pub file: String,
    pub line: Vec<u8>,
}

/// Every event the notes and the pending queue hold.
#[derive(Debug, Default)]
pub struct Inventory {
    events: BTreeMap<String, Stored>,
    sessions: BTreeSet<String>,
    /// How many events each note holds.
    per_note: HashMap<ObjectId, usize>,
    /// The queue's unreadable lines that a pattern matches.
    lines: Vec<RawLine>,
}

/// What a name given on the command line stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The one full id it names (itself, or the only one it is a prefix of).
    One(String),
    None,
    /// A prefix of several: how many.
    Ambiguous(usize),
}

/// The shortest prefix of an event or session id taken for the whole.
pub const PREFIX_MIN: usize = 4;

impl Inventory {
    /// The event id `name` stands for: an id, or a prefix of at least [`PREFIX_MIN`] digits.
    pub fn event(&self, name: &str) -> Resolved {
        let name = name.to_ascii_lowercase();
        if self.events.contains_key(&name) {
            return Resolved::One(name);
        }
        resolve_prefix(self.events.keys(), &name)
    }

    /// The session id `name` stands for: an id, or a prefix of at least [`PREFIX_MIN`]
    /// characters.
    pub fn session(&self, name: &str) -> Resolved {
        if self.sessions.contains(name) {
            return Resolved::One(name.to_owned());
        }
        resolve_prefix(self.sessions.iter(), name)
    }

    /// The events that meet every kind of criterion given: of one of `sessions` (if any), one
    /// of `ids` (if any), matching a pattern (with `by_pattern`).
    pub fn select(&self, sessions: &[String], ids: &[String], by_pattern: bool) -> Vec<&Stored> {
        self.events
            .values()
            .filter(|e| sessions.is_empty() || sessions.contains(&e.session))
            .filter(|e| ids.is_empty() || ids.contains(&e.id))
            .filter(|e| !by_pattern || e.matched)
            .collect()
    }

    /// The queue's unreadable lines that a pattern matches, in the queues of `sessions` (all
    /// when none are given). Such a line names no event whose id or session could be trusted:
    /// an `--event` chooses none of them.
    pub fn lines(&self, sessions: &[String]) -> Vec<&RawLine> {
        let files: Vec<String> = sessions.iter().map(|s| pending::file_name(s)).collect();
        self.lines
            .iter()
            .filter(|l| files.is_empty() || files.contains(&l.file))
            .collect()
    }

    /// The events forgotten before and still stored: what a forget that died left.
    pub fn already_forgotten(&self, store: &Store) -> Result<Vec<&Stored>> {
        let forgotten = forgotten::all(store)?;
        Ok(self
            .events
            .values()
            .filter(|e| forgotten.contains_key(&e.id))
            .collect())
    }

    /// How many notes `events` leave empty (so they go).
    pub fn notes_emptied(&self, events: &[&Stored]) -> usize {
        let mut taken: HashMap<ObjectId, usize> = HashMap::new();
        for e in events {
            for c in &e.commits {
                *taken.entry(*c).or_default() += 1;
            }
        }
        taken
            .iter()
            .filter(|(c, n)| self.per_note.get(*c) == Some(*n))
            .count()
    }

    fn add(&mut self, event: &Event, commit: Option<ObjectId>, patterns: &[Regex]) {
        let matched = !patterns.is_empty() && matches(event, patterns);
        let stored = self
            .events
            .entry(event.id.clone())
            .or_insert_with(|| Stored {
                id: event.id.clone(),
                session: event.session_id.clone(),
                kind: event.kind,
                timestamp: event.timestamp.clone(),
                summary: event.summary.clone(),
                commits: BTreeSet::new(),
                pending: false,
                matched: false,
            });
        stored.matched |= matched;
        match commit {
            Some(c) => {
                stored.commits.insert(c);
            }
            None => stored.pending = true,
        }
        if !self.sessions.contains(&event.session_id) {
            self.sessions.insert(event.session_id.clone());
        }
    }
}

/// The one of `names` that `prefix` (at least [`PREFIX_MIN`] characters) names.
pub(crate) fn resolve_prefix<'a>(
    names: impl Iterator<Item = &'a String>,
    prefix: &str,
) -> Resolved {
    if prefix.chars().count() < PREFIX_MIN {
        return Resolved::None;
    }
    let found: Vec<&String> = names.filter(|n| n.starts_with(prefix)).collect();
    match found[..] {
        [] => Resolved::None,
        [one] => Resolved::One(one.clone()),
        _ => Resolved::Ambiguous(found.len()),
    }
}

/// Whether a pattern matches one of the event's texts: what it says and what it names — the
/// summary, rationale, alternatives, the prompt it answered, its tool calls, tasks and files.
/// Ids, times, commits and the session's metadata are not searched.
fn matches(event: &Event, patterns: &[Regex]) -> bool {
    let texts = [
        event.summary.as_str(),
        &event.rationale,
        &event.prompt_context,
    ]
    .into_iter()
    .chain(event.alternatives.iter().map(String::as_str))
    .chain(
        event
            .tool_calls
            .iter()
            .flat_map(|c| [c.name.as_str(), c.input.as_str()]),
    )
    .chain(event.tasks.iter().map(|t| t.subject.as_str()))
    .chain(event.files_affected.iter().map(String::as_str));
    let texts: Vec<&str> = texts.filter(|t| !t.is_empty()).collect();
    patterns
        .iter()
        .any(|p| texts.iter().any(|text| p.is_match(text)))
}

/// Every event of the notes and the pending queue, each line read on its own (a line that
/// readers would not show, an older version of an event, is searched too), `matched` set by
/// `patterns`. Reads only.
pub fn inventory(store: &Store, patterns: &[Regex]) -> Result<Inventory> {
    let repo = store.repo();
    let mut inventory = Inventory::default();
    for (commit, blob) in notes::notes_at(&repo, notes::tip(&repo)?)? {
        let data = repo
            .find_blob(blob)
            .map_err(super::git_error(format!("read the note of {commit}")))?;
        let mut ids: HashSet<String> = HashSet::new();
        for line in data.data.split(|&b| b == b'\n') {
            if let Ok(event) = serde_json::from_slice::<Event>(line) {
                ids.insert(event.id.clone());
                inventory.add(&event, Some(commit), patterns);
            }
        }
        inventory.per_note.insert(commit, ids.len());
    }
    for path in store.files_in(pending::DIR, "jsonl")? {
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error("cannot read", &path)(e)),
        };
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for line in bytes.split(|&b| b == b'\n') {
            match serde_json::from_slice::<Event>(line) {
                Ok(event) => inventory.add(&event, None, patterns),
                // Its fields cannot be told apart: a pattern is looked for in all of it.
                Err(_) if !line.trim_ascii().is_empty() => {
                    let text = String::from_utf8_lossy(line);
                    if patterns.iter().any(|p| p.is_match(&text)) {
                        inventory.lines.push(RawLine {
                            file: file.clone(),
                            line: line.to_vec(),
                        });
                    }
                }
                Err(_) => {}
            }
        }
    }
    Ok(inventory)
}

/// What [`remove`] did.
#[derive(Debug, Default, Clone)]
pub struct Removed {
    /// Events taken off notes (an event on three commits counts three).
    pub from_notes: usize,
    /// Events taken out of the pending queue.
    pub from_pending: usize,
    /// Unreadable lines taken out of the pending queue.
    pub lines_from_pending: usize,
    /// The new commit on the notes ref, if the notes changed.
    pub notes_commit: Option<ObjectId>,
    /// The graph as made again from the notes.
    pub graph: graph::Updated,
}

/// Whether a forget died before it finished: the next one completes it first.
pub fn interrupted(store: &Store) -> bool {
    store.dir().join(FORGETTING).exists()
}

/// Forget `events` and the queue's unreadable `lines`; the caller holds the store lock. In
/// order: the ids are remembered (and the forget marked under way), then taken off the notes
/// (one commit), out of the pending queue and the attached index, and the graph is made again
/// from the notes (one commit). Call [`finish`] once the caller's caches are done too.
pub fn remove(store: &Store, events: &[&Stored], lines: &[&RawLine]) -> Result<Removed> {
    let resuming = interrupted(store);
    store.init()?;
    write_atomic(&store.dir().join(FORGETTING), b"")?;
    forgotten::remember(
        store,
        events.iter().map(|e| (e.id.as_str(), e.session.as_str())),
    )?;

    let mut by_commit: BTreeMap<ObjectId, HashSet<&str>> = BTreeMap::new();
    for e in events {
        for c in &e.commits {
            by_commit.entry(*c).or_default().insert(&e.id);
        }
    }
    let removals: Vec<(ObjectId, HashSet<&str>)> = by_commit.into_iter().collect();
    let before = notes::tip(&store.repo())?;
    let from_notes = notes::remove_all(store, &removals)?.removed;
    let after = notes::tip(&store.repo())?;

    let named: HashSet<Key> = events
        .iter()
        .map(|e| Key {
            session: e.session.clone(),
            id: e.id.clone(),
        })
        .collect();
    let from_pending = pending::remove(store, &named)?;
    let mut by_file: BTreeMap<&str, HashSet<&[u8]>> = BTreeMap::new();
    for l in lines {
        by_file.entry(&l.file).or_default().insert(&l.line);
    }
    let mut lines_from_pending = 0;
    for (file, lines) in by_file {
        let path = store.dir().join(pending::DIR).join(file);
        lines_from_pending += pending::remove_unreadable(store, &path, &lines)?;
        remove_if_empty(&path)?;
    }
    let mut by_session: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    for e in events {
        by_session.entry(&e.session).or_default().insert(&e.id);
    }
    // A forget that died after taking events off the notes and out of the queue left them in
    // the attached index (and maybe an empty queue file), where no inventory finds them: every
    // id it remembered is looked for.
    let before_death = match resuming {
        true => forgotten::all(store)?,
        false => HashMap::new(),
    };
    for (id, session) in &before_death {
        by_session.entry(session).or_default().insert(id);
    }
    for (session, ids) in by_session {
        // A queue left empty goes: nothing of the session waits.
        remove_if_empty(&pending::session_path(
            store,
            pending::DIR,
            session,
            "jsonl",
        ))?;
        let mut index = link::read_index_to_write(store, session)?;
        let size = index.len();
        index.retain(|id, _| !ids.contains(id.as_str()));
        if index.len() == size {
            continue;
        }
        if index.is_empty() {
            let path = pending::session_path(store, link::DIR, session, "jsonl");
            gone(fs::remove_file(&path), &path)?;
        } else {
            link::write_index(store, session, &index)?;
        }
    }
    // A queue file removed is a change to the queues as much as a line is.
    pending::changed(store)?;

    let count = events.len();
    let why = format!(
        "forgot {count} event{}, rebuilt from the notes",
        if count == 1 { "" } else { "s" }
    );
    // The graph derives from the notes alone: made again when they changed, or when a forget
    // that died may have left it behind them; not made when there is none yet.
    let graph = match graph::tip(store)? {
        Some(_) if after != before || resuming => graph::rebuild_for(store, &why)?,
        _ => graph::Updated::default(),
    };
    Ok(Removed {
        from_notes,
        from_pending,
        lines_from_pending,
        notes_commit: (after != before).then_some(after).flatten(),
        graph,
    })
}

/// What a forgotten text is replaced with in the saved extraction states and the log.
pub const FORGOTTEN_TEXT: &str = "[REDACTED:forgotten]";

/// What [`scrub`] replaced a text in (or, in a dry run, would).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Scrubbed {
    /// Saved extraction states, one per transcript.
    pub states: usize,
    /// Lines of the log (`log`, `log.1`).
    pub log_lines: usize,
}

impl Scrubbed {
    pub fn is_empty(&self) -> bool {
        *self == Scrubbed::default()
    }
}

/// Keys of a saved extraction state whose strings say where a text came from — ids, times,
/// kinds, the transcript's path, the session's folder, branch and model — never what was said
/// (`matches` does not search them either). They are kept as they are: a changed id would make
/// an event's next version a second event, a changed kind an unreadable state.
const NOT_TEXT: [&str; 22] = [
    "id",
    "session_id",
    "source",
    "turn",
    "group",
    "call",
    "timestamp",
    "first_seen",
    "last_seen",
    "agent_id",
    "commits",
    "operations",
    "provisional",
    "kind",
    "origin",
    "op",
    "outcome",
    "path",
    "cwd",
    "branch",
    "model",
    "version",
];

/// Replace what `patterns` match with [`FORGOTTEN_TEXT`] in the saved extraction states of
/// `sessions` (of every session when none are given) and in the log; with `write` false, only
/// count. The caller holds the store lock, which extraction takes to read and save a state.
///
/// A state is JSON: every string of it is searched but those that say where a text came from
/// (ids, times, kinds, paths, the session's folder, branch and model), and it stays readable,
/// so extraction resumes where it was instead of reading the transcript (which still holds the
/// text) again. A state that is not JSON and holds the text goes: extraction would read its
/// transcript again from the start in any case. The log is written without the lock: a hook's
/// line appended while it is rewritten may be lost (the log is diagnostics, not events).
pub fn scrub(
    store: &Store,
    patterns: &[Regex],
    sessions: &[String],
    write: bool,
) -> Result<Scrubbed> {
    let mut scrubbed = Scrubbed::default();
    if patterns.is_empty() {
        return Ok(scrubbed);
    }
    for path in store.files_in(state::DIR, "json")? {
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error("cannot read", &path)(e)),
        };
        let Ok(mut saved) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            let text = String::from_utf8_lossy(&bytes);
            if patterns.iter().any(|p| p.is_match(&text)) {
                scrubbed.states += 1;
                if write {
                    gone(fs::remove_file(&path), &path)?;
                }
            }
            continue;
        };
        let session = saved["state"]["session_id"].as_str().unwrap_or_default();
        if !sessions.is_empty() && !sessions.iter().any(|s| s == session) {
            continue;
        }
        // Only the extractor's state: the cursor beside it says which file and how far, in
        // hashes and numbers a pattern could match (a changed one reads the file again).
        let state = &mut saved["state"];
        let changed = patterns.iter().fold(false, |changed, p| {
            replace_in_json(state, p, false) | changed
        });
        if changed {
            scrubbed.states += 1;
            if write {
                let bytes = serde_json::to_vec(&saved).expect("JSON values serialize");
                write_atomic(&path, &bytes)?;
            }
        }
    }
    for name in [log::FILE.to_owned(), format!("{}.1", log::FILE)] {
        let path = store.dir().join(name);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_error("cannot read", &path)(e)),
        };
        let mut text = String::new();
        let mut changed = 0;
        for line in String::from_utf8_lossy(&bytes).split_inclusive('\n') {
            match replace_all(line, patterns) {
                Some(new) => {
                    changed += 1;
                    text.push_str(&new);
                }
                None => text.push_str(line),
            }
        }
        scrubbed.log_lines += changed;
        if write && changed > 0 {
            write_atomic(&path, text.as_bytes())?;
        }
    }
    Ok(scrubbed)
}

/// `text` with what any of `patterns` matches replaced, if one does (see [`replace`]).
fn replace_all(text: &str, patterns: &[Regex]) -> Option<String> {
    let mut out: Option<String> = None;
    for p in patterns {
        if let Some(new) = replace(out.as_deref().unwrap_or(text), p) {
            out = Some(new);
        }
    }
    out
}

/// Replace matches of `pattern` in the strings of `value`, but for those under [`NOT_TEXT`]
/// keys (`kept`: `value` is under one); whether anything changed.
fn replace_in_json(value: &mut serde_json::Value, pattern: &Regex, kept: bool) -> bool {
    use serde_json::Value;
    match value {
        Value::String(text) if !kept => match replace(text, pattern) {
            Some(new) => {
                *text = new;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| {
            replace_in_json(v, pattern, kept) | changed
        }),
        Value::Object(fields) => fields.iter_mut().fold(false, |changed, (key, v)| {
            replace_in_json(v, pattern, NOT_TEXT.contains(&key.as_str())) | changed
        }),
        _ => false,
    }
}

/// `text` with what `pattern` matches replaced by [`FORGOTTEN_TEXT`], if it matches: only
/// matches of at least one character (a pattern that can match nothing would otherwise put it
/// between every two), and never inside a replacement made before.
fn replace(text: &str, pattern: &Regex) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for (i, piece) in text.split(FORGOTTEN_TEXT).enumerate() {
        if i > 0 {
            out.push_str(FORGOTTEN_TEXT);
        }
        let mut last = 0;
        for m in pattern.find_iter(piece).filter(|m| !m.is_empty()) {
            out.push_str(&piece[last..m.start()]);
            out.push_str(FORGOTTEN_TEXT);
            last = m.end();
            changed = true;
        }
        out.push_str(&piece[last..]);
    }
    changed.then_some(out)
}

/// The forget is done: the marker goes.
pub fn finish(store: &Store) -> Result<()> {
    let path = store.dir().join(FORGETTING);
    gone(fs::remove_file(&path), &path)
}

/// The outcome of removing `path`: already gone is as good as removed.
fn gone(removal: io::Result<()>, path: &std::path::Path) -> Result<()> {
    match removal {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("cannot remove", path)(e)),
        _ => Ok(()),
    }
}

/// Remove the file at `path` if it holds nothing.
fn remove_if_empty(path: &std::path::Path) -> Result<()> {
    if fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        gone(fs::remove_file(path), path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Origin, Task, ToolCall};

    #[test]
    fn patterns_search_the_texts_of_an_event_not_its_ids_or_times() {
        let mut e = Event::new(
            "s",
            "m1",
            Kind::Decision,
            Origin::Text,
            "use a map",
            "2026-01-01T00:00:00Z",
        );
        e.tool_calls.push(ToolCall {
            name: "Bash".to_owned(),
            input: "curl -H 'token: abc123'".to_owned(),
            outcome: crate::event::Outcome::Success,
        });
        e.tasks.push(Task {
            subject: "rotate key XYZ".to_owned(),
            status: "pending".to_owned(),
        });
        let re = |p: &str| vec![Regex::new(p).unwrap()];
        assert!(matches(&e, &re("abc123")));
        assert!(matches(&e, &re("^rotate key")));
        assert!(matches(&e, &re("(?i)USE A MAP")));
        assert!(!matches(&e, &re("2026-01-01")));
        assert!(!matches(&e, &re(&e.id.clone())));
        assert!(!matches(&e, &re("^s$")));
    }

    #[test]
    fn a_text_is_replaced_in_what_was_said_not_in_ids_times_or_kinds() {
        let mut saved = serde_json::json!({
            "cursor": {"path": "/home/KEY-1/t.jsonl", "offset": 10},
            "state": {
                "session_id": "s-KEY-1",
                "meta": {"cwd": "/src/KEY-1", "branch": "KEY-1"},
                "first_seen": "KEY-1",
                "request": "rotate KEY-1 and KEY-12",
                "main": {
                    "turn": "KEY-1",
                    "prompt": "rotate KEY-1",
                    "group": {"id": "KEY-1", "text": "KEY-1 is old", "first_call": 0},
                    "calls": [{"id": "KEY-1", "input": "grep KEY-1", "op": "Search"}],
                    "drafts": [{"group": "KEY-1", "event": {
                        "id": "KEY-1", "kind": "decision", "summary": "drop KEY-1",
                        "alternatives": ["keep KEY-1"], "files_affected": ["KEY-1.txt"],
                        "session": {"model": "KEY-1"}}}],
                },
                "operations": ["KEY-1"],
            },
            "provisional": [["s-KEY-1", "KEY-1"]],
        });
        let pattern = Regex::new(r"KEY-\d").unwrap();
        let mut expected = saved.clone();
        assert!(replace_in_json(&mut saved, &pattern, false));
        let f = FORGOTTEN_TEXT;
        let state = &mut expected["state"];
        state["request"] = format!("rotate {f} and {f}2").into();
        state["main"]["prompt"] = format!("rotate {f}").into();
        state["main"]["group"]["text"] = format!("{f} is old").into();
        state["main"]["calls"][0]["input"] = format!("grep {f}").into();
        let event = &mut state["main"]["drafts"][0]["event"];
        event["summary"] = format!("drop {f}").into();
        event["alternatives"][0] = format!("keep {f}").into();
        event["files_affected"][0] = format!("{f}.txt").into();
        assert_eq!(saved, expected);
        // Again: nothing more to replace.
        assert!(!replace_in_json(&mut saved, &pattern, false));
    }

    #[test]
    fn a_replacement_is_never_replaced_and_empty_matches_are_not_matches() {
        let any = [Regex::new("forgot").unwrap(), Regex::new("x*").unwrap()];
        let once = replace_all("I forgot x", &any).unwrap();
        assert_eq!(once, format!("I {FORGOTTEN_TEXT} {FORGOTTEN_TEXT}"));
        assert_eq!(replace_all(&once, &any), None);
        assert_eq!(replace_all("nothing here", &any), None);
        // Patterns that could not be joined into one (the same group name twice) each apply.
        let named = [
            Regex::new("(?P<k>ZEBRA)").unwrap(),
            Regex::new("(?P<k>LION)").unwrap(),
        ];
        assert_eq!(
            replace_all("ZEBRA and LION", &named).unwrap(),
            format!("{FORGOTTEN_TEXT} and {FORGOTTEN_TEXT}")
        );
    }

    #[test]
    fn prefixes_name_one_id_or_none() {
        let ids = [
            "abcd1234".to_owned(),
            "abcd5678".to_owned(),
            "ffff0000".to_owned(),
        ];
        assert_eq!(
            resolve_prefix(ids.iter(), "abcd1"),
            Resolved::One("abcd1234".to_owned())
        );
        assert_eq!(resolve_prefix(ids.iter(), "abcd"), Resolved::Ambiguous(2));
        assert_eq!(resolve_prefix(ids.iter(), "fff"), Resolved::None);
        assert_eq!(resolve_prefix(ids.iter(), "0000"), Resolved::None);
    }
}
