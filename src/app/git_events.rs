//! The work of git's hooks (`post-commit`, `post-merge`, `post-rewrite`, `pre-push`; see
//! `git-hooks/`) and what every hook does after it: bring the retrieval index up to the notes.
//! The command line holds each to its budget and turns what happened into a log line
//! (`cli/hook.rs`); this is what runs inside it.

use std::io;

use gix::ObjectId;

use crate::deliver::{adapter, brief};
use crate::ingest::commit::{self, Environment, PostCommit};
use crate::ingest::repair;
use crate::retrieve::index;
use crate::share::sync;
use crate::store::{self, Store, log, pack};
use crate::transcript::agent::Agent;
use crate::transcript::locate::Homes;

/// Why a git hook's work failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "unknown hook {name:?} (expected post-commit, post-merge, post-rewrite, pre-push or one of {})",
        adapter::of(Agent::ClaudeCode).events().iter().map(|(e, _)| *e).collect::<Vec<_>>().join(", ")
    )]
    Unknown { name: String },
    #[error("cannot read stdin")]
    Stdin(#[source] io::Error),
    #[error("{}the index was not updated", done.as_ref().map_or(String::new(), |d| format!("{d} but ")))]
    Index {
        done: Option<String>,
        source: store::Error,
    },
    #[error(transparent)]
    Ingest(#[from] crate::ingest::Error),
    #[error(transparent)]
    Sync(#[from] sync::Error),
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Bring the retrieval index up to the notes when at most [`index::HOOK_MOST`] changed (a first
/// build of a few notes included); a busy store, or more, is left to the next command that reads
/// it. What the index left out, being unreadable, is logged under `what`.
pub fn follow_notes(store: &Store, what: &str) -> Result<(), store::Error> {
    match index::refresh_within(store, Some(index::HOOK_MOST)) {
        Ok(_) | Err(store::Error::Busy) => {}
        Err(e) => return Err(e),
    }
    if let Some(line) = index::read(store).unread_line() {
        let _ = log::append(store, what, &line);
    }
    Ok(())
}

/// What a git hook did: its line for the log, and the agent's commit whose post-commit work
/// is left to a process of its own ([`FINISH`]), when it is.
#[derive(Debug)]
pub struct Ran {
    pub said: String,
    pub finish: Option<ObjectId>,
}

/// `hook post-commit finish <commit>`: the post-commit work of an agent's commit, in a process
/// of its own that the commit does not wait for (see [`commit::post_commit`]).
pub const FINISH: &str = "finish";

/// Run git hook `name` (but `pre-push`: [`pre_push`]) with what git passed it (`rest`), then
/// bring the retrieval index up to the notes if they changed.
pub fn run(store: &Store, name: &str, rest: &[String]) -> Result<Ran, Error> {
    let how = rest.first().map(String::as_str);
    let finishing = (name, how) == ("post-commit", Some(FINISH));
    let (said, finish) = match (name, how) {
        ("post-commit", Some(FINISH)) => (finish(store, rest.get(1))?, None),
        ("post-commit", _) => post_commit(store)?,
        ("post-merge", _) => (post_merge(store)?, None),
        ("post-rewrite", how) => (post_rewrite(store, how.unwrap_or("rewrite"))?, None),
        _ => {
            return Err(Error::Unknown {
                name: name.to_owned(),
            });
        }
    };
    // An agent's commit changed no note yet: what follows it does.
    if finish.is_none() {
        follow_notes(store, &format!("hook {name}")).map_err(|source| Error::Index {
            done: Some(said.clone()),
            source,
        })?;
    }
    let said = match finishing {
        true => said + &tidy(store) + &brief_ready(store),
        false => said,
    };
    Ok(Ran { said, finish })
}

/// The session the environment names: the agent's that runs the commit.
fn environment() -> Environment {
    let session = |name: &str| std::env::var(name).ok().filter(|s| !s.is_empty());
    Environment {
        session_id: session("CLAUDE_CODE_SESSION_ID").or_else(|| session("CODEX_SESSION_ID")),
        homes: Homes::from_env(),
    }
}

fn post_commit(store: &Store) -> Result<(String, Option<ObjectId>), Error> {
    let (head, done) = commit::post_commit(store, &environment())?;
    // A commit that adds again the lines of annotated ones (a squash merge, a cherry-pick by
    // hand) carries their reasoning too.
    let carried = match done {
        PostCommit::Linked { .. } => repair::carry_to(store, &[head])?.len(),
        _ => 0,
    };
    let hex = head.to_hex_with_len(12);
    let said = match done {
        PostCommit::Rebase => format!("{hex}: rebase in progress, notes left to git"),
        PostCommit::CherryPick { from, events } => format!(
            "{hex}: cherry-picked from {}, {events} events copied",
            from.to_hex_with_len(12)
        ),
        PostCommit::Deferred { session } => {
            return Ok((format!("{hex}: session {session}: recorded"), Some(head)));
        }
        PostCommit::Linked { sessions } if sessions.is_empty() => format!("{hex}: no session"),
        PostCommit::Linked { sessions } => {
            let each: Vec<String> = sessions
                .iter()
                .map(|(s, n)| format!("session {s}: {n} events"))
                .collect();
            format!("{hex}: {}", each.join(", "))
        }
    };
    Ok((format!("{said}{}", carried_note(carried)), None))
}

/// [`FINISH`]: attach the agent's session's events to `commit` (and any other commit of it
/// recorded), then carry to it the notes of annotated commits whose lines it holds.
fn finish(store: &Store, commit: Option<&String>) -> Result<String, Error> {
    let env = environment();
    let (Some(session), Some(commit)) = (
        env.session_id.clone(),
        commit.and_then(|c| ObjectId::from_hex(c.as_bytes()).ok()),
    ) else {
        return Ok("finish: no session or commit given: nothing to do".to_owned());
    };
    let events = commit::finish(store, &env, &session)?;
    let carried = repair::carry_to(store, &[commit])?.len();
    Ok(format!(
        "{}: session {session}: {events} events{}",
        commit.to_hex_with_len(12),
        carried_note(carried)
    ))
}

/// What [`FINISH`] does last, once the index is up to the notes, with nothing of ours waiting
/// on it: pack the loose objects and write git's commit-graph when they are due (the hooks read
/// the newest objects most, and walk the history); what was done, said as the log's line goes
/// on.
fn tidy(store: &Store) -> String {
    let packed = match pack::pack_if_loose(store) {
        Ok(true) => "; the loose objects packed".to_owned(),
        Ok(false) => String::new(),
        Err(e) => format!("; the loose objects left loose: {e}"),
    };
    let graphed = match pack::commit_graph_if_behind(store) {
        Ok(true) => "; git's commit-graph written".to_owned(),
        Ok(false) => String::new(),
        Err(e) => format!("; no commit-graph written: {e}"),
    };
    packed + &graphed
}

/// The brief the next session starts with, made now that the work that changed it is done
/// ([`brief::keep`]): what was done, for the log. It can always be made again.
pub fn brief_ready(store: &Store) -> String {
    match brief::keep(store) {
        Ok(true) => "; the next session's brief made".to_owned(),
        Ok(false) => String::new(),
        Err(e) => format!(
            "; the next session's brief not made: {}",
            store::error_chain(&e)
        ),
    }
}

fn carried_note(carried: usize) -> String {
    match carried {
        0 => String::new(),
        n => format!("; the notes of {n} commits whose lines it holds carried"),
    }
}

fn post_merge(store: &Store) -> Result<String, Error> {
    // The team's notes a pull fetched (`install --sync`), before the commits it brought are
    // looked at: a squash done on the server finds the branch's notes. Left to the next sync
    // when it cannot be done now (the store busy): the repair below goes on.
    let taken = match sync::take_in_fetched(store) {
        Ok(0) => String::new(),
        Ok(n) => format!("{n} events of the remotes' notes taken in; "),
        Err(e) => format!(
            "the remotes' notes left for later ({}); ",
            store::error_chain(&e)
        ),
    };
    let repo = store.repo();
    let head = repo
        .head_id()
        .map_err(|e| store::Error::git("read HEAD", e.to_string()))?
        .detach();
    let before = repo
        .find_reference("ORIG_HEAD")
        .ok()
        .and_then(|mut r| r.peel_to_id().ok())
        .map(|id| id.detach());
    let Some(before) = before else {
        return Ok(format!("{taken}no ORIG_HEAD: nothing arrived"));
    };
    let arrived = repair::arrived(&repo, before, head);
    let carried = repair::carry_to(store, &arrived)?;
    Ok(format!(
        "{taken}{} commits arrived, the notes of {} commits whose lines they hold carried{}",
        arrived.len(),
        carried.len(),
        repaired(store)?
    ))
}

/// `how`: `amend` or `rebase`, as git says; the rewritten pairs are on stdin.
fn post_rewrite(store: &Store, how: &str) -> Result<String, Error> {
    let input = io::read_to_string(io::stdin()).map_err(Error::Stdin)?;
    let pairs = commit::rewritten_pairs(&input);
    let carried = commit::post_rewrite(store, &pairs)?;
    Ok(format!(
        "{how}: {} commits rewritten, {carried} events carried{}",
        pairs.len(),
        repaired(store)?
    ))
}

/// The repair a hook makes after commits were merged or rewritten, when the history to walk
/// is short; what it did, for the log.
fn repaired(store: &Store) -> Result<String, Error> {
    Ok(match repair::repair_within(store, repair::HOOK_WALK_MAX)? {
        None => "; repair left to the command (long history)".to_owned(),
        Some(r) if r.carried.is_empty() && r.left.is_empty() => String::new(),
        Some(r) => format!(
            "; repair: {} unreachable commits' notes carried, {} left",
            r.carried.len(),
            r.left.len()
        ),
    })
}

/// The pre-push hook (`install --sync`): sync the notes with the remote pushed to; what it
/// did, for the log. The caller holds it to `sync.push_budget_ms` (a sync cut anywhere is
/// completed by the next) and the push goes on.
pub fn pre_push(store: &Store, remote: Option<&str>) -> Result<Option<String>, Error> {
    let Some(remote) = remote else {
        return Ok(Some("no remote given: nothing synced".to_owned()));
    };
    let options = sync::Options {
        push: true,
        prompt: false,
    };
    match sync::sync(store, remote, options) {
        Ok(done) => Ok(Some(format!(
            "{remote}: {} events taken in; {}",
            done.merged_events,
            match done.pushed {
                true => "ours pushed",
                false => "it had all of ours",
            }
        ))),
        // A push to a URL: there is no remote to keep its notes beside ours.
        Err(sync::Error::NoSuchRemote(_)) => Ok(Some(format!(
            "{} is not a named remote: nothing synced",
            crate::sanitise::line(remote)
        ))),
        Err(e) => Err(e.into()),
    }
}
