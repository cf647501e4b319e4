//! Writing notes, and what a commit pays for the post-commit hook.
//!
//! 1. Attaching 10,000 events to 1,000 commits in one run (one notes commit), against a shell
//!    loop of `git notes append` doing the same, one process per event.
//! 2. The post-commit hook on that repository (1,000 commits, 10,000 events in notes): each
//!    round appends a turn to a session's transcript (already read up to then), makes a commit
//!    and times `git agent-context hook post-commit` as git would run it, with
//!    `CLAUDE_CODE_SESSION_ID` set: what the commit waits for; the linking it leaves to a
//!    process of its own ends before the next round, and the last round's reasoning must be on
//!    HEAD.
//!
//! Run: `cargo bench --bench notes` (`-- --events N` for another count; `--no-git-loop` skips
//! the slow shell loop).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git_agent_context::event::note::encode;
use git_agent_context::event::{Event, Kind, Origin};
use git_agent_context::store::Store;
use git_agent_context::store::notes::{self, ObjectId};
use hermetic::{hermetic, succeeded};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/input.rs"]
mod input;
#[path = "common/settle.rs"]
mod settle;

const BIN: &str = env!("CARGO_BIN_EXE_git-agent-context");
const COMMITS: usize = 1000;

fn main() {
    let mut events: usize = 10_000;
    let mut git_loop = true;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--events" => {
                events = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--events takes a number")
            }
            "--no-git-loop" => git_loop = false,
            _ => {}
        }
    }
    // A folder of its own, removed at the end: removing the last run's (tens of thousands of
    // files) just before writing makes creating files slow for a while (ext4 avoids reusing
    // the inodes of files deleted moments ago) and would be measured here.
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-notes");
    let data = base.join(std::process::id().to_string());
    let _ = fs::remove_dir_all(&data);
    let repo = data.join("repo");
    let home = data.join("home");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(&home).unwrap();
    let git = |args: &[&str]| git_in(&repo, &home, args);
    git(&["init", "-q", "-b", "main"]);
    // No automatic gc: ten thousand `git notes append` would start one in the background,
    // whose locks would then fail the commits of the hook rounds.
    git(&["config", "gc.auto", "0"]);
    let commits = make_commits(&repo, &home, COMMITS);
    let batches = make_events(&commits, events);

    let store = Store::discover(&repo).unwrap();
    let start = Instant::now();
    let merged = notes::attach_all(&store, &batches).unwrap();
    let ours = start.elapsed();
    assert_eq!(merged.added, events);
    println!(
        "attach {events} events to {} commits, one run: {:.3} s",
        commits.len(),
        ours.as_secs_f64()
    );

    if git_loop {
        let theirs = git_notes_append_loop(&repo, &home, &batches);
        // Same notes, byte for byte, as git shows them.
        for (commit, _) in batches.iter().step_by(97) {
            let a = git(&["notes", "--ref=agent-context", "show", &commit.to_string()]);
            let b = git(&["notes", "--ref=bench-loop", "show", &commit.to_string()]);
            assert_eq!(a, b, "the two ways wrote different notes on {commit}");
        }
        println!(
            "`git notes append` shell loop, one process per event: {:.1} s ({:.2} ms per event)",
            theirs.as_secs_f64(),
            theirs.as_secs_f64() * 1e3 / events as f64
        );
        println!(
            "ratio: {:.0}x faster",
            theirs.as_secs_f64() / ours.as_secs_f64()
        );
    }

    post_commit_hook(&repo, &home);
    let _ = fs::remove_dir_all(&data);
}

fn git_in(repo: &Path, home: &Path, args: &[&str]) -> String {
    String::from_utf8(succeeded(git_command(repo, home).args(args)).stdout).unwrap()
}

fn git_command(repo: &Path, home: &Path) -> Command {
    let mut cmd = Command::new("git");
    hermetic(&mut cmd, home);
    cmd.current_dir(repo);
    cmd
}

/// `n` commits on main, each changing one file, made with `git fast-import` (each commit's
/// parent is the branch's tip before it).
fn make_commits(repo: &Path, home: &Path, n: usize) -> Vec<ObjectId> {
    let mut script = String::new();
    for i in 0..n {
        let content = format!("version {i}\n");
        script.push_str(&format!(
            "commit refs/heads/main\ncommitter Bench <bench@example.com> {} +0000\ndata {}\nc{i}\n",
            1_700_000_000 + i,
            format!("c{i}").len()
        ));
        script.push_str(&format!(
            "M 644 inline f{}.txt\ndata {}\n{content}\n",
            i % 50,
            content.len()
        ));
    }
    let out = input::output_with(
        git_command(repo, home).args(["fast-import", "--quiet"]),
        script.as_bytes(),
    );
    assert!(out.status.success(), "fast-import");
    git_in(repo, home, &["checkout", "-q", "-f", "main"]);
    git_in(repo, home, &["rev-list", "--reverse", "main"])
        .lines()
        .map(|l| ObjectId::from_hex(l.as_bytes()).unwrap())
        .collect()
}

/// `total` events spread evenly over `commits`, as a session's would be.
fn make_events(commits: &[ObjectId], total: usize) -> Vec<(ObjectId, Vec<Event>)> {
    let mut batches: Vec<(ObjectId, Vec<Event>)> =
        commits.iter().map(|c| (*c, Vec::new())).collect();
    let kinds = [Kind::Decision, Kind::Rejection, Kind::Tradeoff, Kind::Write];
    for i in 0..total {
        let kind = kinds[i % kinds.len()];
        let event = Event {
            rationale: format!(
                "We weighed option {i} against the alternatives because the cache must stay \
                 bounded; the simpler map won."
            ),
            files_affected: vec![format!("src/f{}.rs", i % 50)],
            ..Event::new(
                &format!("session-{}", i / 500),
                &format!("msg_{i:06}"),
                kind,
                Origin::Text,
                &format!("{kind} number {i}: use a bounded map for the cache"),
                "2026-01-01T00:00:00Z",
            )
        };
        let slot = i % commits.len();
        batches[slot].1.push(event);
    }
    batches
}

/// The same notes through `git notes append`, one process per event, in one shell loop.
fn git_notes_append_loop(repo: &Path, home: &Path, batches: &[(ObjectId, Vec<Event>)]) -> Duration {
    // Each event's line, in the order our note sorts them, so the results compare equal.
    let mut input = String::new();
    for (commit, events) in batches {
        let note = String::from_utf8(encode(events)).unwrap();
        for line in note.lines() {
            input.push_str(&format!("{commit} {line}\n"));
        }
    }
    let input_path = repo.parent().unwrap().join("append-loop.txt");
    fs::write(&input_path, input).unwrap();
    let script = r#"while read -r commit line; do
  git notes --ref=bench-loop append --no-separator -m "$line" "$commit" || exit 1
done < "$1""#;
    let start = Instant::now();
    let status = {
        let mut cmd = Command::new("sh");
        hermetic(&mut cmd, home);
        cmd.current_dir(repo)
            .args(["-c", script, "sh", input_path.to_str().unwrap()])
            .status()
            .unwrap()
    };
    assert!(status.success(), "the git notes loop failed");
    start.elapsed()
}

/// Time the post-commit hook as a session commits, round after round.
fn post_commit_hook(repo: &Path, home: &Path) {
    let session = "b3c6d1e2-0000-4000-8000-000000000001";
    let transcript: PathBuf = home.join("session.jsonl");
    // History: a real session, then one turn per round.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/claude-code-2.1.330/ttl-cache-session-then-compact.jsonl");
    let mut text = fs::read_to_string(fixture).unwrap();
    text = text.replace("3d06a160-5483-464a-94bc-4a29f10eaa67", session);
    fs::write(&transcript, &text).unwrap();
    succeeded(binary(repo, home).args(["extract", "--transcript", transcript.to_str().unwrap()]));

    let rounds = 30;
    let mut hook = Vec::new();
    let mut commit = Vec::new();
    for round in 0..rounds {
        let file = format!("src/round{round}.rs");
        fs::create_dir_all(repo.join("src")).unwrap();
        text.push_str(&turn(session, round, &repo.join(&file)));
        fs::write(&transcript, &text).unwrap();
        fs::write(repo.join(&file), format!("// round {round}\n")).unwrap();
        git_in(repo, home, &["add", &file]);
        let start = Instant::now();
        git_in(
            repo,
            home,
            &["commit", "-q", "-m", &format!("round {round}")],
        );
        commit.push(start.elapsed());
        let start = Instant::now();
        let out = binary(repo, home)
            .args(["hook", "post-commit"])
            .env("CLAUDE_CODE_SESSION_ID", session)
            .output()
            .unwrap();
        hook.push(start.elapsed());
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
        // The linking the hook left to a process of its own, done before the next turn.
        settle::finished(&repo.join(".git/agent-context"));
    }
    let head = git_in(repo, home, &["rev-parse", "HEAD"]);
    let note = git_in(
        repo,
        home,
        &["notes", "--ref=agent-context", "show", head.trim()],
    );
    assert!(
        note.contains("flat module for round 29"),
        "the last round's reasoning is on HEAD"
    );
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    hook.sort();
    commit.sort();
    println!(
        "post-commit hook ({rounds} commits, 1,000-commit repo with 10,000 events in notes): \
         median {:.1} ms, p90 {:.1} ms, max {:.1} ms (git commit itself: median {:.1} ms)",
        ms(&hook[rounds / 2]),
        ms(&hook[rounds * 9 / 10]),
        ms(&hook[rounds - 1]),
        ms(&commit[rounds / 2])
    );
}

fn binary(repo: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    hermetic(&mut cmd, home);
    cmd.current_dir(repo);
    cmd
}

/// One turn of the session: a prompt, a decision, an edit of `file`, its result.
fn turn(session: &str, round: usize, file: &Path) -> String {
    let at = |s: usize| format!("2026-02-01T10:{:02}:{:02}Z", round % 60, s);
    let lines = [
        serde_json::json!({"type": "user", "uuid": format!("p{round}"), "sessionId": session,
            "timestamp": at(0), "message": {"role": "user", "content": format!("round {round}: add the next step")}}),
        serde_json::json!({"type": "assistant", "uuid": format!("a{round}"), "sessionId": session,
            "timestamp": at(5), "message": {"id": format!("msg_round{round}"), "model": "claude-bench",
            "role": "assistant", "content": [
                {"type": "text", "text": format!("I'll go with a flat module for round {round} because nesting buys nothing here.")},
                {"type": "tool_use", "id": format!("toolu_r{round}"), "name": "Write",
                 "input": {"file_path": file, "content": "x"}}]}}),
        serde_json::json!({"type": "user", "uuid": format!("r{round}"), "sessionId": session,
            "timestamp": at(6), "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_r{round}"), "content": "ok"}]}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}
