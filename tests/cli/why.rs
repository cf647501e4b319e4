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

/// The commit of each line of `path` at HEAD, as `why --json` (with `extra` flags) gives it.
fn owners_by_why(repo: &TestRepo, path: &str, extra: &[&str]) -> Vec<Option<String>> {
    let mut args = vec!["why", path];
    args.extend(extra);
    let answer = repo.json(&args);
    let mut out = vec![None; answer["lines"].as_u64().unwrap() as usize];
    for c in answer["commits"].as_array().unwrap() {
        for range in c["lines"].as_array().unwrap() {
            for line in range["start"].as_u64().unwrap()..=range["end"].as_u64().unwrap() {
                out[line as usize - 1] = Some(c["commit"].as_str().unwrap().to_owned());
            }
        }
    }
    out
}

/// The commit of each line of `path` at HEAD, as `git blame` gives it.
fn owners_by_git(repo: &TestRepo, path: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for line in repo.git(&["blame", "--porcelain", path]).lines() {
        // `<sha> <line in the original> <line now>`, with a count on a group's first line.
        let mut f = line.split(' ');
        if let (Some(sha), Some(_), Some(at)) = (f.next(), f.next(), f.next())
            && sha.len() == 40
            && at.parse::<usize>().is_ok()
        {
            let at: usize = at.parse().unwrap();
            out.resize(out.len().max(at), None);
            out[at - 1] = Some(sha.to_owned());
        }
    }
    out
}

#[test]
fn merges_own_only_the_lines_that_differ_from_every_parent_as_in_git_blame() {
    let repo = TestRepo::new();
    let mut day = 0;
    let mut at = || {
        day += 1;
        format!("2026-01-{day:02}T10:00:00Z")
    };
    let text = |changed: &[(usize, &str)]| -> String {
        (1..=12)
            .map(|n| {
                changed
                    .iter()
                    .rev()
                    .find(|(k, _)| *k == n)
                    .map_or(format!("let line_{n} = original({n});"), |(_, t)| {
                        (*t).to_owned()
                    })
                    + "\n"
            })
            .collect()
    };
    let write = |repo: &TestRepo, changes: &[(usize, &str)], message: &str, date: &str| {
        repo.commit_at("src/lib.rs", &text(changes), message, date)
    };
    let merge = |repo: &TestRepo, branch: &str, date: &str| {
        repo.git_at(
            &[
                "merge",
                "--no-ff",
                "-q",
                "-m",
                &format!("merge {branch}"),
                branch,
            ],
            date,
        );
    };
    write(&repo, &[], "base", &at());
    repo.git(&["branch", "feature"]);
    // Main and a feature branch change different lines; each merges the other (both ways).
    let mut main: Vec<(usize, &str)> = vec![(7, "let line_7 = on_main(7);")];
    write(&repo, &main, "main: line 7", &at());
    repo.git(&["checkout", "-q", "feature"]);
    let mut feature: Vec<(usize, &str)> = vec![(2, "let line_2 = on_feature(2);")];
    write(&repo, &feature, "feature: line 2", &at());
    merge(&repo, "main", &at());
    feature.extend(main.iter().copied());
    feature.push((5, "let line_5 = on_feature(5);"));
    write(&repo, &feature, "feature: line 5", &at());
    repo.git(&["checkout", "-q", "main"]);
    merge(&repo, "feature", &at());
    main = feature.clone();
    // A merge that resolves a conflict by hand owns the line it wrote.
    repo.git(&["checkout", "-q", "-b", "side"]);
    let mut side = main.clone();
    side.push((10, "let line_10 = on_side(10);"));
    write(&repo, &side, "side: line 10", &at());
    repo.git(&["checkout", "-q", "main"]);
    main.push((10, "let line_10 = on_main(10);"));
    write(&repo, &main, "main: line 10", &at());
    let date = at();
    let failed = repo.git_output(&repo.root, &["merge", "-q", "side"], &[]);
    assert!(!failed.status.success());
    main.push((10, "let line_10 = resolved_in_the_merge(10);"));
    std::fs::write(repo.root.join("src/lib.rs"), text(&main)).unwrap();
    repo.git(&["add", "src/lib.rs"]);
    repo.git_at(&["commit", "-q", "--no-edit"], &date);
    // A criss-cross: two branches merge each other at once, then go on and meet again.
    repo.git(&["branch", "a"]);
    repo.git(&["branch", "b"]);
    repo.git(&["checkout", "-q", "a"]);
    let mut a = main.clone();
    a.push((1, "let line_1 = on_a(1);"));
    write(&repo, &a, "a: line 1", &at());
    repo.git(&["checkout", "-q", "b"]);
    let mut b = main.clone();
    b.push((12, "let line_12 = on_b(12);"));
    write(&repo, &b, "b: line 12", &at());
    let (tip_a, tip_b) = (repo.git(&["rev-parse", "a"]), repo.git(&["rev-parse", "b"]));
    merge(&repo, &tip_a, &at());
    repo.git(&["checkout", "-q", "a"]);
    merge(&repo, &tip_b, &at());
    a.extend(b.iter().copied());
    a.push((4, "let line_4 = on_a(4);"));
    write(&repo, &a, "a: line 4", &at());
    repo.git(&["checkout", "-q", "b"]);
    b.extend(a[..a.len() - 1].iter().copied());
    b.push((9, "let line_9 = on_b(9);"));
    write(&repo, &b, "b: line 9", &at());
    merge(&repo, "a", &at());
    // Every commit carries reasoning.
    for (n, commit) in repo.git(&["rev-list", "--all"]).lines().enumerate() {
        let event = serde_json::json!({"kind": "decision", "summary": format!("Decision {n}"),
            "id": format!("{n:032x}"), "schema_version": 1, "session_id": "s-merge",
            "timestamp": "2026-01-01T10:00:00Z", "origin": "text", "source": format!("m{n}")});
        crate::scenario::add_note(&repo, commit, &event.to_string());
    }
    repo.ok(&["rebuild"]);
    let git = owners_by_git(&repo, "src/lib.rs");
    assert_eq!(git.len(), 12);
    let merges: Vec<String> = repo
        .git(&["rev-list", "--merges", "HEAD"])
        .lines()
        .map(str::to_owned)
        .collect();
    // The hand-resolved line is the one a merge owns.
    let owned_by_merges = git.iter().flatten().filter(|c| merges.contains(c)).count();
    assert_eq!(owned_by_merges, 1, "{git:?}");
    assert_eq!(
        owners_by_why(&repo, "src/lib.rs", &["--fast"]),
        git,
        "by the index"
    );
    assert_eq!(
        owners_by_why(&repo, "src/lib.rs", &[]),
        git,
        "left to choose"
    );
    assert_eq!(
        owners_by_why(&repo, "src/lib.rs", &["--exact"]),
        git,
        "by gix's blame"
    );
}

#[test]
fn lines_older_than_every_annotated_commit_of_the_file_are_no_commits() {
    // The file's lines come from an early commit without reasoning; a commit with reasoning
    // changes another file; a later one with reasoning changes one line of the file. Git's
    // blame from the oldest annotated commit of the file on gives the rest to the commit it
    // stops at, the other file's: those lines are explained by nothing.
    let repo = TestRepo::new();
    let lines: String = (1..=8).map(|n| format!("let line_{n} = {n};\n")).collect();
    repo.commit_at("src/lib.rs", &lines, "start", "2026-01-01T10:00:00Z");
    let elsewhere = repo.commit_at("other.txt", "x\n", "other work", "2026-01-05T10:00:00Z");
    let changed = lines.replace("let line_2 = 2;", "let line_2 = two();");
    let owner = repo.commit_at("src/lib.rs", &changed, "line 2", "2026-01-10T10:00:00Z");
    for (n, commit) in [&elsewhere, &owner].into_iter().enumerate() {
        let event = serde_json::json!({"kind": "decision", "summary": format!("Decision {n}"),
            "id": format!("{n:032x}"), "schema_version": 1, "session_id": "s-old",
            "timestamp": "2026-01-01T10:00:00Z", "origin": "text", "source": format!("m{n}")});
        crate::scenario::add_note(&repo, commit, &event.to_string());
    }
    repo.ok(&["rebuild"]);
    let mut expected = vec![None; 8];
    expected[1] = Some(owner.clone());
    for how in [&[][..], &["--exact"], &["--fast"]] {
        assert_eq!(owners_by_why(&repo, "src/lib.rs", how), expected, "{how:?}");
    }
}

/// A repository whose second commit changes `path`, its note holding `events` (kind, summary,
/// origin, prompt) of one session, a minute apart.
fn noted_commit(path: &str, events: &[(&str, &str, &str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_at("start.txt", "x\n", "start", "2026-01-01T10:00:00Z");
    let commit = repo.commit_at(path, "fn f() {}\n", "work", "2026-01-02T10:00:00Z");
    let lines: Vec<String> = events
        .iter()
        .enumerate()
        .map(|(n, (kind, summary, origin, prompt))| {
            serde_json::json!({"kind": kind, "summary": summary, "id": format!("{n:032x}"),
                "schema_version": 1, "session_id": "s-one", "origin": origin,
                "prompt_context": prompt, "timestamp": format!("2026-01-02T09:0{n}:00Z"),
                "source": format!("m{n}"), "files_affected": [path]})
            .to_string()
        })
        .collect();
    crate::scenario::add_note(&repo, &commit, &lines.join("\n"));
    repo.ok(&["rebuild"]);
    repo
}

#[test]
fn reasoning_said_twice_in_the_same_words_is_shown_once() {
    // A plan given as the prompt, approved and written out again: one decision under three
    // ids. A rejection in the same words is another thing said, and is shown too.
    let twice = "Store timestamps as integers rather than strings, so that comparisons are exact.";
    let cut = format!("{twice}…");
    let other = twice.replace(
        "so that comparisons are exact",
        "so that sorting needs no parsing",
    );
    let repo = noted_commit(
        "src/clock.rs",
        &[
            ("decision", twice, "plan", ""),
            ("decision", twice, "text", ""),
            ("decision", &cut, "thinking", ""),
            ("rejection", twice, "text", ""),
            (
                "decision",
                "Keep the clock in one module so tests can replace it.",
                "text",
                "",
            ),
            ("decision", &other, "text", ""),
        ],
    );
    let why = repo.ok(&["why", "src/clock.rs", "--color=never"]);
    assert_eq!(
        why.matches("decision: Store timestamps").count(),
        2,
        "{why}"
    );
    assert!(
        why.contains(&other),
        "the same start, said of another thing: {why}"
    );
    assert_eq!(
        why.matches("rejection: Store timestamps").count(),
        1,
        "{why}"
    );
    assert!(why.contains("decision: Keep the clock"), "{why}");
    let json = repo.json(&["why", "src/clock.rs"]);
    let ids: Vec<&str> = json["commits"][0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 4, "{json}");
    assert_eq!(ids[0], format!("{:032x}", 0), "the first of the twins");
    let review = repo.ok(&["review", "HEAD~1..HEAD", "--color=never"]);
    let said = (review.lines())
        .filter(|l| l.starts_with("│ decision: Store") || l.starts_with("│ rejected: Store"))
        .count();
    assert_eq!(said, 3, "{review}");
}

#[test]
fn each_prompt_is_named_once_with_the_reasoning_it_led_to_under_it() {
    // Decisions come first, so a finding of the first prompt comes after the second prompt's
    // decision: shown in that order, the first prompt would be named twice, and the finding
    // under the second. The first prompt is the session's request, which names it already.
    let first = "Why does the pool run dry under load? It happens after a few hours.";
    let second = "Then make the pool size configurable.";
    let repo = noted_commit(
        "src/pool.rs",
        &[
            (
                "session",
                "Why does the pool run dry under load? It happens…",
                "prompt",
                "",
            ),
            (
                "decision",
                "Return connections in a guard so that no early return can leak one.",
                "text",
                first,
            ),
            (
                "decision",
                "Read the pool size from the config rather than a constant, so tests can shrink it.",
                "text",
                second,
            ),
            (
                "discovery",
                "The root cause is that the error path never returns the connection.",
                "text",
                first,
            ),
        ],
    );
    let why = repo.ok(&["why", "src/pool.rs", "--color=never"]);
    let shown: Vec<&str> = why
        .lines()
        .map(str::trim)
        .filter_map(|l| l.split_once(':').map(|(head, _)| head))
        .filter(|head| ["session s-one", "prompt", "decision", "discovery"].contains(head))
        .collect();
    assert_eq!(
        shown,
        [
            "session s-one",
            "decision",
            "discovery",
            "prompt",
            "decision"
        ],
        "{why}"
    );
    assert_eq!(why.matches("Why does the pool run dry").count(), 1, "{why}");
}

#[test]
fn what_was_explored_without_deciding_is_left_out_of_why_and_review_unless_asked_for() {
    let repo = noted_commit(
        "src/clock.rs",
        &[
            (
                "exploration",
                "Let me look at how the clock is read first.",
                "text",
                "",
            ),
            (
                "raw",
                "Now I need to run the tests to make sure it still works.",
                "thinking",
                "",
            ),
            (
                "decision",
                "Keep the clock in one module so tests can replace it.",
                "text",
                "",
            ),
        ],
    );
    let why = repo.ok(&["why", "src/clock.rs", "--color=never"]);
    let review = repo.ok(&["review", "HEAD~1..HEAD", "--color=never"]);
    for said in [&why, &review] {
        assert!(said.contains("Keep the clock in one module"), "{said}");
        assert!(!said.contains("Let me look"), "{said}");
        assert!(!said.contains("Now I need to run"), "{said}");
    }
    // JSON holds them, as `why --json` does.
    let json = repo.ok(&["review", "HEAD~1..HEAD", "--json"]);
    assert!(
        json.contains("Let me look") && json.contains("Now I need to run"),
        "{json}"
    );
    let all = repo.ok(&["why", "src/clock.rs", "--all", "--color=never"]);
    assert!(
        all.contains("Let me look") && all.contains("Now I need to run"),
        "{all}"
    );
}
