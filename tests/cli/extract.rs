//! `extract` and `status` through the binary, on real transcripts and on bad input.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use git_agent_context::event::SUMMARY_MAX;
use serde_json::Value;

use crate::repo::{TestRepo, fixture, run_within, stderr};

const ALL_FIXTURES: &[&str] = &[
    "claude-code-2.1.330/commit-one-file.jsonl",
    "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
    "claude-code-2.1.330/write-with-hook-context.jsonl",
    "claude-code-viewer/mock-global-claude-dir/projects/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "entireio-cli/00/c9e2351016/2/full.jsonl",
    "entireio-cli/0b/0195f27fed/0/full.jsonl",
    "entireio-cli/1e/868c83dbb7/0/full.jsonl",
    "entireio-cli/26/dcd5518fea/0/full.jsonl",
    "entireio-cli/76/62d755ef9f/2/full.jsonl",
    "entireio-cli/8e/0a64736bc7/0/full.jsonl",
    "entireio-cli/91/b42542f24f/1/full.jsonl",
    "entireio-cli/a6/e4c2a0fbd1/0/full.jsonl",
    "entireio-cli/c9/883595c929/0/full.jsonl",
    "entireio-cli/e1/2c3e2b3f2a/0/full.jsonl",
    "entireio-cli/ed/51f6581660/0/full.jsonl",
    "entireio-cli/f8/10e13fce67/0/full.jsonl",
    "git-ai/tests/fixtures/claude-code-with-thinking.jsonl",
    "ida-hcli-excerpt/0e13dcc3-excerpt-v2.1.260.jsonl",
];

fn events_of<'a>(events: &'a [Value], session_prefix: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| {
            e["session_id"]
                .as_str()
                .unwrap()
                .starts_with(session_prefix)
        })
        .collect()
}

fn has(events: &[&Value], pred: impl Fn(&Value) -> bool) -> bool {
    events.iter().any(|e| pred(e))
}

#[test]
fn every_real_fixture_is_read_whole_and_yields_well_formed_events() {
    let repo = TestRepo::new();
    for rel in ALL_FIXTURES {
        let report = repo.extract(&fixture(rel));
        let t = &report["transcripts"][0];
        assert_eq!(t["lines"]["malformed"], 0, "{rel}");
        assert_eq!(t["lines"]["oversized"], 0, "{rel}");
        assert_eq!(t["tail_bytes"], 0, "{rel}");
        let lines = fs::read_to_string(fixture(rel)).unwrap().lines().count() as u64;
        assert_eq!(
            t["lines"]["read"].as_u64(),
            Some(lines),
            "{rel}: every line read"
        );
        assert!(
            report["events_added"].as_u64().unwrap() > 0,
            "{rel}: no events"
        );
    }
    let events = repo.pending();
    let mut ids = std::collections::HashSet::new();
    for e in &events {
        let summary = e["summary"].as_str().unwrap();
        assert!(
            !summary.is_empty() && summary.chars().count() <= SUMMARY_MAX,
            "summary {summary:?}"
        );
        let id = e["id"].as_str().unwrap();
        assert!(
            id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "id {id}"
        );
        assert!(ids.insert(id.to_owned()), "duplicate id {id}");
        assert_eq!(e["schema_version"], 1);
        assert!(!e["timestamp"].as_str().unwrap().is_empty(), "{e}");
        assert!(!e["session_id"].as_str().unwrap().is_empty());
    }

    // Six `git commit`s in the Bash output of a 2.1.14 session, each with its `[branch sha]`.
    let e1 = events_of(&events, "0cf3db51");
    let mut shas: Vec<&str> = e1
        .iter()
        .filter(|e| e["origin"] == "commit")
        .flat_map(|e| e["commits"].as_array().unwrap())
        .map(|s| s.as_str().unwrap())
        .collect();
    shas.sort();
    assert_eq!(
        shas,
        [
            "09ea3c1", "54afbbe", "5afb02e", "614cb41", "7909310", "aaa7d7a"
        ]
    );
    assert!(has(&e1, |e| e["kind"] == "feature"
        && e["summary"]
            == "feat(explain): implement default checkpoint output format"));

    // 2.1.330: the sha from `toolUseResult.gitOperation`, and from `git log --oneline` after `commit -q`.
    let ttl = events_of(&events, "3d06a160");
    assert!(has(&ttl, |e| e["origin"] == "commit"
        && e["commits"][0] == "1cd1fc1"));
    let one = events_of(&events, "487902ab");
    assert!(has(&one, |e| e["summary"] == "add a"
        && e["commits"][0] == "bb16d6b"));

    // Assistant text (thinking is empty in 2.1.330) carries the decision and its alternative.
    assert!(has(&ttl, |e| e["kind"] == "decision"
        && e["origin"] == "text"
        && e["alternatives"].as_array().is_some_and(|a| !a.is_empty())));

    // Non-empty thinking blocks (2.0.69) are a source of their own.
    let thinking = events_of(&events, "dac34307");
    assert!(has(&thinking, |e| e["origin"] == "thinking"));

    // Legacy inline sidechains (1.0.98) are kept apart as subagent work; TodoWrite lists are kept.
    let viewer = events_of(&events, "fe5e1c67");
    assert!(has(&viewer, |e| e["agent_id"] == "sidechain"));
    assert!(has(&viewer, |e| e["agent_id"].is_null() && e["kind"] == "write"));
    assert!(has(&viewer, |e| e["origin"] == "tasks"
        && e["tasks"].as_array().unwrap().len() >= 5));

    // TaskCreate/TaskUpdate (2.1.29) make a task list too.
    let tasks = events_of(&events, "062a8bdd");
    assert!(has(&tasks, |e| e["origin"] == "tasks"
        && e["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "completed")));

    // An approved plan (`planContent`, 2.1.37) and an ExitPlanMode plan (2.1.29) become decisions,
    // summed up by what they set out to do ("## Change") rather than by their title.
    let planned = events_of(&events, "7505c804");
    assert!(has(&planned, |e| e["kind"] == "decision"
        && e["summary"]
            == "Plan: Write all logs to a single fixed file: `.entire/logs/entire.log`"
        && e["rationale"].as_str().unwrap().starts_with(
            "# Consolidate logging to single file per worktree"
        )));
    let exit_plan = events_of(&events, "0a93878f");
    assert!(has(&exit_plan, |e| e["origin"] == "plan"
        && e["kind"] == "decision"));

    // Edits are recorded per file and turn, with their tool calls and outcomes.
    assert!(has(&e1, |e| e["kind"] == "write"
        && e["files_affected"][0]
            .as_str()
            .unwrap()
            .ends_with("explain.go")
        && e["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["name"] == "Edit" && c["outcome"] == "success")));

    // Compaction boundaries are recognised (2.0.76, 2.1.14 with microcompaction, 2.1.42, 2.1.330).
    let status = repo.json(&["status"]);
    let compacted: Vec<&Value> = status["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["compactions"].as_u64() > Some(0))
        .collect();
    assert_eq!(compacted.len(), 5, "{status:#}");
    assert_eq!(status["sessions"], ALL_FIXTURES.len());
    assert_eq!(
        status["pending"]["events"].as_u64(),
        Some(events.len() as u64)
    );
}

#[test]
fn finding_nothing_says_where_it_looked_and_what_to_do() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hi\n", "first");
    let said = repo.ok(&["extract"]);
    let folder = format!(
        "~/.claude/projects/{}",
        repo.root.to_str().unwrap().replace(['/', '.'], "-")
    );
    assert!(
        said.starts_with("0 new events from 0 transcripts\n"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "no session of this repository yet: looked in {folder}\n"
        )),
        "{said}"
    );
    assert!(
        said.contains("run `git agent-context install` here"),
        "{said}"
    );
    // Once there is one, the hint goes.
    let transcript = repo.install_transcript("entireio-cli/e1/2c3e2b3f2a/0/full.jsonl", "s-one");
    assert!(transcript.is_file());
    let said = repo.ok(&["extract"]);
    assert!(!said.contains("no Claude Code session"), "{said}");
}

#[test]
fn re_extracting_an_unchanged_transcript_yields_nothing_new() {
    let repo = TestRepo::new();
    let path = fixture("entireio-cli/e1/2c3e2b3f2a/0/full.jsonl");
    let first = repo.extract(&path);
    assert!(first["events_added"].as_u64().unwrap() > 10);
    let before = repo.pending_bytes();
    let second = repo.extract(&path);
    assert_eq!(second["events_added"], 0);
    assert_eq!(second["events_updated"], 0);
    assert_eq!(second["transcripts"][0]["bytes_read"], 0);
    assert_eq!(
        repo.pending_bytes(),
        before,
        "the pending queue is untouched"
    );
    assert!(
        repo.ok(&["extract", "--transcript", path.to_str().unwrap()])
            .starts_with("0 new events from 1 transcript")
    );
}

/// Append `bytes` to `path`, creating it if needed.
/// Append `bytes` to the file at `path` (a transcript growing as a session goes on).
pub fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn extracting_a_growing_transcript_in_pieces_equals_extracting_it_at_once() {
    for rel in [
        "entireio-cli/e1/2c3e2b3f2a/0/full.jsonl",
        "entireio-cli/0b/0195f27fed/0/full.jsonl",
        "claude-code-viewer/mock-global-claude-dir/projects/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
    ] {
        let whole = fs::read(fixture(rel)).unwrap();
        let at_once = TestRepo::new();
        let copy = at_once.home.join("session.jsonl");
        fs::write(&copy, &whole).unwrap();
        at_once.extract(&copy);

        // Cut at many points, some inside a line (a writer caught mid-line), extracting after each.
        let pieces = TestRepo::new();
        let growing = pieces.home.join("session.jsonl");
        let cuts = 13;
        let mut start = 0;
        for i in 1..=cuts {
            let end = if i == cuts {
                whole.len()
            } else {
                whole.len() * i / cuts + i * 7 % 50
            };
            append(&growing, &whole[start..end]);
            start = end;
            pieces.extract(&growing);
        }
        assert_eq!(pieces.pending_bytes(), at_once.pending_bytes(), "{rel}");
    }
}

fn line(value: Value) -> String {
    format!("{value}\n")
}

fn user(uuid: &str, text: &str) -> String {
    line(serde_json::json!({
        "type": "user", "uuid": uuid, "sessionId": "s-bad", "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/w", "message": {"role": "user", "content": text}
    }))
}

fn assistant(msg: &str, text: &str) -> String {
    line(serde_json::json!({
        "type": "assistant", "uuid": format!("u-{msg}"), "sessionId": "s-bad", "timestamp": "2026-01-01T00:00:01Z",
        "message": {"id": msg, "model": "claude-test", "role": "assistant", "content": [{"type": "text", "text": text}]}
    }))
}

#[test]
fn bad_lines_are_skipped_and_counted_and_the_rest_is_read() {
    let repo = TestRepo::new();
    let path = repo.home.join("bad.jsonl");
    let mut bytes = Vec::new();
    bytes.extend(user("p1", "Make the cache faster").as_bytes());
    bytes.extend(b"this is not json\n");
    bytes.extend(b"{\"type\":\"user\",\"message\":\xff\xfe}\n");
    bytes.extend(b"[1,2,3]\n");
    bytes.extend(b"\n"); // blank: harmless, neither read nor malformed
    // Wrong types in known fields: the line is still read, the bad fields are ignored.
    bytes.extend(
        br#"{"type":"assistant","timestamp":17,"isSidechain":"no","sessionId":["x"],"message":{"id":"m1","model":5,"content":[{"type":"text","text":"I'll go with an LRU cache because entries are reused."},{"type":"tool_use","name":7,"input":"oops"}]}}"#,
    );
    bytes.push(b'\n');
    bytes.extend(b"{\"type\":\"assistant\",\"message\":{\"content\":{\"not\":\"a list\"}}}\n");
    // A line over the 16 MiB limit.
    bytes.extend(b"{\"type\":\"user\",\"message\":{\"content\":\"");
    bytes.extend(std::iter::repeat_n(b'x', 17 << 20));
    bytes.extend(b"\"}}\n");
    bytes.extend(assistant("m2", "That won't work because the keys are unbounded.").as_bytes());
    fs::write(&path, &bytes).unwrap();

    let report = repo.extract(&path);
    let t = &report["transcripts"][0];
    assert_eq!(t["lines"]["malformed"], 3, "{t:#}");
    assert_eq!(t["lines"]["oversized"], 1, "{t:#}");
    assert_eq!(t["lines"]["read"], 4, "{t:#}");
    let events = repo.pending();
    assert!(has(&events.iter().collect::<Vec<_>>(), |e| e["kind"]
        == "decision"
        && e["summary"]
            == "I'll go with an LRU cache because entries are reused."));
    assert!(has(&events.iter().collect::<Vec<_>>(), |e| e["kind"]
        == "rejection"
        && e["prompt_context"] == "Make the cache faster"));

    let status = repo.json(&["status"]);
    assert_eq!(status["lines"]["malformed"], 3);
    assert_eq!(status["lines"]["oversized"], 1);
    let human = repo.ok(&["status"]);
    assert!(
        human.contains("4 skipped (3 malformed, 1 oversized)"),
        "{human}"
    );
}

#[test]
fn empty_file_gives_nothing_and_no_error() {
    let repo = TestRepo::new();
    let path = repo.home.join("empty.jsonl");
    fs::write(&path, b"").unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["events_added"], 0);
    assert_eq!(report["transcripts"][0]["lines"]["read"], 0);
    assert!(repo.pending().is_empty());
}

#[test]
fn a_truncated_last_line_waits_until_it_is_complete() {
    let repo = TestRepo::new();
    let path = repo.home.join("live.jsonl");
    let last = assistant(
        "m9",
        "I'll use a bounded queue because producers are faster than consumers.",
    );
    let (head, rest) = last.split_at(40);
    fs::write(&path, format!("{}{head}", user("p1", "Fix the backlog"))).unwrap();

    let report = repo.extract(&path);
    let t = &report["transcripts"][0];
    assert_eq!(t["lines"]["read"], 1);
    assert_eq!(
        t["lines"]["malformed"], 0,
        "an unfinished line is not counted as bad"
    );
    assert_eq!(t["tail_bytes"], 40);
    assert_eq!(
        kinds(&repo.pending()),
        ["session"],
        "the prompt is in; the unfinished line is not"
    );

    append(&path, rest.as_bytes());
    let report = repo.extract(&path);
    let t = &report["transcripts"][0];
    assert_eq!(t["lines"]["read"], 1);
    assert_eq!(t["tail_bytes"], 0);
    let events = repo.pending();
    assert_eq!(kinds(&events), ["decision", "session"], "{events:#?}");
    let of = |kind: &str| events.iter().find(|e| e["kind"] == kind).unwrap();
    assert_eq!(
        of("decision")["prompt_context"],
        "Fix the backlog",
        "the prompt survives between runs"
    );
    assert_eq!(of("session")["summary"], "Fix the backlog");
}

#[test]
fn a_slash_command_on_its_own_is_not_the_sessions_request() {
    let repo = TestRepo::new();
    let path = repo.home.join("clear.jsonl");
    let clear = "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n\
                 <command-args></command-args>";
    let text = [
        user("p1", clear),
        user("p2", "/ide"),
        user("p3", "/model opus"),
        user("p4", "Cap the cache at 100 entries"),
        assistant(
            "m1",
            "I'll use an LRU rather than a TTL map because entries never expire.",
        ),
    ]
    .concat();
    fs::write(&path, text).unwrap();
    repo.extract(&path);
    let events = repo.pending();
    let session = events.iter().find(|e| e["kind"] == "session").unwrap();
    assert_eq!(session["summary"], "Cap the cache at 100 entries");
    // A command with its arguments asks for something; a path pasted alone is no command.
    for (n, asked) in ["/review 227", "/src/cache.rs", "/cache.rs"]
        .iter()
        .enumerate()
    {
        let path = repo.home.join(format!("asked-{n}.jsonl"));
        fs::write(&path, user("p1", asked)).unwrap();
        repo.extract(&path);
        let events = repo.pending();
        let requests: Vec<&serde_json::Value> = (events.iter())
            .filter(|e| e["kind"] == "session")
            .map(|e| &e["summary"])
            .collect();
        assert!(
            requests.contains(&&serde_json::json!(asked)),
            "{requests:?}"
        );
    }
}

/// The kinds of `events`, sorted.
fn kinds(events: &[serde_json::Value]) -> Vec<&str> {
    let mut kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    kinds.sort();
    kinds
}

/// A transcript of one prompt and one decision, in the test's home folder.
fn one_decision(repo: &TestRepo) -> std::path::PathBuf {
    let path = repo.home.join("s.jsonl");
    let text =
        user("p1", "first") + &assistant("m1", "I'll go with plain files because they diff well.");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_replaced_or_truncated_transcript_is_read_again_from_the_start() {
    let repo = TestRepo::new();
    let path = one_decision(&repo);
    assert_eq!(
        repo.extract(&path)["events_added"],
        2,
        "the decision and the session"
    );

    // Replaced by another file of the same length and more.
    let other = user("p2", "other")
        + &assistant(
            "m2",
            "We should not use a daemon because hooks must stay simple.",
        );
    let tmp = repo.home.join("s.jsonl.new");
    fs::write(&tmp, &other).unwrap();
    fs::rename(&tmp, &path).unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["transcripts"][0]["restarted"], "replaced");
    assert_eq!(report["events_added"], 1);
    assert_eq!(
        report["events_updated"], 1,
        "the session's request is now p2's"
    );

    // Truncated in place.
    fs::write(&path, user("p3", "short")).unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["transcripts"][0]["restarted"], "truncated");
    assert_eq!(
        kinds(&repo.pending()),
        ["decision", "rejection", "session"],
        "nothing extracted before is lost"
    );
}

#[test]
fn finds_the_repositorys_sessions_in_claude_codes_project_folder() {
    let repo = TestRepo::new();
    let a = repo.install_transcript(
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
        "3d06a160-5483-464a-94bc-4a29f10eaa67",
    );
    repo.install_transcript(
        "claude-code-2.1.330/commit-one-file.jsonl",
        "487902ab-c2ee-410a-8a06-0870ad0ade0c",
    );
    // Another project's folder is left alone.
    let elsewhere = repo.home.join(".claude/projects/-somewhere-else");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::copy(
        fixture("claude-code-2.1.330/write-with-hook-context.jsonl"),
        elsewhere.join("x.jsonl"),
    )
    .unwrap();

    let one = repo.json(&[
        "extract",
        "--session",
        "487902ab-c2ee-410a-8a06-0870ad0ade0c",
    ]);
    assert_eq!(one["transcripts"].as_array().unwrap().len(), 1);
    let all = repo.json(&["extract"]);
    let paths: Vec<&str> = all["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.contains(&a.to_str().unwrap()));
    // Files under the repository are recorded relative to it.
    assert!(
        repo.pending()
            .iter()
            .any(|e| e["kind"] == "write" && e["files_affected"][0] == "cache.py")
    );

    let missing = repo.run(&["extract", "--session", "no-such-session"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).starts_with("error: no transcript of session no-such-session"),
        "{}",
        stderr(&missing)
    );

    // CLAUDE_CONFIG_DIR moves Claude Code's folder.
    let moved = repo.home.join("claude-config");
    fs::rename(repo.home.join(".claude"), &moved).unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .args(["extract", "--json"])
        .env("CLAUDE_CONFIG_DIR", &moved)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["transcripts"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["events_added"], 0,
        "same transcripts by another path are not new"
    );
}

#[test]
fn outside_a_repository_every_command_fails_cleanly_and_writes_nothing() {
    let repo = TestRepo::new();
    let dir = repo.outside();
    for args in [
        &["init"][..],
        &["status"],
        &["extract"],
        &["extract", "--transcript", "x.jsonl"],
    ] {
        let out = repo.cmd_in(&dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: not a git repository"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_transcript_is_one_transcript_however_it_is_named() {
    let repo = TestRepo::new();
    let real = repo.home.join("t.jsonl");
    fs::copy(fixture("claude-code-2.1.330/commit-one-file.jsonl"), &real).unwrap();
    let link = repo.home.join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    // Relative to -C, not to where the process started.
    let out = repo
        .cmd_in(&repo.outside())
        .args([
            "-C",
            repo.home.to_str().unwrap(),
            "extract",
            "--transcript",
            "t.jsonl",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "home is not a repository: {}",
        stderr(&out)
    );
    let first = repo.extract(&real);
    assert!(first["events_added"].as_u64().unwrap() > 0);
    assert_eq!(
        repo.extract(&link)["transcripts"][0]["bytes_read"],
        0,
        "the link shares the file's cursor"
    );
    let out = repo
        .cmd_in(&repo.root.join(".git"))
        .args(["extract", "--transcript", "../../home/t.jsonl", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        repo.json(&["status"])["transcripts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn an_unreadable_pending_line_is_kept_and_does_not_stop_anything() {
    let repo = TestRepo::new();
    let path = one_decision(&repo);
    repo.extract(&path);
    let queue = repo.root.join(".git/agent-context/pending/s-bad.jsonl");
    const GARBAGE: &[u8] = b"garbage \xff line\n";
    append(&queue, GARBAGE);
    append(
        &path,
        (assistant("m2", "That won't work because the keys are unbounded.") + &user("p2", "ok"))
            .as_bytes(),
    );
    assert_eq!(repo.extract(&path)["events_added"], 1);
    assert_eq!(repo.json(&["status"])["pending"]["unreadable_lines"], 1);
    let bytes = fs::read(&queue).unwrap();
    assert!(
        bytes.windows(GARBAGE.len()).any(|w| w == GARBAGE),
        "kept byte for byte"
    );
}

#[test]
fn dash_c_runs_as_if_started_in_the_repository() {
    let repo = TestRepo::new();
    let outside = repo.outside();
    let out = repo
        .cmd_in(&outside)
        .args(["-C", repo.root.to_str().unwrap(), "init"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(repo.root.join(".git/agent-context").is_dir());
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn a_missing_transcript_is_a_usage_error() {
    let repo = TestRepo::new();
    let out = repo.run(&["extract", "--transcript", "nope.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read transcript"),
        "{}",
        stderr(&out)
    );
    let out = repo.run(&["extract", "--transcript", repo.home.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a directory is not a transcript"
    );
}

#[test]
fn a_transcript_that_is_not_a_regular_file_is_refused_at_once() {
    let repo = TestRepo::new();
    // A named pipe no one writes to blocks whoever opens it; /dev/zero never ends.
    let pipe = repo.home.join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.unwrap().success(), "mkfifo {}", pipe.display());
    for path in [pipe.as_path(), Path::new("/dev/zero")] {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.args(["extract", "--transcript", path.to_str().unwrap()]);
        let (out, _) = run_within(cmd, b"", false, Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: cannot read transcript {}: it is not a regular file\n",
                path.display()
            )
        );
        assert!(out.stdout.is_empty());
    }
    // Where Claude Code keeps the repository's sessions, it is not a transcript either.
    let dir = repo.project_dir();
    fs::create_dir_all(&dir).unwrap();
    fs::rename(&pipe, dir.join("9b1f0c2e.jsonl")).unwrap();
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(["extract", "--json"]);
    let (out, _) = run_within(cmd, b"", false, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["transcripts"], serde_json::json!([]), "{report}");
    assert!(repo.pending().is_empty());
}

#[test]
fn linked_worktrees_share_the_store_of_the_main_repository() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "init");
    let wt = repo.home.parent().unwrap().join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    let path = fixture("claude-code-2.1.330/commit-one-file.jsonl");
    let out = repo
        .cmd_in(&wt)
        .args(["extract", "--transcript", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !repo.pending().is_empty(),
        "events are in the main repository's .git/agent-context"
    );
    assert!(
        !repo.root.join(".git/worktrees/wt/agent-context").exists(),
        "not in the worktree's own git dir"
    );
}

#[test]
fn init_creates_the_store_once() {
    let repo = TestRepo::new();
    assert!(
        repo.ok(&["init"])
            .starts_with("initialized agent-context in ")
    );
    assert!(repo.root.join(".git/agent-context/pending").is_dir());
    assert!(
        repo.ok(&["init"])
            .starts_with("agent-context already initialized")
    );
    assert_eq!(
        repo.git(&["status", "--porcelain"]),
        "",
        "the working tree is untouched"
    );
}

fn block_line(msg: &str, uuid: &str, block: Value) -> String {
    line(serde_json::json!({
        "type": "assistant", "uuid": uuid, "sessionId": "s-bad", "timestamp": "2026-01-01T00:00:01Z",
        "message": {"id": msg, "model": "claude-test", "role": "assistant", "content": [block]}
    }))
}

fn tool_use(msg: &str, id: &str, name: &str, input: Value) -> String {
    block_line(
        msg,
        &format!("u-{id}"),
        serde_json::json!({"type": "tool_use", "id": id, "name": name, "input": input}),
    )
}

fn tool_result(id: &str, content: &str, result: Value) -> String {
    line(serde_json::json!({
        "type": "user", "uuid": format!("r-{id}"), "sessionId": "s-bad", "timestamp": "2026-01-01T00:00:02Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]},
        "toolUseResult": result
    }))
}

fn tool_error(id: &str, content: &str) -> String {
    line(serde_json::json!({
        "type": "user", "uuid": format!("r-{id}"), "sessionId": "s-bad", "timestamp": "2026-01-01T00:00:02Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": true}]},
        "toolUseResult": format!("Error: {content}")
    }))
}

fn edit_call(msg: &str, id: &str, file: &str, old: &str, new: &str) -> String {
    tool_use(
        msg,
        id,
        "Edit",
        serde_json::json!({"file_path": format!("/w/{file}"), "old_string": old, "new_string": new}),
    ) + &tool_result(
        id,
        "ok",
        serde_json::json!({"filePath": format!("/w/{file}")}),
    )
}

/// A command that fails with `output`.
fn failing_call(msg: &str, id: &str, command: &str, output: &str) -> String {
    tool_use(msg, id, "Bash", serde_json::json!({ "command": command })) + &tool_error(id, output)
}

fn bash_call(msg: &str, id: &str, command: &str) -> String {
    tool_use(msg, id, "Bash", serde_json::json!({"command": command}))
        + &tool_result(id, "", serde_json::json!({"stdout": ""}))
}

/// The events a fresh repository stores of a session made of `lines`.
fn extracted(lines: &str) -> Vec<Value> {
    let repo = TestRepo::new();
    let path = repo.home.join("s.jsonl");
    fs::write(&path, lines).unwrap();
    repo.extract(&path);
    repo.pending()
}

/// The rejections made of edits undone after a command failed.
fn undone_rejections(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "rejection" && e["origin"] == "tool_sequence")
        .collect()
}

#[test]
fn an_edit_undone_after_a_failing_command_is_a_rejection_with_the_reason_given() {
    const REASON: &str =
        "The LRU cache keeps entries nobody reads again, so memory grows with traffic.";
    let edit =
        |msg: &str, id: &str, old: &str, new: &str| edit_call(msg, id, "src/cache.rs", old, new);
    // What is said before the command fails is no reason for undoing what it found wrong.
    let failing = assistant(
        "m2",
        "The tests cover eviction, so they tell whether the LRU holds.",
    ) + &failing_call("m2", "b1", "cargo test", "Exit code 101");
    let why = assistant("m3", &format!("{REASON} Let me go back to the TTL."));
    const BY_EDIT: &str = "Reverted `ttl` → `lru` in src/cache.rs after `cargo test` failed";
    const BY_GIT: &str = "Reverted the change to src/cache.rs after `cargo test` failed";
    // (what, what follows the failure, the rejection's summary, the edit marked reverted)
    let cases = [
        (
            "the reverse edit, with a reason",
            why.clone() + &edit("m3", "e2", "lru", "ttl"),
            Some(BY_EDIT),
            true,
        ),
        (
            "git checkout --, with a reason",
            why.clone() + &bash_call("m3", "b2", "git checkout -- src/cache.rs"),
            Some(BY_GIT),
            true,
        ),
        (
            "the reverse edit, no reason given",
            assistant("m3", "Let me revert that.") + &edit("m3", "e2", "lru", "ttl"),
            None,
            true,
        ),
        (
            "the reason said in a message before the undoing",
            why.clone()
                + &tool_use(
                    "m3",
                    "r1",
                    "Read",
                    serde_json::json!({"file_path": "/w/src/cache.rs"}),
                )
                + &tool_result("r1", "ok", serde_json::json!({}))
                + &assistant("m4", "Now revert `src/cache.rs`.")
                + &edit("m4", "e2", "lru", "ttl"),
            Some(BY_EDIT),
            true,
        ),
        (
            "the failing command passes before the undoing",
            bash_call("m3", "b2", "cargo test")
                + &why.replace("m3", "m4")
                + &edit("m4", "e2", "lru", "ttl"),
            None,
            false,
        ),
        (
            "git stash list",
            why.clone() + &bash_call("m3", "b2", "git stash list"),
            None,
            false,
        ),
        (
            "a stash popped again",
            why.clone() + &bash_call("m3", "b2", "git stash && cargo test; git stash pop"),
            None,
            false,
        ),
        (
            "another edit",
            why.clone() + &edit("m3", "e2", "ttl", "fifo"),
            None,
            false,
        ),
    ];
    for (what, undo, summary, reverted) in cases {
        let events = extracted(
            &(user("p1", "Make the cache faster")
                + &edit("m1", "e1", "ttl", "lru")
                + &failing
                + &undo
                + &user("p2", "next")),
        );
        let rejections = undone_rejections(&events);
        assert_eq!(
            rejections.len(),
            usize::from(summary.is_some()),
            "{what}: {events:#?}"
        );
        if let (Some(r), Some(summary)) = (rejections.first(), summary) {
            assert_eq!(r["summary"], summary, "{what}");
            assert_eq!(r["rationale"], REASON, "{what}");
        }
        // The first write is the edit that was undone, or not.
        let write = events.iter().find(|e| e["kind"] == "write").unwrap();
        let outcome = write["tool_calls"][0]["outcome"].as_str().unwrap();
        assert_eq!(outcome == "reverted", reverted, "{what}: {outcome}");
    }
}

#[test]
fn an_edit_undone_is_no_rejection_without_a_check_that_failed_and_a_reason() {
    let cases = [
        (
            "a failed command that checks nothing",
            "git stash pop",
            "The stash holds the older cache, so the two conflict.",
        ),
        (
            "no reason said",
            "cargo test",
            "Now I understand the structure.",
        ),
    ];
    for (what, command, said) in cases {
        let events = extracted(
            &(user("p1", "Make the cache faster")
                + &edit_call("m1", "e1", "src/cache.rs", "ttl", "lru")
                + &failing_call("m2", "b1", command, "Exit code 1")
                + &assistant("m3", said)
                + &edit_call("m3", "e2", "src/cache.rs", "lru", "ttl")
                + &user("p2", "next")),
        );
        assert!(undone_rejections(&events).is_empty(), "{what}: {events:#?}");
    }
}

#[test]
fn an_edit_undone_of_a_file_never_captured_does_not_tell_the_change() {
    let events = extracted(
        &(user("p1", "Quieter logs")
            + &edit_call("m1", "e1", ".env", "LOG_LEVEL=debug", "LOG_LEVEL=warn")
            + &failing_call("m2", "b1", "cargo test", "Exit code 101")
            + &assistant(
                "m3",
                "The log tests read debug lines, so the level stays at debug.",
            )
            + &edit_call("m3", "e2", ".env", "LOG_LEVEL=warn", "LOG_LEVEL=debug")
            + &user("p2", "next")),
    );
    let rejections = undone_rejections(&events);
    assert_eq!(rejections.len(), 1, "{events:#?}");
    let summary = rejections[0]["summary"].as_str().unwrap();
    assert!(!summary.contains("LOG_LEVEL"), "{summary}");
    assert!(summary.ends_with("after `cargo test` failed"), "{summary}");
}

#[test]
fn a_prompt_that_asks_decides_nothing_one_that_says_does() {
    let events = extracted(
        &(user("p1", "can we use a TTL map instead of an LRU here")
            + &assistant("m1", "Looking at the cache.")
            + &user(
                "p2",
                "Use a TTL map instead of an LRU here, since entries expire by time.",
            )
            + &assistant("m2", "Switching the cache.")
            + &user("p3", "next")),
    );
    let decided: Vec<&str> = events
        .iter()
        .filter(|e| e["origin"] == "prompt" && e["kind"] == "decision")
        .map(|e| e["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        decided,
        ["Use a TTL map instead of an LRU here, since entries expire by time."],
        "{events:#?}"
    );
}

#[test]
fn edits_undone_after_one_failure_make_one_rejection() {
    let events = extracted(
        &(user("p1", "Rename the cache")
            + &edit_call("m1", "e1", "src/cache.rs", "Cache", "Store")
            + &edit_call("m1", "e2", "src/lib.rs", "cache::Cache", "cache::Store")
            + &failing_call(
                "m2",
                "b1",
                "cargo build",
                "error[E0428]: the name `Store` is defined multiple times",
            )
            + &assistant(
                "m3",
                "The crate already has a `Store` in `store.rs`, so the names clash.",
            )
            + &edit_call("m3", "e3", "src/cache.rs", "Store", "Cache")
            + &assistant(
                "m4",
                "The import in `lib.rs` names the type as well, so it goes back too.",
            )
            + &edit_call("m4", "e4", "src/lib.rs", "cache::Store", "cache::Cache")
            + &user("p2", "next")),
    );
    let rejections = undone_rejections(&events);
    assert_eq!(rejections.len(), 1, "{events:#?}");
    let r = rejections[0];
    assert_eq!(
        r["summary"],
        "Reverted the change to 2 files after `cargo build` failed"
    );
    assert_eq!(
        r["files_affected"],
        serde_json::json!(["src/cache.rs", "src/lib.rs"])
    );
    assert_eq!(
        r["rationale"],
        "The crate already has a `Store` in `store.rs`, so the names clash."
    );
}

fn all_store_text(repo: &TestRepo) -> String {
    fn walk(dir: &Path, out: &mut String) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push_str(&String::from_utf8_lossy(&fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = String::new();
    walk(&repo.root.join(".git/agent-context"), &mut out);
    out
}

#[test]
fn secrets_never_reach_any_file_of_the_store_even_where_text_is_cut() {
    let repo = TestRepo::new();
    let path = repo.home.join("secret.jsonl");
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    // The token straddles the summary's cut at SUMMARY_MAX characters, with no space near
    // enough before it for the cut to fall at a word; the turn stays open, so the extractor's
    // saved state holds the text too, in the open message and in what was said since a check
    // failed.
    let lead = format!(
        "I'll go with the token-based client because {}=",
        "x".repeat(95)
    );
    let at = lead.chars().count();
    assert!(at < SUMMARY_MAX && at + token.len() > SUMMARY_MAX);
    assert!(lead.rfind(' ').unwrap() < SUMMARY_MAX * 2 / 3);
    let decision = format!("{lead}{token}");
    // A finished turn wrote a file whose path holds the token: the path is in events, in
    // their source, and in the session's list of files written.
    let content = user("p0", "Save the key")
        + &tool_use(
            "m0",
            "w0",
            "Write",
            serde_json::json!({"file_path": format!("/w/keys/{token}.txt"), "content": "x"}),
        )
        + &tool_result("w0", "ok", serde_json::json!({}))
        + &user("p1", &format!("Deploy with {token} please"))
        // A check failed: what is said after it is kept, as the reason for undoing a change.
        + &failing_call("m0b", "c0", "cargo test", "Exit code 101")
        + &block_line(
            "m1",
            "u1",
            serde_json::json!({"type": "thinking", "thinking": decision}),
        )
        + &tool_use(
            "m1",
            "t1",
            "Bash",
            serde_json::json!({"command": format!("curl -H 'Authorization: token {token}' {}", "y".repeat(300))}),
        );
    fs::write(&path, content).unwrap();
    repo.extract(&path);
    let stored = all_store_text(&repo);
    assert!(!stored.contains("ghp_0123"), "{stored}");
    assert!(
        !stored.contains("0123456789abcdefghij"),
        "no part of the token either"
    );
    assert!(stored.contains("[REDACTED:github-token]"));
    for e in repo.pending() {
        assert!(
            e["summary"].as_str().unwrap().chars().count() <= SUMMARY_MAX,
            "{e}"
        );
    }
}

#[test]
fn a_turn_with_hundreds_of_tool_calls_loses_none_of_them() {
    let repo = TestRepo::new();
    let path = repo.home.join("long.jsonl");
    let mut content = user("p1", "Audit every file");
    for i in 0..600 {
        content += &tool_use(
            &format!("m{i}"),
            &format!("r{i}"),
            "Read",
            serde_json::json!({"file_path": format!("/w/f{i}.rs")}),
        );
        content += &tool_result(&format!("r{i}"), "fn x() {}", serde_json::json!({}));
    }
    content += &tool_use(
        "m-edit",
        "e1",
        "Edit",
        serde_json::json!({"file_path": "/w/f1.rs", "old_string": "a", "new_string": "b"}),
    );
    content += &tool_result("e1", "ok", serde_json::json!({}));
    content += &tool_use(
        "m-commit",
        "c1",
        "Bash",
        serde_json::json!({"command": "git commit -am 'fix: audit findings'"}),
    );
    content += &tool_result(
        "c1",
        "[main abc1234] fix: audit findings",
        serde_json::json!({"stdout": "[main abc1234] fix: audit findings"}),
    );
    content += &user("p2", "Thanks");
    fs::write(&path, content).unwrap();
    repo.extract(&path);
    let events = repo.pending();
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "bugfix" && e["commits"][0] == "abc1234"),
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "write" && e["files_affected"][0] == "f1.rs")
    );
    assert!(
        events
            .iter()
            .all(|e| e["prompt_context"] == "Audit every file")
    );
}

#[test]
fn a_block_larger_than_the_message_limit_is_cut_not_dropped() {
    let repo = TestRepo::new();
    let path = repo.home.join("big.jsonl");
    let thinking = format!(
        "I'll go with an LRU cache because entries are reused. {}",
        "Ünïcödé filler text here. ".repeat(3000)
    );
    let content = user("p1", "Speed it up")
        + &block_line(
            "m1",
            "u1",
            serde_json::json!({"type": "thinking", "thinking": thinking}),
        )
        + &user("p2", "next");
    fs::write(&path, content).unwrap();
    repo.extract(&path);
    assert!(repo.pending().iter().any(|e| e["kind"] == "decision"));
}

#[test]
fn provisional_events_that_a_turn_no_longer_yields_are_removed() {
    let neutral = block_line(
        "m1",
        "u1",
        serde_json::json!({"type": "thinking", "thinking": "The cache module has three public functions and one test file."}),
    );
    let deciding = block_line(
        "m1",
        "u2",
        serde_json::json!({"type": "thinking", "thinking": "I'll go with a TTL map because entries expire by time."}),
    );
    let end = user("p2", "ok");

    let at_once = TestRepo::new();
    let path = at_once.home.join("s.jsonl");
    fs::write(
        &path,
        user("p1", "Add a cache") + &neutral + &deciding + &end,
    )
    .unwrap();
    at_once.extract(&path);
    assert!(at_once.pending().iter().all(|e| e["kind"] != "raw"));

    let pieces = TestRepo::new();
    let path = pieces.home.join("s.jsonl");
    fs::write(&path, user("p1", "Add a cache") + &neutral).unwrap();
    pieces.extract(&path);
    assert!(
        pieces.pending().iter().any(|e| e["kind"] == "raw"),
        "the open turn looks like raw reasoning so far"
    );
    append(&path, (deciding + &end).as_bytes());
    let report = pieces.extract(&path);
    assert_eq!(report["transcripts"][0]["events_removed"], 1);
    assert_eq!(pieces.pending_bytes(), at_once.pending_bytes());
}

#[test]
fn secrets_in_transcripts_never_reach_the_store() {
    let repo = TestRepo::new();
    let path = repo.home.join("secret.jsonl");
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    fs::write(
        &path,
        user("p1", &format!("Use my key {key} for the client"))
            + &assistant(
                "m1",
                &format!("I'll use the key {key} because the client needs it."),
            ),
    )
    .unwrap();
    repo.extract(&path);
    let stored: Vec<u8> = repo
        .pending_bytes()
        .into_iter()
        .flat_map(|(_, b)| b)
        .collect();
    let stored = String::from_utf8(stored).unwrap();
    assert!(stored.contains("[REDACTED:anthropic-key]"), "{stored}");
    assert!(!stored.contains("abcdefghijklmnop"), "{stored}");
}

#[test]
fn a_rejection_that_points_back_names_what_it_rejects() {
    use crate::link::{prompt, say, text};
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    let at = |m: u32| format!("2026-01-01T10:{m:02}:00Z");
    let transcript = [
        prompt("p1", "Rate-limit the API", &at(0)),
        say(
            "m1",
            &at(1),
            serde_json::json!([text(
                "A sliding log keeps every request's time. That won't work because memory \
                 grows with traffic."
            )]),
        ),
    ]
    .concat();
    let path = repo.root.join("session.jsonl");
    fs::write(&path, transcript).unwrap();
    repo.extract(&path);
    let summaries: Vec<String> = repo
        .pending()
        .iter()
        .filter(|e| e["kind"] == "rejection")
        .map(|e| e["summary"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        summaries,
        [
            "A sliding log keeps every request's time. That won't work because memory grows with \
          traffic."
        ]
    );
}

#[test]
fn an_option_named_by_its_label_is_spelled_out_from_where_it_was_laid_out() {
    let options = "The session id is gone once stdin is read. We need to either:\n\
                   1. Refactor the handler to parse stdin once and pass the data through\n\
                   2. Use the persisted current session file to get the session ID\n\n\
                   Which do you prefer?";
    let chosen = "Option 2 is simplest because we already have a reader for that file.";
    let summaries = |lines: &str| -> Vec<String> {
        extracted(lines)
            .iter()
            .filter(|e| e["kind"] == "decision")
            .map(|e| e["summary"].as_str().unwrap().to_owned())
            .collect()
    };
    // Answered in the next turn: the verdict says which option it took.
    let answered = user("p1", "fix the session id in the end hook")
        + &assistant("m1", options)
        + &user("p2", "go with 2")
        + &assistant("m2", chosen);
    assert_eq!(
        summaries(&answered),
        [
            "Option 2 (use the persisted current session file to get the session ID) is simplest \
          because we already have a reader for that file."
        ]
    );
    // Two prompts later the list is forgotten, and the label is left as it was said.
    let later = user("p1", "fix the session id in the end hook")
        + &assistant("m1", options)
        + &user("p2", "go with 2")
        + &user("p3", "now the tests")
        + &assistant("m3", chosen);
    assert_eq!(summaries(&later), [chosen]);
    // A list laid out after the verdict, in the same message, is not what it answers, even
    // where emphasis keeps the verdict from being found as it was split.
    let after = user("p1", "fix the session id in the end hook")
        + &assistant("m1", options)
        + &user("p2", "go with 2")
        + &assistant(
            "m2",
            "**Option 2** is simplest because we already have a reader for that file.\n\n\
                 For the tests we could either:\n1. Mock the clock in every \
                 test\n2. Inject a fake reader into the handler",
        );
    assert_eq!(
        summaries(&after),
        [
            "Option 2 (use the persisted current session file to get the session ID) is simplest \
          because we already have a reader for that file."
        ]
    );
}

#[test]
fn status_lists_the_transcripts_that_want_a_look_and_the_latest_and_counts_the_rest() {
    let repo = TestRepo::new();
    let mut paths = Vec::new();
    for n in 0..12 {
        let path = repo.home.join(format!("t{n:02}.jsonl"));
        let mut text = line(serde_json::json!({
            "type": "user", "uuid": format!("p{n}"), "sessionId": format!("s-{n:02}"),
            "timestamp": format!("2026-01-{:02}T00:00:00Z", n + 1), "cwd": "/w",
            "message": {"role": "user", "content": "first"}
        }));
        if n == 0 {
            // The oldest, with a line that cannot be read.
            text.push_str("{not json\n");
        }
        fs::write(&path, text).unwrap();
        paths.push(path);
    }
    for path in &paths {
        repo.extract(path);
    }
    let status = repo.ok(&["status"]);
    let listed: Vec<&str> = status
        .lines()
        .filter_map(|l| l.trim().split_once(".jsonl").map(|(name, _)| name))
        .map(|name| &name[name.len() - 3..])
        .collect();
    assert_eq!(listed.len(), 10, "{status}");
    assert_eq!(
        listed[0], "t00",
        "the one with a skipped line first: {status}"
    );
    assert!(
        listed.contains(&"t11") && !listed.contains(&"t01"),
        "{status}"
    );
    assert!(status.contains("… and 2 more"), "{status}");
    let all = repo.json(&["status"])["transcripts"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(all, 12);
}
