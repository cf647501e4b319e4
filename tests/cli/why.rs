//! `why`: which commits own a file's lines at HEAD, and their reasoning — through the binary,
//! in repositories the tests build.

use std::fs;

use serde_json::Value;

use crate::repo::{TestRepo, stderr};

/// A repository where a session's commit wrote lines 1-4 of cache.py with reasoning, and a
/// later commit by hand replaced line 3.
fn explained_repo() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "base");
    let with_reasoning = repo.commit("cache.py", "a\nb\nc\nd\n", "feat: TTL cache");
    let by_hand = repo.commit("cache.py", "a\nb\nC\nd\n", "fix: typo");
    let path = crate::graph::session(
        &repo,
        "s-link",
        0,
        "Add a cache",
        "I'll go with a TTL map instead of an LRU because entries expire by time.",
        &with_reasoning,
    );
    repo.extract(&path);
    (repo, with_reasoning, by_hand)
}

#[test]
fn why_names_the_commits_that_own_the_lines_and_their_reasoning() {
    let (repo, with_reasoning, _) = explained_repo();
    let out = repo.ok(&["why", "cache.py"]);
    let expected_head = format!(
        "cache.py (4 lines): 1 commit with reasoning, 1 line without\n\n{}  2026-01-01  feat: TTL cache\n  lines 1-2, 4\n  session s-link: Add a cache\n  decision: I'll go with a TTL map instead of an LRU because entries expire by time.\n    not taken: an LRU\n",
        &with_reasoning[..7]
    );
    assert!(out.starts_with(&expected_head), "{out}");

    let json = repo.json(&["why", "cache.py:2-3"]);
    assert_eq!(json["range"], serde_json::json!({"start": 2, "end": 3}));
    assert_eq!(json["unexplained_lines"], 1);
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1);
    assert_eq!(commits[0]["commit"], with_reasoning.as_str());
    assert_eq!(
        commits[0]["lines"],
        serde_json::json!([{"start": 2, "end": 2}])
    );
    assert_eq!(commits[0]["events"][0]["kind"], "decision");
    assert!(
        commits[0]["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "write" && e["kind"] != "session"),
        "operations are not reasons"
    );

    // From a subfolder, paths are relative to it, as with git.
    fs::create_dir_all(repo.root.join("sub")).unwrap();
    let out = repo
        .cmd_in(&repo.root.join("sub"))
        .args(["why", "../cache.py:3", "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["path"], "cache.py");
    assert!(
        json["commits"].as_array().unwrap().is_empty(),
        "line 3 was written by hand"
    );
}

#[test]
fn a_file_without_reasoning_says_so_in_one_line() {
    let (repo, _, _) = explained_repo();
    assert_eq!(
        repo.ok(&["why", "README.md"]),
        "README.md: no reasoning recorded for its 1 line\n"
    );
    assert_eq!(
        repo.ok(&["why", "cache.py:3"]),
        "cache.py: no reasoning recorded for its lines 3-3 of 4\n"
    );
}

#[test]
fn bad_targets_are_one_line_errors_and_exit_2() {
    let (repo, _, _) = explained_repo();
    fs::write(repo.root.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    repo.git(&["add", "logo.png"]);
    repo.commit("logo-note.txt", "x\n", "add a logo");
    fs::write(repo.root.join("untracked.py"), "x\n").unwrap();
    let outside = repo.outside().join("x.py");
    for (target, message) in [
        (
            "untracked.py",
            "error: untracked.py: not a file tracked at HEAD",
        ),
        (
            "missing.py",
            "error: missing.py: not a file tracked at HEAD",
        ),
        (
            "cache.py:3-9",
            "error: cache.py: lines 3-9 are outside the file (4 lines)",
        ),
        (
            "cache.py:0-2",
            "error: cache.py: lines 0-2 are outside the file (4 lines)",
        ),
        (
            "cache.py:5-",
            "error: \"cache.py:5-\": a line range is <start>-<end>, counting from 1",
        ),
        (
            "logo.png",
            "error: logo.png: binary file; no lines to explain",
        ),
        (outside.to_str().unwrap(), "outside the repository"),
    ] {
        let out = repo.run(&["why", target]);
        assert_eq!(out.status.code(), Some(2), "{target}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(message), "{target}: {err}");
    }
}
