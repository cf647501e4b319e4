//! `TestRepo`: a real git repository in a temporary folder with a hermetic environment (its own
//! HOME, no global or system git config, fixed dates so commit ids are stable), and the real
//! binary run inside it.

use std::cell::Cell;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_git-agent-context");

/// A fixture file shipped in `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

pub struct TestRepo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    commits: Cell<u32>,
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let tmp = tempfile::tempdir().expect("temp dir");
        let base = fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let root = base.join("repo");
        let home = base.join("home");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&home).unwrap();
        let repo = TestRepo {
            _tmp: tmp,
            root,
            home,
            commits: Cell::new(0),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A plain folder that is not a repository, in the same hermetic environment.
    pub fn outside(&self) -> PathBuf {
        let dir = self.home.parent().unwrap().join("not-a-repo");
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", path_with_binary())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("TZ", "UTC")
            .env("LANG", "C");
    }

    /// Run git in the repository; panics unless it succeeds. Returns stdout, trimmed.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_at(args, &nth_date(self.commits.get()))
    }

    /// How many loose objects git counts.
    pub fn loose_objects(&self) -> usize {
        let counts = self.git(&["count-objects", "-v"]);
        counts
            .lines()
            .find_map(|l| l.strip_prefix("count: "))
            .unwrap()
            .parse()
            .unwrap()
    }

    /// [`TestRepo::git`] with author and committer dates `date`.
    pub fn git_at(&self, args: &[&str], date: &str) -> String {
        self.git_in(
            &self.root,
            args,
            &[("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)],
        )
    }

    /// Run git in `dir` with extra environment variables; panics unless it succeeds. Returns
    /// stdout, trimmed.
    pub fn git_in(&self, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> String {
        let out = self.git_output(dir, args, vars);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Run git in `dir` with extra environment variables, whatever the outcome, once the work
    /// an agent's commit left to a process of its own is done ([`TestRepo::settled`]); and
    /// wait for what this one leaves.
    pub fn git_output(&self, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
        self.settled();
        let out = self
            .git_command(dir, args, vars)
            .output()
            .expect("git runs");
        self.settled();
        out
    }

    /// Wait (30 s at most) until the processes that post-commit hooks left the rest of an
    /// agent's commit to, or `Stop` hooks the rest of a turn's end, have ended, so that what a
    /// test reads next is what they wrote: those the log names, and those running in this
    /// repository that a hook killed before it could log them started (`git fsck` beside one
    /// that writes an object and its reflog line finds a reflog entry for an object it did not
    /// see).
    pub fn settled(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let log = self.log();
        let pids = log
            .lines()
            .filter_map(|l| l.split("the rest left to process ").nth(1))
            .filter_map(|p| p.trim().parse::<u32>().ok())
            .chain(self.finishers(&log));
        for pid in pids {
            while finishing(pid) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    /// The processes running `hook … finish` in this repository (Linux's /proc), looked for
    /// once a post-commit or `Stop` hook has run here (`log`) or a commit is written down for
    /// one. (A process started by a repository's first such hook, killed before it logged,
    /// goes unseen once it has taken the commit written down for it.)
    fn finishers(&self, log: &str) -> Vec<u32> {
        let store = self.root.join(".git/agent-context");
        if !log.contains("post-commit")
            && !log.contains("hook Stop")
            && !log.contains("hook AfterAgent")
            && !store.join("deferred").exists()
            && !store.join("deferred.claimed").exists()
        {
            return Vec::new();
        }
        let root = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone());
        let Ok(procs) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        procs
            .flatten()
            .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                finishing(*pid)
                    && fs::read_link(format!("/proc/{pid}/cwd"))
                        .is_ok_and(|cwd| cwd.starts_with(&root))
            })
            .collect()
    }

    /// Run git in the repository with `input` on its stdin; panics unless it succeeds.
    /// Returns stdout, trimmed.
    pub fn git_with_input(&self, args: &[&str], input: &[u8]) -> String {
        let out = with_input(self.git_command(&self.root, args, &[]), input);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            stderr(&out)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Run the binary in `dir` with `args`, `input` on its stdin and extra variables; and wait
    /// for what it leaves to a process of its own ([`TestRepo::settled`]: the rest of a turn's
    /// end), so that what a test reads next is what that wrote.
    pub fn run_with_input(
        &self,
        dir: &Path,
        args: &[&str],
        input: &[u8],
        vars: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.cmd_in(dir);
        cmd.args(args).envs(vars.iter().copied());
        let out = with_input(cmd, input);
        self.settled();
        out
    }

    /// git, ready to run in `dir` with the hermetic environment, this repository's next commit
    /// date and extra variables (for a test that spawns it).
    pub fn git_command(&self, dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new("git");
        self.env(&mut cmd);
        let n = self.commits.get();
        cmd.env("GIT_AUTHOR_DATE", nth_date(n))
            .env("GIT_COMMITTER_DATE", nth_date(n))
            .args(args)
            .current_dir(dir)
            .envs(vars.iter().copied());
        cmd
    }

    /// Copy the shipped `git-hooks/` into the repository's hooks folder; with the binary's
    /// folder first on the tests' PATH, they run `git agent-context` as users' hooks do.
    pub fn install_git_hooks(&self) {
        let hooks = self.root.join(".git/hooks");
        fs::create_dir_all(&hooks).unwrap();
        for name in ["post-commit", "post-merge", "post-rewrite"] {
            let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("git-hooks")
                .join(name);
            fs::copy(&shipped, hooks.join(name)).unwrap();
        }
    }

    /// Write a file and commit it; returns the commit id.
    pub fn commit(&self, path: &str, content: &str, message: &str) -> String {
        self.commits.set(self.commits.get() + 1);
        self.commit_at(path, content, message, &nth_date(self.commits.get()))
    }

    /// [`TestRepo::commit`] made at `date` (RFC 3339).
    pub fn commit_at(&self, path: &str, content: &str, message: &str, date: &str) -> String {
        let file = self.root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(&file, content).unwrap();
        self.git(&["add", path]);
        self.git_at(&["commit", "-q", "-m", message], date);
        self.git(&["rev-parse", "HEAD"])
    }

    /// The binary, ready to run in `dir` with the hermetic environment.
    pub fn cmd_in(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(BIN);
        self.env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// Run the binary in the repository with `args`.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd_in(&self.root)
            .args(args)
            .output()
            .expect("binary runs")
    }

    /// Run, assert success, return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} exited {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run with `--json` appended, assert success, parse stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).expect("--json prints JSON")
    }

    /// `extract --transcript <path> --json`.
    pub fn extract(&self, transcript: &Path) -> Value {
        self.json(&["extract", "--transcript", transcript.to_str().unwrap()])
    }

    /// The folder where Claude Code keeps this repository's transcripts under our HOME.
    pub fn project_dir(&self) -> PathBuf {
        self.project_dir_for(&self.root)
    }

    /// The folder where Claude Code keeps the transcripts of sessions started in `dir`.
    pub fn project_dir_for(&self, dir: &Path) -> PathBuf {
        let name: String = dir
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home.join(".claude").join("projects").join(name)
    }

    /// Copy a fixture transcript into this repository's project folder as `<session>.jsonl`,
    /// pointing its `cwd` at the repository (as if the session had run here).
    pub fn install_transcript(&self, fixture_rel: &str, session: &str) -> PathBuf {
        let text = fs::read_to_string(fixture(fixture_rel)).unwrap();
        self.install_transcript_text(&text, session)
    }

    /// [`TestRepo::install_transcript`] for a transcript's text (a fixture changed by the test).
    pub fn install_transcript_text(&self, text: &str, session: &str) -> PathBuf {
        let cwd = crate::repo::first_cwd(text).expect("the transcript has a cwd");
        let rewritten = text.replace(&format!("\"{cwd}"), &format!("\"{}", self.root.display()));
        let dir = self.project_dir();
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{session}.jsonl"));
        fs::write(&path, rewritten).unwrap();
        path
    }

    /// The payload Claude Code 2.1.330 sent for hook `name` (`fixtures/hooks/<name>.json`), as
    /// if session `session`, whose transcript is `transcript`, ran in this repository; with
    /// `changes` to its fields.
    pub fn hook_payload(
        &self,
        name: &str,
        session: &str,
        transcript: &Path,
        changes: &[(&str, Value)],
    ) -> Value {
        let text = fs::read_to_string(fixture(&format!("hooks/{name}.json"))).unwrap();
        let mut payload: Value = serde_json::from_str(&text).unwrap();
        payload["cwd"] = self.root.to_str().unwrap().into();
        payload["session_id"] = session.into();
        payload["transcript_path"] = transcript.to_str().unwrap().into();
        for (key, value) in changes {
            payload[*key] = value.clone();
        }
        payload
    }

    /// Every event in the notes (as git shows them) and in the pending queue, as (where, kind,
    /// event id): where is `note <commit>` or `pending`, once per line that holds the event.
    pub fn stored_events(&self) -> Vec<(String, String, String)> {
        let field = |event: &Value, key: &str| event[key].as_str().unwrap().to_owned();
        let mut out = Vec::new();
        let listed = self.git_output(&self.root, &["notes", "--ref=agent-context", "list"], &[]);
        for line in String::from_utf8(listed.stdout).unwrap().lines() {
            let commit = line.split_whitespace().nth(1).unwrap();
            let note = self.git(&["notes", "--ref=agent-context", "show", commit]);
            for line in note.lines().filter(|l| !l.trim().is_empty()) {
                let event: Value = serde_json::from_str(line).expect("a note line is JSON");
                let at = format!("note {commit}");
                out.push((at, field(&event, "kind"), field(&event, "id")));
            }
        }
        for event in self.pending() {
            out.push((
                "pending".to_owned(),
                field(&event, "kind"),
                field(&event, "id"),
            ));
        }
        out.sort();
        out
    }

    /// Every event is stored once: an event other than a session's own is in one note or in
    /// the pending queue, never two; a session event (on each commit of its session, see
    /// `store::link`) never twice in one place.
    pub fn assert_each_event_once(&self) {
        let mut places: std::collections::BTreeMap<(String, String), Vec<String>> =
            Default::default();
        for (at, kind, id) in self.stored_events() {
            places.entry((kind, id)).or_default().push(at);
        }
        for ((kind, id), at) in &places {
            let mut distinct = at.clone();
            distinct.dedup();
            let once = match kind.as_str() {
                "session" => distinct.len() == at.len(),
                _ => at.len() == 1,
            };
            assert!(once, "{kind} event {id} is stored at {at:?}");
        }
    }

    /// Another test repository (its own folder, the same hermetic environment) made by `git
    /// clone <args>` of this one: `--mirror` makes a bare one, `--depth N` a shallow one.
    pub fn clone_with(&self, args: &[&str]) -> TestRepo {
        let other = TestRepo::new();
        fs::remove_dir_all(&other.root).unwrap();
        let url = format!("file://{}", self.root.display());
        let mut all = vec!["clone", "-q"];
        all.extend(args);
        all.extend([url.as_str(), other.root.to_str().unwrap()]);
        other.git_in(&other.home, &all, &[]);
        other
    }

    /// The store folder, `$GIT_COMMON_DIR/agent-context` (bare repositories included).
    pub fn store_dir(&self) -> PathBuf {
        let common = self.git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        PathBuf::from(common).join("agent-context")
    }

    /// The store's log (`$GIT_DIR/agent-context/log`), empty when there is none.
    pub fn log(&self) -> String {
        fs::read_to_string(self.root.join(".git/agent-context/log")).unwrap_or_default()
    }

    /// The last line of the store's log that holds `text`.
    pub fn last_logged(&self, text: &str) -> String {
        let log = self.log();
        let line = log.lines().rfind(|l| l.contains(text));
        line.unwrap_or_else(|| panic!("no line with {text:?}: {log}"))
            .to_owned()
    }

    /// Every pending event of the store, parsed, in file order.
    pub fn pending(&self) -> Vec<Value> {
        let dir = self.root.join(".git/agent-context/pending");
        let mut files: Vec<PathBuf> = match fs::read_dir(&dir) {
            Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
            Err(_) => return Vec::new(),
        };
        files.sort();
        files
            .iter()
            .flat_map(|f| {
                fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect::<Vec<Value>>()
            })
            .collect()
    }

    /// The raw bytes of every pending file, for byte-for-byte comparisons.
    pub fn pending_bytes(&self) -> Vec<(String, Vec<u8>)> {
        let dir = self.root.join(".git/agent-context/pending");
        let mut out: Vec<(String, Vec<u8>)> = match fs::read_dir(&dir) {
            Ok(entries) => entries
                .map(|e| {
                    let p = e.unwrap().path();
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        fs::read(&p).unwrap(),
                    )
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        out.sort();
        out
    }
}

/// Whether process `pid` is a `hook … finish` still running: gone, a zombie nobody reaps yet,
/// or another program that took its number since, it is not.
fn finishing(pid: u32) -> bool {
    const FINISH: &[u8] = b"\0finish\0";
    let running = fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    });
    running
        && fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.windows(FINISH.len()).any(|w| w == FINISH))
}

/// PATH with the binary's folder first, so that `git agent-context` runs the binary under test.
/// Every file under `dir`, in its subfolders too.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => folders.push(path),
                false => out.push(path),
            }
        }
    }
    out
}

/// The retrieval index under `dir` as `repo`'s commands kept it, after checking that it is the
/// one `rebuild` makes from nothing; its files as [`index_files`] gives them.
pub fn index_as_a_rebuild_makes_it(
    repo: &TestRepo,
    dir: &Path,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let kept = index_files(dir);
    repo.ok(&["rebuild"]);
    assert_eq!(kept, index_files(dir));
    kept
}

/// The files of the retrieval index under `dir`, by name, each as its lines sorted (the order
/// lines were appended in is not part of the format).
pub fn index_files(dir: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for path in files_under(dir) {
        let mut lines: Vec<String> = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        let name = path.strip_prefix(dir).unwrap().display().to_string();
        out.insert(name, lines);
    }
    out
}

pub fn path_with_binary() -> std::ffi::OsString {
    let dir = Path::new(BIN).parent().unwrap().to_owned();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}

/// The date of the test repository's `n`-th commit: one second apart from 2026-01-01.
fn nth_date(n: u32) -> String {
    format!("2026-01-01T00:{:02}:{:02}Z", n / 60, n % 60)
}

pub fn first_cwd(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v.get("cwd")?.as_str().map(str::to_owned)
    })
}

/// Run `cmd` with `input` on its stdin, its output captured.
fn with_input(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Run `cmd` with `input` on its stdin, its output captured, and how long it took from its
/// start. With `hold_stdin`, stdin stays open until the process ends, as when the writer hangs.
/// A process still running after `limit` is killed and the test fails: what is tested is that
/// it ends by itself.
pub fn run_within(
    mut cmd: Command,
    input: &[u8],
    hold_stdin: bool,
    limit: std::time::Duration,
) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program runs");
    let mut stdin = child.stdin.take().unwrap();
    // A process that ends before reading all of it closes the pipe: not a failure here.
    let _ = stdin.write_all(input);
    let held = hold_stdin.then_some(stdin);
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}, killed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let took = start.elapsed();
    drop(held);
    (child.wait_with_output().unwrap(), took)
}

/// Run `command`, whose program a test has just copied: another test's fork may still hold the
/// copy open for writing a moment ("text file busy"), so it is tried again until it lets go.
pub fn output_of_copy(command: &mut Command) -> Output {
    for _ in 0..50 {
        match command.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.expect("the copied binary runs"),
        }
    }
    panic!("the copied binary stayed busy");
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What Claude Code hook `event` answered, checked as Claude Code reads it: the hook exited 0
/// without a panic, and printed nothing (`None`) or one JSON answer for `event` (its context).
pub fn hook_answer(event: &str, out: &Output) -> Option<String> {
    let err = stderr(out);
    assert!(
        out.status.code() == Some(0) && !err.contains("panicked"),
        "hook {event} exited {:?}: {err}",
        out.status.code()
    );
    let stdout = String::from_utf8(out.stdout.clone()).expect("the answer is UTF-8");
    if stdout.is_empty() {
        return None;
    }
    let answer: Value = serde_json::from_str(&stdout).expect("the answer is JSON");
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], event, "{answer}");
    Some(
        specific["additionalContext"]
            .as_str()
            .expect("the context is text")
            .to_owned(),
    )
}

#[test]
fn test_repositories_are_hermetic_and_reproducible() {
    let a = TestRepo::new();
    let b = TestRepo::new();
    assert_ne!(a.root, b.root);
    let first = a.commit("src/a.txt", "one\n", "first");
    assert_eq!(
        first,
        b.commit("src/a.txt", "one\n", "first"),
        "same content and dates give the same commit id"
    );
    assert_ne!(a.commit("src/a.txt", "two\n", "second"), first);
    let origins = a.git(&["config", "--list", "--show-origin"]);
    assert!(
        origins.lines().all(|l| l.starts_with("file:.git/config")),
        "only the repository's own config is read: {origins}"
    );
}
