//! `sync`: fetch, merge and push the notes, with retries when other clones push at once.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use gix::ObjectId;
use serde::Serialize;

use crate::retrieve::index;
use crate::sanitise;
use crate::share::level::{self, Level};
use crate::store::{self, Store, forgotten, graph, notes};

/// How many fetch–merge–push rounds a sync tries before giving up to other pushers.
const ROUNDS: usize = 20;

/// Where the notes given to the remote are made ([`notes::derive()`]): a local ref, never
/// pushed under its own name, that keeps the last of them from gc.
pub const SHARED: &str = "refs/notes/agent-context-shared";

/// The file that says a merge of fetched notes may not have reached the graph yet: it holds
/// the notes tip from before the merge, so that the next sync brings the graph up to date.
const MERGING: &str = "sync-merging";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no remote named {0:?} (git remote lists them)")]
    NoSuchRemote(String),
    #[error(
        "no remote to sync with: this repository has none, or several and no 'origin' (name one)"
    )]
    NoRemote,
    /// A git command failed for a reason other than another clone's push: the network, the
    /// credentials, the remote's own hooks. Git's last line of error says which.
    #[error("git {command} {remote}: {message}")]
    Git {
        command: &'static str,
        remote: String,
        message: String,
    },
    #[error(
        "the notes on {remote} moved under each of {rounds} attempts to push ours (other clones pushing); run sync again"
    )]
    Contended { remote: String, rounds: usize },
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// What a sync did.
#[derive(Debug, Clone, Serialize)]
pub struct Synced {
    pub remote: String,
    /// The notes ref the remote's notes were fetched into.
    pub tracking: String,
    /// Whether the remote had notes.
    pub fetched: bool,
    /// Notes that changed here, and the events they gained or saw updated.
    pub merged_notes: usize,
    pub merged_events: usize,
    /// Sessions of the graph brought up to date.
    pub sessions: usize,
    /// Whether ours went to the remote (false: it had them all, `push` was off, or
    /// `share.level` is `none`).
    pub pushed: bool,
    /// `share.level`: what of ours is given.
    pub level: &'static str,
    /// Fetch–merge–push rounds it took.
    pub rounds: usize,
    /// The notes ref's tip here, and on the remote, once done.
    pub tip: Option<String>,
}

/// How a sync runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Push what we have, or only take in what the remote has.
    pub push: bool,
    /// Whether git may ask for credentials on the terminal (not from a hook).
    pub prompt: bool,
}

/// The names of the repository's remotes.
fn remotes(store: &Store) -> Vec<String> {
    (store.repo().remote_names().iter())
        .map(|n| n.to_string())
        .collect()
}

/// The remote a sync without a name uses: the current branch's, else `origin`, else the only
/// one.
pub fn default_remote(store: &Store) -> Result<String, Error> {
    let repo = store.repo();
    let names = remotes(store);
    let branch = repo
        .head_name()
        .ok()
        .flatten()
        .and_then(|name| {
            repo.branch_remote_name(name.shorten(), gix::remote::Direction::Fetch)
                .map(|n| n.as_bstr().to_string())
        })
        .filter(|n| names.contains(n));
    if let Some(name) = branch {
        return Ok(name);
    }
    if names.iter().any(|n| n == "origin") {
        return Ok("origin".to_owned());
    }
    match &names[..] {
        [only] => Ok(only.clone()),
        _ => Err(Error::NoRemote),
    }
}

/// Fetch `remote`'s notes, merge them into ours, push ours (when `options.push`), and bring the
/// graph and the index up to date.
pub fn sync(store: &Store, remote: &str, options: Options) -> Result<Synced, Error> {
    if !remotes(store).iter().any(|n| n == remote) {
        return Err(Error::NoSuchRemote(remote.to_owned()));
    }
    let tracking = notes::tracking(remote);
    let mut done = Synced {
        remote: remote.to_owned(),
        tracking: tracking.clone(),
        fetched: false,
        merged_notes: 0,
        merged_events: 0,
        sessions: 0,
        pushed: false,
        level: store.config().share_level(),
        rounds: 0,
        tip: None,
    };
    for round in 0..ROUNDS {
        done.rounds = round + 1;
        let theirs = match fetch(store, remote, &tracking, options)? {
            Fetched::Tip(tip) => tip,
            // Another sync of this clone is fetching (or one killed left its git running).
            Fetched::Raced if round + 1 < ROUNDS => {
                backoff(round);
                continue;
            }
            Fetched::Raced => {
                return Err(Error::Contended {
                    remote: remote.to_owned(),
                    rounds: ROUNDS,
                });
            }
        };
        done.fetched = theirs.is_some();
        if let Some(theirs) = theirs {
            let merged = merge(store, theirs)?;
            done.merged_notes += merged.0.notes;
            done.merged_events += merged.0.events;
            done.sessions += merged.1;
        }
        done.tip = notes::tip(&store.repo())?.map(|t| t.to_string());
        let level = Level::named(done.level);
        if !options.push || level == Level::None {
            break;
        }
        // What `share.level` gives of ours, beside theirs; nothing when they hold it all.
        let forgotten = forgotten::all(store)?;
        let giving = notes::Giving {
            level: done.level,
            filter: &|note| level::filter(note, level),
            forgotten: &|id| forgotten.contains_key(id),
            count: forgotten.len(),
        };
        let Some(given) = notes::derive(store, SHARED, theirs, giving)? else {
            break;
        };
        match push(store, remote, given, options)? {
            Pushed::Done => {
                done.pushed = true;
                break;
            }
            Pushed::Moved if round + 1 < ROUNDS => backoff(round),
            Pushed::Moved => {
                return Err(Error::Contended {
                    remote: remote.to_owned(),
                    rounds: ROUNDS,
                });
            }
        }
    }
    // The index reads the notes ref's tip: it follows on its own, outside the lock.
    if let Err(e) = index::refresh(store) {
        eprintln!("warning: the retrieval index was not updated: {e}");
    }
    Ok(done)
}

/// Merge into ours the notes a plain `git fetch` brought beside them (the fetch refspec
/// `install --sync` adds): what the post-merge hook does after a pull, leaving the index to
/// the caller. How many events were new here.
pub fn take_in_fetched(store: &Store) -> Result<usize, Error> {
    let mut events = 0;
    for remote in remotes(store) {
        if let Some(theirs) = store::ref_tip(&store.repo(), &notes::tracking(&remote))? {
            events += merge(store, theirs)?.0.events;
        }
    }
    Ok(events)
}

/// Merge the notes at `theirs` into ours under the store lock, and the graph after them: the
/// merge's notes and the sessions brought up to date. A sync killed between the two leaves
/// [`MERGING`] behind, and the next one completes the graph first.
fn merge(store: &Store, theirs: ObjectId) -> Result<(notes::Merge, usize), Error> {
    let _lock = store.lock()?;
    let marker = store.dir().join(MERGING);
    let mut sessions = 0;
    if let Ok(text) = fs::read_to_string(&marker) {
        let before = ObjectId::from_hex(text.trim().as_bytes()).ok();
        sessions += catch_up(store, before)?;
    }
    let forgotten = forgotten::all(store)?;
    let before = notes::tip(&store.repo())?;
    let text = before.map(|b| b.to_string()).unwrap_or_default();
    store::write_atomic(&marker, text.as_bytes())?;
    let merged = notes::merge_from(
        store,
        theirs,
        |id| forgotten.contains_key(id),
        level::shared_copy,
    )?;
    sessions += catch_up(store, before)?;
    remove(&marker)?;
    Ok((merged, sessions))
}

/// Bring the graph up to the notes for every session whose events differ between the notes
/// tip `before` and now; how many sessions.
fn catch_up(store: &Store, before: Option<ObjectId>) -> Result<usize, Error> {
    let now = notes::tip(&store.repo())?;
    if now == before {
        return Ok(0);
    }
    let touched = notes::sessions_changed(store, before, now)?;
    graph::update(store, &touched)?;
    Ok(touched.len())
}

fn remove(path: &PathBuf) -> Result<(), Error> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(store::Error::Io {
            action: "cannot remove",
            path: path.clone(),
            source,
        }
        .into()),
    }
}

/// Git, run on the store's repository with the user's configuration (remotes, credentials).
fn git(store: &Store, options: Options) -> Command {
    let mut command = Command::new("git");
    command
        .arg("--git-dir")
        .arg(store.common_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !options.prompt {
        command.env("GIT_TERMINAL_PROMPT", "0");
    }
    command
}

enum Fetched {
    /// The remote's notes, `None` when it has none.
    Tip(Option<ObjectId>),
    /// Another fetch updated the tracking ref at the same time.
    Raced,
}

/// Fetch `remote`'s notes into `tracking`.
fn fetch(store: &Store, remote: &str, tracking: &str, options: Options) -> Result<Fetched, Error> {
    let refspec = format!("+{}:{tracking}", notes::REF);
    let output = git(store, options)
        .args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--no-recurse-submodules",
            remote,
            &refspec,
        ])
        .output()
        .map_err(|e| git_failed("fetch", remote, e.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("couldn't find remote ref") {
            return Ok(Fetched::Tip(None));
        }
        if stderr.contains("cannot lock ref") {
            return Ok(Fetched::Raced);
        }
        return Err(git_failed("fetch", remote, last_line(&stderr)));
    }
    Ok(Fetched::Tip(store::ref_tip(&store.repo(), tracking)?))
}

enum Pushed {
    Done,
    /// The remote's notes moved since we fetched them.
    Moved,
}

/// Push the notes commit `given` to `remote`'s notes ref, never forcing: rejected when the
/// remote's notes moved since the fetch. `--no-verify`: a push of notes is not the push the
/// user's pre-push hooks check (and ours pushes the notes beside a branch from one).
fn push(store: &Store, remote: &str, given: ObjectId, options: Options) -> Result<Pushed, Error> {
    let refspec = format!("{given}:{}", notes::REF);
    let output = git(store, options)
        .args([
            "push",
            "--porcelain",
            "--no-verify",
            "--quiet",
            remote,
            &refspec,
        ])
        .output()
        .map_err(|e| git_failed("push", remote, e.to_string()))?;
    if output.status.success() {
        return Ok(Pushed::Done);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // `--porcelain` says per ref: `!` rejected, with git's reason in brackets.
    let moved = stdout.lines().chain(stderr.lines()).any(|line| {
        [
            "fetch first",
            "non-fast-forward",
            "stale info",
            "cannot lock ref",
            "failed to lock",
            "failed to update ref",
            "incorrect old value",
        ]
        .iter()
        .any(|why| line.contains(why))
    });
    if moved {
        return Ok(Pushed::Moved);
    }
    let reason = stdout
        .lines()
        .find(|l| l.starts_with('!'))
        .map(|l| l.rsplit('\t').next().unwrap_or(l).to_owned())
        .unwrap_or_else(|| last_line(&stderr));
    Err(git_failed("push", remote, reason))
}

fn git_failed(command: &'static str, remote: &str, message: String) -> Error {
    Error::Git {
        command,
        remote: remote.to_owned(),
        message: sanitise::line(&message),
    }
}

/// The last line git wrote that says something.
fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("failed")
        .trim()
        .to_owned()
}

/// A wait before the next round, growing with each and spread at random, so that clones
/// pushing at once do not collide again in step.
fn backoff(round: usize) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let seed = format!("{}:{round}:{nanos}", std::process::id());
    let most = (20u64 << round.min(6)).min(1000);
    let millis = most / 2 + xxhash_rust::xxh3::xxh3_64(seed.as_bytes()) % (most / 2 + 1);
    std::thread::sleep(Duration::from_millis(millis));
}
