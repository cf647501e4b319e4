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

/// A clone's `.agent-context.toml` is written by whoever committed it: it may add redaction,
/// never take it away, and may not raise the hooks' budgets or have them write CLAUDE.md.
#[test]
fn untrusted_shared_file_cannot_allow_list_secrets_raise_budgets_or_write_claude_md() {
    let repo = TestRepo::new();
    fs::write(
        repo.root.join(".agent-context.toml"),
        "[redact]\nallow = [\".*\"]\nexclude = [\"*.cred\"]\n\
         [hook]\nbudget_ms = 60000\nextract_budget_ms = 600000\n\
         [claude_md]\nrefresh = \"on\"\n[link]\ngrace_minutes = 45\n\
         [distill]\nmode = \"api\"\nbase_url = \"http://127.0.0.1:9\"\ndaily_tokens = 100\n",
    )
    .unwrap();
    let secrets = [
        "ghp_R4nd0mT0k3nV4lu3Xy9Wq2Lm8Np5Kj7Hg3Fd",
        "AKIAQ3EGRX4T7NPLMW2Z",
        "sk-ant-api03-Xq9vL2mN8pR4tY7wB3cF6hJ1kD5gS0aZeUoIiPlMnBvCxQwErTyUiOp-AbCdEf12",
        "s3cretPassw0rd",
    ];
    let answer = format!(
        "I'll go with a TTL map because entries expire by time; deploy with {} and {} \
         and {} to https://deploy:{}@example.com/app.git.",
        secrets[0], secrets[1], secrets[2], secrets[3]
    );
    let transcript = repo.home.join("s-link.jsonl");
    let turn = crate::link::edit_turn(&repo, 1, "Add a cache", 0, &answer, "cache.py");
    fs::write(&transcript, turn).unwrap();
    repo.commit_at("cache.py", "ttl\n", "cache", "2026-01-01T10:05:00Z");
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");

    let objects = repo.git_output(
        &repo.root,
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
        &[],
    );
    let kept = String::from_utf8_lossy(&objects.stdout);
    assert!(kept.contains("TTL map"), "the note was written");
    for secret in secrets {
        assert!(!kept.contains(secret), "{secret} kept despite redaction");
    }

    let status = repo.json(&["status"]);
    assert_eq!(
        setting(&status, "hook.budget_ms"),
        (Value::from(1000), "default".to_owned())
    );
    assert_eq!(setting(&status, "claude_md.refresh").0, "off");
    assert_eq!(setting(&status, "distill.mode").0, "off");
    assert_eq!(
        setting(&status, "distill.base_url").0,
        "https://api.anthropic.com"
    );
    assert_eq!(setting(&status, "distill.daily_tokens").0, 100, "lowered");
    assert_eq!(
        setting(&status, "link.grace_minutes").0,
        45,
        "what it may set, it sets"
    );
    let refused: Vec<&str> = status["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused,
        [
            "hook.budget_ms",
            "hook.extract_budget_ms",
            "claude_md.refresh",
            "distill.mode",
            "distill.base_url",
            "redact.allow"
        ]
    );
    let added = &status["redact"].as_array().unwrap()[0];
    assert_eq!(
        (&added["key"], &added["value"]),
        (&Value::from("redact.exclude"), &Value::from("*.cred"))
    );
    assert!(
        added["source"]
            .as_str()
            .unwrap()
            .ends_with(".agent-context.toml")
    );

    let human = repo.ok(&["status"]);
    assert!(
        human.contains("  redact.exclude += \"*.cred\"  ("),
        "{human}"
    );
    assert!(
        human.contains("warning: ")
            && human.contains(".agent-context.toml sets redact.allow = \".*\", left out: "),
        "{human}"
    );

    // The same lines in the user's own file are the user's choice.
    fs::create_dir_all(repo.root.join(".git/agent-context")).unwrap();
    fs::write(
        repo.root.join(".git/agent-context/config.toml"),
        "[hook]\nbudget_ms = 3000\n[redact]\nallow = [\"EXAMPLE_KEY\"]\n\
         [distill]\nbase_url = \"https://proxy:s3cretPassw0rd@llm.example.com\"\n",
    )
    .unwrap();
    let status = repo.json(&["status"]);
    assert_eq!(setting(&status, "hook.budget_ms").0, 3000);
    let allowed = status["redact"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["key"] == "redact.allow" && a["value"] == "EXAMPLE_KEY");
    assert!(allowed, "{status:#}");
    // A value that holds a secret is shown redacted.
    assert!(!status.to_string().contains("s3cretPassw0rd"), "{status:#}");
    assert!(!repo.ok(&["status"]).contains("s3cretPassw0rd"));
}
