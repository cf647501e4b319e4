//! Claude Code's hooks through the binary: the payloads Claude Code 2.1.330 sent
//! (`fixtures/hooks/`), pointed at a scenario repository, and what the hook answers.

use std::fs;
use std::process::Output;

use serde_json::Value;

use crate::repo::{TestRepo, fixture, stderr};
use crate::scenario;

const SESSION: &str = "9b1f0c2e-5d4a-4e8b-a1c3-7f6e5d4c3b2a";

/// The recorded payload of `name`, as if Claude Code ran in the scenario repository.
fn payload(repo: &TestRepo, name: &str, changes: &[(&str, Value)]) -> Value {
    let text = fs::read_to_string(fixture(&format!("hooks/{name}.json"))).unwrap();
    let mut payload: Value = serde_json::from_str(&text).unwrap();
    payload["cwd"] = repo.root.to_str().unwrap().into();
    payload["session_id"] = SESSION.into();
    let transcript = repo.project_dir().join(format!("{SESSION}.jsonl"));
    payload["transcript_path"] = transcript.to_str().unwrap().into();
    for (key, value) in changes {
        payload[*key] = value.clone();
    }
    payload
}

/// Run `hook <event>` with `input` on stdin, from `dir`, with extra environment.
fn run_hook(
    repo: &TestRepo,
    dir: &std::path::Path,
    event: &str,
    input: &[u8],
    vars: &[(&str, &str)],
) -> Output {
    let out = repo.run_with_input(dir, &["hook", event], input, vars);
    assert!(out.status.success(), "hooks exit 0: {}", stderr(&out));
    out
}

/// What the hook injected: the context of its JSON answer, or `None` for an empty answer.
fn injected(repo: &TestRepo, event: &str, payload: &Value) -> Option<String> {
    let out = run_hook(repo, &repo.root, event, payload.to_string().as_bytes(), &[]);
    assert_eq!(stderr(&out), "", "a hook that works says nothing on stderr");
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.is_empty() {
        return None;
    }
    let answer: Value = serde_json::from_str(&stdout).expect("the answer is JSON");
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], event, "{answer}");
    Some(specific["additionalContext"].as_str().unwrap().to_owned())
}

#[test]
fn a_prompt_gets_its_reasoning_once_and_again_after_compaction() {
    let s = scenario::build();
    let repo = &s.repo;
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[(
            "prompt",
            "Why does src/cache.rs keep a TTL map? Could it be an LRU?".into(),
        )],
    );
    let context = injected(repo, "UserPromptSubmit", &ask).expect("reasoning for cache.rs");
    assert!(
        context.contains("Use a TTL map for the response cache"),
        "{context}"
    );
    assert!(context.contains("An LRU cache won't work"), "{context}");
    // Given once per session.
    assert_eq!(injected(repo, "UserPromptSubmit", &ask), None);
    let log = fs::read_to_string(repo.root.join(".git/agent-context/log")).unwrap();
    assert!(log.contains("hook UserPromptSubmit: injected"), "{log}");

    // Another session is given it too.
    let mut other = ask.clone();
    other["session_id"] = "another-session".into();
    assert!(injected(repo, "UserPromptSubmit", &other).is_some());

    // Compaction takes the context away: it is given again.
    let compact = payload(repo, "SessionStart-compact", &[]);
    assert_eq!(injected(repo, "SessionStart", &compact), None);
    assert_eq!(
        injected(repo, "UserPromptSubmit", &ask).as_deref(),
        Some(context.as_str())
    );
}

#[test]
fn a_prompt_nothing_bears_on_gets_nothing() {
    let s = scenario::build();
    let repo = &s.repo;
    for prompt in ["Add a badge for the build to the README", "thanks!", ""] {
        let ask = payload(repo, "UserPromptSubmit", &[("prompt", prompt.into())]);
        assert_eq!(injected(repo, "UserPromptSubmit", &ask), None, "{prompt:?}");
    }
}

#[test]
fn a_file_about_to_change_gets_its_decisions_and_rejections() {
    let s = scenario::build();
    let repo = &s.repo;
    let cache = repo.root.join("src/cache.rs");
    let write = payload(
        repo,
        "PreToolUse-Write",
        &[(
            "tool_input",
            serde_json::json!({"file_path": cache.to_str().unwrap(), "content": "x"}),
        )],
    );
    let context = injected(repo, "PreToolUse", &write).expect("decisions for cache.rs");
    assert!(
        context.starts_with("Recorded decisions on src/cache.rs"),
        "{context}"
    );
    assert!(
        context.contains("- rejected: An LRU cache won't work"),
        "{context}"
    );
    assert!(
        context.contains("do not re-propose: an LRU cache"),
        "{context}"
    );
    // Explorations are not standing decisions, nor are the decisions of the files beside it.
    assert!(!context.contains("Read how the HTTP client"), "{context}");
    assert!(!context.contains("connection pool"), "{context}");
    assert!(
        context.len() <= 300 * 7 / 2,
        "a few hundred tokens at most: {}",
        context.len()
    );
    // Once per session, for any tool.
    let mut read = write.clone();
    read["tool_name"] = "Read".into();
    assert_eq!(injected(repo, "PreToolUse", &read), None);

    // Other tools, files without reasoning and files outside the repository get nothing.
    let mut bash = write.clone();
    bash["session_id"] = "fresh".into();
    bash["tool_name"] = "Bash".into();
    bash["tool_input"] = serde_json::json!({"command": "cat src/cache.rs"});
    assert_eq!(injected(repo, "PreToolUse", &bash), None);
    for path in [repo.root.join("NOTES.md"), repo.outside().join("cache.rs")] {
        let mut other = write.clone();
        other["session_id"] = "fresh".into();
        other["tool_input"]["file_path"] = path.to_str().unwrap().into();
        assert_eq!(
            injected(repo, "PreToolUse", &other),
            None,
            "{}",
            path.display()
        );
    }
}

#[test]
fn hooks_fail_open() {
    let s = scenario::build();
    let repo = &s.repo;
    // Bad input: nothing injected, one line on stderr and in the log.
    let out = run_hook(repo, &repo.root, "UserPromptSubmit", b"{not json", &[]);
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("hook UserPromptSubmit: bad input"), "{err}");
    let log = fs::read_to_string(repo.root.join(".git/agent-context/log")).unwrap();
    assert!(
        log.contains("hook UserPromptSubmit: failed: bad input"),
        "{log}"
    );

    // Outside a repository: nothing at all.
    let mut outside = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "src/cache.rs".into())],
    );
    outside["cwd"] = repo.outside().to_str().unwrap().into();
    let out = run_hook(
        repo,
        &repo.outside(),
        "UserPromptSubmit",
        outside.to_string().as_bytes(),
        &[],
    );
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );

    // Past its budget the hook answers with nothing: here the record of what the session was
    // given is a named pipe that no one writes to, a read that never ends, as on a hung disk.
    let given = repo
        .root
        .join(format!(".git/agent-context/injected/{SESSION}.txt"));
    fs::create_dir_all(given.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&given).status();
    assert!(made.unwrap().success(), "mkfifo {}", given.display());
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "Why a TTL map in src/cache.rs?".into())],
    );
    let out = run_hook(
        repo,
        &repo.root,
        "UserPromptSubmit",
        ask.to_string().as_bytes(),
        &[("GIT_AGENT_CONTEXT_HOOK_BUDGET_MS", "50")],
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr(&out).contains("over its budget of 50 ms"),
        "{}",
        stderr(&out)
    );
    fs::remove_file(&given).unwrap();
    // With the store free, the same hook answers.
    assert!(injected(repo, "UserPromptSubmit", &ask).is_some());
}
