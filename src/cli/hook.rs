//! `hook <name>`: the git hooks `post-commit` and `post-rewrite` (see `git-hooks/`).
//!
//! A hook must never fail or hold up the git command that runs it: it always exits 0 and
//! prints nothing. What it did, or why it failed, goes to `$GIT_DIR/agent-context/log`; a
//! failure also gives one line on stderr. Outside a git repository it does nothing.

use std::io::Read;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::time::Duration;

use crate::cli::{CmdResult, claude_dir};
use crate::ingest::commit::{self, Environment, PostCommit};
use crate::retrieve::index;
use crate::store::{self, Store, log};

/// How long a git hook waits for another writer before leaving its work to the next run.
const PATIENCE: Duration = Duration::from_millis(200);
/// The most changed notes a hook indexes.
const HOOK_INDEX_MOST: usize = 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The hook: post-commit or post-rewrite.
    name: String,
    /// What git passes to the hook (post-rewrite: `amend` or `rebase`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub fn run(cwd: &Path, args: Args) -> CmdResult {
    let what = format!("hook {}", args.name);
    let store = match Store::discover(cwd) {
        Ok(store) => store.with_patience(PATIENCE),
        // Nowhere to log it: say it once.
        Err(e @ (store::Error::Config(_) | store::Error::Reftable { .. })) => {
            eprintln!("git-agent-context: {what}: {e}");
            return Ok(());
        }
        Err(_) => return Ok(()),
    };
    // A panic is a failure like any other: reported in one line, never a crash.
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let done = dispatch(&store, &args)?;
        // The retrieval index follows the notes; a busy store, or more than a few notes to
        // index (a first build), is left to the next command that reads it.
        match index::refresh_within(&store, Some(HOOK_INDEX_MOST)) {
            Ok(_) | Err(store::Error::Busy) => Ok(done),
            Err(e) => Err(format!(
                "{} but the index was not updated: {e}",
                done.unwrap_or_default()
            )),
        }
    }))
    .unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(format!("internal error: {why}"))
    });
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

/// Run the hook; what it did (for the log), or why it failed.
fn dispatch(store: &Store, args: &Args) -> Result<Option<String>, String> {
    match args.name.as_str() {
        "post-commit" => {
            let env = Environment {
                session_id: std::env::var("CLAUDE_CODE_SESSION_ID")
                    .ok()
                    .filter(|s| !s.is_empty()),
                claude_dir: claude_dir(),
            };
            let (head, done) = commit::post_commit(store, &env).map_err(|e| format!("{e:#}"))?;
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
            let carried = commit::post_rewrite(store, &pairs).map_err(|e| format!("{e:#}"))?;
            let how = args.rest.first().map_or("rewrite", String::as_str);
            Ok(Some(format!(
                "{how}: {} commits rewritten, {carried} events carried",
                pairs.len()
            )))
        }
        other => Err(format!(
            "unknown hook {other:?} (expected post-commit or post-rewrite)"
        )),
    }
}
