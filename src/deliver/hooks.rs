//! Claude Code's hooks (DESIGN §9): `git agent-context hook <Event>` reads the hook's JSON on
//! stdin and answers with the context to inject, if any.
//!
//! - `UserPromptSubmit`: the reasoning that bears on the prompt (the `query` machinery), when a
//!   file or the graph points at it or its words match well enough; nothing otherwise.
//! - `PreToolUse` on Read, Edit, MultiEdit and Write: the standing decisions, rejected
//!   alternatives and trade-offs recorded for the file, in a few hundred tokens.
//! - `SessionStart` after `/compact` or `/clear`: what the session was given is forgotten, so
//!   that it can be given again.
//!
//! An event is given to a session once (the caller records it with [`given`] once the answer
//! is sure to go out); the other hook events answer with nothing.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Backend;
use crate::deliver::injected;
use crate::retrieve::query::{self, Focus, Request};
use crate::store::{Store, sessions};

/// The hook events this command answers; any other is refused (and logged).
pub const EVENTS: [&str; 8] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SessionEnd",
];

/// Tokens a prompt is given at most.
const PROMPT_TOKENS: usize = 1_500;
/// Tokens a file is given at most.
const FILE_TOKENS: usize = 300;
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
}

/// What a hook did: the context to inject, the events in it, and a line for the log.
#[derive(Debug, Default)]
pub struct Response {
    pub context: Option<String>,
    /// The events given: to be recorded ([`given`]) once the answer is sure to go out.
    pub given: Vec<String>,
    pub log: Option<String>,
}

/// Record that the session of `payload` was given `response`'s events.
pub fn given(store: &Store, payload: &Payload, response: &Response) -> Result<(), String> {
    if payload.session_id.is_empty() {
        return Ok(());
    }
    injected::add(store, &payload.session_id, &response.given).map_err(|e| e.to_string())
}

/// Answer hook `event` (one of [`EVENTS`]) for `payload`, from the repository of `cwd`.
pub fn respond(
    store: &Store,
    cwd: &Path,
    event: &str,
    payload: &Payload,
) -> Result<Response, String> {
    // Where the session's transcript is, for the post-commit hook: said by the events that
    // open a session and each turn, not on every tool call.
    if let (Some(transcript), false, "SessionStart" | "UserPromptSubmit") = (
        &payload.transcript_path,
        payload.session_id.is_empty(),
        event,
    ) {
        let dir = cwd.to_string_lossy();
        sessions::record(store, &payload.session_id, transcript, &dir)
            .map_err(|e| e.to_string())?;
    }
    match event {
        "UserPromptSubmit" => prompt(store, payload),
        "PreToolUse" => file(store, cwd, payload),
        "SessionStart" if matches!(payload.source.as_deref(), Some("compact" | "clear")) => {
            injected::forget(store, &payload.session_id).map_err(|e| e.to_string())?;
            Ok(Response {
                log: Some("context cleared: what was injected may be injected again".into()),
                ..Response::default()
            })
        }
        _ => Ok(Response::default()),
    }
}

fn prompt(store: &Store, payload: &Payload) -> Result<Response, String> {
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

fn file(store: &Store, cwd: &Path, payload: &Payload) -> Result<Response, String> {
    if !payload
        .tool_name
        .as_deref()
        .is_some_and(|t| FILE_TOOLS.contains(&t))
    {
        return Ok(Response::default());
    }
    let Some(path) = payload
        .tool_input
        .as_ref()
        .and_then(|i| i.get("file_path"))
        .and_then(|p| p.as_str())
    else {
        return Ok(Response::default());
    };
    // A file outside the repository has no recorded reasoning here.
    let Ok(path) = store.repo_path(cwd, path) else {
        return Ok(Response::default());
    };
    inject(
        store,
        Request {
            prompt: "",
            files: vec![path],
            budget: FILE_TOKENS,
            backend: Backend::File,
            focus: Focus::File,
            exclude: &injected::read(store, &payload.session_id),
            hook: true,
        },
    )
}

/// Run the query; what it found is the context.
fn inject(store: &Store, request: Request<'_>) -> Result<Response, String> {
    let answer = query::query(store, &request).map_err(|e| e.to_string())?;
    if answer.items.is_empty() {
        return Ok(Response::default());
    }
    Ok(Response {
        log: Some(format!(
            "injected {} events, about {} tokens",
            answer.items.len(),
            answer.tokens
        )),
        given: answer.items.iter().map(|i| i.id.clone()).collect(),
        context: Some(answer.text),
    })
}
