//! `demo`: the tour runs anywhere, in seconds, on the two sessions embedded in the binary, and
//! leaves nothing behind (with `--keep`, the scratch repository it made, and only that).

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::repo::{BIN, stderr};

fn demo(args: &[&str], cwd: &Path, home: &Path, tmp: &Path) -> Output {
    Command::new(BIN)
        .arg("demo")
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", home)
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

fn entries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_demo_shows_why_query_the_brief_and_review_and_leaves_nothing_behind() {
    let root = tempfile::tempdir().unwrap();
    let (cwd, home, tmp) = (
        root.path().join("cwd"),
        root.path().join("home"),
        root.path().join("tmp"),
    );
    for dir in [&cwd, &home, &tmp] {
        fs::create_dir(dir).unwrap();
    }
    // Run outside any repository.
    let out = demo(&[], &cwd, &home, &tmp);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    for part in [
        "107 new events from 2 transcripts, 105 attached to 2 commits",
        "docs/architecture/shadow-branch-overlap.md (727 lines): 1 commit with reasoning",
        "decision: Since neither approach actually solves the hard stash scenario, I should go \
         with the simpler single-branch design.",
        // query
        "- decided: \"This prevents the bug where we'd incorrectly continue on the old session's shadow branch",
        // the brief
        "- session a318ad73, 2026-01-31: Can you read docs/architecture/shadow-branch-suffixes.md",
        // review
        "2 commits, 2 sessions,",
        "MIT licence",
    ] {
        assert!(said.contains(part), "{part}\n{said}");
    }
    assert!(said.lines().count() < 200, "a tour, not a dump: {said}");
    assert!(entries(&tmp).is_empty(), "left behind: {:?}", entries(&tmp));
    assert!(
        entries(&home).is_empty(),
        "written in HOME: {:?}",
        entries(&home)
    );
    assert!(entries(&cwd).is_empty());

    // --keep leaves the repository, with the notes on its commits.
    let out = demo(&["--keep"], &cwd, &home, &tmp);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    let kept = said
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("The scratch repository is kept: "))
        .and_then(|l| l.split_once(" (remove ").map(|(repo, _)| repo))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(Path::new(kept).starts_with(&tmp));
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(kept)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(git(&["rev-list", "--count", "HEAD"]).trim(), "3");
    // `why` leaves out what was explored and thought without deciding, unless asked.
    let why = |all: &[&str]| {
        let out = Command::new(BIN)
            .args(["why", "docs/architecture/shadow-branch-overlap.md"])
            .args(all)
            .current_dir(kept)
            .env("HOME", &home)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (plain, all) = (why(&[]), why(&["--all"]));
    assert!(
        plain.contains("  decision: ") && !plain.contains("  exploration: "),
        "{plain}"
    );
    assert!(!plain.contains("  raw: "), "{plain}");
    assert!(
        all.contains("  exploration: Let me read the document first"),
        "{all}"
    );
    assert_eq!(
        git(&["notes", "--ref=agent-context", "list"])
            .lines()
            .count(),
        2
    );
    assert!(entries(&home).is_empty());
}
