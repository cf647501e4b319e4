//! Configuration: the shared file, the local file and the environment, as `status` shows them,
//! and bad configuration refused with the file, line and key named.

use std::fs;

use serde_json::Value;

use crate::link::{cache_turn, prompt};
use crate::repo::{TestRepo, stderr};

fn setting(status: &Value, key: &str) -> (Value, String) {
    let s = status["config"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("{key} in {status:#}"));
    (s["value"].clone(), s["source"].as_str().unwrap().to_owned())
}

#[test]
fn status_shows_each_value_and_where_it_came_from() {
    let repo = TestRepo::new();
    let status = repo.json(&["status"]);
    assert_eq!(
        setting(&status, "query.backend"),
        (Value::from("file"), "default".to_owned())
    );

    fs::write(
        repo.root.join(".agent-context.toml"),
        "[query]\nbackend = \"session\"\n\n[link]\ngrace_minutes = 5\n",
    )
    .unwrap();
    fs::create_dir_all(repo.root.join(".git/agent-context")).unwrap();
    fs::write(
        repo.root.join(".git/agent-context/config.toml"),
        "[link]\ngrace_minutes = 7\n",
    )
    .unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .args(["status", "--json"])
        .env("GIT_AGENT_CONTEXT_LINK_ACTIVE_MINUTES", "15")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (value, source) = setting(&status, "query.backend");
    assert_eq!(value, "session");
    assert!(source.ends_with("repo/.agent-context.toml"), "{source}");
    let (value, source) = setting(&status, "link.grace_minutes");
    assert_eq!(value, 7, "the local file wins over the shared one");
    assert!(
        source.ends_with(".git/agent-context/config.toml"),
        "{source}"
    );
    assert_eq!(
        setting(&status, "link.active_minutes"),
        (
            Value::from(15),
            "$GIT_AGENT_CONTEXT_LINK_ACTIVE_MINUTES".to_owned()
        )
    );

    let human = repo.ok(&["status"]);
    assert!(human.contains("  query.backend = session  ("), "{human}");
}

#[test]
fn bad_configuration_is_one_line_naming_file_line_and_key_and_changes_nothing() {
    let repo = TestRepo::new();
    fs::write(
        repo.root.join(".agent-context.toml"),
        "[link]\n# why\ngrace_minute = 5\n",
    )
    .unwrap();
    for args in [&["status"][..], &["extract"], &["init"]] {
        let out = repo.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: ")
                && err.contains(".agent-context.toml:3: unknown key `link.grace_minute`"),
            "{err}"
        );
    }
    assert!(
        !repo.root.join(".git/agent-context").exists(),
        "nothing written"
    );

    fs::remove_file(repo.root.join(".agent-context.toml")).unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .arg("status")
        .env("GIT_AGENT_CONTEXT_QUERY_BACKEND", "graph")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim(),
        "error: $GIT_AGENT_CONTEXT_QUERY_BACKEND: `query.backend` must be one of file, session, decision, not \"graph\""
    );

    let out = repo
        .cmd_in(&repo.root)
        .arg("status")
        .env("GIT_AGENT_CONTEXT_LINK_GRACE", "5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: $GIT_AGENT_CONTEXT_LINK_GRACE: unknown setting (known: "),
        "{}",
        stderr(&out)
    );

    // A hook says it once and lets the commit through.
    let out = repo
        .cmd_in(&repo.root)
        .args(["hook", "post-commit"])
        .env("GIT_AGENT_CONTEXT_QUERY_BACKEND", "graph")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn the_grace_period_is_configurable() {
    let repo = TestRepo::new();
    let transcript = repo.home.join("s-link.jsonl");
    let content = cache_turn(&repo) + &prompt("p2", "thanks", "2026-01-01T10:01:00Z");
    fs::write(&transcript, content).unwrap();
    // Twenty minutes after the session's last event: inside the default 30, outside 10.
    repo.commit_at("cache.py", "ttl\n", "cache", "2026-01-01T10:21:00Z");
    fs::write(
        repo.root.join(".agent-context.toml"),
        "[link]\ngrace_minutes = 10\n",
    )
    .unwrap();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 0, "{report:#}");
    fs::remove_file(repo.root.join(".agent-context.toml")).unwrap();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
}
