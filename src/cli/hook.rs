//! `hook <name>`: the git hooks `post-commit` and `post-rewrite` (see `git-hooks/`), and Claude
//! Code's hooks (`UserPromptSubmit`, `PreToolUse`, `SessionStart`, …: `deliver::hooks`).
//!
//! A hook must never fail or hold up what runs it: it always exits 0. A git hook prints
//! nothing; a Claude Code hook prints the context to inject as Claude Code's JSON, or nothing,
//! and answers with nothing once its budget has passed (`hook.budget_ms`; `hook.extract_budget_ms`
//! for the hooks that extract a transcript). What it did, or why it failed,
//! goes to `$GIT_DIR/agent-context/log`; a failure also gives one line on stderr, the error
//! with its causes. Outside a git repository it does nothing; a repository it cannot open (a
//! bad configuration, a `.git/config` git cannot parse) is a failure like any other.

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::json;

use crate::cli::{CmdResult, claude_dir};
use crate::deliver::hooks::{self, Payload};
use crate::deliver::reason;
use crate::ingest::commit::{self, Environment, PostCommit};
use crate::retrieve::index;
use crate::store::{self, Store, log};

/// How long a hook waits for another writer before leaving its work to the next run.
const PATIENCE: Duration = Duration::from_millis(200);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook: post-commit, post-rewrite, or a Claude Code hook event (UserPromptSubmit,
    /// PreToolUse, SessionStart, …) with its JSON on stdin.
    name: String,
    /// What git passes to the hook (post-rewrite: `amend` or `rebase`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn run(cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    let what = format!("hook {}", args.name);
    let claude = hooks::EVENTS.contains(&args.name.as_str());
    let mut input = String::new();
    // A Claude Code hook's payload names the folder it is about.
    let payload: Option<Result<Payload, String>> = claude.then(|| {
        std::io::stdin()
            .read_to_string(&mut input)
            .map_err(|e| format!("cannot read stdin: {e}"))
            .and_then(|_| serde_json::from_str(&input).map_err(|e| format!("bad input: {e}")))
    });
    let here = match &payload {
        Some(Ok(Payload { cwd: Some(dir), .. })) => dir.clone(),
        _ => cwd.to_owned(),
    };
    // A folder that is gone (a worktree removed under a running session) is in no repository.
    if !here.is_dir() {
        return Ok(());
    }
    let store = match Store::discover(&here) {
        Ok(store) => store.with_patience(PATIENCE),
        // Outside a repository: nothing to do, nothing to say.
        Err(store::Error::NotARepository { .. }) => return Ok(()),
        // A repository that cannot be opened as it is (a bad configuration, refs in reftable,
        // a `.git` gix cannot read): said once, and logged where the store is there to log to.
        Err(e) => {
            let why = reason(&e);
            eprintln!("git-agent-context: {what}: {why}");
            if let Some(dir) = Store::existing_dir(&here) {
                let _ = log::append_in(&dir, &what, &format!("failed: {why}"));
            }
            return Ok(());
        }
    };
    // A panic is a failure like any other: reported in one line, never a crash.
    panic::set_hook(Box::new(|_| {}));
    let outcome = match payload {
        Some(payload) => {
            let answer = payload.and_then(|p| claude_hook(&store, &here, &args.name, p));
            match answer {
                Ok(Some(context)) => {
                    let answer = json!({"hookSpecificOutput": {
                        "hookEventName": args.name,
                        "additionalContext": context,
                    }});
                    writeln!(out, "{answer}")?;
                    Ok(None)
                }
                Ok(None) => Ok(None),
                Err(why) => Err(why),
            }
        }
        None => caught(|| git_hook(&store, &args)),
    };
    match outcome {
        Ok(Some(done)) => {
            let _ = log::append(&store, &what, &done);
        }
        Ok(None) => {}
        Err(why) => {
            eprintln!("git-agent-context: {what}: {why}");
            let _ = log::append(&store, &what, &format!("failed: {why}"));
        }
    }
    Ok(())
}

/// `f`, with a panic turned into a failure.
fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(format!("internal error: {why}"))
    })
}

/// A Claude Code hook, within the budget: the context to inject, if any. A watchdog thread
/// ends the process when the budget is spent, answering with nothing; the work ends with it
/// (every write it makes is atomic, or marked until done). Whichever of the two gets to answer
/// first holds the gate.
fn claude_hook(
    store: &Store,
    here: &Path,
    event: &str,
    payload: Payload,
) -> Result<Option<String>, String> {
    let extracting = hooks::EXTRACTING.contains(&event);
    let (budget, key) = if extracting {
        (
            store.config().hook_extract_budget(),
            "hook.extract_budget_ms",
        )
    } else {
        (store.config().hook_budget(), "hook.budget_ms")
    };
    let answered = Arc::new(Mutex::new(false));
    let gate = Arc::clone(&answered);
    let (dir, what) = (store.dir().to_owned(), format!("hook {event}"));
    std::thread::spawn(move || {
        std::thread::sleep(budget);
        let done = gate.lock().unwrap_or_else(PoisonError::into_inner);
        if !*done {
            let why = format!(
                "over its budget of {} ms ({key}): answered with nothing",
                budget.as_millis()
            );
            eprintln!("git-agent-context: {what}: {why}");
            let _ = log::append_in(&dir, &what, &format!("failed: {why}"));
            std::process::exit(0);
        }
    });
    let response = caught(|| hooks::respond(store, here, event, &payload));
    *answered.lock().unwrap_or_else(PoisonError::into_inner) = true;
    let response = response?;
    caught(|| hooks::given(store, &payload, &response))?;
    if let Some(line) = &response.log {
        let _ = log::append(store, &format!("hook {event}"), line);
    }
    // The notes the extracting hooks changed, into the index: past the gate, so that the
    // watchdog cannot cut an update short (a few notes at most, as for a git hook).
    if extracting {
        caught(|| follow_notes(store))?;
    }
    Ok(response.context)
}

/// Bring the retrieval index up to the notes when at most [`index::HOOK_MOST`] changed; a busy
/// store, or more (a first build), is left to the next command that reads it.
fn follow_notes(store: &Store) -> Result<(), String> {
    match index::refresh_within(store, Some(index::HOOK_MOST)) {
        Ok(_) | Err(store::Error::Busy) => Ok(()),
        Err(e) => Err(format!("the index was not updated: {}", reason(&e))),
    }
}

/// Run a git hook, then bring the retrieval index up to the notes; what it did (for the log),
/// or why it failed.
fn git_hook(store: &Store, args: &Args) -> Result<Option<String>, String> {
    let done = dispatch(store, args)?;
    follow_notes(store).map_err(|e| format!("{} but {e}", done.clone().unwrap_or_default()))?;
    Ok(done)
}

/// Run a git hook; what it did (for the log), or why it failed.
fn dispatch(store: &Store, args: &Args) -> Result<Option<String>, String> {
    match args.name.as_str() {
        "post-commit" => {
            let env = Environment {
                session_id: std::env::var("CLAUDE_CODE_SESSION_ID")
                    .ok()
                    .filter(|s| !s.is_empty()),
                claude_dir: claude_dir(),
            };
            let (head, done) = commit::post_commit(store, &env).map_err(|e| reason(&e))?;
            let head = head.to_hex_with_len(12);
            Ok(Some(match done {
                PostCommit::Rebase => format!("{head}: rebase in progress, notes left to git"),
                PostCommit::CherryPick { from, events } => format!(
                    "{head}: cherry-picked from {}, {events} events copied",
                    from.to_hex_with_len(12)
                ),
                PostCommit::Linked { sessions } if sessions.is_empty() => {
                    format!("{head}: no session")
                }
                PostCommit::Linked { sessions } => {
                    let each: Vec<String> = sessions
                        .iter()
                        .map(|(s, n)| format!("session {s}: {n} events"))
                        .collect();
                    format!("{head}: {}", each.join(", "))
                }
            }))
        }
        "post-rewrite" => {
            let mut input = String::new();
            std::io::stdin()
                .read_to_string(&mut input)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            let pairs = commit::rewritten_pairs(&input);
            let carried = commit::post_rewrite(store, &pairs).map_err(|e| reason(&e))?;
            let how = args.rest.first().map_or("rewrite", String::as_str);
            Ok(Some(format!(
                "{how}: {} commits rewritten, {carried} events carried",
                pairs.len()
            )))
        }
        other => Err(format!(
            "unknown hook {other:?} (expected post-commit, post-rewrite or one of {})",
            hooks::EVENTS.join(", ")
        )),
    }
}
