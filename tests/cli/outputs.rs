//! What every command prints, for people and as JSON, kept as snapshots (insta, in
//! `tests/cli/snapshots/`): a change to an output shows as a diff to read and accept
//! (`cargo insta review`, or `INSTA_UPDATE=always cargo test` then `git diff`). What differs
//! from run to run — the temporary folders, the clock — is replaced by a placeholder first. The tests of each area assert what an output must say; these hold the
//! rest of it still.

use crate::repo::{BIN, TestRepo};
use crate::scenario;

/// `text` with what differs between runs replaced: the folders, the binary's path, the
/// commits we made (dated when they were made) and the times read off the clock.
fn steady(repo: &TestRepo, text: &str) -> String {
    let mut text = text.to_owned();
    let ours = repo.git_output(
        &repo.root,
        &[
            "rev-list",
            "--ignore-missing",
            "refs/agent-context",
            "refs/notes/agent-context",
        ],
        &[],
    );
    for id in String::from_utf8(ours.stdout).unwrap().lines() {
        for len in [40, 12, 7] {
            text = text.replace(&id[..len], "[ours]");
        }
    }
    // A time the command read off the clock: within a day of now.
    let now = jiff::Timestamp::now();
    let times = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").unwrap();
    let text = times.replace_all(&text, |c: &regex::Captures<'_>| {
        let near = c[0]
            .parse::<jiff::Timestamp>()
            .is_ok_and(|t| (now.as_second() - t.as_second()).abs() < 86_400);
        match near {
            true => "[now]".to_owned(),
            false => c[0].to_owned(),
        }
    });
    let base = repo.home.parent().unwrap().to_str().unwrap().to_owned();
    // Claude Code's name for the folder of a project's transcripts.
    let project = base.replace(['/', '.'], "-");
    text.replace(BIN, "[bin]")
        .replace(&format!("{base}/repo"), "[repo]")
        .replace(&format!("{base}/home"), "[home]")
        .replace(&base, "[tmp]")
        .replace(&project, "[tmp]")
}

/// Run `args` in `repo`; stdout (whatever the exit code, which is said first when it is not
/// 0), made steady.
fn output(repo: &TestRepo, args: &[&str]) -> String {
    let out = repo.run(args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stdout = match out.status.code() {
        Some(0) => stdout,
        code => format!("[exit {code:?}]\n{stdout}"),
    };
    steady(repo, &stdout)
}

#[test]
fn what_reading_commands_print() {
    let s = scenario::build();
    let repo = &s.repo;
    let run = |args: &[&str]| output(repo, args);
    let c = |label: &str| s.commits[label].clone();
    insta::assert_snapshot!("why", run(&["why", "src/cache.rs", "--color=never"]));
    insta::assert_snapshot!(
        "why_range",
        run(&["why", "src/cache.rs:4-6", "--color=never"])
    );
    insta::assert_snapshot!("why_json", run(&["why", "src/cache.rs", "--json"]));
    insta::assert_snapshot!(
        "query",
        run(&["query", "why does the cache expire entries by time"])
    );
    insta::assert_snapshot!(
        "query_json",
        run(&[
            "query",
            "why does the cache expire entries by time",
            "--json"
        ])
    );
    insta::assert_snapshot!("show", run(&["show", &c("c1"), "--color=never"]));
    insta::assert_snapshot!("show_json", run(&["show", &c("c1"), "--json"]));
    insta::assert_snapshot!("show_md", run(&["show", &c("c1"), "--format", "markdown"]));
    insta::assert_snapshot!("log", run(&["log", "--color=never"]));
    insta::assert_snapshot!("log_json", run(&["log", "--json"]));
    insta::assert_snapshot!("log_md", run(&["log", "--format", "markdown"]));
    insta::assert_snapshot!("status", run(&["status"]));
    insta::assert_snapshot!("status_json", run(&["status", "--json"]));
    insta::assert_snapshot!("doctor", run(&["doctor"]));
    insta::assert_snapshot!("doctor_json", run(&["doctor", "--json"]));
    insta::assert_snapshot!("claude_md_print", run(&["claude-md", "--print"]));
    insta::assert_snapshot!(
        "export_agent_trace",
        run(&["export", "--format", "agent-trace", "HEAD"])
    );
    insta::assert_snapshot!("export_md", run(&["export", "--format", "md", "s1-cache"]));
    insta::assert_snapshot!(
        "export_json",
        run(&["export", "--format", "json", "s1-cache"])
    );
    insta::assert_snapshot!("distill_json", run(&["distill", "--json"]));
    insta::assert_snapshot!("distill", run(&["distill"]));
    insta::assert_snapshot!("rebuild", run(&["rebuild"]));
    insta::assert_snapshot!("rebuild_json", run(&["rebuild", "--json"]));
    insta::assert_snapshot!("repair", run(&["repair"]));
    insta::assert_snapshot!("repair_json", run(&["repair", "--json"]));
    // What Claude Code's hooks are answered with.
    let hook = |payload: &str, changes: &[(&str, serde_json::Value)]| {
        let event = payload.split('-').next().unwrap();
        let payload = repo.hook_payload(payload, "s9-new", &repo.root.join("t.jsonl"), changes);
        let out = repo.run_with_input(
            &repo.root,
            &["hook", event],
            payload.to_string().as_bytes(),
            &[],
        );
        steady(repo, &String::from_utf8(out.stdout).unwrap())
    };
    insta::assert_snapshot!(
        "hook_user_prompt_submit",
        hook(
            "UserPromptSubmit",
            &[(
                "prompt",
                "Why does src/cache.rs expire entries by time?".into()
            )]
        )
    );
    let file = repo.root.join("src/db/pool.rs");
    insta::assert_snapshot!(
        "hook_pre_tool_use",
        hook(
            "PreToolUse-Write",
            &[(
                "tool_input",
                serde_json::json!({"file_path": file, "old_string": "a", "new_string": "b"})
            )]
        )
    );
    insta::assert_snapshot!("hook_session_start", hook("SessionStart-startup", &[]));
}

#[test]
fn what_writing_commands_print() {
    let s = scenario::build();
    let repo = &s.repo;
    let run = |args: &[&str]| output(repo, args);
    insta::assert_snapshot!("switch", run(&["switch", "session"]));
    insta::assert_snapshot!("switch_json", run(&["switch", "file", "--json"]));
    insta::assert_snapshot!(
        "record",
        run(&[
            "record",
            "decision",
            "Keep the retry budget at three attempts",
            "--because",
            "the worst case stays under two seconds",
            "--files",
            "src/http/retry.rs",
        ])
    );
    insta::assert_snapshot!(
        "record_json",
        run(&[
            "record",
            "rejection",
            "A retry on every status code",
            "--because",
            "a 4xx will not change on a retry",
            "--json",
        ])
    );
    insta::assert_snapshot!("claude_md", run(&["claude-md"]));
    insta::assert_snapshot!(
        "forget_json",
        run(&["forget", "--session", "s2-retry", "--json"])
    );
    insta::assert_snapshot!("forget", run(&["forget", "--session", "s1-cache"]));
    insta::assert_snapshot!(
        "forget_nothing",
        run(&["forget", "--match", "no such text"])
    );
}

#[test]
fn what_extraction_and_installation_print() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    insta::assert_snapshot!("init", output(&repo, &["init"]));
    let transcript = repo.install_transcript(
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
        "a1b2c3d4-0000-4000-8000-000000000001",
    );
    let transcript = transcript.to_str().unwrap();
    insta::assert_snapshot!(
        "extract_json",
        output(&repo, &["extract", "--transcript", transcript, "--json"])
    );
    insta::assert_snapshot!("extract", output(&repo, &["extract"]));
    insta::assert_snapshot!("import", output(&repo, &["import"]));
    insta::assert_snapshot!("import_json", output(&repo, &["import", "--json"]));
    insta::assert_snapshot!("status_extracted", output(&repo, &["status"]));
    insta::assert_snapshot!("install", output(&repo, &["install", "--scope", "user"]));
    insta::assert_snapshot!("status_installed", output(&repo, &["status"]));
    insta::assert_snapshot!("doctor_installed", output(&repo, &["doctor"]));
    insta::assert_snapshot!(
        "uninstall",
        output(&repo, &["uninstall", "--scope", "user"])
    );
    let bare = repo.home.parent().unwrap().join("bare.git");
    repo.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", bare.to_str().unwrap()]);
    insta::assert_snapshot!("sync", output(&repo, &["sync"]));
    insta::assert_snapshot!("sync_json", output(&repo, &["sync", "--json"]));
}
