//! Repositories git makes in other shapes than the usual: SHA-256 object names, and shallow
//! clones, where history stops at a boundary commit whose parents are not there. git is the
//! oracle: what we write it reads, what it shows we show.

use std::fs;

use crate::repo::TestRepo;

/// The `explained_repo` of `why.rs` in a repository with SHA-256 object names: a session's
/// commit wrote lines 1-4 of cache.py with reasoning, a later commit by hand replaced line 3.
#[test]
fn sha256_repositories_are_read_and_written_as_git_does() {
    let repo = TestRepo::new();
    fs::remove_dir_all(repo.root.join(".git")).unwrap();
    repo.git(&["init", "-q", "-b", "main", "--object-format=sha256"]);
    repo.commit("README.md", "hello\n", "base");
    let with_reasoning = repo.commit("cache.py", "a\nb\nc\nd\n", "feat: TTL cache");
    repo.commit("cache.py", "a\nb\nC\nd\n", "fix: typo");
    assert_eq!(with_reasoning.len(), 64);
    let transcript = crate::graph::session(
        &repo,
        "s-link",
        0,
        "Add a cache",
        "I'll go with a TTL map instead of an LRU because entries expire by time.",
        &with_reasoning,
    );
    repo.extract(&transcript);

    // git reads the note we wrote, on the commit the session made.
    let listed = repo.git(&["notes", "--ref=agent-context", "list"]);
    let annotated: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(annotated, [with_reasoning.as_str()]);
    let note = repo.git(&["notes", "--ref=agent-context", "show", &with_reasoning]);
    assert!(note.contains("TTL map instead of an LRU"), "{note}");
    // The graph is made again from the notes, on its own ref.
    repo.ok(&["rebuild"]);
    repo.git(&["rev-parse", "--verify", "refs/agent-context"]);
    repo.git(&["fsck", "--strict", "--no-progress"]);

    let json = repo.json(&["why", "cache.py"]);
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{json}");
    assert_eq!(commits[0]["commit"], with_reasoning.as_str());
    assert_eq!(
        commits[0]["lines"],
        serde_json::json!([{"start": 1, "end": 2}, {"start": 4, "end": 4}])
    );
    let shown = repo.ok(&["show", &with_reasoning]);
    assert!(shown.contains("TTL map instead of an LRU"), "{shown}");
    let log = repo.ok(&["log"]);
    assert!(log.contains(&with_reasoning[..7]), "{log}");
}

/// A shallow clone of a repository whose last commit has reasoning: that commit is the
/// boundary, its parent not there. git shows it as a root commit (its whole tree added) and
/// `git blame` gives it every line (`^`, the boundary): so do `show` and `why`.
#[test]
fn in_a_shallow_clone_the_boundary_commit_is_a_root_as_for_git() {
    let origin = TestRepo::new();
    origin.commit("README.md", "hello\n", "base");
    origin.commit("cache.py", "a\nb\n", "first cache");
    let with_reasoning = origin.commit("cache.py", "a\nb\nc\nd\n", "feat: TTL cache");
    let transcript = crate::graph::session(
        &origin,
        "s-link",
        0,
        "Add a cache",
        "I'll go with a TTL map instead of an LRU because entries expire by time.",
        &with_reasoning,
    );
    origin.extract(&transcript);

    let shallow = origin.clone_with(&["--depth", "1"]);
    shallow.git(&[
        "fetch",
        "-q",
        "origin",
        "refs/notes/agent-context:refs/notes/agent-context",
    ]);
    assert_eq!(shallow.git(&["rev-parse", "HEAD"]), with_reasoning);
    assert_eq!(shallow.git(&["rev-list", "--count", "HEAD"]), "1");
    // git blame: every line is the boundary commit's.
    let blamed = shallow.git(&["blame", "-s", "cache.py"]);
    assert!(
        blamed
            .lines()
            .all(|l| l.starts_with(&format!("^{}", &with_reasoning[..7]))),
        "{blamed}"
    );

    // show: the commit's whole tree as added, as `git show` shows it.
    let git_show = shallow.git(&["show", "--stat=200", "--format=", "HEAD"]);
    assert!(
        git_show.contains("README.md") && git_show.contains("cache.py"),
        "{git_show}"
    );
    let shown = shallow.json(&["show", "HEAD"]);
    let files: Vec<&str> = shown["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{shown}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["README.md", "cache.py"], "{shown}");
    let text = shallow.ok(&["show", "HEAD"]);
    assert!(text.contains("TTL map instead of an LRU"), "{text}");

    // why: the boundary commit owns every line, with its note, by blame and by the index.
    for how in ["--exact", "--fast"] {
        let json = shallow.json(&["why", "cache.py", how]);
        let commits = json["commits"].as_array().unwrap();
        assert_eq!(commits.len(), 1, "{how}: {json}");
        assert_eq!(commits[0]["commit"], with_reasoning.as_str());
        assert_eq!(
            commits[0]["lines"],
            serde_json::json!([{"start": 1, "end": 4}]),
            "{how}"
        );
        assert_eq!(json["unexplained_lines"], 0, "{how}");
    }
    let log = shallow.ok(&["log"]);
    assert!(log.contains(&with_reasoning[..7]), "{log}");
}
