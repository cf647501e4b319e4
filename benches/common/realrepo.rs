//! A repository shaped like a real project's, with real sessions on it, for the hooks'
//! benchmark: a few thousand commits made with `git fast-import` (long-lived files edited
//! often, pull requests merged with merge commits, changes by three authors), and the Claude
//! Code transcripts of `fixtures/` (about thirty sessions, the fixtures cycled) replayed onto it.
//!
//! Each session is given a place in the later part of the history: its transcript is moved in
//! time to end just before that place and into the repository's folder (its `cwd` replaced,
//! so its paths are the repository's), and what it wrote (Write, Edit, MultiEdit) is committed
//! there on a branch that is merged, as a pull request would be. The long-lived files are the
//! files the sessions wrote most. Then the transcripts are put where Claude Code keeps them and
//! `git agent-context extract` reads them all, as a user would on installing.
//!
//! Deterministic: the same fixtures give the same commits on every machine.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git_agent_context::event::time::{rfc3339, unix_seconds};
use git_agent_context::transcript::agent::Agent;
use git_agent_context::transcript::locate::project_dir_name;
use serde_json::Value;

use crate::hermetic::{hermetic, succeeded};

/// Commits before the sessions' own (merges included).
pub const COMMITS: usize = 4_000;
/// Sessions replayed.
pub const SESSIONS: usize = 30;
const LONG_LIVED: usize = 12;
const SMALL_FILES: usize = 1_500;
const START: i64 = 1_735_689_600; // 2025-01-01
const STEP: i64 = 900;
const AUTHORS: [&str; 3] = [
    "Ada <ada@example.com>",
    "Bo <bo@example.com>",
    "Cy <cy@example.com>",
];

pub struct RealRepo {
    /// The binary measured.
    pub bin: String,
    pub dir: PathBuf,
    pub home: PathBuf,
    /// The files edited most, busiest first.
    pub long_lived: Vec<String>,
    /// The replayed sessions' ids, in the order they ran.
    pub sessions: Vec<String>,
    /// Their first prompts.
    pub prompts: Vec<String>,
    /// What the build made, for the report.
    pub summary: String,
}

/// One fixture transcript, read.
#[derive(Clone)]
struct Session {
    id: String,
    cwd: String,
    lines: Vec<String>,
    first: i64,
    last: i64,
    prompt: Option<String>,
    changes: Vec<Change>,
}

/// A change a session made to a file, its path relative to the session's folder.
#[derive(Clone)]
enum Change {
    Whole(String, String),
    Edit(String, String, String),
}

impl Change {
    fn path(&self) -> &str {
        match self {
            Change::Whole(path, _) | Change::Edit(path, _, _) => path,
        }
    }
}

/// A fresh repository under `base`, built by `bin` (its `install` and `extract`).
pub fn build(base: &Path, bin: &str) -> RealRepo {
    let _ = fs::remove_dir_all(base);
    let dir = base.join("repo");
    let home = base.join("home");
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(&home).unwrap();
    let started = Instant::now();
    let sessions = sessions();
    let long_lived = busiest(&sessions);
    let mut repo = RealRepo {
        bin: bin.to_owned(),
        dir,
        home,
        long_lived,
        sessions: Vec::new(),
        prompts: Vec::new(),
        summary: String::new(),
    };
    repo.git(&["init", "-q", "-b", "main"]);
    // git's own `gc --auto` is left on, as in a user's repository: it waits for about 6,700
    // loose objects, which this one never holds, while the post-commit hook's process packs
    // them from 256 (`store::pack`).
    let mut child = repo
        .command("git")
        .args(["fast-import", "--quiet", "--done"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    let placed = {
        let mut out = BufWriter::with_capacity(1 << 20, child.stdin.take().unwrap());
        let placed = History::new(&repo.long_lived)
            .write(&mut out, &sessions)
            .expect("fast-import reads the stream");
        out.flush().unwrap();
        placed
    };
    assert!(child.wait().unwrap().success(), "git fast-import failed");
    repo.git(&["update-ref", "-d", "refs/heads/pr"]);
    repo.git(&["reset", "-q", "--hard", "main"]);
    // What `git maintenance` leaves a repository with.
    repo.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    let built = started.elapsed();

    let projects = repo
        .home
        .join(".claude/projects")
        .join(project_dir_name(&repo.dir));
    fs::create_dir_all(&projects).unwrap();
    let dir = repo.dir.to_str().unwrap().to_owned();
    for (session, end) in sessions.iter().zip(placed) {
        let shift = end - session.last;
        let text: String = session
            .lines
            .iter()
            .map(|line| moved(line, &session.cwd, &dir, shift) + "\n")
            .collect();
        fs::write(projects.join(format!("{}.jsonl", session.id)), text).unwrap();
        repo.sessions.push(session.id.clone());
        repo.prompts.extend(session.prompt.clone());
    }
    succeeded(repo.command(bin).args(["install", "--scope", "local"]));
    let started = Instant::now();
    let out = succeeded(repo.command(bin).args(["extract", "--json"]));
    let extracted = started.elapsed();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = repo
        .git(&["notes", "--ref=agent-context", "list"])
        .lines()
        .count();
    let commits = repo.git(&["rev-list", "--count", "HEAD"]);
    let merges = repo.git(&["rev-list", "--count", "--merges", "HEAD"]);
    let bytes: u64 = sessions
        .iter()
        .map(|s| s.lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>())
        .sum();
    assert!(
        notes >= SESSIONS / 2,
        "most sessions' commits carry notes: {notes}"
    );
    repo.summary = format!(
        "repository: {} commits ({} merges), {} files, {} long-lived (the busiest {}, {} lines, {} commits); built in {:.1} s\n\
         sessions: {SESSIONS} real transcripts ({:.1} MB), extract {:.2} s: {} events, {notes} annotated commits",
        commits.trim(),
        merges.trim(),
        repo.git(&["ls-files"]).lines().count(),
        repo.long_lived.len(),
        repo.long_lived[0],
        repo.git(&["show", &format!("HEAD:{}", repo.long_lived[0])])
            .lines()
            .count(),
        repo.git(&["rev-list", "--count", "HEAD", "--", &repo.long_lived[0]])
            .trim(),
        built.as_secs_f64(),
        bytes as f64 / 1e6,
        extracted.as_secs_f64(),
        report["events_added"],
    );
    repo
}

impl RealRepo {
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        hermetic(cmd.current_dir(&self.dir), &self.home);
        cmd
    }

    pub fn git(&self, args: &[&str]) -> String {
        String::from_utf8(succeeded(self.command("git").args(args)).stdout).unwrap()
    }

    /// The folder Claude Code keeps this repository's transcripts in.
    pub fn projects(&self) -> PathBuf {
        self.home
            .join(".claude/projects")
            .join(project_dir_name(&self.dir))
    }

    /// Run `program` with `args` once: how long it took.
    pub fn time(&self, program: &str, args: &[&str]) -> Duration {
        let start = Instant::now();
        succeeded(self.command(program).args(args));
        start.elapsed()
    }
}

/// The fixtures' Claude Code transcripts, read, cycled to [`SESSIONS`]; each repetition a
/// session of its own (ids made unique).
fn sessions() -> Vec<Session> {
    let mut files = Vec::new();
    transcripts(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut files,
    );
    files.sort();
    let read: Vec<Session> = files.iter().filter_map(|f| read(f)).collect();
    assert!(!read.is_empty(), "fixture transcripts with writes");
    let mut out: Vec<Session> = (0..SESSIONS)
        .map(|i| {
            let s = &read[i % read.len()];
            let copy = i / read.len();
            if copy == 0 {
                return s.clone();
            }
            let id = format!("{copy:08x}{}", &s.id[8.min(s.id.len())..]);
            let lines = s
                .lines
                .iter()
                .map(|l| {
                    l.replace(&s.id, &id)
                        .replace("\"msg_", &format!("\"msg_r{copy}_"))
                        .replace("\"uuid\":\"", &format!("\"uuid\":\"r{copy}-"))
                        .replace("\"toolu_", &format!("\"toolu_r{copy}_"))
                })
                .collect();
            Session {
                id,
                lines,
                ..s.clone()
            }
        })
        .collect();
    out.sort_by_key(|s| s.first);
    out
}

fn transcripts(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            transcripts(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl")
            && Agent::of(&path) == Agent::ClaudeCode
        {
            out.push(path);
        }
    }
}

/// A transcript that has a folder, times and at least one write inside its folder.
fn read(path: &Path) -> Option<Session> {
    let text = fs::read_to_string(path).ok()?;
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let records: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let cwd = records.iter().find_map(|r| r["cwd"].as_str())?.to_owned();
    let id = records
        .iter()
        .find_map(|r| r["sessionId"].as_str())?
        .to_owned();
    let times: Vec<i64> = records
        .iter()
        .filter_map(|r| unix_seconds(r["timestamp"].as_str()?))
        .collect();
    let prompt = records.iter().find_map(|r| {
        if r["type"] != "user" || r["isMeta"] == true {
            return None;
        }
        let text = r["message"]["content"].as_str()?;
        (!text.starts_with('<')).then(|| text.chars().take(400).collect())
    });
    let relative = |p: &Value| -> Option<String> {
        let rest = p.as_str()?.strip_prefix(cwd.as_str())?.strip_prefix('/')?;
        (!rest.is_empty() && !rest.split('/').any(|part| part == ".." || part == ".git"))
            .then(|| rest.to_owned())
    };
    let mut changes = Vec::new();
    for record in &records {
        let Some(content) = record["message"]["content"].as_array() else {
            continue;
        };
        for call in content.iter().filter(|c| c["type"] == "tool_use") {
            let input = &call["input"];
            let Some(path) = relative(&input["file_path"]) else {
                continue;
            };
            let text = |key: &str| input[key].as_str().unwrap_or_default().to_owned();
            match call["name"].as_str() {
                Some("Write") => changes.push(Change::Whole(path, text("content"))),
                Some("Edit") => {
                    changes.push(Change::Edit(path, text("old_string"), text("new_string")))
                }
                Some("MultiEdit") => {
                    for edit in input["edits"].as_array().into_iter().flatten() {
                        let text = |key: &str| edit[key].as_str().unwrap_or_default().to_owned();
                        changes.push(Change::Edit(
                            path.clone(),
                            text("old_string"),
                            text("new_string"),
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    if changes.is_empty() {
        return None;
    }
    Some(Session {
        id,
        cwd,
        lines,
        first: *times.iter().min()?,
        last: *times.iter().max()?,
        prompt,
        changes,
    })
}

/// The files the sessions wrote most (by how many sessions wrote each, then by name).
fn busiest(sessions: &[Session]) -> Vec<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for session in sessions {
        let mut paths: Vec<&str> = session.changes.iter().map(Change::path).collect();
        paths.sort_unstable();
        paths.dedup();
        for path in paths {
            *count.entry(path).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = count.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    ranked
        .into_iter()
        .take(LONG_LIVED)
        .map(|(p, _)| p.to_owned())
        .collect()
}

/// A line of a transcript moved into `dir` (for `cwd`) and `shift` seconds in time.
fn moved(line: &str, cwd: &str, dir: &str, shift: i64) -> String {
    retimed(&line.replace(cwd, dir), |t| t + shift)
}

/// `line` with its time `t` (seconds since the epoch) made `to(t)`.
pub fn retimed(line: &str, to: impl Fn(i64) -> i64) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    for key in ["\"timestamp\":\"", "\"timestamp\": \""] {
        if let Some(at) = rest.find(key) {
            let from = at + key.len();
            if let Some(len) = rest[from..].find('"')
                && let Some(t) = unix_seconds(&rest[from..from + len])
            {
                out.push_str(&rest[..from]);
                out.push_str(&rfc3339(to(t)));
                rest = &rest[from + len..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

const WORDS: [&str; 16] = [
    "cache",
    "retry",
    "timeout",
    "parser",
    "token",
    "session",
    "buffer",
    "stream",
    "config",
    "checkpoint",
    "hook",
    "branch",
    "strategy",
    "metadata",
    "agent",
    "rewind",
];

/// The history being written: each file's content on `main`, the next mark and time.
struct History {
    files: HashMap<String, String>,
    long_lived: Vec<String>,
    rng: Rng,
    serial: usize,
    mark: usize,
    main: usize,
}

impl History {
    fn new(long_lived: &[String]) -> History {
        History {
            files: HashMap::new(),
            long_lived: long_lived.to_vec(),
            rng: Rng(0x5eed),
            serial: 0,
            mark: 0,
            main: 0,
        }
    }

    fn line(&mut self) -> String {
        self.serial += 1;
        let n = self.serial;
        let word = WORDS[self.rng.below(WORDS.len())];
        match self.rng.below(6) {
            0 => "}".to_owned(),
            1 => String::new(),
            2 => format!("\t{word}{n} := load{word}(ctx, {n})"),
            3 => format!("func handle{word}{n}(ctx context.Context) error {{"),
            4 => format!("\tif err := s.{word}.Apply(ctx, {n}); err != nil {{"),
            _ => format!("\t// keep the {word} until the next pass ({n})"),
        }
    }

    fn time(&self) -> i64 {
        START + self.mark as i64 * STEP
    }

    /// Edit a few lines of `path` (a long-lived file), in `files`.
    fn edit(&mut self, files: &mut HashMap<String, String>, path: &str) {
        let mut lines: Vec<String> = files[path].lines().map(str::to_owned).collect();
        let at = self.rng.below(lines.len().max(1));
        for i in 0..1 + self.rng.below(8) {
            let line = self.line();
            if self.rng.below(3) == 0 || at + i >= lines.len() {
                lines.insert((at + i).min(lines.len()), line);
            } else {
                lines[at + i] = line;
            }
        }
        if lines.len() > 1_600 {
            let cut = self.rng.below(lines.len() - 20);
            lines.drain(cut..cut + 12);
        }
        files.insert(path.to_owned(), lines.join("\n") + "\n");
    }

    /// A commit on `branch` from `from`, merging `merge` if given, with `changed` files.
    fn commit(
        &mut self,
        out: &mut impl Write,
        branch: &str,
        from: usize,
        merge: Option<usize>,
        message: &str,
        changed: &[(String, String)],
    ) -> std::io::Result<usize> {
        self.mark += 1;
        let time = self.time();
        let author = AUTHORS[self.rng.below(AUTHORS.len())];
        writeln!(out, "commit refs/heads/{branch}\nmark :{}", self.mark)?;
        writeln!(
            out,
            "author {author} {} +0000",
            time - 60 * self.rng.below(90) as i64
        )?;
        writeln!(out, "committer {author} {time} +0000")?;
        writeln!(out, "data {}\n{message}", message.len())?;
        if from > 0 {
            writeln!(out, "from :{from}")?;
        }
        if let Some(merge) = merge {
            writeln!(out, "merge :{merge}")?;
        }
        for (path, content) in changed {
            writeln!(
                out,
                "M 100644 inline {path}\ndata {}\n{content}",
                content.len()
            )?;
        }
        Ok(self.mark)
    }

    /// The stream: a first commit with every file, then commits on main and pull requests,
    /// the sessions' among them; the time each session's transcript is moved to end at.
    fn write(mut self, out: &mut impl Write, sessions: &[Session]) -> std::io::Result<Vec<i64>> {
        let mut first = Vec::new();
        for path in self.long_lived.clone() {
            let content: String = (0..600 + self.rng.below(600))
                .map(|_| self.line() + "\n")
                .collect();
            first.push((path, content));
        }
        for f in 0..SMALL_FILES {
            let content = format!("package mod{}\n\n{}\n", f % 60, self.line());
            first.push((format!("internal/mod{}/file{f}.go", f % 60), content));
        }
        self.files = first.iter().cloned().collect();
        self.main = self.commit(out, "main", 0, None, "Initial import", &first)?;
        // Sessions take their places in the later 60% of the history.
        let places: Vec<usize> = (0..sessions.len())
            .map(|i| COMMITS * 2 / 5 + i * (COMMITS * 3 / 5) / sessions.len())
            .collect();
        let mut placed = Vec::new();
        let mut next = 0;
        let mut pr = 0;
        while self.mark < COMMITS {
            if next < sessions.len() && self.mark >= places[next] {
                placed.push(self.time() + STEP / 2);
                self.session(out, &sessions[next])?;
                next += 1;
            } else if self.rng.below(8) == 0 {
                pr += 1;
                self.pull_request(out, pr)?;
            } else {
                let changed = self.main_change();
                let message = format!("Update {}", changed[0].0);
                self.main = self.commit(out, "main", self.main, None, &message, &changed)?;
            }
        }
        while next < sessions.len() {
            placed.push(self.time() + STEP / 2);
            self.session(out, &sessions[next])?;
            next += 1;
        }
        writeln!(out, "done")?;
        Ok(placed)
    }

    /// A change on main: two in five edit a long-lived file, the others a small one.
    fn main_change(&mut self) -> Vec<(String, String)> {
        let mut files = std::mem::take(&mut self.files);
        let path = if self.rng.below(5) < 2 {
            let path = self.long_lived[self.rng.below(self.long_lived.len())].clone();
            self.edit(&mut files, &path);
            path
        } else {
            let f = self.rng.below(SMALL_FILES);
            let path = format!("internal/mod{}/file{f}.go", f % 60);
            let line = self.line();
            files.get_mut(&path).unwrap().push_str(&(line + "\n"));
            path
        };
        let content = files[&path].clone();
        self.files = files;
        vec![(path, content)]
    }

    /// A branch of two to six commits on long-lived files while main moves on elsewhere, then
    /// merged with a merge commit.
    fn pull_request(&mut self, out: &mut impl Write, pr: usize) -> std::io::Result<()> {
        let mut branch = self.files.clone();
        let mut touched: BTreeMap<String, ()> = BTreeMap::new();
        let mut tip = self.main;
        for k in 0..2 + self.rng.below(5) {
            let path = self.long_lived[self.rng.below(self.long_lived.len())].clone();
            self.edit(&mut branch, &path);
            touched.insert(path.clone(), ());
            let changed = vec![(path.clone(), branch[&path].clone())];
            tip = self.commit(
                out,
                "pr",
                tip,
                None,
                &format!("pr {pr}: step {k} in {path}"),
                &changed,
            )?;
            if self.rng.below(3) == 0 {
                let f = self.rng.below(SMALL_FILES);
                let path = format!("internal/mod{}/file{f}.go", f % 60);
                let line = self.line();
                self.files.get_mut(&path).unwrap().push_str(&(line + "\n"));
                let changed = vec![(path.clone(), self.files[&path].clone())];
                self.main = self.commit(
                    out,
                    "main",
                    self.main,
                    None,
                    &format!("Fix {path}"),
                    &changed,
                )?;
            }
        }
        self.merge(
            out,
            tip,
            &branch,
            touched.keys(),
            &format!("Merge pull request #{pr}"),
        )
    }

    /// A merge of `tip` into main: the branch's files as the branch has them.
    fn merge<'a>(
        &mut self,
        out: &mut impl Write,
        tip: usize,
        branch: &HashMap<String, String>,
        touched: impl Iterator<Item = &'a String>,
        message: &str,
    ) -> std::io::Result<()> {
        let changed: Vec<(String, String)> =
            touched.map(|p| (p.clone(), branch[p].clone())).collect();
        for (path, content) in &changed {
            self.files.insert(path.clone(), content.clone());
        }
        self.main = self.commit(out, "main", self.main, Some(tip), message, &changed)?;
        Ok(())
    }

    /// What a session wrote, as one commit on a branch merged into main.
    fn session(&mut self, out: &mut impl Write, session: &Session) -> std::io::Result<()> {
        let mut branch = self.files.clone();
        let mut touched: BTreeMap<String, ()> = BTreeMap::new();
        for change in &session.changes {
            let path = change.path().to_owned();
            let now = branch.entry(path.clone()).or_default();
            match change {
                Change::Whole(_, content) => *now = content.clone(),
                Change::Edit(_, old, new) => {
                    match now.find(old.as_str()).filter(|_| !old.is_empty()) {
                        Some(at) => now.replace_range(at..at + old.len(), new),
                        None => {
                            now.push_str(new);
                            now.push('\n');
                        }
                    }
                }
            }
            touched.insert(path, ());
        }
        let changed: Vec<(String, String)> = touched
            .keys()
            .map(|p| (p.clone(), branch[p].clone()))
            .collect();
        let message = session
            .prompt
            .as_deref()
            .and_then(|p| p.lines().next())
            .unwrap_or("Session work")
            .chars()
            .take(60)
            .collect::<String>();
        let tip = self.commit(out, "pr", self.main, None, &message, &changed)?;
        self.merge(
            out,
            tip,
            &branch,
            touched.keys(),
            &format!("Merge session {}", &session.id[..8]),
        )
    }
}
