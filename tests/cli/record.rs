//! `record`: reasoning in the words of whoever made it. Inside a session it waits for the
//! session's commit like extracted events; a person records on a commit at once. Either way it
//! is redacted, and it ranks above what extraction read out of the session's text.

use git_agent_context::event::{Event, Origin};
use git_agent_context::store::notes;
use serde_json::Value;

use crate::claude_hooks::{payload, write_payload};
use crate::git_hooks::{commit_as, hooked_repo, transcript_in};
use crate::link::{cache_turn, store};
use crate::repo::{TestRepo, hook_answer, stderr};
use crate::scenario;

const SESSION: &str = "s-link";

fn note(repo: &TestRepo, commit: &str) -> Vec<Event> {
    notes::read(&store(repo), commit).unwrap()
}

#[test]
fn the_agent_records_in_its_session_and_the_record_goes_to_its_commit_first() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    let out = repo
        .cmd_in(&repo.root)
        .args([
            "record",
            "decision",
            "Keep the TTL at five minutes; the token ghp_R4nd0mT0k3nV4lu3Xy9Wq2Lm8Np5Kj7Hg3Fd stays out",
            "--rejected",
            "no TTL: prices go stale",
            "--because",
            "prices change hourly and a stale price costs a refund",
            "--files",
            "cache.py",
        ])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("recorded decision ")
            && said.contains("(pending, for the session's next commit)"),
        "{said}"
    );
    let pending = repo.pending();
    let recorded: Vec<&Value> = pending.iter().filter(|e| e["origin"] == "agent").collect();
    assert_eq!(recorded.len(), 1, "{pending:#?}");
    assert_eq!(recorded[0]["session_id"], SESSION);

    let head = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    let events = note(&repo, &head);
    let recorded = events
        .iter()
        .find(|e| e.origin == Origin::Agent)
        .expect("the record is in the note");
    assert!(
        recorded
            .summary
            .starts_with("Keep the TTL at five minutes; the token [REDACTED:"),
        "{}",
        recorded.summary
    );
    assert_eq!(recorded.alternatives, ["no TTL: prices go stale"]);
    assert_eq!(recorded.files_affected, ["cache.py"]);
    assert!(recorded.rationale.contains("a stale price costs a refund"));
    assert!(
        events
            .iter()
            .any(|e| e.origin != Origin::Agent && e.summary.contains("TTL map")),
        "the extracted decision too"
    );
    assert!(
        !repo.pending().iter().any(|e| e["origin"] == "agent"),
        "the record left the queue"
    );

    let why = repo.ok(&["why", "cache.py"]);
    assert!(
        why.contains("decision: Keep the TTL at five minutes"),
        "{why}"
    );
    // About to change the file, the agent gets its own record first.
    let cache = repo.root.join("cache.py");
    let write = write_payload(&repo, &cache);
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "PreToolUse"],
        write.to_string().as_bytes(),
        &[],
    );
    let given = hook_answer("PreToolUse", &out).expect("notes on cache.py");
    let (record, extracted) = (given.find("Keep the TTL at five"), given.find("TTL map"));
    assert!(
        record.is_some() && extracted.is_some() && record < extracted,
        "{given}"
    );
}

#[test]
fn a_person_records_on_a_commit_once_whatever_the_form() {
    let repo = TestRepo::new();
    repo.commit("src/pay.rs", "fn pay() {}\n", "first");
    let head = repo.commit("src/pay.rs", "fn pay() { retry() }\n", "pay: retry");
    let sub = repo.root.join("src");
    let out = repo
        .cmd_in(&sub)
        .args([
            "record",
            "rejection",
            "Retrying card payments client-side",
            "--because",
            "a retry can charge twice",
            "--files",
            "pay.rs",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("(on commit {})", &head[..7])));
    // The same as JSON on stdin: the same event, once.
    let json = r#"{"what": "rejection", "text": "Retrying card payments client-side", "because": "a retry can charge twice", "files": ["src/pay.rs"]}"#;
    let out = repo.run_with_input(
        &repo.root,
        &["record", "--stdin", "--json"],
        json.as_bytes(),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["event"]["origin"], "human");
    let events = note(&repo, &head);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(
        (events[0].origin, events[0].files_affected.as_slice()),
        (Origin::Human, &["src/pay.rs".to_owned()][..])
    );
    let log = repo.ok(&["log"]);
    assert!(
        log.contains("rejected: Retrying card payments client-side"),
        "{log}"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);

    // Bad input: one line, exit 2, nothing recorded.
    for (args, input) in [
        (&["record", "--stdin"][..], "{\"what\": \"decision\""),
        (
            &["record", "--stdin"][..],
            "{\"what\": \"decision\", \"text\": \"x\", \"colour\": 1}",
        ),
        (&["record", "decision", "  "][..], ""),
        (&["record", "decision", "x", "--commit", "nope"][..], ""),
        (
            &["record", "decision", "x", "--files", "../outside.rs"][..],
            "",
        ),
    ] {
        let out = repo.run_with_input(&repo.root, args, input.as_bytes(), &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: ") && err.trim_end().lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert_eq!(note(&repo, &head).len(), 1);
}

#[test]
fn a_new_session_is_told_it_can_record() {
    let s = scenario::build();
    let start = payload(&s.repo, "SessionStart-startup", &[]);
    let out = s.repo.run_with_input(
        &s.repo.root,
        &["hook", "SessionStart"],
        start.to_string().as_bytes(),
        &[],
    );
    let brief = hook_answer("SessionStart", &out).expect("a brief");
    let second = brief.lines().next().unwrap();
    assert!(
        second.contains("`git agent-context record decision \"<choice>\""),
        "{brief}"
    );
}

#[test]
fn a_record_supersedes_the_decisions_it_names() {
    let repo = TestRepo::new();
    repo.commit("src/pay.rs", "fn pay() {}\n", "first");
    let said = repo.json(&[
        "record",
        "decision",
        "Charge cards synchronously in the request",
        "--files",
        "src/pay.rs",
    ]);
    let old = said["event"]["id"].as_str().unwrap().to_owned();
    repo.commit("src/pay.rs", "fn pay() { queue() }\n", "pay: queue");
    for bad in ["zz", "0000000000", &old[..3]] {
        let out = repo.run(&["record", "decision", "x", "--supersedes", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    }
    repo.ok(&[
        "record",
        "decision",
        "Move card payments to a background queue",
        "--because",
        "the provider times out under load",
        "--supersedes",
        &old[..6],
    ]);
    let section = repo.ok(&["claude-md", "--print"]);
    assert!(
        section.contains("Move card payments to a background queue"),
        "{section}"
    );
    assert!(
        !section.contains("Charge cards synchronously"),
        "the replaced decision stands no more: {section}"
    );
}

#[test]
fn a_record_made_again_in_a_session_replaces_the_first_and_can_be_superseded_at_once() {
    let repo = hooked_repo();
    let record = |args: &[&str]| {
        let out = repo
            .cmd_in(&repo.root)
            .arg("record")
            .args(args)
            .arg("--json")
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["event"].clone()
    };
    let first = record(&["decision", "Keep the TTL at five minutes"]);
    let again = record(&[
        "decision",
        "Keep the TTL at five minutes",
        "--files",
        "cache.py",
        "--rejected",
        "no TTL: stale",
    ]);
    assert_eq!(first["id"], again["id"]);
    let pending = repo.pending();
    let stored: Vec<&Value> = pending.iter().filter(|e| e["id"] == first["id"]).collect();
    assert_eq!(stored.len(), 1, "{pending:#?}");
    assert_eq!(
        (&stored[0]["files_affected"], &stored[0]["alternatives"]),
        (
            &serde_json::json!(["cache.py"]),
            &serde_json::json!(["no TTL: stale"])
        )
    );
    // The id just printed names a decision, pending or not.
    let id = first["id"].as_str().unwrap();
    let later = record(&[
        "decision",
        "Keep the TTL at one minute",
        "--supersedes",
        &id[..8],
    ]);
    assert_eq!(later["supersedes"], serde_json::json!([id]));
    // Not a file of the working tree.
    for bad in [".", ".git/config"] {
        let out = repo
            .cmd_in(&repo.root)
            .args(["record", "decision", "x", "--files", bad])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            stderr(&out).contains("is not a file of the working tree"),
            "{}",
            stderr(&out)
        );
    }
}
