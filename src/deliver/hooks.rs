//! The agents' hooks (docs/hooks.md, "Claude Code hooks"; docs/agents.md for the others):
//! `git agent-context hook <Event> [--agent <agent>]` reads the hook's JSON on stdin and answers
//! with the context to inject, if any. What follows names Claude Code's events; each agent's
//! adapter (`crate::deliver::adapter`) says which of its events is which [`Moment`], and puts
//! its payloads in Claude Code's terms.
//!
//! - `SessionStart`: on `startup` and `/clear`, a brief of the recent sessions, the work left
//!   open and the standing decisions ([`brief`]); after `/compact` or on `resume`, the
//!   session's own continuation ([`continuation`]). Compaction and `/clear` also forget what
//!   the session was given, so that it can be given again.
//! - `UserPromptSubmit`: the reasoning that bears on the prompt (the `query` machinery), when a
//!   file, its lines, a symbol or a code identifier the prompt names points at it (directly or
//!   through the graph); nothing otherwise.
//! - `PreToolUse` on Read, Edit, MultiEdit and Write: the standing decisions, rejected
//!   alternatives and trade-offs recorded for the file, in a few hundred tokens.
//! - `PostToolUse` on Read, Grep and Glob: the read or search, as an event in the pending queue
//!   (one per file or pattern and session; the extractor gives the same ids).
//! - `PreCompact`, `Stop`, `SessionEnd`: extract what is new in the session's transcripts, link
//!   it to the session's commits, and save its continuation; `Stop` and `SessionEnd` also
//!   regenerate CLAUDE.md's section when `claude_md.refresh` is on. They answer with nothing.
//!   `Stop` leaves what follows the notes to its caller when the turn brought something new
//!   ([`Response::rest`], [`finish_turn`]).
//!
//! An event is given to a session once (the caller records it with [`given`] once the answer
//! is sure to go out).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::classify::redact::{Cleaner, Taint};
use crate::classify::tools::operation;
use crate::config::Backend;
use crate::deliver::claude_md::{self, Refreshed};
use crate::deliver::{Result, brief, continuation, injected};
use crate::event::time::{self, rfc3339};
use crate::ingest::commit;
use crate::retrieve::query::{self, Focus, Request};
use crate::store::{self, Store, graph, link, pending, seen, sessions};
use crate::transcript::record::ToolInput;
use crate::transcript::root::{inside_repository, relative_to};

/// What a hook is for, whichever agent runs it (each agent's adapter names its events'
/// moments: `crate::deliver::adapter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// A session starts, resumes, or is cleared or compacted: the brief or the continuation.
    SessionStart,
    /// A prompt is submitted: the reasoning that bears on it.
    Prompt,
    /// A tool is about to run: a file's reasoning before it is read or changed.
    BeforeTool,
    /// A tool ran: a read or a search recorded; with `file`, also the file's reasoning, for an
    /// agent whose hooks cannot add to what the model reads before a tool runs.
    AfterTool { file: bool },
    /// The context is about to be compacted: extraction.
    BeforeCompact,
    /// It was compacted (nothing to do: the session starts again with the continuation).
    AfterCompact,
    /// The agent ended its turn: extraction.
    TurnEnd,
    /// The session ended: extraction.
    SessionEnd,
}

impl Moment {
    /// Whether the hook extracts the session's transcript, with its own budget
    /// (`hook.extract_budget_ms`).
    pub fn extracts(self) -> bool {
        matches!(
            self,
            Moment::BeforeCompact | Moment::TurnEnd | Moment::SessionEnd
        )
    }
}

/// Tokens a prompt is given at most.
const PROMPT_TOKENS: usize = 1_500;
/// Tokens a file is given at most.
const FILE_TOKENS: usize = 300;
/// Characters of a hook's answer Claude Code passes on whole: past them the model sees only a
/// short preview and the path of a file holding the rest. Counted as JavaScript counts a
/// string's length, in UTF-16 code units. The token budgets keep answers far below it (1,500
/// tokens are at most about 5,300 characters); [`capped`] makes sure.
pub const OUTPUT_MAX: usize = 10_000;

/// `context` within [`OUTPUT_MAX`]: whole lines up to the cap, with a last line saying that
/// the rest was left out.
pub fn capped(context: &str) -> Cow<'_, str> {
    let units = |s: &str| s.encode_utf16().count();
    if units(context) <= OUTPUT_MAX {
        return Cow::Borrowed(context);
    }
    const CUT: &str = "(cut to Claude Code's limit on a hook's output)";
    let mut out = String::new();
    let mut used = units(CUT);
    for line in context.split_inclusive('\n') {
        let n = units(line);
        if used + n > OUTPUT_MAX {
            break;
        }
        out.push_str(line);
        used += n;
    }
    out.push_str(CUT);
    Cow::Owned(out)
}

/// The tools whose file is given its decisions.
const FILE_TOOLS: [&str; 4] = ["Read", "Edit", "MultiEdit", "Write"];

/// A hook's input: the fields used here; the others are ignored.
#[derive(Debug, Default, Deserialize)]
pub struct Payload {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub prompt: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact`, `fork`.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<serde_json::Value>,
    /// PostToolUse: what the tool gave (its structured output).
    #[serde(default)]
    pub tool_response: Option<serde_json::Value>,
}

/// What a hook did: the context to inject, the events in it, and a line for the log.
#[derive(Debug, Default)]
pub struct Response {
    pub context: Option<String>,
    /// The events given: to be recorded ([`given`]) once the answer is sure to go out.
    pub given: Vec<String>,
    pub log: Option<String>,
    /// The session whose turn's end is left to the caller: the notes hold the turn; the
    /// graph, the continuation, CLAUDE.md and the index follow in [`finish_turn`], which the
    /// caller runs in a process of its own, so that the session does not wait for them.
    pub rest: Option<String>,
}

/// Record that the session of `payload` was given `response`'s events.
pub fn given(store: &Store, payload: &Payload, response: &Response) -> Result<()> {
    if payload.session_id.is_empty() {
        return Ok(());
    }
    Ok(injected::add(store, &payload.session_id, &response.given)?)
}

/// Answer a hook at `moment` for `payload` (in Claude Code's terms), from the repository of
/// `cwd`.
pub fn respond(store: &Store, cwd: &Path, moment: Moment, payload: &Payload) -> Result<Response> {
    // Where the session's transcript is, for the post-commit hook: said by the events that
    // open a session and each turn, not on every tool call.
    if let (Some(transcript), false, Moment::SessionStart | Moment::Prompt) = (
        &payload.transcript_path,
        payload.session_id.is_empty(),
        moment,
    ) {
        let dir = cwd.to_string_lossy();
        sessions::record(store, &payload.session_id, transcript, &dir)?;
    }
    match moment {
        Moment::SessionStart => start(store, payload),
        Moment::Prompt => prompt(store, payload),
        Moment::BeforeTool => file(store, cwd, payload),
        Moment::AfterTool { file: true } if gives_file(payload) => file(store, cwd, payload),
        Moment::AfterTool { .. } => capture(store, payload),
        Moment::BeforeCompact | Moment::TurnEnd | Moment::SessionEnd => {
            extract(store, moment, payload)
        }
        Moment::AfterCompact => Ok(Response::default()),
    }
}

/// Whether the tool of `payload` reads or writes a file whose reasoning it is given.
fn gives_file(payload: &Payload) -> bool {
    payload
        .tool_name
        .as_deref()
        .is_some_and(|t| FILE_TOOLS.contains(&t))
}

/// `SessionStart`: the brief on `startup` and `clear`, the continuation on `compact`, `resume`
/// and `fork`.
fn start(store: &Store, payload: &Payload) -> Result<Response> {
    let session = payload.session_id.as_str();
    let source = payload.source.as_deref().unwrap_or("startup");
    if matches!(source, "compact" | "clear") {
        // The context is gone, and what it was given with it.
        injected::forget(store, session)?;
    }
    let (context, what, kept) = match source {
        "compact" => (
            continuation::context(store, session, "compacted")?,
            "continuation",
            false,
        ),
        "resume" | "fork" => (
            continuation::context(store, session, "resumed")?,
            "continuation",
            false,
        ),
        _ => {
            let (brief, kept) = brief::brief(store, session)?;
            (brief, "brief", kept)
        }
    };
    let log = match &context {
        Some(text) => format!(
            "{source}: gave the {what}{}, about {} tokens",
            if kept { " as kept" } else { "" },
            query::estimate_tokens(text)
        ),
        None => format!("{source}: no {what}: nothing recorded"),
    };
    Ok(Response {
        context,
        log: Some(log),
        ..Response::default()
    })
}

/// `PostToolUse` on a read or a search: the operation, appended to the pending queue without
/// waiting for the lock (the extractor makes the same event, with the same id, from the
/// transcript; its version replaces this one). An event already queued or on a commit is left
/// alone.
fn capture(store: &Store, payload: &Payload) -> Result<Response> {
    let (Some(tool), Some(input)) = (payload.tool_name.as_deref(), &payload.tool_input) else {
        return Ok(Response::default());
    };
    if payload.session_id.is_empty() {
        return Ok(Response::default());
    }
    let raw = input.to_string();
    let input: ToolInput<'_> = serde_json::from_str(&raw).unwrap_or_default();
    // Named as the extractor names it; a file outside the working tree is not recorded.
    let file = crate::transcript::record::text(&input.file_path)
        .map(|path| relative_to(store.workdir(), path))
        .filter(|f| inside_repository(f));
    let now = rfc3339(time::now_seconds());
    let session = &payload.session_id;
    let redactor = store.config().redactor();
    let taint = saw_excluded(store, payload, tool, &input)?;
    let clean = Cleaner {
        redactor,
        taint: &taint,
    };
    let Some(event) = operation(session, tool, &input, file.as_deref(), &now, &clean) else {
        return Ok(Response::default());
    };
    // A read or a search has one id per session and file or pattern: the same call after a
    // `forget` would store the forgotten event again.
    if store::forgotten::contains(store, &event.id)? {
        return Ok(Response::default());
    }
    if pending::holds(store, session, &event.id) || link::is_attached(store, session, &event.id)? {
        return Ok(Response::default());
    }
    pending::append(store, &event)?;
    Ok(Response {
        log: Some(format!("captured: {}", event.summary)),
        ..Response::default()
    })
}

/// What the session saw of excluded files: what its readers recorded, and what this call's
/// output shows of them (the content of an excluded file it read, the lines of one a search
/// printed), recorded for them in turn.
fn saw_excluded(
    store: &Store,
    payload: &Payload,
    tool: &str,
    input: &ToolInput<'_>,
) -> store::Result<Taint> {
    let session = &payload.session_id;
    let known = seen::load(store, session)?;
    let mut saw = Taint::default();
    saw.extend(known.iter().copied());
    let Some(response) = &payload.tool_response else {
        return Ok(saw);
    };
    let redactor = store.config().redactor();
    let excluded = |path: &str| redactor.excluded(&relative_to(store.workdir(), path));
    let read_excluded =
        tool == "Read" && crate::transcript::record::text(&input.file_path).is_some_and(excluded);
    saw.add_response(tool, response, read_excluded, excluded);
    seen::add(store, session, &known, saw.hashes())?;
    Ok(saw)
}

/// The store's lock, or, when another writer holds it past the hook's patience, the response
/// that says what was left (`left`) for a later run.
fn lock(store: &Store, left: &str) -> Result<std::result::Result<std::fs::File, Response>> {
    match store.lock() {
        Ok(lock) => Ok(Ok(lock)),
        Err(store::Error::Busy) => Ok(Err(Response {
            log: Some(format!("store busy: {left}")),
            ..Response::default()
        })),
        Err(e) => Err(e.into()),
    }
}

/// `PreCompact`, `Stop`, `SessionEnd`: extract the session's transcripts (the one the payload
/// names, and its subagents'), link the session's events to its commits, then bring the graph up
/// to the notes, save the session's continuation and regenerate CLAUDE.md's section when
/// configured (the caller then brings the index up to the notes). At a turn's end that changed
/// something, those last steps are left to the caller ([`Response::rest`]): the session goes
/// on once its turn is in the notes.
fn extract(store: &Store, moment: Moment, payload: &Payload) -> Result<Response> {
    let session = payload.session_id.as_str();
    if session.is_empty() {
        return Ok(Response::default());
    }
    let env = commit::Environment {
        session_id: Some(session.to_owned()),
        homes: crate::transcript::locate::Homes::from_env(),
    };
    let mut paths = commit::session_transcripts(store, &env, session);
    if let Some(path) = payload.transcript_path.as_ref().filter(|p| p.is_file())
        && !paths.contains(path)
    {
        paths.insert(0, path.clone());
    }
    let lock = match lock(store, "extraction left to the next run")? {
        Ok(lock) => lock,
        Err(busy) => return Ok(busy),
    };
    let (mut added, mut updated) = (0, 0);
    let mut restarted = Vec::new();
    for path in &paths {
        if let Some(report) = commit::read(store, path)? {
            added += report.events_added;
            updated += report.events_updated;
            if let Some(why) = report.restarted {
                restarted.push(format!(
                    "{} read again from the start: {why}",
                    path.display()
                ));
            }
        }
    }
    let linked = link::session(store, session)?;
    let mut log = format!(
        "{} transcripts: {added} new events, {updated} updated; {} linked to {} commits",
        paths.len(),
        linked.events,
        linked.commits
    );
    for line in restarted {
        log.push_str("; ");
        log.push_str(&line);
    }
    // Nothing new, and a snapshot saved: it stands.
    let save = added + updated + linked.events > 0 || !continuation::saved_exists(store, session);
    if moment == Moment::TurnEnd && save {
        // The saved continuation is dropped first: until a new one is saved, one is made from
        // the store when asked for, so a rest that never runs loses nothing. (What the graph
        // owes is written down already; the next hook that writes notes brings the index up
        // to them.)
        continuation::discard(store, session)?;
        return Ok(Response {
            log: Some(log),
            rest: Some(session.to_owned()),
            ..Response::default()
        });
    }
    log.push_str(&follow_turn(store, moment, session, lock, save)?);
    Ok(Response {
        log: Some(log),
        ..Response::default()
    })
}

/// The rest of a turn's end that `Stop` left ([`Response::rest`]): the graph, the
/// continuation and CLAUDE.md of `session`; what was done, for the log. The index is the
/// caller's, as after [`respond`].
pub fn finish_turn(store: &Store, session: &str) -> Result<String> {
    let left = "the graph, the continuation and CLAUDE.md left to the next run";
    match lock(store, left)? {
        Ok(lock) => follow_turn(store, Moment::TurnEnd, session, lock, true),
        Err(busy) => Ok(format!("; {}", busy.log.unwrap_or_default())),
    }
}

/// What follows an extraction at `moment`, holding the store's `lock` until the graph is up to
/// the notes and the continuation of `session` saved (when `save`): under the lock, an older
/// continuation (a turn's rest that ran late) never replaces a newer one. Then CLAUDE.md's
/// section regenerated when configured (but before a compaction). What was done, as the log
/// line goes on.
fn follow_turn(
    store: &Store,
    moment: Moment,
    session: &str,
    lock: std::fs::File,
    save: bool,
) -> Result<String> {
    // A graph that cannot be written (what is owed stays owed) holds up nothing else of the
    // turn's end: its failure is the hook's once the rest is done.
    let settled = graph::settle(store);
    let mut log = String::new();
    if save {
        continuation::snapshot(store, session)?;
        log.push_str("; continuation saved");
    }
    drop(lock);
    if moment != Moment::BeforeCompact && store.config().claude_md_refresh() {
        let done = match claude_md::refresh_if_changed(store)? {
            Refreshed::Created => "created",
            Refreshed::Updated => "updated",
            Refreshed::Unchanged => "unchanged",
        };
        log.push_str(&format!("; CLAUDE.md {done}"));
    }
    settled?;
    Ok(log)
}

fn prompt(store: &Store, payload: &Payload) -> Result<Response> {
    let Some(prompt) = payload.prompt.as_deref().filter(|p| !p.trim().is_empty()) else {
        return Ok(Response::default());
    };
    inject(
        store,
        Request {
            prompt,
            files: Vec::new(),
            budget: PROMPT_TOKENS,
            backend: store.config().backend(),
            focus: Focus::Prompt,
            exclude: &injected::read(store, &payload.session_id),
            hook: true,
        },
    )
}

fn file(store: &Store, cwd: &Path, payload: &Payload) -> Result<Response> {
    if !gives_file(payload) {
        return Ok(Response::default());
    }
    let Some(input) = &payload.tool_input else {
        return Ok(Response::default());
    };
    // One file, or (a patch) several.
    let named = match input.get("file_paths").and_then(|p| p.as_array()) {
        Some(paths) => paths.iter().filter_map(|p| p.as_str()).collect(),
        None => Vec::from_iter(input.get("file_path").and_then(|p| p.as_str())),
    };
    // A file outside the repository has no recorded reasoning here.
    let files: Vec<String> = named
        .into_iter()
        .filter_map(|path| store.repo_path(cwd, path).ok())
        .collect();
    if files.is_empty() {
        return Ok(Response::default());
    }
    inject(
        store,
        Request {
            prompt: "",
            files,
            budget: FILE_TOKENS,
            backend: Backend::File,
            focus: Focus::File,
            exclude: &injected::read(store, &payload.session_id),
            hook: true,
        },
    )
}

/// Run the query; what it found is the context. The log says which notes the index left out,
/// being unreadable: the answer may lack their reasoning.
fn inject(store: &Store, request: Request<'_>) -> Result<Response> {
    let answer = query::query(store, &request)?;
    let unread = answer.unread;
    if answer.items.is_empty() {
        return Ok(Response {
            log: unread,
            ..Response::default()
        });
    }
    let mut log = format!(
        "injected {} events, about {} tokens",
        answer.items.len(),
        answer.tokens
    );
    if let Some(unread) = unread {
        log.push_str("; ");
        log.push_str(&unread);
    }
    Ok(Response {
        log: Some(log),
        given: answer
            .items
            .iter()
            .flat_map(|i| [i.id.clone(), query::words_key(&i.summary)])
            .collect(),
        context: Some(answer.text),
        ..Response::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_kept_within_claude_codes_cap() {
        // At the cap exactly, an answer is given whole.
        let at = "x".repeat(OUTPUT_MAX);
        assert_eq!(capped(&at), at.as_str());
        // One unit over, whole lines are kept and the cut is said. An emoji counts two units.
        let line = format!("- {}\n", "é".repeat(97));
        let mut over = line.repeat(OUTPUT_MAX / 100);
        over.push('🦀');
        assert_eq!(over.encode_utf16().count(), OUTPUT_MAX + 2);
        let cut = capped(&over);
        assert!(cut.encode_utf16().count() <= OUTPUT_MAX);
        assert!(cut.ends_with("(cut to Claude Code's limit on a hook's output)"));
        assert!(cut.lines().rev().skip(1).all(|l| l == line.trim_end()));
    }
}
