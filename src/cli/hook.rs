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
//! With `distill.mode` on, the hooks that extract (`PreCompact`, `Stop` or the process it left
//! the rest of its turn to, `SessionEnd`) then start `distill --session <id>` in a process of
//! its own — no input or output, its own process
//! group, never waited for — so that the model's answer, however slow, holds up nothing; that
//! run keeps to its own budgets and lock (`crate::distill`).
//!
//! The post-commit hook of an agent's commit writes the commit down and starts
//! `hook post-commit finish <commit>` the same way, so that the commit waits for nothing
//! (`crate::ingest::commit`); when that process cannot start, the hook does the work itself.
//! So does the hook of a turn's end (`Stop`, or another agent's) that changed something, once
//! the turn is in the notes: `hook [--agent <agent>] <event> finish <session>` brings the graph,
//! the continuation, CLAUDE.md and the index up to them, and starts the distillation
//! (`crate::deliver::hooks`); it is held to the extracting hooks' budget, as the hook was.

use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::app::git_events::{self as work, follow_notes};
use crate::cli::CmdResult;
use crate::config::{self, Config};
use crate::deliver::adapter::{self, Adapter};
use crate::deliver::hooks::{self, Moment, Payload};
use crate::deliver::{self, reason};
use crate::store::{self, Store, log};
use crate::transcript::agent::Agent;

/// How long a hook waits for another writer before leaving its work to the next run.
const PATIENCE: Duration = Duration::from_millis(200);

/// How long the watchdog gives the log line of a hook it cuts short before ending the process:
/// the log may be where the hook was stuck.
const LOG_PATIENCE: Duration = Duration::from_millis(100);

#[derive(Debug, PartialEq, clap::Args)]
pub struct Args {
    /// The agent whose hook this is: claude-code, codex or gemini-cli.
    #[arg(long, default_value = "claude-code", value_name = "AGENT")]
    agent: String,
    /// The hook: post-commit, post-rewrite, or an agent's hook event (UserPromptSubmit,
    /// PreToolUse, SessionStart, …; BeforeAgent, AfterTool, … for Gemini CLI) with its JSON on
    /// stdin.
    name: String,
    /// What git passes to the hook (post-rewrite: `amend` or `rebase`); `finish <commit>` or
    /// `finish <session>` for the rest of an agent's commit or of a turn's end.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

impl Args {
    /// The arguments of `hook <name>` and `hook --agent <agent> <name>`, the forms hooks are
    /// installed with, read without the command line's parser: building it for every command
    /// costs a hook about a tenth of a millisecond. Any other command line is `None`, and
    /// left to the parser.
    pub fn simple(args: &[std::ffi::OsString]) -> Option<Args> {
        let words: Vec<&str> = args.iter().map(|a| a.to_str()).collect::<Option<_>>()?;
        let (agent, name) = match words[..] {
            ["hook", name] => ("claude-code", name),
            ["hook", "--agent", agent, name] => (agent, name),
            _ => return None,
        };
        let plain = |w: &str| !w.is_empty() && !w.starts_with('-');
        (plain(agent) && plain(name)).then(|| Args {
            agent: agent.to_owned(),
            name: name.to_owned(),
            rest: Vec::new(),
        })
    }
}

pub fn run(cwd: &Path, args: Args, out: &mut dyn Write) -> CmdResult {
    // A panic is a failure like any other: reported in one line, never a crash.
    panic::set_hook(Box::new(|_| {}));
    let what = format!("hook {}", args.name);
    let event = args.name.as_str();
    let adapter = Agent::named(&args.agent).map(adapter::of);
    let moment = adapter.and_then(|a| a.moment(event));
    let outcome = match (adapter, moment) {
        // The rest of a turn's end, left by the hook to this process.
        (Some(_), Some(Moment::TurnEnd))
            if args.rest.first().map(String::as_str) == Some(work::FINISH) =>
        {
            let session = args.rest.get(1).map(String::as_str).unwrap_or_default();
            caught(|| turn_rest(cwd, &what, session))
        }
        (Some(adapter), Some(moment)) => {
            let watchdog = Watchdog::start(
                &what,
                budget(moment.extracts(), None),
                cwd,
                "answered with nothing",
            );
            let hook = Hook {
                agent: &args.agent,
                adapter,
                event,
                moment,
            };
            caught(|| agent_hook(cwd, hook, &watchdog, out)).map(|()| None)
        }
        (None, _) => Err(Failed::from(Why::Agent(args.agent.clone()))),
        // A git hook holds up git: it is held to the extracting hooks' budget before the
        // configuration (the environment's or the default) while it opens the repository and
        // its configuration (either may block, as a named pipe does); its work waits for other
        // writers at most PATIENCE.
        (Some(_), None) => caught(|| {
            let watchdog = Watchdog::start(&what, budget(true, None), cwd, "did nothing");
            let store = open(cwd, &what);
            watchdog.answer(|| ());
            let Some(store) = store else {
                return Ok(None);
            };
            match git_hook(&store, &args) {
                Ok(done) => Ok(done.map(|line| (store.dir().to_owned(), line))),
                Err(e) => Err(Failed {
                    dir: Some(store.dir().to_owned()),
                    why: Why::Hook(e),
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
            let why = reason(&why);
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
    why: Why,
}

/// Why a hook failed, said on one line with its causes.
#[derive(Debug, thiserror::Error)]
enum Why {
    #[error("internal error: {0}")]
    Panic(String),
    #[error("unknown agent {0:?} (expected claude-code, codex or gemini-cli)")]
    Agent(String),
    #[error("cannot read stdin")]
    Stdin(#[source] std::io::Error),
    #[error("bad input: more than {} MiB", INPUT_MAX >> 20)]
    TooLarge,
    #[error("bad input")]
    NotJson(#[source] serde_json::Error),
    #[error("cannot write the answer")]
    Answer(#[source] std::io::Error),
    #[error(transparent)]
    Deliver(#[from] deliver::Error),
    #[error(transparent)]
    Hook(#[from] work::Error),
}

impl From<Why> for Failed {
    fn from(why: Why) -> Failed {
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
fn caught<T, E: From<Why>>(f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(E::from(Why::Panic(why)))
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
fn read_payload() -> Result<Payload, Why> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(INPUT_MAX + 1)
        .read_to_end(&mut input)
        .map_err(Why::Stdin)?;
    if input.len() as u64 > INPUT_MAX {
        return Err(Why::TooLarge);
    }
    serde_json::from_slice(&input).map_err(Why::NotJson)
}

/// A Claude Code hook, within its budget: the answer written, the events in it recorded as
/// given, what it did logged.
/// An agent's hook: its adapter, its event, and the moment of ours that is.
#[derive(Clone, Copy)]
struct Hook<'a> {
    /// The agent's name, as `--agent` gives it.
    agent: &'a str,
    adapter: &'static dyn Adapter,
    event: &'a str,
    moment: Moment,
}

fn agent_hook(
    cwd: &Path,
    hook: Hook<'_>,
    watchdog: &Watchdog,
    out: &mut dyn Write,
) -> Result<(), Failed> {
    let Hook {
        agent,
        adapter,
        event,
        moment,
    } = hook;
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
    let extracting = moment.extracts();
    watchdog.configured(budget(extracting, Some(store.config())), store.dir());
    let failed = |why: Why| Failed {
        dir: Some(store.dir().to_owned()),
        why,
    };
    let mut payload = match payload {
        Ok(payload) => payload,
        Err(why) => return Err(failed(why)),
    };
    adapter.normalize(&mut payload);
    let response = caught(|| hooks::respond(&store, &here, moment, &payload).map_err(Why::from));
    // Whichever of the hook and its watchdog takes the gate first answers: the answer is
    // written whole, or not at all.
    let written = watchdog.answer(|| match &response {
        Ok(hooks::Response {
            context: Some(context),
            ..
        }) => write_answer(out, &adapter.answer(event, context)),
        _ => Ok(()),
    });
    let response = match response {
        Ok(response) => response,
        Err(why) => return Err(failed(why)),
    };
    // An answer that did not go out gave the session nothing.
    if let Err(e) = written {
        return Err(failed(Why::Answer(e)));
    }
    if let Err(why) = caught(|| hooks::given(&store, &payload, &response).map_err(Why::from)) {
        return Err(failed(why));
    }
    let mut line = response.log.unwrap_or_default();
    // The rest of a turn's end goes on in a process of its own, or here when none can start.
    let mut left = false;
    if let Some(session) = &response.rest {
        let finish = [
            "hook",
            "--agent",
            agent,
            event,
            work::FINISH,
            session.as_str(),
        ]
        .map(str::to_owned);
        match start_detached(&here, &finish) {
            Ok(pid) => {
                line.push_str(&format!("; the rest left to process {pid}"));
                left = true;
            }
            Err(e) => {
                line.push_str(&format!("; no process for the rest ({e})"));
                match caught(|| hooks::finish_turn(&store, session).map_err(Why::from)) {
                    Ok(done) => line.push_str(&done),
                    Err(why) => {
                        let _ = log::append(&store, &what, &line);
                        return Err(failed(why));
                    }
                }
            }
        }
    }
    if !line.is_empty() {
        let _ = log::append(&store, &what, &line);
    }
    if extracting && !left {
        after_extraction(&store, &here, &what, &payload.session_id).map_err(failed)?;
    }
    Ok(())
}

/// How long the rest of a turn's end waits for another writer: no one waits for it, and
/// the next hooks of the session hold the lock for moments.
const REST_PATIENCE: Duration = Duration::from_secs(1);

/// `hook <turn's end> finish <session>`: the rest of a turn's end that its hook left to this
/// process ([`hooks::finish_turn`]), held to the extracting hooks' budget as the hook was
/// (past it, what is not done is left to the next run); then, past the budget's reach as after
/// a hook's answer, what follows every extracting hook. What it did, for the log.
fn turn_rest(cwd: &Path, what: &str, session: &str) -> Result<Option<(PathBuf, String)>, Failed> {
    let watchdog = Watchdog::start(what, budget(true, None), cwd, "left to the next run");
    let Some(store) = open(cwd, what) else {
        watchdog.answer(|| ());
        return Ok(None);
    };
    watchdog.configured(budget(true, Some(store.config())), store.dir());
    let dir = store.dir().to_owned();
    let failed = |why: Why| Failed {
        dir: Some(dir.clone()),
        why,
    };
    if session.is_empty() {
        watchdog.answer(|| ());
        let said = format!("{}: no session given: nothing to do", work::FINISH);
        return Ok(Some((dir.clone(), said)));
    }
    let store = store.with_patience(REST_PATIENCE);
    let done = caught(|| hooks::finish_turn(&store, session).map_err(Why::from));
    watchdog.answer(|| ());
    let done = done.map_err(failed)?;
    after_extraction(&store, cwd, what, session).map_err(failed)?;
    let brief = work::brief_ready(&store);
    Ok(Some((
        dir.clone(),
        format!(
            "{} {session}: the rest of the turn{done}{brief}",
            work::FINISH
        ),
    )))
}

/// After an extracting hook: the notes it changed into the index (a few at most, as for a git
/// hook), then the distillation of `session` started when `distill.mode` is on — last, since it
/// takes the store's lock at once, which the index's update would otherwise wait for.
fn after_extraction(store: &Store, here: &Path, what: &str, session: &str) -> Result<(), Why> {
    caught(|| {
        follow_notes(store, what)
            .map_err(|source| Why::Hook(work::Error::Index { done: None, source }))
    })?;
    if store.config().distill_on() && !session.is_empty() {
        let distill = ["distill", "--session", session].map(str::to_owned);
        let line = match start_detached(here, &distill) {
            Ok(pid) => format!("distill started (process {pid})"),
            Err(e) => format!("cannot start distill: {e}"),
        };
        let _ = log::append(store, what, &line);
    }
    Ok(())
}

/// Start this program with `args` in `here`, detached — no input or output, its own process
/// group, never waited for: nothing of it reaches the hook's output, git's or Claude Code's
/// terminal.
fn start_detached(here: &Path, args: &[String]) -> std::io::Result<u32> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let child = Command::new(std::env::current_exe()?)
        .arg("-C")
        .arg(here)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    Ok(child.id())
}

/// Write Claude Code's JSON answer for `event`, one line, and flush it.
fn write_answer(out: &mut dyn Write, answer: &serde_json::Value) -> std::io::Result<()> {
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

/// Run a git hook; what it did (for the log). The pre-push hook is held to
/// `sync.push_budget_ms`: past it the process ends, and the push goes on.
fn git_hook(store: &Store, args: &Args) -> Result<Option<String>, work::Error> {
    let here = store.workdir().unwrap_or(store.common_dir());
    if args.name != "pre-push" {
        let ran = work::run(store, &args.name, &args.rest)?;
        let Some(commit) = ran.finish else {
            return Ok(Some(ran.said));
        };
        // The agent's commit goes on at once: the rest of the work in a process of its own,
        // or here when none can be started.
        let finish = [work::FINISH.to_owned(), commit.to_string()];
        let line = ["hook", "post-commit", &finish[0], &finish[1]].map(str::to_owned);
        return match start_detached(here, &line) {
            Ok(pid) => Ok(Some(format!(
                "{}; the rest left to process {pid}",
                ran.said
            ))),
            Err(e) => {
                let done = work::run(store, "post-commit", &finish)?;
                Ok(Some(format!(
                    "{}; no process for the rest ({e}): {}",
                    ran.said, done.said
                )))
            }
        };
    }
    let budget = (store.config().sync_push_budget(), "sync.push_budget_ms");
    let watchdog = Watchdog::start(
        "hook pre-push",
        budget,
        here,
        "the notes were not pushed; `git agent-context sync` does it",
    );
    watchdog.configured(budget, store.dir());
    let synced = work::pre_push(store, args.rest.first().map(String::as_str));
    watchdog.answer(|| ());
    synced
}
