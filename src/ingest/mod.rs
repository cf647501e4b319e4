//! The pipeline from a transcript file to stored events: resume at the cursor, read new lines,
//! classify, redact (inside [`crate::classify`]), upsert into the pending queue, save the cursor.
//!
//! Crash safety: events are stored before the cursor moves, and event ids are stable, so a run
//! that dies anywhere is completed by the next one without losing or duplicating an event.
//! Long transcripts are checkpointed every [`CHECKPOINT_EVENTS`] events so memory stays bounded.

pub mod commit;
pub mod recorded;
pub mod repair;

use std::collections::{BTreeSet, HashSet};
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::classify::extractor::{Extractor, State};
use crate::event::{Event, Key};
use crate::store::link::{self, Signals};
use crate::store::{self, Store, forgotten, graph, pending, seen, sessions, state};
use crate::transcript::agent::Agent;
use crate::transcript::cursor::{Cursor, LineCounts, Restart};
use crate::transcript::reader::{Line, LineReader};
use crate::transcript::record::parse_line;
use crate::transcript::root::Roots;
use crate::transcript::{codex, gemini, locate};

/// How many finished events a run holds before it stores them and moves the cursor.
pub const CHECKPOINT_EVENTS: usize = 2000;

/// What is saved per transcript between runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Saved {
    pub cursor: Cursor,
    pub state: State,
    /// Events stored from turns still open at the end of the last run, as (session, id).
    /// A later run that no longer produces one of them removes it: the turn's end decided
    /// otherwise (a thinking block that looked like raw reasoning gained a decision, say).
    #[serde(default)]
    pub provisional: Vec<Key>,
    /// Where the translation of a Codex rollout stood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex: Option<codex::Translator>,
}

/// What one transcript's extraction did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TranscriptReport {
    #[serde(serialize_with = "crate::transcript::cursor::lossy_path::serialize")]
    pub path: PathBuf,
    pub session_id: String,
    /// The agent that wrote it (`codex`, `gemini-cli`); empty for Claude Code.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub agent: &'static str,
    /// Why extraction started from the beginning again, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarted: Option<&'static str>,
    pub bytes_read: u64,
    pub lines: LineCounts,
    pub tail_bytes: u64,
    pub events_added: usize,
    pub events_updated: usize,
    /// Provisional events of the last run that the finished turns no longer produce.
    pub events_removed: usize,
    /// Pending events of the session attached to commits by this run, and to how many.
    pub events_linked: usize,
    pub commits_linked: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read transcript {path}")]
    Transcript {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Link the pending events of the report's session to its commits by `signals`, and bring the
/// graph up to the notes.
pub fn link_session(
    store: &Store,
    report: &mut TranscriptReport,
    signals: Signals,
) -> Result<(), Error> {
    let linked = link::session_by(store, &report.session_id, signals)?;
    report.events_linked += linked.events;
    report.commits_linked += linked.commits;
    graph::settle(store)?;
    Ok(())
}

/// Options for one run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub max_line: usize,
    /// Store finished events and move the cursor after this many, mid-file.
    pub checkpoint_events: usize,
    /// The signals to link the session's pending events to its commits by at the end,
    /// bringing the graph up to the notes ([`link_session`]); `None` for a caller that links
    /// itself, like the post-commit hook, and settles the graph itself
    /// ([`crate::store::graph::settle`]).
    pub link: Option<Signals>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_line: crate::transcript::reader::DEFAULT_MAX_LINE,
            checkpoint_events: CHECKPOINT_EVENTS,
            link: Some(Signals::All),
        }
    }
}

/// Extract what is new in one transcript into the store. The caller holds the store lock.
pub fn transcript(store: &Store, path: &Path, options: Options) -> Result<TranscriptReport, Error> {
    let read_error = unreadable(path);
    let agent = Agent::of(path);
    let mut file = crate::transcript::open(path).map_err(read_error)?;
    let mut report = TranscriptReport {
        path: path.to_owned(),
        agent: match agent {
            Agent::ClaudeCode => "",
            other => other.name(),
        },
        ..TranscriptReport::default()
    };
    let whole = agent == Agent::GeminiCli;
    let begun = start(store, path, &mut file, &mut report, whole)?;
    let Some(mut begun) = begun else {
        // A commit made since may still take what waits.
        if let Some(signals) = options.link {
            link_session(store, &mut report, signals)?;
        }
        return Ok(report);
    };
    if agent != Agent::ClaudeCode && begun.state.meta.agent.is_empty() {
        agent.name().clone_into(&mut begun.state.meta.agent);
    }
    let mut run = Run {
        store,
        path,
        file,
        report,
        options,
    };
    if whole {
        // Read whole and translated; checkpoints would name places in the translation, not in
        // the file, so there are none, and the cursor moves to the file's end.
        let size = run.file.metadata().map_err(read_error)?.len();
        let records = gemini_records(path, &run.file, size)?;
        let reader = LineReader::new(records.as_bytes(), 0, options.max_line);
        run.options.checkpoint_events = usize::MAX;
        return run.go(begun, reader, Dialect::ClaudeCode, Some(size));
    }
    // The reader gets a handle of its own: a clone would share the file offset, which
    // checkpoints move when they re-read the file's head.
    let start = begun.cursor.offset;
    let mut lines = crate::transcript::open(path).map_err(read_error)?;
    lines.seek(SeekFrom::Start(start)).map_err(read_error)?;
    let reader = LineReader::new(
        BufReader::with_capacity(1 << 16, lines),
        start,
        options.max_line,
    );
    let dialect = match agent {
        Agent::Codex => Dialect::Codex(begun.codex.take().unwrap_or_default(), Vec::new()),
        Agent::ClaudeCode | Agent::GeminiCli => Dialect::ClaudeCode,
    };
    run.go(begun, reader, dialect, None)
}

/// One transcript's run, from where it starts to its report.
struct Run<'a> {
    store: &'a Store,
    path: &'a Path,
    file: File,
    report: TranscriptReport,
    options: Options,
}

impl Run<'_> {
    /// Read `reader`'s lines as `dialect` says from `begun` on; the cursor moves to `end`, or,
    /// without one, to where the reader stopped.
    fn go<R: std::io::BufRead>(
        self,
        begun: Start,
        mut reader: LineReader<R>,
        mut dialect: Dialect,
        end: Option<u64>,
    ) -> Result<TranscriptReport, Error> {
        let Run {
            store,
            path,
            file,
            report,
            options,
        } = self;
        let Start {
            cursor,
            state: extractor_state,
            mut stale,
            ..
        } = begun;
        let start = if end.is_some() { 0 } else { cursor.offset };
        // What the session's other transcripts and hooks saw of excluded files is scrubbed
        // from this one too.
        let session = Some(extractor_state.session_id.as_str())
            .filter(|s| !s.is_empty())
            .or_else(|| locate::session_of_path(path))
            .map(str::to_owned);
        let shared_taint = match &session {
            Some(s) => seen::load(store, s)?,
            None => BTreeSet::new(),
        };
        let repo = store.repo();
        // HEAD's tree, read once, at the first question (most sessions never ask).
        let head = std::cell::OnceCell::new();
        let roots = Roots::new(&store.worktrees(), |path| {
            head.get_or_init(|| repo.head_tree().ok())
                .as_ref()
                .is_some_and(|tree| is_file_in(tree, path))
        });
        let own_transcript = |agent: &str| locate::has_own_transcript(path, agent);
        let mut extractor = Extractor::new(extractor_state, &roots, store.config().redactor())
            .mirrors_unless(&own_transcript);
        extractor.learn(shared_taint.iter().copied());
        let mut progress = Progress {
            store,
            path,
            file,
            cursor,
            report,
            provisional: Vec::new(),
            shared_taint,
        };
        let (mut finished, counts, tail) = read_on(
            &mut reader,
            &mut dialect,
            &mut extractor,
            &mut progress,
            &mut stale,
            options,
        )?;
        finished.append(&mut extractor.take_events());
        let provisional = extractor.provisional();
        made_again(&mut stale, &finished);
        made_again(&mut stale, &provisional);
        progress.provisional = provisional.iter().map(Key::of).collect();
        finished.extend(provisional);
        // Gone before the state that no longer names them is saved: a run that dies in between
        // finds them stale again.
        progress.report.events_removed =
            pending::remove(store, &stale)? + link::detach(store, &stale)?;
        let end = end.unwrap_or(reader.offset());
        progress.save(
            finished,
            counts,
            tail,
            end,
            extractor.state_to_save(),
            dialect.saved(),
        )?;
        let mut report = progress.report;
        report.session_id = extractor.state().session_id.clone();
        sessions::record(store, &report.session_id, path, &extractor.state().meta.cwd)?;
        if let Some(signals) = options.link {
            link_session(store, &mut report, signals)?;
        }
        report.bytes_read = end - start;
        report.tail_bytes = tail;
        Ok(report)
    }
}

/// How the lines read become the records the extractor reads.
enum Dialect {
    /// Claude Code's lines are records.
    ClaudeCode,
    /// Codex CLI's lines are translated, with what the translation remembers and room for
    /// the records of one line.
    Codex(codex::Translator, Vec<String>),
}

impl Dialect {
    /// Give the extractor what `line` holds; `false` if it cannot be read.
    fn feed(&mut self, line: &[u8], extractor: &mut Extractor<'_>) -> bool {
        match self {
            Dialect::ClaudeCode => match parse_line(line) {
                Some(entry) => {
                    extractor.feed(&entry);
                    true
                }
                None => false,
            },
            Dialect::Codex(translator, records) => {
                records.clear();
                if !translator.line(line, records) {
                    return false;
                }
                for record in records.iter() {
                    if let Some(entry) = parse_line(record.as_bytes()) {
                        extractor.feed(&entry);
                    }
                }
                true
            }
        }
    }

    /// What is saved with the cursor for the next run to go on translating.
    fn saved(&self) -> Option<codex::Translator> {
        match self {
            Dialect::ClaudeCode => None,
            Dialect::Codex(translator, _) => Some(translator.clone()),
        }
    }
}

/// The largest Gemini CLI session read; they are read whole.
const GEMINI_SESSION_MAX: u64 = 64 << 20;

/// A Gemini CLI session file's records, one per line, in Claude Code's shape.
fn gemini_records(path: &Path, file: &File, size: u64) -> Result<String, Error> {
    let read_error = unreadable(path);
    if size > GEMINI_SESSION_MAX {
        return Err(read_error(std::io::Error::other(
            "a Gemini CLI session over 64 MiB is not read",
        )));
    }
    // From the start: checking the cursor read the file's head.
    let mut file = file;
    file.seek(SeekFrom::Start(0)).map_err(read_error)?;
    let mut bytes = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, size), &mut bytes)
        .map_err(read_error)?;
    let root = gemini::root_of(path);
    Ok(gemini::read(&bytes)
        .map(|session| session.records(root.as_deref()).join("\n"))
        .unwrap_or_default())
}

/// The error of a transcript that cannot be read.
fn unreadable(path: &Path) -> impl Fn(std::io::Error) -> Error + Copy + '_ {
    |source| Error::Transcript {
        path: path.to_owned(),
        source,
    }
}

/// Where a run over a transcript starts: from this cursor and state; `stale`: the
/// provisional events the last run stored, which go unless this run makes them again.
struct Start {
    cursor: Cursor,
    state: State,
    stale: HashSet<Key>,
    /// Where a Codex rollout's translation stood.
    codex: Option<codex::Translator>,
}

/// Where to start reading `path` (open as `file`): where the saved cursor says, or from the
/// start when there is none, or it cannot be read or used (said in `report`). `None` when
/// nothing was written since the last run, which stored everything its state yields: the
/// common case for a hook, answered without reading on (`report` says the session).
///
/// A transcript known only `whole` (a Gemini CLI session, rewritten rather than appended to)
/// is read from the start whenever it changed, which is no restart to report; the provisional
/// events of the last run still go unless this one makes them again.
fn start(
    store: &Store,
    path: &Path,
    file: &mut File,
    report: &mut TranscriptReport,
    whole: bool,
) -> Result<Option<Start>, Error> {
    let read_error = unreadable(path);
    let from_the_start = || {
        Some(Start {
            cursor: Cursor::new(path),
            state: State::default(),
            stale: HashSet::new(),
            codex: None,
        })
    };
    let saved = match state::load::<Saved>(store, path) {
        state::Loaded::Found(saved) => saved,
        state::Loaded::Missing => return Ok(from_the_start()),
        // Read again from the start, and said so (the report, a hook's log).
        state::Loaded::Unreadable(_) => {
            report.restarted = Some("cursor unreadable");
            return Ok(from_the_start());
        }
    };
    let resumable = saved.cursor.check(file).map_err(read_error)?;
    if let (Err(why), false) = (resumable, whole) {
        report.restarted = restart_reason(why);
        return Ok(from_the_start());
    }
    let size = file.metadata().map_err(read_error)?.len();
    if resumable.is_ok() && size == saved.cursor.offset + saved.cursor.tail_bytes {
        report.session_id = saved.state.session_id;
        report.tail_bytes = saved.cursor.tail_bytes;
        return Ok(None);
    }
    if whole {
        return Ok(from_the_start().map(|start| Start {
            stale: saved.provisional.into_iter().collect(),
            ..start
        }));
    }
    Ok(Some(Start {
        cursor: saved.cursor,
        state: saved.state,
        stale: saved.provisional.into_iter().collect(),
        codex: saved.codex,
    }))
}

/// Feed the extractor every line `reader` has, saving a checkpoint each
/// `options.checkpoint_events` events; the events not yet saved, the lines read since the last
/// checkpoint, and the bytes of an unfinished last line.
fn read_on<R: std::io::BufRead>(
    reader: &mut LineReader<R>,
    dialect: &mut Dialect,
    extractor: &mut Extractor<'_>,
    progress: &mut Progress<'_>,
    stale: &mut HashSet<Key>,
    options: Options,
) -> Result<(Vec<Event>, LineCounts, u64), Error> {
    let read_error = unreadable(progress.path);
    let mut counts = LineCounts::default();
    let mut tail = 0;
    let mut finished: Vec<Event> = Vec::new();
    loop {
        match reader.next_line().map_err(read_error)? {
            None => break,
            // A blank line is harmless: the newline of a last line that was read before it
            // had one, or a writer's stray newline.
            Some(Line::Complete { bytes, .. }) if bytes.trim_ascii().is_empty() => {}
            Some(Line::Complete { bytes, .. }) => match dialect.feed(bytes, extractor) {
                true => counts.read += 1,
                false => counts.malformed += 1,
            },
            Some(Line::Oversized { .. }) => counts.oversized += 1,
            Some(Line::Tail { len, .. }) => {
                tail = len;
                break;
            }
        }
        finished.append(&mut extractor.take_events());
        if finished.len() >= options.checkpoint_events {
            made_again(stale, &finished);
            // Those still unresolved stay recorded, should this run die before its end.
            progress.provisional = stale.iter().cloned().collect();
            progress.save(
                std::mem::take(&mut finished),
                std::mem::take(&mut counts),
                0,
                reader.offset(),
                extractor.state_to_save(),
                dialect.saved(),
            )?;
        }
    }
    Ok((finished, counts, tail))
}

/// One run over one transcript: where it stands and what it did so far.
struct Progress<'a> {
    store: &'a Store,
    path: &'a Path,
    file: File,
    cursor: Cursor,
    report: TranscriptReport,
    provisional: Vec<Key>,
    /// The session's shared taint as this run knows it (see [`taint`]).
    shared_taint: BTreeSet<u64>,
}

impl Progress<'_> {
    /// Store `events`, then move the cursor to `offset` and save it with the extractor's
    /// state — in that order, so that a crash in between only makes the next run redo work.
    fn save(
        &mut self,
        events: Vec<Event>,
        counts: LineCounts,
        tail: u64,
        offset: u64,
        state: State,
        codex: Option<codex::Translator>,
    ) -> Result<(), Error> {
        // What `forget` took out stays out, however often the transcript is read again.
        let events = forgotten::without(self.store, events)?;
        // Events already attached to a commit update their note; the rest wait in the queue.
        let (in_notes, waiting) = link::route(self.store, events)?;
        self.report.events_updated += in_notes;
        let upserted = pending::upsert(self.store, waiting)?;
        self.report.events_added += upserted.added;
        self.report.events_updated += upserted.updated;
        self.report.lines.add(counts);
        self.cursor.lines.add(counts);
        self.cursor.tail_bytes = tail;
        self.cursor
            .advance(&mut self.file, offset)
            .map_err(unreadable(self.path))?;
        let seen = state.taint();
        if !seen.is_empty() {
            seen::add(
                self.store,
                &state.session_id,
                &self.shared_taint,
                seen.hashes(),
            )?;
            self.shared_taint.extend(seen.hashes());
        }
        let saved = Saved {
            cursor: self.cursor.clone(),
            state,
            provisional: self.provisional.clone(),
            codex,
        };
        state::save(self.store, self.path, &saved)?;
        Ok(())
    }
}

/// `events` were made again: they are not stale.
fn made_again(stale: &mut HashSet<Key>, events: &[Event]) {
    if stale.is_empty() {
        return;
    }
    for e in events {
        stale.remove(&Key::of(e));
    }
}

fn restart_reason(why: Restart) -> Option<&'static str> {
    match why {
        Restart::New => None,
        Restart::Truncated => Some("truncated"),
        Restart::Replaced => Some("replaced"),
    }
}

/// Whether `path` (relative to the top of the working tree) is a file in `tree`.
fn is_file_in(tree: &gix::Tree<'_>, path: &str) -> bool {
    tree.lookup_entry_by_path(path)
        .ok()
        .flatten()
        .is_some_and(|entry| !entry.mode().is_tree())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_in(dir: &Path) -> Store {
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&repo)
            .status()
            .unwrap();
        assert!(ok.success());
        Store::discover(&repo).unwrap()
    }

    fn pending_files(store: &Store) -> Vec<(std::ffi::OsString, Vec<u8>)> {
        let mut files: Vec<_> = std::fs::read_dir(store.dir().join(pending::DIR))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn checkpoints_mid_file_change_nothing_but_memory() {
        let dir = tempfile::tempdir().unwrap();
        let transcript = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/entireio-cli/e1/2c3e2b3f2a/0/full.jsonl");
        let whole = store_in(&dir.path().join("a"));
        let a = transcript_into(&whole, &transcript, Options::default());
        let often = store_in(&dir.path().join("b"));
        let b = transcript_into(
            &often,
            &transcript,
            Options {
                checkpoint_events: 1,
                ..Options::default()
            },
        );
        assert_eq!(a.lines, b.lines);
        assert_eq!(b.bytes_read, std::fs::metadata(&transcript).unwrap().len());
        assert!(a.events_added > 10);
        assert_eq!(pending_files(&whole), pending_files(&often));
    }

    fn transcript_into(store: &Store, path: &Path, options: Options) -> TranscriptReport {
        transcript(store, path, options).unwrap()
    }
}
