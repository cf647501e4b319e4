//! `demo`: a tour on real sessions, in a few seconds, with nothing written outside a temporary
//! folder and no network. Two real Claude Code sessions of the public repository entireio/cli
//! (MIT licence; fixtures/PROVENANCE.md) are embedded in the binary. Each wrote a document; the
//! demo makes a scratch repository, commits each document as its session left it (its writes
//! and edits replayed), extracts the two sessions, and runs the commands a user would: `why`,
//! `query`, the brief a new session gets, and `review` of the commits.
//!
//! The commands run as this binary, in the scratch repository, with git's global and system
//! configuration left out, so that nothing of the user's (hooks, signing) runs in it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, anyhow};
use serde_json::{Value, json};

use crate::cli::{CmdResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Leave the scratch repository in place to explore it (its path is printed).
    #[arg(long)]
    keep: bool,
}

/// A session embedded for the demo, and the commit its work becomes; in the order they ran.
struct Session {
    transcript: &'static str,
    source: &'static str,
    subject: &'static str,
}

const SESSIONS: [Session; 2] = [
    Session {
        transcript: include_str!("../../fixtures/entireio-cli/76/62d755ef9f/2/full.jsonl"),
        source: "entireio/cli, entire/checkpoints/v1: 76/62d755ef9f/2/full.jsonl",
        subject: "docs: orphaned sessions after a reset",
    },
    Session {
        transcript: include_str!("../../fixtures/entireio-cli/1e/868c83dbb7/0/full.jsonl"),
        source: "entireio/cli, entire/checkpoints/v1: 1e/868c83dbb7/0/full.jsonl",
        subject: "docs: shadow branches for overlapping sessions",
    },
];

const FILE: &str = "docs/architecture/shadow-branch-overlap.md";
const PROMPT: &str = "Should a new session continue on an old session's shadow branch?";

pub fn run(args: Args, out: &mut dyn Write) -> CmdResult {
    let scratch = scratch_dir()?;
    let result = tour(&scratch, out);
    if args.keep {
        writeln!(
            out,
            "\nThe scratch repository is kept: {} (remove {} when done)",
            scratch.join("repo").display(),
            scratch.display()
        )?;
    } else {
        let _ = fs::remove_dir_all(&scratch);
    }
    result
}

fn tour(scratch: &Path, out: &mut dyn Write) -> CmdResult {
    let repo = scratch.join("repo");
    writeln!(
        out,
        "A scratch repository from two real Claude Code sessions of entireio/cli (MIT licence, \
         Copyright (c) 2026 Entire Inc.), in {}.",
        repo.display()
    )?;
    let (first, transcripts) = make_repository(scratch, &repo, out)?;
    show(&repo, scratch, &first, &transcripts, out)
}

/// The scratch repository at `repo` (its hooks turned off), with a commit per session of what
/// the session wrote, dated at its end; the first commit and the folder of the transcripts.
fn make_repository(
    scratch: &Path,
    repo: &Path,
    out: &mut dyn Write,
) -> Result<(String, PathBuf), Failure> {
    fs::create_dir_all(repo)?;
    git(repo, &["init", "-q", "-b", "main"])?;
    let hooks = scratch.join("no-hooks");
    fs::create_dir_all(&hooks)?;
    for (key, value) in [
        ("user.name", "Demo"),
        ("user.email", "demo@example.com"),
        ("commit.gpgsign", "false"),
        ("core.hooksPath", &*hooks.to_string_lossy()),
    ] {
        git(repo, &["config", key, value])?;
    }
    fs::write(
        repo.join("README.md"),
        "# demo\n\nA scratch repository made by `git agent-context demo`.\n",
    )?;
    // Dated before the sessions, as the repository they ran in was.
    commit(repo, "Start the demo repository", "2026-01-01T00:00:00Z")?;
    let first = git(repo, &["rev-parse", "HEAD"])?;
    let transcripts = scratch.join("transcripts");
    fs::create_dir_all(&transcripts)?;
    for session in &SESSIONS {
        let (id, end) = replay(session.transcript, repo)?;
        let path = transcripts.join(format!("{id}.jsonl"));
        fs::write(&path, session.transcript)?;
        commit(repo, session.subject, &end)?;
        writeln!(
            out,
            "  session {} ({}) -> commit \"{}\"",
            &id[..8.min(id.len())],
            session.source,
            session.subject
        )?;
    }
    Ok((first, transcripts))
}

/// What the tour shows, step by step, on `repo`.
fn show(
    repo: &Path,
    scratch: &Path,
    first: &str,
    transcripts: &Path,
    out: &mut dyn Write,
) -> CmdResult {
    let mut extract = vec!["extract".to_owned()];
    for entry in fs::read_dir(transcripts)? {
        extract.push("--transcript".to_owned());
        extract.push(entry?.path().to_string_lossy().into_owned());
    }
    step(
        out,
        repo,
        "Extract both sessions: their reasoning goes into notes on the commits they made.",
        &extract,
    )?;
    step(
        out,
        repo,
        "Why is this file the way it is? The commits that own its lines, and their reasoning:",
        &["why".to_owned(), FILE.to_owned()],
    )?;
    step(
        out,
        repo,
        "What bears on a new task? The reasoning kept, packed into a token budget:",
        &["query".to_owned(), PROMPT.to_owned()],
    )?;
    section(
        out,
        "What a new Claude Code session in this repository is told as it starts (SessionStart):",
        "hook SessionStart",
    )?;
    let payload = json!({
        "session_id": "demo-new-session",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": repo,
        "transcript_path": scratch.join("demo-new-session.jsonl"),
    });
    let answer = ours(
        repo,
        &["hook".to_owned(), "SessionStart".to_owned()],
        Some(payload.to_string()),
    )?;
    let answer: Value = serde_json::from_slice(&answer).unwrap_or_default();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("(nothing)");
    writeln!(out, "{context}")?;
    // Piped, as every command here is: neither paged nor coloured.
    step(
        out,
        repo,
        "A reviewer's view of the two commits: each file's diff, the reasoning beside it.",
        &["review".to_owned(), format!("{first}..HEAD")],
    )?;
    writeln!(
        out,
        "\nIn your own repository: `git agent-context install`, then work with Claude Code as \
         usual; `git agent-context status` and `doctor` show what is set up."
    )?;
    Ok(())
}

/// The most lines of a command's output the tour shows.
const EXCERPT_LINES: usize = 30;

/// A command's output, its first [`EXCERPT_LINES`] lines when it is longer.
fn excerpt(out: &mut dyn Write, text: &[u8]) -> CmdResult {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(EXCERPT_LINES) {
        writeln!(out, "{line}")?;
    }
    if lines.len() > EXCERPT_LINES {
        writeln!(
            out,
            "[… {} more lines: `demo --keep` keeps the repository to run it whole]",
            lines.len() - EXCERPT_LINES
        )?;
    }
    Ok(())
}

/// Say what comes, run `args` in `repo` and show what it printed.
fn step(out: &mut dyn Write, repo: &Path, say: &str, args: &[String]) -> CmdResult {
    section(out, say, &args_line(args))?;
    excerpt(out, &ours(repo, args, None)?)
}

fn section(out: &mut dyn Write, say: &str, command: &str) -> CmdResult {
    writeln!(out, "\n== {say}\n$ git agent-context {command}")?;
    Ok(())
}

fn args_line(args: &[String]) -> String {
    args.iter()
        .map(|a| match a.contains(' ') {
            true => format!("{a:?}"),
            false => a.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A new folder of our own in the temporary folder.
fn scratch_dir() -> Result<PathBuf, Failure> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "git-agent-context-demo-{}-{nanos}-{n}",
            std::process::id()
        ));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Failure::failed(
                    anyhow!(e).context(format!("cannot make a folder in {}", base.display())),
                ));
            }
        }
    }
    Err(Failure::failed(anyhow!(
        "cannot make a folder of our own in {}",
        base.display()
    )))
}

/// Write into `repo` the files the session created, as its writes and edits left them; its id
/// and the time of its last line.
fn replay(transcript: &str, repo: &Path) -> Result<(String, String), Failure> {
    let (mut id, mut end, mut cwd) = (String::new(), String::new(), String::new());
    let mut files: Vec<(String, String)> = Vec::new();
    for line in transcript.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(s) = entry["sessionId"].as_str() {
            id = s.to_owned();
        }
        if let Some(t) = entry["timestamp"].as_str() {
            end = t.to_owned();
        }
        if cwd.is_empty()
            && let Some(c) = entry["cwd"].as_str()
        {
            cwd = c.to_owned();
        }
        if entry["type"] != "assistant" || entry["isSidechain"] == true {
            continue;
        }
        let blocks = entry["message"]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
            let input = &block["input"];
            let Some(path) = input["file_path"].as_str() else {
                continue;
            };
            let Some(name) = path
                .strip_prefix(&cwd)
                .map(|p| p.trim_start_matches('/').to_owned())
            else {
                continue;
            };
            let edits = match block["name"].as_str() {
                Some("Write") => {
                    let content = input["content"].as_str().unwrap_or_default().to_owned();
                    match files.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, text)) => *text = content,
                        None => files.push((name, content)),
                    }
                    continue;
                }
                Some("Edit") => vec![input.clone()],
                Some("MultiEdit") => input["edits"].as_array().cloned().unwrap_or_default(),
                _ => continue,
            };
            // Only a file the session wrote whole can be replayed.
            if let Some((_, text)) = files.iter_mut().find(|(n, _)| *n == name) {
                for edit in edits {
                    let old = edit["old_string"].as_str().unwrap_or_default();
                    let new = edit["new_string"].as_str().unwrap_or_default();
                    if old.is_empty() || !text.contains(old) {
                        continue;
                    }
                    *text = match edit["replace_all"] == true {
                        true => text.replace(old, new),
                        false => text.replacen(old, new, 1),
                    };
                }
            }
        }
    }
    if id.is_empty() || files.is_empty() {
        return Err(Failure::failed(anyhow!(
            "an embedded session has no id or wrote no file"
        )));
    }
    for (name, text) in files {
        let path = repo.join(&name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, text)?;
    }
    Ok((id, end))
}

/// Commit everything in `repo` as made at `at`.
fn commit(repo: &Path, subject: &str, at: &str) -> CmdResult {
    git(repo, &["add", "-A"])?;
    let mut command = git_command(repo);
    command
        .args(["commit", "-q", "-m", subject])
        .env("GIT_AUTHOR_DATE", at)
        .env("GIT_COMMITTER_DATE", at);
    check(command, "git commit")?;
    Ok(())
}

/// What points git at another repository than the one it runs in (a demo started from a git
/// hook has them set).
const GIT_LOCATIONS: [&str; 5] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
];

fn git_command(repo: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    for var in GIT_LOCATIONS {
        command.env_remove(var);
    }
    command
}

fn git(repo: &Path, args: &[&str]) -> Result<String, Failure> {
    let mut command = git_command(repo);
    command.args(args);
    let out = check(command, &format!("git {}", args.join(" ")))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// This binary run with `args` in `repo`, its output; with `input` on its stdin.
fn ours(repo: &Path, args: &[String], input: Option<String>) -> Result<Vec<u8>, Failure> {
    let exe = std::env::current_exe().context("cannot find this binary")?;
    let mut command = Command::new(exe);
    for var in GIT_LOCATIONS {
        command.env_remove(var);
    }
    let mut child = command
        .current_dir(repo)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_PAGER", "cat")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run this binary")?;
    let mut stdin = child.stdin.take().expect("piped");
    if let Some(input) = input {
        stdin.write_all(input.as_bytes())?;
    }
    drop(stdin);
    let out = child.wait_with_output()?;
    // `query` exits 1 when nothing bears on the prompt: its output says so.
    if !out.status.success() && out.stdout.is_empty() {
        return Err(Failure::failed(anyhow!(
            "git agent-context {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

fn check(mut command: Command, what: &str) -> Result<Vec<u8>, Failure> {
    let out = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what} (is git installed?)"))?;
    if !out.status.success() {
        return Err(Failure::failed(anyhow!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}
