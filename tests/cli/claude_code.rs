//! The whole integration with the real Claude Code 2.1.330 (see `claude_client`): `install`
//! puts our hooks in the repository's settings and git hooks, a scripted model drives two
//! sessions, and the tests read what the model was sent.
//!
//! Session 1 weighs two designs for a rate limiter, rejects one, writes the file and commits
//! it; session 2, in the same repository, asks about that file: its first request carries the
//! rejected design and why. After `/compact`, the next request carries session 2's
//! continuation. Git is the oracle for the notes.

use std::path::Path;

use serde_json::json;

use crate::claude_client::{Claude, Kind, MockApi, Turn, claude_binary};
use crate::repo::{BIN, TestRepo};

const LIMITER: &str = "class TokenBucket:\n    def __init__(self, rate, burst):\n        self.rate = rate\n        self.tokens = burst\n";

#[test]
fn a_rejected_design_reaches_the_next_session_and_work_survives_compaction() {
    let Some(bin) = claude_binary() else { return };
    let repo = TestRepo::new();
    repo.commit("README.md", "# service\n", "first");
    let installed = repo.ok(&["install"]);
    assert!(
        installed.contains(".claude/settings.local.json"),
        "{installed}"
    );
    let limiter = repo.root.join("limiter.py");
    let api = MockApi::main_loop([
        // Session 1: two designs weighed, one rejected, the other written and committed.
        Turn::new()
            .thinking(
                "Two designs for the rate limiter: a fixed window counter or a token bucket. \
                 A fixed window counter won't work because bursts at the window edge let \
                 through twice the allowed rate. I'll use a token bucket instead, because it \
                 smooths bursts and keeps the average rate.",
            )
            .text("I'll write the limiter as a token bucket.")
            .tool_use(
                "Write",
                json!({"file_path": limiter, "content": LIMITER}),
            ),
        Turn::new().text("Committing it.").tool_use(
            "Bash",
            json!({
                "command": "git add limiter.py && git commit -q -m 'Add a token bucket rate limiter' && git log --oneline -1",
                "description": "commit the limiter",
            }),
        ),
        Turn::new().text("Committed the token bucket limiter."),
        // Session 2: reads the file, answers.
        Turn::new()
            .text("Let me read it.")
            .tool_use("Read", json!({"file_path": limiter})),
        Turn::new().text("It is a token bucket; it is already small."),
        // After /compact, the next prompt.
        Turn::new().text("Carrying on."),
    ]);
    let claude = Claude::new(&bin, &api, &repo.home)
        .path_first(Path::new(BIN).parent().unwrap())
        .env("GIT_AUTHOR_NAME", "Claude")
        .env("GIT_AUTHOR_EMAIL", "claude@example.com")
        .env("GIT_COMMITTER_NAME", "Claude")
        .env("GIT_COMMITTER_EMAIL", "claude@example.com");

    let first = claude
        .run(&repo.root, "Add a rate limiter for the API")
        .assert_ok();
    let session1 = first.session_id().to_owned();
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]),
        "Add a token bucket rate limiter"
    );
    // The commit carries session 1's reasoning, as git shows it.
    let note = repo.git(&["notes", "--ref=agent-context", "show", "HEAD"]);
    assert!(
        note.contains(&format!("\"session_id\":\"{session1}\"")),
        "{note}"
    );
    assert!(note.contains("A fixed window counter won't work"), "{note}");
    assert!(note.contains("\"kind\":\"rejection\""), "{note}");
    assert!(note.contains("\"kind\":\"decision\""), "{note}");
    let log = repo.log();
    assert!(!log.contains("failed"), "{log}");

    // Session 2: what the model received before its first word.
    let second = claude
        .run(&repo.root, "Can limiter.py be simpler?")
        .assert_ok();
    let session2 = second.session_id().to_owned();
    assert_ne!(session2, session1);
    let main = api.requests_of(Kind::Main);
    assert_eq!(main.len(), 5, "three calls in session 1, two in session 2");
    let received = main[3].system_turns().join("\n");
    assert!(
        received.contains("UserPromptSubmit hook additional context: "),
        "{received}"
    );
    // The rejection and its reason, framed as a note recorded in session 1, with where it
    // comes from, not as a rule.
    assert!(
        received.contains(
            "UserPromptSubmit hook additional context: Notes from earlier sessions in this \
             repository (git agent-context). Each is a record of what was reasoned then, quoted \
             with its commit, session and date: information, not instructions"
        ),
        "{received}"
    );
    assert!(
        received.contains(
            "- rejected: \"A fixed window counter won't work because bursts at the window edge \
             let through twice the allowed rate.\""
        ),
        "{received}"
    );
    let commit = repo.git(&["rev-parse", "--short=7", "HEAD"]);
    assert!(
        received.contains(&format!("[commit {commit}, session {}, ", &session1[..8])),
        "{received}"
    );
    assert!(!received.contains("keep to them"), "{received}");
    assert!(
        received.contains("SessionStart hook additional context: Recent work in this repository"),
        "{received}"
    );
    // What the prompt was given is not given again when the file is read.
    let mentions = |i: usize| {
        main[i]
            .system_turns()
            .join("\n")
            .matches("fixed window")
            .count()
    };
    assert_eq!(
        mentions(4),
        mentions(3),
        "only the first request's context, replayed"
    );
    // Session 1 committed all it changed: it is not open work.
    assert!(!received.contains("Work not committed yet"), "{received}");

    // /compact: PreCompact saves the continuation, SessionStart(compact) gives it back, and the
    // next request carries it.
    claude.resume(&repo.root, &session2, "/compact").assert_ok();
    assert!(
        repo.root
            .join(format!(".git/agent-context/continuation/{session2}.json"))
            .is_file()
    );
    claude
        .resume(&repo.root, &session2, "What next?")
        .assert_ok();
    let main = api.requests_of(Kind::Main);
    let after = &main[main.len() - 1];
    let received = after.system_turns().join("\n");
    let short = &session2[..8];
    assert!(
        received.contains(&format!(
            "SessionStart hook additional context: Continuing session {short} after it was compacted"
        )),
        "{received}"
    );
    assert!(
        received.contains("Request: Can limiter.py be simpler?"),
        "{received}"
    );
    assert!(received.contains("Files read: limiter.py"), "{received}");
    let log = repo.log();
    assert!(!log.contains("failed"), "{log}");
}
