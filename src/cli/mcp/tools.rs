//! The MCP server's tools: `record_decision`, `why`, `recall`, `reconstruct_session` and
//! `session_summary`, each the library function a command or a hook uses.
//!
//! Arguments are checked against the tool's schema (types, lengths, paths inside the
//! repository); what does not fit is a tool error that says what is wrong, for the model to
//! correct. Everything recorded that goes back to the model passes [`sanitise::context`] for
//! [`Reader::Agent`], as the hooks' context does: quoted as data, and withheld when it reads as
//! an instruction.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::deliver::{brief, continuation};
use crate::event::Event;
use crate::ingest::recorded::{self, Place, Record, What};
use crate::render::templates::within;
use crate::render::text::Palette;
use crate::retrieve::query::{self, Focus, Request};
use crate::retrieve::why::{self, By, Why};
use crate::sanitise::{self, Reader};
use crate::store::erase::{self, Inventory, Resolved};
use crate::store::graph::View;
use crate::store::{self, Store, notes, pending};

/// The most tokens a tool answers with; `recall` answers within the budget it is given.
const TOKENS_MAX: usize = 4_000;
/// `recall`'s budget when none is given.
const RECALL_TOKENS: usize = 1_000;
/// The longest text argument, in characters.
const TEXT_MAX: usize = 8_000;
/// The longest path or id argument, in characters.
const NAME_MAX: usize = 1_024;
/// The most items of a list argument.
const LIST_MAX: usize = 50;

/// What every call needs: where the server runs, and the session it records for.
pub struct Context<'a> {
    pub cwd: &'a Path,
    /// The session Claude Code started the server in; `None` outside one.
    pub session: Option<&'a str>,
}

/// What a tool answers: its text, or why it could not.
type Outcome = Result<String, Refusal>;

/// Why a tool could not answer: what the model is told, on one line, to correct its call.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("invalid arguments: {0}")]
    Arguments(String),
    #[error("{name} is longer than {max} characters")]
    TooLong { name: &'static str, max: usize },
    #[error("{name} has more than {LIST_MAX} items")]
    TooMany { name: &'static str },
    #[error("a line range is start <= end, counting from 1")]
    Range,
    #[error("end is given without start")]
    EndAlone,
    #[error("prompt is empty")]
    EmptyPrompt,
    #[error("budget is between 100 and {TOKENS_MAX} tokens")]
    Budget,
    #[error("no session {} is recorded (an id, or a prefix of {} characters or more)", sanitise::field(.0), erase::PREFIX_MIN)]
    UnknownSession(String),
    #[error("{} is the start of {count} {what} ids", sanitise::field(name))]
    Ambiguous {
        name: String,
        count: usize,
        what: &'static str,
    },
    #[error("cannot render the answer")]
    Render(#[source] std::io::Error),
    #[error(transparent)]
    Path(#[from] store::PathError),
    #[error(transparent)]
    Record(#[from] recorded::Error),
    #[error(transparent)]
    Why(#[from] why::Error),
    #[error(transparent)]
    Deliver(#[from] crate::deliver::Error),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// The tools, with their input schemas, as `tools/list` gives them.
pub fn list() -> Value {
    let strings = |description: &str| json!({"type": "array", "items": {"type": "string", "maxLength": TEXT_MAX}, "maxItems": LIST_MAX, "description": description});
    json!([
        {
            "name": "record_decision",
            "description": "Record a decision, rejection, trade-off or constraint of this session in your own words. It is kept with the session's next commit (in git notes), redacted, and ranks above reasoning read out of the conversation. Record what a later session must know: what was chosen, what was ruled out and why.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "what": {"type": "string", "enum": ["decision", "rejection", "tradeoff", "constraint"], "description": "What is recorded."},
                    "text": {"type": "string", "minLength": 1, "maxLength": TEXT_MAX, "description": "The decision itself: what was chosen, rejected or traded."},
                    "rejected": strings("Alternatives ruled out, each with its reason after a colon: \"an LRU: entries expire by time\"."),
                    "because": {"type": "string", "maxLength": TEXT_MAX, "description": "Why."},
                    "files": strings("The files it bears on, relative to the repository's top folder."),
                    "supersedes": strings("Earlier decisions this one replaces: their event ids (as `why` and `recall` show them), or 4 or more of their first hex digits."),
                },
                "required": ["what", "text"],
                "additionalProperties": false,
            },
        },
        {
            "name": "why",
            "description": "The commits that own a file's lines (or a range of them) and the reasoning recorded with them: decisions, rejected alternatives, trade-offs, the sessions they came from.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "minLength": 1, "maxLength": NAME_MAX, "description": "A file tracked at HEAD, relative to the repository's top folder."},
                    "start": {"type": "integer", "minimum": 1, "description": "The first line asked about, from 1."},
                    "end": {"type": "integer", "minimum": 1, "description": "The last line asked about (with start)."},
                },
                "required": ["path"],
                "additionalProperties": false,
            },
        },
        {
            "name": "recall",
            "description": "The recorded reasoning that bears on a prompt, best first, as summaries each with its event id; ask again with ids for those events in full (rationale, alternatives, files, commit, session).",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "minLength": 1, "maxLength": TEXT_MAX, "description": "What the reasoning is wanted for."},
                    "budget": {"type": "integer", "minimum": 100, "maximum": TOKENS_MAX, "default": RECALL_TOKENS, "description": "The most tokens to answer with."},
                    "ids": {"type": "array", "items": {"type": "string", "minLength": 4, "maxLength": 64}, "maxItems": LIST_MAX, "description": "Event ids (or prefixes of 4 characters or more) to give in full."},
                },
                "required": ["prompt"],
                "additionalProperties": false,
            },
        },
        {
            "name": "reconstruct_session",
            "description": "What an earlier session was asked, what it decided and ruled out, what it completed and left unfinished, and its commits.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "session": {"type": "string", "minLength": 4, "maxLength": NAME_MAX, "description": "The session's id, or a prefix of 4 characters or more."},
                },
                "required": ["session"],
                "additionalProperties": false,
            },
        },
        {
            "name": "session_summary",
            "description": "The short form of a session (its request, what it completed, what it left pending); without a session, of the latest sessions on the current branch and those not yet committed.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "session": {"type": "string", "minLength": 4, "maxLength": NAME_MAX, "description": "The session's id, or a prefix of 4 characters or more."},
                },
                "additionalProperties": false,
            },
        },
    ])
}

/// Call the tool `name`; `None` when there is no such tool.
pub fn call(context: &Context<'_>, name: &str, arguments: Map<String, Value>) -> Option<Outcome> {
    let arguments = Value::Object(arguments);
    let outcome = match name {
        "record_decision" => parse(arguments).and_then(|a| record_decision(context, a)),
        "why" => parse(arguments).and_then(|a| why(context, a)),
        "recall" => parse(arguments).and_then(|a| recall(context, a)),
        "reconstruct_session" => parse(arguments).and_then(|a| reconstruct_session(context, a)),
        "session_summary" => parse(arguments).and_then(|a| session_summary(context, a)),
        _ => return None,
    };
    Some(outcome)
}

/// A refusal as the model is told it: it may quote the input or the repository, so one line
/// and no escapes.
pub fn shown(refusal: &Refusal) -> String {
    sanitise::line(&store::error_chain(refusal))
}

/// The arguments as the tool's type, or what is wrong with them.
fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, Refusal> {
    serde_json::from_value(arguments).map_err(|e| Refusal::Arguments(e.to_string()))
}

/// `value` is at most `max` characters long, or says which argument is too long.
fn fits(name: &'static str, value: &str, max: usize) -> Result<(), Refusal> {
    match value.chars().count() > max {
        true => Err(Refusal::TooLong { name, max }),
        false => Ok(()),
    }
}

fn list_fits(name: &'static str, values: &[String], max: usize) -> Result<(), Refusal> {
    if values.len() > LIST_MAX {
        return Err(Refusal::TooMany { name });
    }
    values.iter().try_for_each(|v| fits(name, v, max))
}

fn open(context: &Context<'_>) -> Result<Store, Refusal> {
    Ok(Store::discover(context.cwd)?)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordArgs {
    what: What,
    text: String,
    #[serde(default)]
    rejected: Vec<String>,
    #[serde(default)]
    because: String,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    supersedes: Vec<String>,
}

fn record_decision(context: &Context<'_>, args: RecordArgs) -> Outcome {
    fits("text", &args.text, TEXT_MAX)?;
    fits("because", &args.because, TEXT_MAX)?;
    list_fits("rejected", &args.rejected, TEXT_MAX)?;
    list_fits("files", &args.files, NAME_MAX)?;
    list_fits("supersedes", &args.supersedes, NAME_MAX)?;
    let store = open(context)?;
    let mut files = Vec::new();
    for file in &args.files {
        let path = store.repo_path(context.cwd, file)?;
        if !files.contains(&path) {
            files.push(path);
        }
    }
    let recorded = Record {
        what: args.what,
        text: args.text,
        rejected: args.rejected,
        because: args.because,
        files,
        supersedes: args.supersedes,
    };
    let place = match context.session {
        Some(session) => Place::Session(session),
        None => Place::Commit("HEAD"),
    };
    let (event, placed) = recorded::record(&store, &recorded, place)?;
    let mut text = format!("recorded {} {} ({placed})", event.kind, &event.id[..8]);
    if context.session.is_none() {
        text.push_str(
            ": this server was started without CLAUDE_CODE_SESSION_ID, so the session is \
             unknown and the record is a person's, on the commit checked out",
        );
    }
    Ok(text)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhyArgs {
    path: String,
    start: Option<u32>,
    end: Option<u32>,
}

fn why(context: &Context<'_>, args: WhyArgs) -> Outcome {
    fits("path", &args.path, NAME_MAX)?;
    let range = match (args.start, args.end) {
        (None, None) => None,
        (Some(start), end) => {
            let end = end.unwrap_or(start);
            if start == 0 || end < start {
                return Err(Refusal::Range);
            }
            Some((start, end))
        }
        (None, Some(_)) => return Err(Refusal::EndAlone),
    };
    let store = open(context)?;
    let path = store.repo_path(context.cwd, &args.path)?;
    let answer = why::why(&store, &path, range, By::Either)?;
    // The answer as the model may read it, printed as `why` prints it.
    let plain = serde_json::to_value(&answer).expect("an answer is plain data");
    let safe = sanitise::context(&plain, Reader::Agent);
    let answer: Why = serde_json::from_value(safe).expect("sanitising keeps the shape");
    let mut out = Vec::new();
    crate::cli::why::print_human(&answer, Palette { color: false }, false, &mut out)
        .map_err(Refusal::Render)?;
    Ok(within(
        String::from_utf8_lossy(&out).into_owned(),
        TOKENS_MAX,
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecallArgs {
    prompt: String,
    budget: Option<usize>,
    #[serde(default)]
    ids: Vec<String>,
}

fn recall(context: &Context<'_>, args: RecallArgs) -> Outcome {
    fits("prompt", &args.prompt, TEXT_MAX)?;
    list_fits("ids", &args.ids, 64)?;
    if args.prompt.trim().is_empty() {
        return Err(Refusal::EmptyPrompt);
    }
    let budget = args.budget.unwrap_or(RECALL_TOKENS);
    if !(100..=TOKENS_MAX).contains(&budget) {
        return Err(Refusal::Budget);
    }
    let store = open(context)?;
    let mut text = String::new();
    if !args.ids.is_empty() {
        let inventory = erase::inventory(&store, &[])?;
        for name in &args.ids {
            let line = match full_event(&store, &inventory, name)? {
                Some(event) => render(&event),
                None => format!("event {}: not found\n", sanitise::field(name)),
            };
            text.push_str(&line);
            text.push('\n');
        }
    }
    let left = budget.saturating_sub(query::estimate_tokens(&text));
    if left >= 50 {
        let answer = query::query(
            &store,
            &Request {
                prompt: &args.prompt,
                files: Vec::new(),
                budget: left,
                backend: store.config().backend(),
                focus: Focus::Prompt,
                exclude: &BTreeSet::new(),
                hook: false,
            },
        )?;
        match answer.text.trim().is_empty() {
            true if args.ids.is_empty() => {
                text.push_str("No recorded reasoning bears on this prompt.\n");
            }
            true => {}
            false => text.push_str(&answer.text),
        }
    }
    Ok(within(text, budget))
}

/// The event `name` stands for, in full, as JSON; `None` when no stored event has that id.
fn full_event(store: &Store, inventory: &Inventory, name: &str) -> Result<Option<Value>, Refusal> {
    let id = match inventory.event(name) {
        Resolved::One(id) => id,
        Resolved::None => return Ok(None),
        Resolved::Ambiguous(n) => {
            return Err(Refusal::Ambiguous {
                name: name.to_owned(),
                count: n,
                what: "event",
            });
        }
    };
    let Some(stored) = inventory
        .select(&[], std::slice::from_ref(&id), false)
        .pop()
    else {
        return Ok(None);
    };
    let events: Vec<Event> = match stored.commits.first() {
        Some(commit) => notes::read_id(store, *commit),
        None => pending::session_events(store, &stored.session),
    }?;
    Ok(events.into_iter().find(|e| e.id == id).map(|e| {
        json!({
            "event": e.id,
            "kind": e.kind,
            "summary": e.summary,
            "rationale": e.rationale,
            "alternatives": e.alternatives,
            "files": e.files_affected,
            "commits": stored.commits.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "pending": stored.pending,
            "session": e.session_id,
            "prompt": e.prompt_context,
            "when": e.timestamp,
        })
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    session: Option<String>,
}

/// The session id `name` stands for, among the sessions stored.
fn session_of(store: &Store, name: &str) -> Result<String, Refusal> {
    fits("session", name, NAME_MAX)?;
    let inventory = erase::inventory(store, &[])?;
    match inventory.session(name) {
        Resolved::One(id) => Ok(id),
        Resolved::None => Err(Refusal::UnknownSession(name.to_owned())),
        Resolved::Ambiguous(n) => Err(Refusal::Ambiguous {
            name: name.to_owned(),
            count: n,
            what: "session",
        }),
    }
}

fn reconstruct_session(context: &Context<'_>, args: SessionArgs) -> Outcome {
    let name = args
        .session
        .ok_or_else(|| Refusal::Arguments("missing field `session`".to_owned()))?;
    let store = open(context)?;
    let session = session_of(&store, &name)?;
    let summary = continuation::summarize(&store, &session)?;
    let repo = store.repo();
    let mut view = View::open(&repo)?;
    let node = view.session(&session)?.unwrap_or_default();
    // The graph's decisions (committed, with what they ruled out), then those still pending.
    let mut decisions = Vec::new();
    for id in &node.decisions {
        if let Some(d) = view.decision(id)? {
            let choice = match d.choice.is_empty() {
                true => d.subject,
                false => d.choice,
            };
            decisions.push(
                json!({"kind": d.kind, "choice": choice, "rejected": d.rejected, "event": d.id}),
            );
        }
    }
    for d in &summary.decisions {
        if !decisions.iter().any(|known| known["choice"] == *d) {
            decisions.push(json!({"kind": "decision", "choice": d}));
        }
    }
    let commits: Vec<String> = node
        .commits
        .iter()
        .filter_map(|c| gix::ObjectId::from_hex(c.as_bytes()).ok())
        .map(|c| {
            let (date, subject, _) = why::describe(&repo, c);
            format!(
                "{} {} {subject}",
                &c.to_string()[..7],
                date.get(..10).unwrap_or(&date)
            )
        })
        .collect();
    let unfinished = match node.unfinished.is_empty() {
        true => summary.pending,
        false => node.unfinished,
    };
    let request = match node.request.is_empty() {
        true => summary.request,
        false => node.request,
    };
    let value = json!({
        "session": session,
        "request": request,
        "current": summary.current,
        "decisions": decisions,
        "rejected": summary.rejected,
        "learned": summary.learned,
        "completed": summary.completed,
        "unfinished": unfinished,
        "files_edited": summary.files_edited,
        "commits": commits,
    });
    Ok(within(render(&value), TOKENS_MAX))
}

fn session_summary(context: &Context<'_>, args: SessionArgs) -> Outcome {
    let store = open(context)?;
    let value = match args.session {
        Some(name) => {
            let session = session_of(&store, &name)?;
            let summary = continuation::summarize(&store, &session)?;
            json!({
                "session": session,
                "request": summary.request,
                "completed": summary.completed,
                "pending": summary.pending,
            })
        }
        None => {
            let sessions = brief::latest(&store)?;
            if sessions.is_empty() {
                return Ok("No session is recorded on this branch yet.".to_owned());
            }
            json!({ "sessions": sessions })
        }
    };
    Ok(within(render(&value), TOKENS_MAX))
}

/// A JSON object as indented text for the agent: `key: value` lines, lists as `- item` lines.
/// Its strings pass [`sanitise::context`] first, so none of them can pass for a line or a list
/// item, and what reads as an instruction is withheld.
fn render(value: &Value) -> String {
    let mut out = String::new();
    if let Value::Object(map) = sanitise::context(value, Reader::Agent) {
        render_object(&map, "", &mut out);
    }
    out
}

fn render_object(map: &Map<String, Value>, indent: &str, out: &mut String) {
    for (key, value) in map {
        match value {
            Value::String(s) if s.is_empty() => {}
            Value::String(s) => out.push_str(&format!("{indent}{key}: {s}\n")),
            Value::Array(items) if items.is_empty() => {}
            Value::Array(items) => {
                out.push_str(&format!("{indent}{key}:\n"));
                for item in items {
                    match item {
                        Value::Object(inner) => {
                            out.push_str(&format!("{indent}  -\n"));
                            render_object(inner, &format!("{indent}    "), out);
                        }
                        Value::String(s) => out.push_str(&format!("{indent}  - {s}\n")),
                        other => out.push_str(&format!("{indent}  - {other}\n")),
                    }
                }
            }
            Value::Object(inner) => {
                out.push_str(&format!("{indent}{key}:\n"));
                render_object(inner, &format!("{indent}  "), out);
            }
            Value::Null => {}
            other => out.push_str(&format!("{indent}{key}: {other}\n")),
        }
    }
}
