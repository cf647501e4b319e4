//! No data loss on the hooks path (docs/security.md, "No event lost"). The scenarios: git's `post-commit`
//! and Claude Code's `Stop` racing on the same commit; two commits of one session whose post-commit
//! hooks overlap; two sessions in one worktree, their hooks interleaved with commits (by each
//! session and by hand); two worktrees of one repository, each with its session and commits; and
//! hooks killed (SIGKILL) at points spread over their run, then run again. After every scenario
//! `git fsck --strict` is clean, git lists and reads the notes, the decision graph is what the
//! notes make of it, and every event the transcripts yield is stored exactly once — on a commit or
//! in the pending queue — as a sequential `extract` of the same transcripts stores it in a fresh
//! repository (the session event excepted: by design it waits in the queue and goes on each of its
//! session's commits). No event is stored twice after any round either. And every event is where
//! the same scenario run in turn keeps it (each process to its end before the next starts, in a
//! fresh repository: the same commits): on the same commit, or pending — being stored somewhere is
//! not enough, a linker that stopped linking would pass that.
//!
//! The racing processes start in one of three ways, in turn: all at once; held at the store's
//! lock until every writer waits on it (seen in `/proc`), then let go together; or held until
//! each has given up (the hooks wait 200 ms), which leaves their work to later runs (the
//! deferred commits of `store::link`). Meanwhile the sessions go on writing their transcripts,
//! as Claude Code does: a Bash call's output lands as soon as its commit is made, and a session
//! that is not committing writes its turn, half a line at a time.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::crash::stored;
use crate::repo::{TestRepo, stderr};

/// A Claude Code session: its id, the worktree it runs in, and its transcript, which the test
/// writes turn by turn as Claude Code would.
struct Session {
    id: &'static str,
    dir: PathBuf,
    branch: &'static str,
    transcript: PathBuf,
    /// Seconds added to the session's times, so that sessions side by side do not coincide.
    offset: u32,
}

/// 2099-01-01T10:00:00Z plus `secs`: the sessions' clock. A transcript is dated as it is
/// written, so what a session writes after a hook ran is dated after it, which a deferred
/// commit relies on (it takes the events up to when its hook ran, by the hook's clock); dated
/// ahead of any clock that runs these tests, the turns of a later round never pass for earlier
/// than a hook. (Git reads no date past 2099.)
fn at(secs: u32) -> String {
    let t = 10 * 3600 + secs;
    format!(
        "2099-01-01T{:02}:{:02}:{:02}Z",
        t / 3600,
        t / 60 % 60,
        t % 60
    )
}

impl Session {
    fn new(
        repo: &TestRepo,
        id: &'static str,
        dir: &Path,
        branch: &'static str,
        offset: u32,
    ) -> Session {
        let folder = repo.project_dir_for(dir);
        fs::create_dir_all(&folder).unwrap();
        let transcript = folder.join(format!("{id}.jsonl"));
        fs::write(&transcript, "").unwrap();
        Session {
            id,
            dir: dir.to_owned(),
            branch,
            transcript,
            offset,
        }
    }

    /// When turn `n` starts, in seconds after 10:00.
    fn time(&self, n: u32) -> u32 {
        n * 120 + self.offset
    }

    /// The date of the commit of turn `n`, after the turn's edit.
    fn commit_date(&self, n: u32) -> String {
        at(self.time(n) + 8)
    }

    fn line(&self, kind: &str, uuid: String, secs: u32, fields: Value) -> String {
        let mut entry = json!({"type": kind, "uuid": uuid, "sessionId": self.id,
            "cwd": self.dir, "timestamp": at(secs)});
        for (key, value) in fields.as_object().unwrap() {
            entry[key] = value.clone();
        }
        format!("{entry}\n")
    }

    fn result(&self, call: &str, stdout: &str, secs: u32) -> String {
        self.line(
            "user",
            format!("{call}-result"),
            secs,
            json!({"message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": call, "content": stdout}]},
                "toolUseResult": {"stdout": stdout, "stderr": ""}}),
        )
    }

    /// What turn `n` searches for.
    fn searched(n: u32) -> String {
        format!("round {n} of")
    }

    /// Turn `n`: a prompt; an answer that decides, rules something out, reads `file`,
    /// searches for [`Session::searched`] and edits `file`; the results; and, when `commits`,
    /// the Bash call that commits.
    fn turn(&self, n: u32, file: &str, commits: bool) -> String {
        let t = self.time(n);
        let id = |what: &str| format!("{}-{what}{n}", self.id);
        let mut out = [
            self.line(
                "user",
                id("p"),
                t,
                json!({"message": {"role": "user", "content": format!("Round {n}: update {file}")}}),
            ),
            self.line(
                "assistant",
                id("a"),
                t + 5,
                json!({"message": {"id": id("m"), "model": "claude-test", "role": "assistant",
                "content": [
                    {"type": "text", "text": format!(
                        "I'll go with a plain text file for {file} because round {n} of {} needs nothing more.",
                        self.id)},
                    {"type": "text", "text": format!(
                        "A database won't work for round {n} because there is no server to run it.")},
                    {"type": "tool_use", "id": id("r"), "name": "Read",
                     "input": {"file_path": self.dir.join(file)}},
                    {"type": "tool_use", "id": id("g"), "name": "Grep",
                     "input": {"pattern": Session::searched(n)}},
                    {"type": "tool_use", "id": id("e"), "name": "Edit",
                     "input": {"file_path": self.dir.join(file), "old_string": "a", "new_string": "b"}},
                ]}}),
            ),
            self.result(&id("r"), "hello", t + 6),
            self.result(&id("g"), "README.md", t + 6),
            self.result(&id("e"), "ok", t + 6),
        ]
        .concat();
        if commits {
            out += &self.line(
                "assistant",
                id("c"),
                t + 7,
                json!({"message": {"id": id("n"), "model": "claude-test", "role": "assistant",
                "content": [{"type": "tool_use", "id": id("b"), "name": "Bash",
                    "input": {"command": format!("git commit -m 'round {n}'")}}]}}),
            );
        }
        out
    }

    /// What `git commit` printed for turn `n`'s Bash call, `short` naming the commit.
    fn committed(&self, n: u32, short: &str) -> String {
        let stdout = format!(
            "[{} {short}] round {n}\n 1 file changed, 1 insertion(+)",
            self.branch
        );
        self.result(&format!("{}-b{n}", self.id), &stdout, self.time(n) + 9)
    }

    /// Start turn `n`'s Bash call: `git commit` as this session (the post-commit hook runs
    /// inside it), then, as soon as it is done, its output in the transcript — what Claude
    /// Code does, while other hooks may still be running.
    fn agent_commit(&self, repo: &TestRepo, n: u32) -> Child {
        let template = repo.home.join(format!("{}-b{n}.jsonl", self.id));
        fs::write(&template, self.committed(n, "@SHA@")).unwrap();
        let date = self.commit_date(n);
        let vars = [
            ("GIT_AUTHOR_DATE", date.as_str()),
            ("GIT_COMMITTER_DATE", date.as_str()),
            ("CLAUDE_CODE_SESSION_ID", self.id),
        ];
        // git's hermetic environment, for a shell that runs git.
        let git = repo.git_command(&self.dir, &[], &vars);
        let mut sh = Command::new("sh");
        sh.env_clear();
        for (key, value) in git.get_envs() {
            if let Some(value) = value {
                sh.env(key, value);
            }
        }
        let script = r#"git commit -q -m "$1" && sed "s/@SHA@/$(git rev-parse --short=7 HEAD)/g" "$2" >> "$3""#;
        sh.current_dir(&self.dir)
            .args(["-c", script, "sh", &format!("round {n}")])
            .arg(&template)
            .arg(&self.transcript)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn append(&self, text: &str) {
        fs::OpenOptions::new()
            .append(true)
            .open(&self.transcript)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    /// The JSON Claude Code gives hook `event` of this session, with `extra` fields.
    fn payload(&self, event: &str, extra: Value) -> Value {
        let mut payload = json!({"session_id": self.id, "transcript_path": self.transcript,
            "cwd": self.dir, "hook_event_name": event, "stop_hook_active": false});
        for (key, value) in extra.as_object().unwrap() {
            payload[key] = value.clone();
        }
        payload
    }
}

/// Append `text` to the transcript of `session` as a session still at work writes it: line by
/// line, each in two writes (a reader may find half a line), a few milliseconds apart (`pace`
/// picks how many).
fn write_slowly(session: &Session, text: &str, pace: u32) {
    for line in text.split_inclusive('\n') {
        let (head, tail) = line.split_at(line.len() / 2);
        for part in [head, tail] {
            session.append(part);
            std::thread::sleep(Duration::from_millis(u64::from(pace % 4) * 2));
        }
    }
}

/// A repository with one commit, `init` run and the git hooks installed; the extracting hooks
/// are given all the time they want (a hook cut short by its budget is a killed hook, which
/// [`a_hook_killed_mid_write_is_completed_by_the_next_run`] covers), and git does not start
/// its maintenance in the background (a repack under `git fsck` makes it report packs gone).
fn hooked_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    repo.ok(&["init"]);
    repo.install_git_hooks();
    repo.git(&["config", "maintenance.auto", "false"]);
    repo.git(&["config", "gc.auto", "0"]);
    fs::write(
        repo.root.join(".git/agent-context/config.toml"),
        "[hook]\nextract_budget_ms = 600000\n",
    )
    .unwrap();
    repo
}

/// Start Claude Code hook `event` of `session`, its payload on stdin.
fn hook(repo: &TestRepo, session: &Session, event: &str, extra: Value) -> Child {
    let mut child = repo
        .cmd_in(&session.dir)
        .args(["hook", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = session.payload(event, extra).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child
}

/// Start `git commit` in `dir` (what is staged), as `session` when there is one; the
/// post-commit hook runs inside it.
fn commit(repo: &TestRepo, dir: &Path, session: Option<&str>, message: &str, date: &str) -> Child {
    let mut vars = vec![("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)];
    vars.extend(session.map(|s| ("CLAUDE_CODE_SESSION_ID", s)));
    repo.git_command(dir, &["commit", "-q", "-m", message], &vars)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Write `file` in `dir` and stage it.
fn stage(repo: &TestRepo, dir: &Path, file: &str, content: &str) {
    fs::write(dir.join(file), content).unwrap();
    repo.git_in(dir, &["add", file], &[]);
}

/// How the racing processes start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// One after the other, as fast as they can be spawned.
    AtOnce,
    /// Held at the store's lock until every writer waits on it, then let go together.
    Released,
    /// Held at the store's lock until each has given up: their work is left to later runs.
    Starved,
    /// Each run to its end before the next starts, in the order given: no race at all, what a
    /// scenario's reference run does.
    InTurn,
}

impl Start {
    fn of(round: u32) -> Start {
        match round % 4 {
            1 => Start::Released,
            3 => Start::Starved,
            _ => Start::AtOnce,
        }
    }
}

/// How many of our processes have the file `lock` open: with the lock held here, the writers
/// waiting for it. (Only the binary's: a process this one is starting has the test's own
/// handle on the lock until it runs its program.) Without `/proc`, as many as asked for: the
/// race is then one of timing.
fn waiting(lock: &Path, asked: usize) -> usize {
    let Ok(procs) = fs::read_dir("/proc") else {
        return asked;
    };
    let binary = fs::canonicalize(crate::repo::BIN).unwrap();
    procs
        .flatten()
        .filter(|p| fs::read_link(p.path().join("exe")).is_ok_and(|exe| exe == binary))
        .filter(|p| {
            fs::read_dir(p.path().join("fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| fs::read_link(fd.path()).is_ok_and(|target| target == lock))
        })
        .count()
}

/// The processes of a step, each as what starts it.
type Procs<'a> = Vec<Box<dyn FnOnce() -> Child + 'a>>;

/// `procs![a, b]`: the processes that `a` and `b` start, to start when the step says.
macro_rules! procs {
    ($($start:expr),* $(,)?) => {
        vec![$(Box::new(|| $start) as Box<dyn FnOnce() -> Child + '_>),*]
    };
}

/// Start `procs` as `start` says (`writers` of them take the store's lock), wait for all, and
/// check that each succeeded: a hook never fails its caller.
fn race(repo: &TestRepo, start: Start, writers: usize, procs: Procs<'_>) -> Vec<Output> {
    race_while(repo, start, writers, procs, || {})
}

/// [`race`], doing `meanwhile` once the processes are on their way (after the last, in turn).
fn race_while(
    repo: &TestRepo,
    start: Start,
    writers: usize,
    procs: Procs<'_>,
    meanwhile: impl FnOnce(),
) -> Vec<Output> {
    if start == Start::InTurn {
        let outputs = procs.into_iter().flat_map(|p| finish(vec![p()])).collect();
        meanwhile();
        return outputs;
    }
    let gate = (start != Start::AtOnce).then(|| hold_lock(repo));
    let mut children: Vec<Child> = procs.into_iter().map(|p| p()).collect();
    match start {
        Start::AtOnce | Start::InTurn => {}
        Start::Released => parked(repo, writers, &mut children),
        Start::Starved => {
            for child in &mut children {
                child.wait().unwrap();
            }
        }
    }
    drop(gate);
    meanwhile();
    finish(children)
}

/// Take the store's lock, as a writer would, until the file is dropped.
fn hold_lock(repo: &TestRepo) -> File {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(repo.root.join(".git/agent-context/lock"))
        .unwrap();
    file.lock().unwrap();
    file
}

/// With the store's lock held: return once `writers` processes wait on it, or one of
/// `children` is done (having found nothing to wait for, or having given up).
fn parked(repo: &TestRepo, writers: usize, children: &mut [Child]) {
    let lock = repo.root.join(".git/agent-context/lock");
    while waiting(&lock, writers) < writers
        && children.iter_mut().all(|c| c.try_wait().unwrap().is_none())
    {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Wait for `children`, each of which must succeed: a hook never fails its caller.
fn finish(children: Vec<Child>) -> Vec<Output> {
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            out
        })
        .collect()
}

/// Every event stored, with where: `note <commit>` for each line of each note, as git reads
/// them, and `pending <file>` for each line of the pending queue. Checks on the way that
/// `git fsck --strict` is clean, that git lists the notes and that every line is an event.
fn stored_events(repo: &TestRepo) -> Vec<(String, Value)> {
    let fsck = repo.git_output(&repo.root, &["fsck", "--strict", "--no-progress"], &[]);
    assert!(
        fsck.status.success(),
        "git fsck --strict: {}",
        stderr(&fsck)
    );
    let list = repo.git_output(&repo.root, &["notes", "--ref=agent-context", "list"], &[]);
    assert!(list.status.success(), "git notes list: {}", stderr(&list));
    let list = String::from_utf8(list.stdout).unwrap();
    let notes: Vec<(&str, &str)> = list
        .lines()
        .map(|l| l.split_once(' ').expect("<note blob> <commit>"))
        .collect();
    let mut out = Vec::new();
    if !notes.is_empty() {
        let mut child = repo
            .git_command(&repo.root, &["cat-file", "--batch"], &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input: String = notes.iter().map(|(blob, _)| format!("{blob}\n")).collect();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let batch = child.wait_with_output().unwrap();
        assert!(batch.status.success());
        let mut rest = &batch.stdout[..];
        for (_, commit) in &notes {
            let header_end = rest.iter().position(|&b| b == b'\n').unwrap();
            let header = std::str::from_utf8(&rest[..header_end]).unwrap();
            let size: usize = header.rsplit(' ').next().unwrap().parse().unwrap();
            let body = &rest[header_end + 1..header_end + 1 + size];
            rest = &rest[header_end + 2 + size..];
            for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let event: Value = serde_json::from_slice(line)
                    .unwrap_or_else(|e| panic!("the note of {commit} has a bad line: {e}"));
                out.push((format!("note {commit}"), event));
            }
        }
    }
    let pending = repo.root.join(".git/agent-context/pending");
    let mut files: Vec<PathBuf> = fs::read_dir(&pending)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in fs::read_to_string(&file).unwrap().lines() {
            let event: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("pending/{name} has a bad line: {e}"));
            out.push((format!("pending {name}"), event));
        }
    }
    out
}

/// The ids of the events stored.
fn ids(repo: &TestRepo) -> BTreeSet<String> {
    stored_events(repo)
        .iter()
        .map(|(_, e)| e["id"].as_str().unwrap().to_owned())
        .collect()
}

fn is_session(event: &Value) -> bool {
    event["kind"] == "session"
}

/// The places of each event id.
fn places(events: &[(String, Value)]) -> BTreeMap<String, Vec<&str>> {
    let mut by_id: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (place, event) in events {
        let id = event["id"].as_str().expect("an event has an id").to_owned();
        by_id.entry(id).or_default().push(place);
    }
    by_id
}

/// Mid-scenario: the repository is sound and no event is stored twice (work left for later
/// runs may be missing). A session event is pending once and on a commit at most once. One
/// copy is allowed until the next run: a read or a search that `PostToolUse` appended to the
/// queue without the lock as the event went to its commit (see `pending::append`), which the
/// attached index places on that commit.
fn assert_at_most_once(repo: &TestRepo, when: &str) {
    let events = stored_events(repo);
    let kinds: BTreeMap<&str, &Value> = events
        .iter()
        .map(|(_, e)| (e["id"].as_str().unwrap(), &e["kind"]))
        .collect();
    for (id, places) in places(&events) {
        let kind = kinds[id.as_str()];
        let pending = places.iter().filter(|p| p.starts_with("pending")).count();
        let mut notes: Vec<&&str> = places.iter().filter(|p| p.starts_with("note")).collect();
        let all = notes.len();
        notes.dedup();
        if kind == "session" {
            assert!(
                pending <= 1 && notes.len() == all,
                "{when}: session event {id} stored twice: {places:?}"
            );
        } else if places.len() == 2 && pending == 1 && (kind == "read" || kind == "search") {
            let commit = notes[0].strip_prefix("note ").unwrap();
            assert!(
                attached(repo).contains(&format!("{id} {commit}")),
                "{when}: {kind} event {id} stored twice: {places:?}"
            );
        } else {
            assert_eq!(
                places.len(),
                1,
                "{when}: event {id} stored twice: {places:?}"
            );
        }
    }
}

/// Every `<event> <commit>` line of the attached index, of every session.
fn attached(repo: &TestRepo) -> BTreeSet<String> {
    let dir = repo.root.join(".git/agent-context/attached");
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flat_map(|e| {
            let text = fs::read_to_string(e.unwrap().path()).unwrap();
            text.lines().map(str::to_owned).collect::<Vec<_>>()
        })
        .collect()
}

/// The end of a scenario: every event of `expected` is stored, exactly once (the session
/// event: once in the queue, at most once a commit), as `expected` has it; and nothing else.
fn assert_exactly_once(repo: &TestRepo, expected: &BTreeMap<String, Value>) {
    let events = stored_events(repo);
    let mut found = places(&events);
    for (id, want) in expected {
        let Some(places) = found.remove(id) else {
            panic!(
                "event {id} ({}: {}) was lost",
                want["kind"], want["summary"]
            );
        };
        if is_session(want) {
            let pending = places.iter().filter(|p| p.starts_with("pending")).count();
            let mut notes: Vec<&&str> = places.iter().filter(|p| p.starts_with("note")).collect();
            let all = notes.len();
            notes.dedup();
            assert!(
                pending == 1 && notes.len() == all,
                "session event {id}: {places:?}"
            );
            continue;
        }
        assert_eq!(places.len(), 1, "event {id} stored twice: {places:?}");
        let got = events
            .iter()
            .find(|(p, e)| p == places[0] && e["id"] == id.as_str())
            .map(|(_, e)| e)
            .unwrap();
        assert_eq!(got, want, "event {id} ({}) differs", places[0]);
    }
    assert!(found.is_empty(), "events no transcript yields: {found:?}");
}

/// The decision graph is what the notes make of it: rebuilding it from them changes nothing.
fn assert_graph_follows_notes(repo: &TestRepo) {
    let tree = || repo.git(&["rev-parse", "refs/agent-context^{tree}"]);
    let before = tree();
    repo.ok(&["rebuild"]);
    assert_eq!(
        tree(),
        before,
        "the graph lost or kept what the notes do not say"
    );
}

/// What a sequential `extract` of the sessions' transcripts, as they are now, stores in a
/// fresh repository laid out as `repo` is (its worktrees at the same places in its temporary
/// folder): each event by id, with `repo`'s paths.
fn reference(repo: &TestRepo, sessions: &[&Session]) -> BTreeMap<String, Value> {
    let fresh = TestRepo::new();
    fresh.commit("README.md", "hello\n", "first");
    let base = repo.home.parent().unwrap();
    let fresh_base = fresh.home.parent().unwrap();
    let (from, to) = (base.to_str().unwrap(), fresh_base.to_str().unwrap());
    for s in sessions {
        let dir = fresh_base.join(s.dir.strip_prefix(base).unwrap());
        if !dir.exists() {
            fresh.git(&[
                "worktree",
                "add",
                "-q",
                "-b",
                s.branch,
                dir.to_str().unwrap(),
            ]);
        }
        let transcript = fresh.home.join(format!("{}.jsonl", s.id));
        fs::write(
            &transcript,
            fs::read_to_string(&s.transcript).unwrap().replace(from, to),
        )
        .unwrap();
        let out = fresh
            .cmd_in(&dir)
            .args(["extract", "--transcript", transcript.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let events = stored_events(&fresh);
    let mut expected = BTreeMap::new();
    for (_, event) in events {
        let event: Value = serde_json::from_str(&event.to_string().replace(to, from)).unwrap();
        let id = event["id"].as_str().unwrap().to_owned();
        assert!(
            expected.insert(id.clone(), event).is_none(),
            "the reference stores {id} twice"
        );
    }
    assert!(
        expected.len() > 2 * sessions.len(),
        "the reference has events to compare: {}",
        expected.len()
    );
    expected
}

/// The log says nothing failed, but for writers that found the store busy and left their
/// work to the next run; returns how many did.
fn busy_runs(repo: &TestRepo) -> usize {
    let log = repo.log();
    for line in log.lines().filter(|l| l.contains("failed")) {
        assert!(line.contains("the store is busy"), "a hook failed: {line}");
    }
    log.lines().filter(|l| l.contains("busy")).count()
}

/// What the hooks that found the store busy left to do has been done.
fn assert_nothing_deferred(repo: &TestRepo) {
    let store = repo.root.join(".git/agent-context");
    let deferred = fs::read_to_string(store.join("deferred")).unwrap_or_default();
    assert_eq!(deferred, "", "commits still waiting to be linked");
    assert!(!store.join("deferred.claimed").exists());
}

/// The hook that ends every session's turn, run alone: what completes the work left by the
/// runs that found the store busy.
fn settle(repo: &TestRepo, sessions: &[&Session]) {
    for s in sessions {
        race(
            repo,
            Start::AtOnce,
            1,
            procs![hook(repo, s, "Stop", json!({}))],
        );
    }
}

/// Each commit of the repository's branches, by id: its subject.
fn subjects(repo: &TestRepo) -> BTreeMap<String, String> {
    repo.git(&["log", "--branches", "--format=%H %s"])
        .lines()
        .map(|l| {
            let (id, subject) = l.split_once(' ').unwrap();
            (id.to_owned(), subject.to_owned())
        })
        .collect()
}

/// Where each event is kept, as (place, event id) → its kind and summary: the place is
/// `pending`, or `note <name>` where `group(subject, commit)` names the commit.
fn placement(
    repo: &TestRepo,
    group: &dyn Fn(&str, &str) -> String,
) -> BTreeMap<(String, String), String> {
    let subjects = subjects(repo);
    stored_events(repo)
        .into_iter()
        .map(|(place, e)| {
            let place = match place.strip_prefix("note ") {
                Some(commit) => {
                    let subject = subjects.get(commit).map_or("?", String::as_str);
                    format!("note {}", group(subject, commit))
                }
                None => "pending".to_owned(),
            };
            let id = e["id"].as_str().unwrap().to_owned();
            ((place, id), format!("{} {}", e["kind"], e["summary"]))
        })
        .collect()
}

/// A commit named by its subject and id: each compared alone.
fn each_commit(subject: &str, commit: &str) -> String {
    format!("{subject} {}", &commit[..7])
}

/// What every scenario's turns decide ("I'll go with a plain text file for <file> because …")
/// is on the commit that adds the file — git says which files each commit adds — or on the
/// group of commits `group` puts it in. What the run in turn is held to, so that the runs
/// compared are not wrong alike.
fn assert_each_commit_has_its_decisions(repo: &TestRepo, group: impl Fn(&str, &str) -> String) {
    let placed = placement(repo, &group);
    let mut checked = 0;
    for (commit, subject) in subjects(repo) {
        if !subject.starts_with("round ") {
            continue;
        }
        let place = format!("note {}", group(&subject, &commit));
        let files = repo.git(&["show", "--name-only", "--format=", &commit]);
        for file in files.lines() {
            let decision = format!("for {file} because");
            assert!(
                placed.iter().any(|((p, _), what)| *p == place
                    && what.starts_with("\"decision\"")
                    && what.contains(&decision)),
                "{place}: no decision about {file}"
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no commit of a round");
}

/// Every event is where the scenario run in turn (`reference`: every hook to its end before
/// the next) keeps it: on the same commit — the same commits with the same notes — or pending.
/// `group` names the commits whose hooks race for the same events, which compare as one.
fn assert_placed_as_in_turn(
    repo: &TestRepo,
    reference: &TestRepo,
    group: impl Fn(&str, &str) -> String,
) {
    assert_eq!(
        subjects(repo),
        subjects(reference),
        "the scenario makes the same commits"
    );
    let got = placement(repo, &group);
    let want = placement(reference, &group);
    let show = |only: Vec<(&(String, String), &String)>| {
        only.iter()
            .map(|((place, id), what)| format!("  {place}: {id} {what}\n"))
            .collect::<String>()
    };
    let missing = show(want.iter().filter(|(k, _)| !got.contains_key(*k)).collect());
    let extra = show(got.iter().filter(|(k, _)| !want.contains_key(*k)).collect());
    assert!(
        missing.is_empty() && extra.is_empty(),
        "events placed otherwise than in turn\nonly in turn:\n{missing}only racing:\n{extra}"
    );
}

/// One session committing each turn while its Stop hook runs (`start` says how, per round).
fn stop_and_post_commit(repo: &TestRepo, rounds: u32, start: fn(u32) -> Start) -> Session {
    let s = Session::new(repo, "race-a", &repo.root, "main", 0);
    for n in 1..=rounds {
        let file = format!("a{n}.txt");
        s.append(&s.turn(n, &file, true));
        stage(repo, &repo.root, &file, &format!("round {n}\n"));
        // The session commits, and its Stop hook runs at the same time (the turn before ended
        // as the commit began); the commit's output reaches the transcript as Stop reads it.
        race(
            repo,
            start(n),
            2,
            procs![s.agent_commit(repo, n), hook(repo, &s, "Stop", json!({}))],
        );
        assert_at_most_once(repo, &format!("round {n} ({:?})", start(n)));
    }
    s
}

#[test]
fn stop_and_post_commit_racing_on_the_same_commit_lose_nothing() {
    const ROUNDS: u32 = 40;
    let started = Instant::now();
    let repo = hooked_repo();
    let s = stop_and_post_commit(&repo, ROUNDS, Start::of);
    let busy = busy_runs(&repo);
    settle(&repo, &[&s]);
    let expected = reference(&repo, &[&s]);
    assert_exactly_once(&repo, &expected);
    let in_turn = hooked_repo();
    let t = stop_and_post_commit(&in_turn, ROUNDS, |_| Start::InTurn);
    settle(&in_turn, &[&t]);
    assert_each_commit_has_its_decisions(&in_turn, each_commit);
    assert_placed_as_in_turn(&repo, &in_turn, each_commit);
    assert_graph_follows_notes(&repo);
    assert_nothing_deferred(&repo);
    // Of the hooks a starved round holds back, the post-commit hook of an agent's commit takes
    // no lock (it leaves its work to a process of its own, which the round does not hold).
    assert!(
        busy >= ROUNDS as usize / 4,
        "the starved rounds found the store busy: {busy}"
    );
    println!(
        "{ROUNDS} commits, {} events, {busy} hook runs found the store busy, {:.1} s",
        expected.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Two of a session's Bash calls (its subagents', say) commit one right after the other each
/// round: git runs the first commit's post-commit hook once it has let go of the index, so the
/// second commit is made while that hook runs. The session's Stop runs too, and the session
/// goes on writing its transcript meanwhile. `racing` false: each in turn.
fn two_commits(repo: &TestRepo, rounds: u32, racing: bool) -> Session {
    let s = Session::new(repo, "race-a", &repo.root, "main", 0);
    for n in 1..=rounds {
        let (first, second) = (2 * n - 1, 2 * n);
        let files = [format!("a{first}.txt"), format!("a{second}.txt")];
        s.append(&s.turn(first, &files[0], true));
        s.append(&s.turn(second, &files[1], true));
        let next = s.line(
            "user",
            format!("{}-q{n}", s.id),
            s.time(second) + 60,
            json!({"message": {"role": "user", "content": format!("Round {n}: thanks")}}),
        );
        if !racing {
            stage(repo, &repo.root, &files[0], "1\n");
            finish(vec![s.agent_commit(repo, first)]);
            stage(repo, &repo.root, &files[1], "2\n");
            finish(vec![s.agent_commit(repo, second)]);
            finish(vec![hook(repo, &s, "Stop", json!({}))]);
            s.append(&next);
            continue;
        }
        // The hooks are held at the store's lock so that the second commit can follow the
        // first while the first one's hook waits: then they go at once, or (every third round)
        // are held until they give up.
        let gate = hold_lock(repo);
        stage(repo, &repo.root, &files[0], "1\n");
        let mut children = vec![s.agent_commit(repo, first)];
        parked(repo, 1, &mut children);
        stage(repo, &repo.root, &files[1], "2\n");
        children.push(s.agent_commit(repo, second));
        children.push(hook(repo, &s, "Stop", json!({})));
        let starved = n % 3 == 0;
        if starved {
            for child in &mut children {
                child.wait().unwrap();
            }
        } else {
            parked(repo, 3, &mut children);
        }
        drop(gate);
        // The session writes on once its Bash calls have returned (each appends its commit's
        // output to the transcript), while its Stop hook may still run.
        let stop = children.pop().unwrap();
        finish(children);
        write_slowly(&s, &next, n);
        finish(vec![stop]);
        assert_at_most_once(repo, &format!("round {n} (starved: {starved})"));
    }
    s
}

#[test]
fn two_commits_of_one_session_whose_hooks_overlap_lose_nothing() {
    const ROUNDS: u32 = 40;
    let started = Instant::now();
    let repo = hooked_repo();
    let s = two_commits(&repo, ROUNDS, true);
    let busy = busy_runs(&repo);
    settle(&repo, &[&s]);
    let expected = reference(&repo, &[&s]);
    assert_exactly_once(&repo, &expected);
    let in_turn = hooked_repo();
    let t = two_commits(&in_turn, ROUNDS, false);
    settle(&in_turn, &[&t]);
    // Which of a round's two commits takes the round's turns is the race between their hooks,
    // which neither can settle (the transcript does not name the commits yet); what a round's
    // commits take together is not.
    let pair = |subject: &str, _: &str| {
        let n: u32 = subject
            .strip_prefix("round ")
            .map_or(0, |n| n.parse().unwrap());
        format!("of round pair {}", n.div_ceil(2))
    };
    assert_each_commit_has_its_decisions(&in_turn, pair);
    assert_placed_as_in_turn(&repo, &in_turn, pair);
    assert_graph_follows_notes(&repo);
    assert_nothing_deferred(&repo);
    assert!(
        busy >= 3 * (ROUNDS as usize / 3),
        "the starved rounds found the store busy: {busy}"
    );
    println!(
        "{} commits, two at a time, {} events, {busy} hook runs found the store busy, {:.1} s",
        2 * ROUNDS,
        expected.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Two sessions in one worktree, by turns: a commits, b commits, the user commits both
/// sessions' files by hand. The session that does not commit (one of them, by hand) is still
/// writing its turn while both sessions' Stop hooks run, one session is given its next prompt
/// and the other records a read or a search as it happens. CLAUDE.md's section is regenerated
/// by every Stop that changed the graph: one more writer.
fn two_sessions(repo: &TestRepo, rounds: u32, start: fn(u32) -> Start) -> (Session, Session) {
    fs::write(
        repo.root.join(".agent-context.toml"),
        "[claude_md]\nrefresh = \"on\"\n",
    )
    .unwrap();
    fs::write(
        repo.root.join(".gitignore"),
        "CLAUDE.md\n.agent-context.toml\n",
    )
    .unwrap();
    let a = Session::new(repo, "race-a", &repo.root, "main", 0);
    let b = Session::new(repo, "race-b", &repo.root, "main", 40);
    for n in 1..=rounds {
        let who = n % 3;
        let (fa, fb) = (format!("a{n}.txt"), format!("b{n}.txt"));
        let (committer, working) = match who {
            1 => (Some(&a), &b),
            2 => (Some(&b), &a),
            _ if n % 2 == 0 => (None, &a),
            _ => (None, &b),
        };
        let done = if std::ptr::eq(working, &a) { &b } else { &a };
        let file = |s: &Session| {
            if std::ptr::eq(s, &a) {
                fa.clone()
            } else {
                fb.clone()
            }
        };
        done.append(&done.turn(n, &file(done), committer.is_some()));
        match committer {
            Some(s) => stage(repo, &repo.root, &file(s), "x\n"),
            None => {
                stage(repo, &repo.root, &fa, "a\n");
                stage(repo, &repo.root, &fb, "b\n");
            }
        }
        let (next, reading) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
        // The read or the search of the reading session's turn, a new one each round, so that
        // each capture races with the extraction of the same event.
        let captured = match n % 2 {
            0 => json!({"tool_name": "Read",
                "tool_input": {"file_path": reading.dir.join(file(reading))},
                "tool_response": {"type": "text"}}),
            _ => json!({"tool_name": "Grep",
                "tool_input": {"pattern": Session::searched(n)},
                "tool_response": {"mode": "files_with_matches"}}),
        };
        let procs = procs![
            match committer {
                Some(s) => s.agent_commit(repo, n),
                None => commit(
                    repo,
                    &repo.root,
                    None,
                    &format!("round {n}"),
                    &at(b.time(n) + 30),
                ),
            },
            hook(repo, &a, "Stop", json!({})),
            hook(repo, &b, "Stop", json!({})),
            hook(
                repo,
                next,
                "UserPromptSubmit",
                json!({"prompt": format!("Why a plain text file for a{n}.txt?")}),
            ),
            hook(repo, reading, "PostToolUse", captured),
        ];
        let turn = working.turn(n, &file(working), false);
        race_while(repo, start(n), 3, procs, || write_slowly(working, &turn, n));
        assert_at_most_once(repo, &format!("round {n} ({:?})", start(n)));
        // Both turns have ended: each session's Stop runs, alone. (Events a round leaves
        // pending would otherwise go by a race: to the commit their time and files point at, if
        // a Stop links them first, or to their session's next commit, whose post-commit hook
        // takes all it has pending.)
        finish(vec![hook(repo, &a, "Stop", json!({}))]);
        finish(vec![hook(repo, &b, "Stop", json!({}))]);
    }
    (a, b)
}

#[test]
fn two_sessions_in_one_worktree_with_their_hooks_interleaved_lose_nothing() {
    const ROUNDS: u32 = 36;
    let started = Instant::now();
    let repo = hooked_repo();
    let (a, b) = two_sessions(&repo, ROUNDS, Start::of);
    let busy = busy_runs(&repo);
    // Each round's read or search is new: a capture that finds it stored already lost the race
    // to a Stop, one that appends it raced the queue's rewrites.
    let captured = repo.log().matches("hook PostToolUse: captured: ").count();
    settle(&repo, &[&a, &b]);
    let expected = reference(&repo, &[&a, &b]);
    assert_exactly_once(&repo, &expected);
    let in_turn = hooked_repo();
    let (c, d) = two_sessions(&in_turn, ROUNDS, |_| Start::InTurn);
    settle(&in_turn, &[&c, &d]);
    assert_each_commit_has_its_decisions(&in_turn, each_commit);
    assert_placed_as_in_turn(&repo, &in_turn, each_commit);
    assert_graph_follows_notes(&repo);
    assert_nothing_deferred(&repo);
    // Of the hooks a starved round holds back, the post-commit hook of an agent's commit takes
    // no lock (it leaves its work to a process of its own, which the round does not hold).
    assert!(
        busy >= 2 * (ROUNDS as usize / 4),
        "the starved rounds found the store busy: {busy}"
    );
    assert!(captured > 0, "no capture appended its event");
    println!(
        "{ROUNDS} commits of 2 sessions, {} events, {captured} of {ROUNDS} captures appended, \
         {busy} hook runs found the store busy, {:.1} s",
        expected.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Two worktrees of one repository, each with its session, committing each round while both
/// sessions' Stop hooks run.
fn two_worktrees(repo: &TestRepo, rounds: u32, start: fn(u32) -> Start) -> (Session, Session) {
    let wt = repo.home.parent().unwrap().join("wt");
    repo.git(&["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()]);
    let a = Session::new(repo, "race-a", &repo.root, "main", 0);
    let b = Session::new(repo, "race-b", &wt, "wt", 40);
    for n in 1..=rounds {
        let (fa, fb) = (format!("a{n}.txt"), format!("b{n}.txt"));
        a.append(&a.turn(n, &fa, true));
        b.append(&b.turn(n, &fb, true));
        stage(repo, &a.dir, &fa, "a\n");
        stage(repo, &b.dir, &fb, "b\n");
        race(
            repo,
            start(n),
            4,
            procs![
                a.agent_commit(repo, n),
                b.agent_commit(repo, n),
                hook(repo, &a, "Stop", json!({})),
                hook(repo, &b, "Stop", json!({})),
            ],
        );
        assert_at_most_once(repo, &format!("round {n} ({:?})", start(n)));
    }
    (a, b)
}

#[test]
fn two_worktrees_each_with_its_session_and_commits_lose_nothing() {
    const ROUNDS: u32 = 30;
    let started = Instant::now();
    let repo = hooked_repo();
    let (a, b) = two_worktrees(&repo, ROUNDS, Start::of);
    let busy = busy_runs(&repo);
    settle(&repo, &[&a, &b]);
    let expected = reference(&repo, &[&a, &b]);
    assert_exactly_once(&repo, &expected);
    let in_turn = hooked_repo();
    let (c, d) = two_worktrees(&in_turn, ROUNDS, |_| Start::InTurn);
    settle(&in_turn, &[&c, &d]);
    assert_each_commit_has_its_decisions(&in_turn, each_commit);
    assert_placed_as_in_turn(&repo, &in_turn, each_commit);
    assert_graph_follows_notes(&repo);
    assert_nothing_deferred(&repo);
    // Of the hooks a starved round holds back, the post-commit hook of an agent's commit takes
    // no lock (it leaves its work to a process of its own, which the round does not hold).
    assert!(
        busy >= 2 * (ROUNDS as usize / 4),
        "the starved rounds found the store busy: {busy}"
    );
    // Each worktree's commits carry its own session's reasoning.
    for (s, other) in [(&a, &b), (&b, &a)] {
        let head = repo.git_in(&s.dir, &["rev-parse", "HEAD~1"], &[]);
        let note = repo.git(&["notes", "--ref=agent-context", "show", &head]);
        assert!(note.contains(s.id) && !note.contains(other.id), "{note}");
    }
    println!(
        "{ROUNDS} commits in each of 2 worktrees, {} events, {busy} hook runs found the store busy, {:.1} s",
        expected.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Runs the hook named, given how to start it.
type RunHook<'r> = dyn FnMut(&TestRepo, &str, &dyn Fn() -> Child) + 'r;

/// The steps of a session of [`TURNS`] turns in `repo` (hooks not installed: the test runs
/// them): each turn, its commit, `hook post-commit`, the commit's output, `hook Stop`.
/// `run(repo, hook, start)` runs each hook, given how to start it. Returns the commits.
fn hooked_steps(repo: &TestRepo, session: &Session, run: &mut RunHook<'_>) -> Vec<String> {
    let mut commits = Vec::new();
    for n in 1..=TURNS {
        let file = format!("k{n}.txt");
        session.append(&session.turn(n, &file, true));
        stage(repo, &repo.root, &file, &format!("{n}\n"));
        let date = session.commit_date(n);
        let out = commit(repo, &repo.root, None, &format!("round {n}"), &date)
            .wait_with_output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let post_commit = || {
            repo.cmd_in(&repo.root)
                .args(["hook", "post-commit"])
                .env("CLAUDE_CODE_SESSION_ID", session.id)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        run(repo, "post-commit", &post_commit);
        let head = repo.git(&["rev-parse", "HEAD"]);
        session.append(&session.committed(n, &head[..7]));
        commits.push(head);
        run(repo, "Stop", &|| hook(repo, session, "Stop", json!({})));
    }
    commits
}

const TURNS: u32 = 3;

/// A repository for [`hooked_steps`]: one commit, `init` run, no git hooks.
fn plain_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    repo.ok(&["init"]);
    repo
}

/// [`stored`], with the repository's temporary folder named alike in every repository.
fn stored_anywhere(repo: &TestRepo, commits: &[String]) -> Vec<(String, String)> {
    let base = repo.home.parent().unwrap().to_str().unwrap().to_owned();
    stored(repo, commits)
        .into_iter()
        .map(|(k, v)| (k, v.replace(&base, "<tmp>")))
        .collect()
}

/// A ref lock file left by a writer killed while it held it: made older than the five seconds
/// after which writers take such a lock for a dead one's, as if that time had passed.
pub fn age_dead_ref_locks(repo: &TestRepo) -> usize {
    let mut aged = 0;
    for name in [
        "refs/notes/agent-context.lock",
        "refs/agent-context.lock",
        "packed-refs.lock",
    ] {
        let path = repo.root.join(".git").join(name);
        if let Ok(file) = File::options().write(true).open(&path) {
            file.set_modified(SystemTime::now() - Duration::from_secs(60))
                .unwrap();
            aged += 1;
        }
    }
    aged
}

#[test]
fn a_packed_refs_lock_left_by_a_killed_writer_blocks_neither_us_nor_git() {
    // gix locks packed-refs for every ref update once the file exists (a clone has one): a
    // writer killed then leaves `packed-refs.lock`, on which git's own updates fail too.
    let repo = plain_repo();
    repo.git(&["branch", "topic"]);
    repo.git(&["pack-refs", "--all"]);
    let lock = repo.root.join(".git/packed-refs.lock");
    fs::write(&lock, "").unwrap();
    assert_eq!(age_dead_ref_locks(&repo), 1);
    repo.ok(&["record", "decision", "Keep the cache in memory"]);
    assert!(!lock.exists(), "the dead writer's lock is gone");
    repo.git(&["branch", "-D", "topic"]);
    assert!(repo.ok(&["log"]).contains("Keep the cache in memory"));
}

#[test]
fn a_hook_killed_mid_write_is_completed_by_the_next_run() {
    let started = Instant::now();
    // The reference: every hook runs to its end. How long each step's hook takes, warm: the
    // shortest of three runs.
    let mut durations: BTreeMap<usize, Duration> = BTreeMap::new();
    let mut expected = Vec::new();
    let mut expected_ids = BTreeSet::new();
    for _ in 0..3 {
        let repo = plain_repo();
        let s = Session::new(&repo, "killed", &repo.root, "main", 0);
        let mut step = 0;
        let commits = hooked_steps(&repo, &s, &mut |_, _, start| {
            let begun = Instant::now();
            let status = start().wait().unwrap();
            assert!(status.success());
            let took = begun.elapsed();
            let shortest = durations.entry(step).or_insert(took);
            *shortest = (*shortest).min(took);
            step += 1;
        });
        expected = stored_anywhere(&repo, &commits);
        let events = reference(&repo, &[&s]);
        assert_exactly_once(&repo, &events);
        expected_ids = events.into_keys().collect();
    }
    assert!(
        expected
            .iter()
            .filter(|(k, v)| k.starts_with("note") && !v.is_empty())
            .count()
            == TURNS as usize,
        "every commit has a note: {expected:?}"
    );

    let trials = 10;
    let (mut kills, mut interrupted, mut locks) = (0, 0, 0);
    for trial in 0..trials {
        let repo = plain_repo();
        let s = Session::new(&repo, "killed", &repo.root, "main", 0);
        let mut step = 0;
        let commits = hooked_steps(&repo, &s, &mut |repo, name, start| {
            // Kill points spread over the hook's whole run (golden-ratio steps).
            let whole = durations[&step];
            let at = whole.mul_f64(((trial * 2 * TURNS as usize + step) as f64 * 0.618_034) % 1.0);
            step += 1;
            let mut child = start();
            std::thread::sleep(at);
            // Already finished when the kill point is past its end: then this does nothing.
            let _ = child.kill();
            kills += 1;
            if !child.wait().unwrap().success() {
                interrupted += 1;
            }
            let when = format!("trial {trial}: {name} killed after {at:?} of {whole:?}");
            // Sound as it is (an event may be both on its commit and still in the queue, which
            // the attached index resolves: see `store::link`)...
            stored_events(repo);
            locks += age_dead_ref_locks(repo);
            // ... and the next run, the same hook again to its end, completes the work.
            let status = start().wait().unwrap();
            assert!(status.success(), "{when}");
            assert_at_most_once(repo, &when);
        });
        let got = stored_anywhere(&repo, &commits);
        let keys = |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&got), keys(&expected), "trial {trial}");
        for ((key, a), (_, b)) in got.iter().zip(&expected) {
            assert!(a == b, "trial {trial}: {key} differs:\n{a}\n---\n{b}");
        }
        assert_eq!(ids(&repo), expected_ids, "trial {trial}");
        assert!(
            !repo.log().contains("failed"),
            "trial {trial}: {}",
            repo.log()
        );
    }
    println!(
        "{kills} hooks killed, {interrupted} before their end ({locks} holding a ref's lock), {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        interrupted >= kills / 2,
        "only {interrupted} of {kills} hooks were interrupted"
    );
}

/// The event of `kind` among `events`.
fn find<'e>(events: &'e [(String, Value)], kind: &str) -> Vec<&'e (String, Value)> {
    events.iter().filter(|(_, e)| e["kind"] == kind).collect()
}

#[test]
fn a_read_captured_while_its_commit_took_it_keeps_the_transcripts_version() {
    let repo = hooked_repo();
    let s = Session::new(&repo, "capture", &repo.root, "main", 0);
    s.append(&s.turn(1, "a1.txt", true));
    // PostToolUse records the read of a1.txt as it happens. It has checked that neither the
    // queue nor a commit holds the read, and is about to append it...
    let out = race(
        &repo,
        Start::AtOnce,
        1,
        procs![hook(
            &repo,
            &s,
            "PostToolUse",
            json!({"tool_name": "Read", "tool_input": {"file_path": s.dir.join("a1.txt")}}),
        )],
    );
    assert!(out[0].stdout.is_empty());
    let queue = repo.root.join(".git/agent-context/pending/capture.jsonl");
    let captured = fs::read_to_string(&queue).unwrap();
    assert_eq!(captured.lines().count(), 1, "{captured}");
    fs::remove_file(&queue).unwrap();
    // ... when the commit's hook reads the transcript and takes the read, as the transcript
    // has it, to the commit...
    stage(&repo, &repo.root, "a1.txt", "1\n");
    race(
        &repo,
        Start::AtOnce,
        1,
        procs![commit(
            &repo,
            &repo.root,
            Some(s.id),
            "round 1",
            &s.commit_date(1),
        )],
    );
    let before = stored_events(&repo);
    let read = find(&before, "read");
    assert_eq!(read.len(), 1, "{before:?}");
    assert!(read[0].0.starts_with("note"), "{read:?}");
    assert_ne!(
        read[0].1.to_string() + "\n",
        captured,
        "the hook's version differs"
    );
    // ... and its append lands after that hook trimmed the queue.
    fs::OpenOptions::new()
        .append(true)
        .open(&queue)
        .unwrap()
        .write_all(captured.as_bytes())
        .unwrap();
    // The next run takes it out of the queue, and the commit keeps the transcript's version.
    s.append(&s.committed(1, &repo.git(&["rev-parse", "--short=7", "HEAD"])));
    race(
        &repo,
        Start::AtOnce,
        1,
        procs![hook(&repo, &s, "Stop", json!({}))],
    );
    let after = stored_events(&repo);
    assert_eq!(find(&after, "read"), read);
    assert_exactly_once(&repo, &reference(&repo, &[&s]));
}

#[test]
fn a_writer_outside_the_lock_keeps_its_temporary_file() {
    // Hooks write some files without the store's lock — the session registry, a continuation,
    // the graph CLAUDE.md was made from — each as a temporary file renamed into place. A writer
    // that takes the lock in between must not take such a file for a dead writer's leftover:
    // the rename would fail, and the hook with it (a prompt would go without its context).
    let repo = hooked_repo();
    let sessions = repo.root.join(".git/agent-context/sessions");
    fs::create_dir_all(&sessions).unwrap();
    let live = sessions.join(format!(".s.json.{}.tmp", std::process::id()));
    fs::write(&live, "{}").unwrap();
    // A dead writer's file: its process is gone, and it is as old as a dead writer's ref lock.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = sessions.join(format!(".t.json.{}.tmp", gone.id()));
    fs::write(&dead, "{}").unwrap();
    File::options()
        .write(true)
        .open(&dead)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    repo.ok(&["extract"]);
    assert!(live.exists(), "a live writer's temporary file was removed");
    assert!(!dead.exists(), "a dead writer's temporary file stays");
}
