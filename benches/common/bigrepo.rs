//! A large repository for benchmarks, made with `git fast-import`: 50,000 commits on `main`,
//! four long-lived files of about 1,400 lines each edited thousands of times, 2,000 small
//! files, and a note with reasoning events on every tenth commit (5,000 notes on
//! `refs/notes/agent-context`). Built once under `target/tmp/` and reused: a marker file records
//! the parameters it was built with.
//!
//! Deterministic: the same stream, the same commit ids, on every machine.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::hermetic::{hermetic, succeeded};

pub const COMMITS: usize = 50_000;
pub const NOTE_EVERY: usize = 10;
pub const LONG_LIVED: [&str; 4] = [
    "src/core/engine.rs",
    "src/core/parser.rs",
    "src/render/layout.rs",
    "src/net/session.rs",
];
const LONG_LINES: usize = 1_200;
const SMALL_FILES: usize = 2_000;
const START: i64 = 1_577_836_800; // 2020-01-01

/// Words the events and the code are made of, so that prompts can match some of them.
pub const TOPICS: [&str; 24] = [
    "cache",
    "retry",
    "timeout",
    "parser",
    "token",
    "layout",
    "session",
    "pool",
    "index",
    "buffer",
    "stream",
    "config",
    "logging",
    "metrics",
    "schema",
    "migration",
    "queue",
    "scheduler",
    "encoder",
    "checksum",
    "snapshot",
    "compaction",
    "router",
    "handshake",
];
const VERBS: [&str; 8] = [
    "use", "keep", "replace", "bound", "split", "merge", "drop", "cache",
];
const OPTIONS: [&str; 8] = [
    "a hash map",
    "a btree",
    "a ring buffer",
    "an arena",
    "a channel",
    "a mutex",
    "a lock-free list",
    "a background thread",
];

/// A small deterministic generator (xorshift).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

pub struct BigRepo {
    pub dir: PathBuf,
    pub home: PathBuf,
}

/// The repository, built if it is not there yet (under a minute on this machine), with its
/// graph and index made again.
pub fn get(bin: &str) -> BigRepo {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bigrepo");
    let dir = base.join("repo");
    let home = base.join("home");
    let marker = base.join("built");
    let params = format!("v1 {COMMITS} {NOTE_EVERY} {LONG_LINES} {SMALL_FILES}\n");
    if fs::read_to_string(&marker).ok().as_deref() == Some(params.as_str()) {
        let repo = BigRepo { dir, home };
        rebuild(&repo, bin);
        return repo;
    }
    let _ = fs::remove_dir_all(&base);
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(&home).unwrap();
    let repo = BigRepo { dir, home };
    let started = std::time::Instant::now();
    repo.git(&["init", "-q", "-b", "main"]);
    repo.git(&["config", "gc.auto", "0"]);
    let mut child = repo
        .command("git")
        .args(["fast-import", "--quiet", "--done"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    {
        let mut out = BufWriter::with_capacity(1 << 20, child.stdin.take().unwrap());
        stream(&mut out).expect("fast-import reads the stream");
        out.flush().unwrap();
    }
    assert!(child.wait().unwrap().success(), "git fast-import failed");
    repo.git(&["reset", "-q", "--hard", "main"]);
    // What `git maintenance` gives a repository: git's blame at its best.
    repo.git(&["commit-graph", "write", "--reachable", "--changed-paths"]);
    eprintln!(
        "built {} in {:.1} s",
        repo.dir.display(),
        started.elapsed().as_secs_f64()
    );
    fs::write(&marker, params).unwrap();
    rebuild(&repo, bin);
    repo
}

/// The graph and the index, made from the notes by the binary being measured (their formats
/// are its own).
fn rebuild(repo: &BigRepo, bin: &str) {
    let started = std::time::Instant::now();
    let out = succeeded(repo.command(bin).arg("rebuild"));
    println!(
        "rebuild (graph and index from {} notes): {:.1} s: {}",
        COMMITS / NOTE_EVERY,
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).trim()
    );
}

impl BigRepo {
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        hermetic(cmd.current_dir(&self.dir), &self.home);
        cmd
    }

    pub fn git(&self, args: &[&str]) -> String {
        String::from_utf8(succeeded(self.command("git").args(args)).stdout).unwrap()
    }
}

/// A line of code about `topic`, unique by `n`.
fn code_line(rng: &mut Rng, n: u64) -> String {
    let topic = rng.pick(&TOPICS);
    match rng.below(6) {
        0 => "}".to_owned(),
        1 => String::new(),
        2 => format!("    let {topic}_{n} = {}({topic}, {n});", rng.pick(&VERBS)),
        3 => format!("fn {topic}_step_{n}(input: &[u8]) -> Result<(), Error> {{"),
        4 => format!(
            "        self.{topic}.{}(&mut state, {n})?;",
            rng.pick(&VERBS)
        ),
        _ => format!(
            "    // {} the {topic} before the next pass ({n})",
            rng.pick(&VERBS)
        ),
    }
}

/// The fast-import stream: commits, then one notes commit.
fn stream(out: &mut impl Write) -> std::io::Result<()> {
    let mut rng = Rng::new(0x5eed);
    let mut serial: u64 = 0;
    let mut files: Vec<Vec<String>> = LONG_LIVED
        .iter()
        .map(|_| {
            (0..LONG_LINES)
                .map(|_| {
                    serial += 1;
                    code_line(&mut rng, serial)
                })
                .collect()
        })
        .collect();
    let mut notes: Vec<(usize, String)> = Vec::new();
    for n in 1..=COMMITS {
        let time = START + n as i64 * 600;
        // Four in ten commits edit a long-lived file; the others a small one.
        let (path, content) = if rng.below(10) < 4 || n == 1 {
            let f = rng.below(LONG_LIVED.len());
            let lines = &mut files[f];
            let at = rng.below(lines.len());
            let changed = 1 + rng.below(6);
            for i in 0..changed {
                serial += 1;
                let line = code_line(&mut rng, serial);
                if rng.below(3) == 0 {
                    lines.insert((at + i).min(lines.len()), line);
                } else if at + i < lines.len() {
                    lines[at + i] = line;
                }
            }
            if lines.len() > LONG_LINES + 200 {
                let cut = rng.below(lines.len() - 10);
                lines.drain(cut..cut + 5);
            }
            (LONG_LIVED[f].to_owned(), lines.join("\n") + "\n")
        } else {
            let f = rng.below(SMALL_FILES);
            serial += 1;
            let body = format!(
                "// module {f}\npub const VERSION: u64 = {serial};\n{}\n",
                code_line(&mut rng, serial)
            );
            (format!("src/mod{}/file{f}.rs", f % 40), body)
        };
        let message = format!("change {path} ({n})");
        writeln!(out, "commit refs/heads/main\nmark :{n}")?;
        writeln!(out, "committer Bench <bench@example.com> {time} +0000")?;
        writeln!(out, "data {}\n{message}", message.len())?;
        writeln!(
            out,
            "M 100644 inline {path}\ndata {}\n{content}",
            content.len()
        )?;
        if n % NOTE_EVERY == 0 {
            notes.push((n, note(&mut rng, n, &path, time)));
        }
    }
    let time = START + (COMMITS as i64 + 1) * 600;
    let message = "agent-context: benchmark notes";
    writeln!(out, "commit refs/notes/agent-context")?;
    writeln!(out, "committer Bench <bench@example.com> {time} +0000")?;
    writeln!(out, "data {}\n{message}", message.len())?;
    for (mark, text) in notes {
        writeln!(out, "N inline :{mark}\ndata {}\n{text}", text.len())?;
    }
    writeln!(out, "done")
}

/// The note of commit `n`: one to three reasoning events of one session, about `path`.
fn note(rng: &mut Rng, n: usize, path: &str, time: i64) -> String {
    let session = format!("bench-session-{:04}", n / 50);
    let timestamp = git_agent_context::event::time::rfc3339(time - 60);
    let mut lines = Vec::new();
    for k in 0..1 + rng.below(3) {
        let topic = rng.pick(&TOPICS);
        let other = rng.pick(&TOPICS);
        let (kind, summary) = match k {
            0 => (
                "decision",
                format!(
                    "{} the {topic} with {} instead of {} so that the {other} stays fast",
                    rng.pick(&VERBS),
                    rng.pick(&OPTIONS),
                    rng.pick(&OPTIONS)
                ),
            ),
            1 => (
                "rejection",
                format!(
                    "{} won't work for the {topic}: the {other} needs ordered access",
                    rng.pick(&OPTIONS)
                ),
            ),
            _ => (
                "tradeoff",
                format!("the {topic} costs memory but saves a pass over the {other}"),
            ),
        };
        let source = format!("msg_{n}_{k}");
        let id = git_agent_context::event::event_id(
            &session,
            &source,
            serde_json::from_value(serde_json::json!(kind)).unwrap(),
        );
        let event = serde_json::json!({
            "kind": kind,
            "summary": summary,
            "id": id,
            "schema_version": 1,
            "session_id": session,
            "timestamp": timestamp,
            "origin": "text",
            "source": source,
            "rationale": summary,
            "files_affected": [path],
        });
        lines.push(event.to_string());
    }
    lines.sort();
    lines.join("\n") + "\n"
}
