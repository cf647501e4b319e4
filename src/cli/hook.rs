//! `hook <name>`: the git hooks `post-commit` and `post-rewrite` (see `git-hooks/`), and Claude
//! Code's hooks (`UserPromptSubmit`, `PreToolUse`, `SessionStart`, …: `deliver::hooks`).
//!
//! A hook must never fail or hold up what runs it: it always exits 0, whatever fails — writing its
//! answer included. A git hook prints nothing; a Claude Code hook prints the context to inject as
//! Claude Code's JSON, or nothing. A Claude Code hook is held to its budget (`hook.budget_ms`;
//! `hook.extract_budget_ms` for the hooks that extract a transcript) from the start of the process
//! — reading its input, opening the repository and reading the configuration count, with the
//! environment's budget or else the default until the configuration is read — and past it
//! answers with nothing, whether or not its input ever ends; an input over [`INPUT_MAX`] is bad
//! input. A git hook is held to `hook.extract_budget_ms` as the environment sets it, or its
//! default, while it opens the repository and reads the configuration, and past it does
//! nothing. The events of an answer are recorded as given to the session only once the answer
//! is written. What a hook did, or why it failed, goes to `$GIT_DIR/agent-context/log`; a failure
//! also gives one line on stderr, the error with its causes. Outside a git repository it does
//! nothing, and in one owned by another user that `safe.directory` does not allow (where git
//! refuses to work) it does nothing and logs nothing, the log being in that repository; a
//! repository it cannot open (a bad configuration, a `.git/config` git cannot parse) is a
//! failure like any other.
//!
//! With `distill.mode` on, the hooks that extract (`PreCompact`, `Stop`, `SessionEnd`) then
//! start `distill --session <id>` in a process of its own — no input or output, its own process
//! group, never waited for — so that the model's answer, however slow, holds up nothing; that
//! run keeps to its own budgets and lock (`crate::distill`).

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cli::{CmdResult, claude_dir};
use crate::config::{self, Config};
use crate::deliver::hooks::{self, Payload};
use crate::deliver::reason;
use crate::ingest::commit::{self, Environment, PostCommit};
use crate::ingest::repair;
use crate::retrieve::index;
use crate::share::sync;
use crate::store::{self, Store, log};

/// How long a hook waits for another writer before leaving its work to the next run.
const PATIENCE: Duration = Duration::from_millis(200);

/// How long the watchdog gives the log line of a hook it cuts short before ending the process:
/// the log may be where the hook was stuck.
const LOG_PATIENCE: Duration = Duration::from_millis(100);

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
    // A panic is a failure like any other: reported in one line, never a crash.
    panic::set_hook(Box::new(|_| {}));
    let what = format!("hook {}", args.name);
    let event = args.name.as_str();
    let outcome = match hooks::EVENTS.contains(&event) {
        true => {
            let extracting = hooks::EXTRACTING.contains(&event);
            let watchdog = Watchdog::start(
                &what,
                budget(extracting, None),
                cwd,
                "answered with nothing",
            );
            caught(|| claude_hook(cwd, event, &watchdog, out)).map(|()| None)
        }
        // A git hook holds up git: it is held to the extracting hooks' budget before the
        // configuration (the environment's or the default) while it opens the repository and
        // its configuration (either may block, as a named pipe does); its work waits for other
        // writers at most PATIENCE.
        false => caught(|| {
            let watchdog = Watchdog::start(&what, budget(true, None), cwd, "did nothing");
            let store = open(cwd, &what);
            watchdog.answer(|| ());
            let Some(store) = store else {
                return Ok(None);
            };
            match git_hook(&store, &args) {
                Ok(done) => Ok(done.map(|line| (store.dir().to_owned(), line))),
                Err(why) => Err(Failed {
                    dir: Some(store.dir().to_owned()),
                    why,
                }),
            }
        }),
    };
    match outcome {
        Ok(Some((dir, done))) => {
            let _ = log::append_in(&dir, &what, &done);
        }
        Ok(None) => {}
        Err(Failed { dir, why }) => {
            say(&what, &why);
            if let Some(dir) = dir.or_else(|| Store::existing_dir(cwd)) {
                let _ = log::append_in(&dir, &what, &format!("failed: {why}"));
            }
        }
    }
    Ok(())
}

/// A hook's failure, and the folder of the store to log it in when there is one.
struct Failed {
    dir: Option<PathBuf>,
    why: String,
}

impl From<String> for Failed {
    fn from(why: String) -> Failed {
        Failed { dir: None, why }
    }
}

/// One line on stderr, `git-agent-context: hook <Event>: <why>`, whether or not stderr takes
/// it (`eprintln!` would panic on a closed or full stderr).
fn say(what: &str, why: &str) {
    let why = crate::sanitise::line(why);
    let _ = writeln!(std::io::stderr(), "git-agent-context: {what}: {why}");
}

/// The store of the repository at `here`, for a hook. Outside a repository: `None`, nothing
/// said. A repository that cannot be opened as it is (a bad configuration, refs in reftable,
/// a `.git` gix cannot read): said once, logged where the store is there to log to, `None`.
fn open(here: &Path, what: &str) -> Option<Store> {
    match Store::discover(here) {
        Ok(store) => Some(store.with_patience(PATIENCE)),
        // In no repository, as for git (a linked worktree whose repository is gone).
        Err(store::Error::NotARepository { .. } | store::Error::BrokenGitLink { .. }) => None,
        // Another user's repository that git refuses to work in, or a bare repository that
        // came with a clone: nothing is read from it or written to it, not even the log, which
        // is in it.
        Err(store::Error::DubiousOwnership { .. } | store::Error::EmbeddedBare { .. }) => None,
        Err(e) => {
            let why = reason(&e);
            say(what, &why);
            if let Some(dir) = Store::existing_dir(here) {
                let _ = log::append_in(&dir, what, &format!("failed: {why}"));
            }
            None
        }
    }
}

/// `f`, with a panic turned into a failure.
fn caught<T, E: From<String>>(f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(E::from(format!("internal error: {why}")))
    })
}

/// The budget of a hook that extracts a transcript or not, and its key: the configured one;
/// before the configuration is read, the environment's or else the default.
fn budget(extracting: bool, config: Option<&Config>) -> (Duration, &'static str) {
    let before = |key: &'static str, default: i64| {
        let ms = config::number_from_env(key).unwrap_or(default);
        (Duration::from_millis(ms as u64), key)
    };
    match (extracting, config) {
        (true, Some(c)) => (c.hook_extract_budget(), "hook.extract_budget_ms"),
        (true, None) => before("hook.extract_budget_ms", config::DEFAULT_EXTRACT_BUDGET_MS),
        (false, Some(c)) => (c.hook_budget(), "hook.budget_ms"),
        (false, None) => before("hook.budget_ms", config::DEFAULT_HOOK_BUDGET_MS),
    }
}

/// The most a Claude Code hook's input may hold: far more than Claude Code sends (a tool's
/// output is cut well below it), and a bound on what an input that never ends (`/dev/zero`)
/// makes the hook hold before its budget is spent.
const INPUT_MAX: u64 = 32 << 20;

/// A Claude Code hook's input, read whole (the watchdog ends the process when it does not end
/// within the budget).
fn read_payload() -> Result<Payload, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(INPUT_MAX + 1)
        .read_to_end(&mut input)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if input.len() as u64 > INPUT_MAX {
        return Err(format!("bad input: more than {} MiB", INPUT_MAX >> 20));
    }
    serde_json::from_slice(&input).map_err(|e| format!("bad input: {e}"))
}

/// A Claude Code hook, within its budget: the answer written, the events in it recorded as
/// given, what it did logged.
fn claude_hook(
    cwd: &Path,
    event: &str,
    watchdog: &Watchdog,
    out: &mut dyn Write,
) -> Result<(), Failed> {
    let what = format!("hook {event}");
    let payload = read_payload();
    // The payload names the folder the hook is about.
    let here = match &payload {
        Ok(Payload { cwd: Some(dir), .. }) => dir.clone(),
        _ => cwd.to_owned(),
    };
    watchdog.about(&here);
    // A folder that is gone (a worktree removed under a running session) is in no repository.
    if !here.is_dir() {
        return Ok(());
    }
    let Some(store) = open(&here, &what) else {
        return Ok(());
    };
    let extracting = hooks::EXTRACTING.contains(&event);
    watchdog.configured(budget(extracting, Some(store.config())), store.dir());
    let failed = |why: String| Failed {
        dir: Some(store.dir().to_owned()),
        why,
    };
    let payload = match payload {
        Ok(payload) => payload,
        Err(why) => return Err(failed(why)),
    };
    let response = caught(|| hooks::respond(&store, &here, event, &payload));
    // Whichever of the hook and its watchdog takes the gate first answers: the answer is
    // written whole, or not at all.
    let written = watchdog.answer(|| match &response {
        Ok(hooks::Response {
            context: Some(context),
            ..
        }) => write_answer(out, event, context),
        _ => Ok(()),
    });
    let response = match response {
        Ok(response) => response,
        Err(why) => return Err(failed(why)),
    };
    // An answer that did not go out gave the session nothing.
    if let Err(e) = written {
        return Err(failed(format!("cannot write the answer: {e}")));
    }
    if let Err(why) = caught(|| hooks::given(&store, &payload, &response)) {
        return Err(failed(why));
    }
    if let Some(line) = &response.log {
        let _ = log::append(&store, &what, line);
    }
    // The notes the extracting hooks changed, into the index: past the gate, so that the
    // watchdog cannot cut an update short (a few notes at most, as for a git hook).
    if extracting && let Err(why) = caught(|| follow_notes(&store, &what)) {
        return Err(failed(why));
    }
    // Last: the distillation started takes the store's lock at once, which the index's update
    // above would otherwise wait for.
    if extracting && store.config().distill_on() && !payload.session_id.is_empty() {
        let line = match start_distill(&here, &payload.session_id) {
            Ok(pid) => format!("distill started (process {pid})"),
            Err(e) => format!("cannot start distill: {e}"),
        };
        let _ = log::append(&store, &what, &line);
    }
    Ok(())
}

/// Start `distill --session <session>` in `here`, detached: the hook does not wait for it, and
/// nothing of it reaches the hook's output or Claude Code's terminal.
fn start_distill(here: &Path, session: &str) -> std::io::Result<u32> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let child = Command::new(std::env::current_exe()?)
        .arg("-C")
        .arg(here)
        .args(["distill", "--session", session])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    Ok(child.id())
}

/// Write Claude Code's JSON answer for `event`, one line, and flush it.
fn write_answer(out: &mut dyn Write, event: &str, context: &str) -> std::io::Result<()> {
    let answer = json!({"hookSpecificOutput": {
        "hookEventName": event,
        "additionalContext": hooks::capped(context),
    }});
    writeln!(out, "{answer}")?;
    out.flush()
}

/// Ends the process when a hook's budget is spent, answering with nothing; the work ends with
/// it (every write it makes is atomic, or marked until done). It runs from the start of the
/// process with the budget of the environment or the default, which the configuration replaces
/// once read.
struct Watchdog {
    shared: Arc<(Mutex<Watch>, Condvar)>,
}

/// What the watchdog watches.
struct Watch {
    started: Instant,
    budget: Duration,
    key: &'static str,
    /// The answer is out (or there is none): the watchdog has nothing left to do.
    answered: bool,
    /// The folder the hook is about, and its store once open: where the watchdog logs.
    here: PathBuf,
    store_dir: Option<PathBuf>,
}

impl Watchdog {
    /// Watch the hook `what`, run in `cwd`; `cut` says what it did when cut short.
    fn start(
        what: &str,
        (budget, key): (Duration, &'static str),
        cwd: &Path,
        cut: &'static str,
    ) -> Watchdog {
        let shared = Arc::new((
            Mutex::new(Watch {
                started: Instant::now(),
                budget,
                key,
                answered: false,
                here: cwd.to_owned(),
                store_dir: None,
            }),
            Condvar::new(),
        ));
        let watched = Arc::clone(&shared);
        let what = what.to_owned();
        std::thread::spawn(move || {
            let (lock, wake) = &*watched;
            let mut watch = lock.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if watch.answered {
                    return;
                }
                let left = (watch.started + watch.budget).saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                watch = wake
                    .wait_timeout(watch, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            // Holding the gate: the hook cannot answer any more.
            let why = format!(
                "over its budget of {} ms ({}): {cut}",
                watch.budget.as_millis(),
                watch.key
            );
            say(&what, &why);
            let (here, dir) = (watch.here.clone(), watch.store_dir.clone());
            let (done, logged) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                if let Some(dir) = dir.or_else(|| Store::existing_dir(&here)) {
                    let _ = log::append_in(&dir, &what, &format!("failed: {why}"));
                }
                let _ = done.send(());
            });
            let _ = logged.recv_timeout(LOG_PATIENCE);
            std::process::exit(0);
        });
        Watchdog { shared }
    }

    fn watch(&self) -> MutexGuard<'_, Watch> {
        self.shared.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The hook is about the folder `here`.
    fn about(&self, here: &Path) {
        self.watch().here = here.to_owned();
    }

    /// The configuration is read: its budget replaces the default, counted from the same
    /// start, and the store's log is where to say that it ran out.
    fn configured(&self, (budget, key): (Duration, &'static str), store_dir: &Path) {
        let mut watch = self.watch();
        watch.budget = budget;
        watch.key = key;
        watch.store_dir = Some(store_dir.to_owned());
        self.shared.1.notify_one();
    }

    /// Run `answer` holding the gate, unless the watchdog holds it (then the process ends
    /// before `answer` runs), and stop the watchdog.
    fn answer<T>(&self, answer: impl FnOnce() -> T) -> T {
        let mut watch = self.watch();
        let done = answer();
        watch.answered = true;
        self.shared.1.notify_one();
        done
    }
}

/// Bring the retrieval index up to the notes when at most [`index::HOOK_MOST`] changed (a first
/// build of a few notes included); a busy store, or more, is left to the next command that reads
/// it. What the index left out, being unreadable, is logged.
fn follow_notes(store: &Store, what: &str) -> Result<(), String> {
    match index::refresh_within(store, Some(index::HOOK_MOST)) {
        Ok(_) | Err(store::Error::Busy) => {}
        Err(e) => return Err(format!("the index was not updated: {}", reason(&e))),
    }
    if let Some(line) = index::read(store).unread_line() {
        let _ = log::append(store, what, &line);
    }
    Ok(())
}

/// Run a git hook, then bring the retrieval index up to the notes; what it did (for the log),
/// or why it failed.
fn git_hook(store: &Store, args: &Args) -> Result<Option<String>, String> {
    let done = dispatch(store, args)?;
    follow_notes(store, &format!("hook {}", args.name))
        .map_err(|e| format!("{} but {e}", done.clone().unwrap_or_default()))?;
    Ok(done)
}

/// The repair a hook makes after commits were merged or rewritten, when the history to walk
/// is short; what it did, for the log.
fn repaired(store: &Store) -> Result<String, String> {
    match repair::repair_within(store, repair::HOOK_WALK_MAX).map_err(|e| reason(&e))? {
        None => Ok("; repair left to the command (long history)".to_owned()),
        Some(r) if r.carried.is_empty() && r.left.is_empty() => Ok(String::new()),
        Some(r) => Ok(format!(
            "; repair: {} unreachable commits' notes carried, {} left",
            r.carried.len(),
            r.left.len()
        )),
    }
}

/// The pre-push hook (`install --sync`): sync the notes with the remote pushed to, within
/// `sync.push_budget_ms`; past it the process ends (a sync cut anywhere is completed by the
/// next) and the push goes on.
fn pre_push(store: &Store, remote: Option<&str>) -> Result<Option<String>, String> {
    let Some(remote) = remote else {
        return Ok(Some("no remote given: nothing synced".to_owned()));
    };
    let here = store.workdir().unwrap_or(store.common_dir());
    let budget = (store.config().sync_push_budget(), "sync.push_budget_ms");
    let watchdog = Watchdog::start(
        "hook pre-push",
        budget,
        here,
        "the notes were not pushed; `git agent-context sync` does it",
    );
    watchdog.configured(budget, store.dir());
    let options = sync::Options {
        push: true,
        prompt: false,
    };
    let synced = sync::sync(store, remote, options);
    watchdog.answer(|| ());
    match synced {
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
        Err(e) => Err(reason(&e)),
    }
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
            // A commit that adds again the lines of annotated ones (a squash merge, a
            // cherry-pick by hand) carries their reasoning too.
            let carried = match done {
                PostCommit::Linked { .. } => repair::carry_to(store, &[head])
                    .map_err(|e| reason(&e))?
                    .len(),
                _ => 0,
            };
            let head = head.to_hex_with_len(12);
            let also = match carried {
                0 => String::new(),
                n => format!("; the notes of {n} commits whose lines it holds carried"),
            };
            let said = match done {
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
            };
            Ok(Some(format!("{said}{also}")))
        }
        "pre-push" => pre_push(store, args.rest.first().map(String::as_str)),
        "post-merge" => {
            // The team's notes a pull fetched (`install --sync`), before the commits it
            // brought are looked at: a squash done on the server finds the branch's notes.
            // Left to the next sync when it cannot be done now (the store busy): the repair
            // below goes on.
            let taken = match sync::take_in_fetched(store) {
                Ok(0) => String::new(),
                Ok(n) => format!("{n} events of the remotes' notes taken in; "),
                Err(e) => format!("the remotes' notes left for later ({}); ", reason(&e)),
            };
            let repo = store.repo();
            let head = repo.head_id().map_err(|e| e.to_string())?.detach();
            let before = repo
                .find_reference("ORIG_HEAD")
                .ok()
                .and_then(|mut r| r.peel_to_id().ok())
                .map(|id| id.detach());
            let Some(before) = before else {
                return Ok(Some(format!("{taken}no ORIG_HEAD: nothing arrived")));
            };
            let arrived = repair::arrived(&repo, before, head);
            let carried = repair::carry_to(store, &arrived).map_err(|e| reason(&e))?;
            Ok(Some(format!(
                "{taken}{} commits arrived, the notes of {} commits whose lines they hold carried{}",
                arrived.len(),
                carried.len(),
                repaired(store)?
            )))
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
                "{how}: {} commits rewritten, {carried} events carried{}",
                pairs.len(),
                repaired(store)?
            )))
        }
        other => Err(format!(
            "unknown hook {other:?} (expected post-commit, post-merge, post-rewrite, pre-push or one of {})",
            hooks::EVENTS.join(", ")
        )),
    }
}
