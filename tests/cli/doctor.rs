//! `status` shows what is installed where and `doctor` judges it, on real repositories with
//! what `install` really wrote: each problem is made as a user would make it, named, and given
//! its fix; exit 1 while one is left.

use std::fs;
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::link::edit_turn;
use crate::repo::{BIN, TestRepo, output_of_copy, stderr};

/// `doctor --json`'s checks that found a problem, as (check, what it found), and its exit code.
fn problems(repo: &TestRepo) -> (Vec<(String, String)>, Option<i32>) {
    let out = repo.run(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    let found = (report["checks"].as_array().unwrap().iter())
        .filter(|c| c["ok"] == false)
        .map(|c| {
            assert!(c["fix"].is_string(), "a problem says how to fix it: {c}");
            (
                c["check"].as_str().unwrap().to_owned(),
                c["found"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (found, out.status.code())
}

#[test]
fn status_shows_each_scope_the_git_hooks_and_the_notes_config() {
    let repo = TestRepo::new();
    let text = repo.ok(&["status"]);
    assert!(
        text.contains("  local (.claude/settings.local.json): nothing\n"),
        "{text}"
    );
    assert!(
        text.contains("  git hooks (.git/hooks): none of ours\n"),
        "{text}"
    );

    repo.ok(&["install", "--mcp"]);
    repo.ok(&["install", "--scope", "project"]);
    let text = repo.ok(&["status"]);
    assert!(
        text.contains(&format!(
            "  local (.claude/settings.local.json): hooks for 7 events, running {BIN}; MCP \
             server in ~/.claude.json, running {BIN} mcp\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "  project (.claude/settings.json): hooks for 7 events, running git-agent-context\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  user (~/.claude/settings.json): nothing\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  git hooks (.git/hooks): post-commit, post-merge, post-rewrite, running {BIN}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("  notes follow amend and rebase: yes\n"),
        "{text}"
    );

    let installed = &repo.json(&["status"])["installed"];
    assert_eq!(installed["scopes"][0]["scope"], "local");
    assert_eq!(installed["scopes"][0]["hooks"].as_array().unwrap().len(), 7);
    assert_eq!(
        installed["scopes"][0]["mcp"]["command"],
        format!("{BIN} mcp")
    );
    assert_eq!(
        installed["scopes"][1]["commands"],
        json!(["git-agent-context"])
    );
    assert_eq!(installed["git_hooks"]["binary"], BIN);
    assert_eq!(installed["git_hooks"]["hooks"][0]["found"], "ours");
    assert_eq!(installed["notes_rewrite"], true);
}

#[test]
fn doctor_names_each_problem_with_its_fix_until_none_is_left() {
    let repo = TestRepo::new();
    let (found, code) = problems(&repo);
    let checks: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(
        checks,
        ["Claude Code hooks", "git hooks", "notes config"],
        "{found:?}"
    );
    assert_eq!(code, Some(1));
    let text = repo.run(&["doctor"]);
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .contains("problem: Claude Code hooks: registered in no scope")
            && String::from_utf8_lossy(&text.stdout).contains("  fix: git agent-context install\n"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    assert_eq!(stderr(&text), "error: 3 problems found\n");

    repo.ok(&["install"]);
    assert_eq!(problems(&repo), (vec![], Some(0)));

    // Two scopes: each hook would run twice.
    repo.ok(&["install", "--scope", "project"]);
    let (found, code) = problems(&repo);
    assert_eq!(code, Some(1));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("every hook runs twice"), "{found:?}");
    repo.ok(&["uninstall", "--scope", "project"]);
    assert_eq!(problems(&repo).1, Some(0));

    // The git hooks' binary gone, and none on PATH.
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("git-agent-context");
    fs::copy(BIN, &bin).unwrap();
    let out = output_of_copy(
        Command::new(&bin)
            .arg("install")
            .current_dir(&repo.root)
            .env("HOME", &repo.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    fs::remove_file(&bin).unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .args(["doctor", "--json"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = report.to_string();
    assert!(
        said.contains(&format!(
            "they find no git-agent-context: {} is gone and none is on PATH",
            bin.display()
        )) && said.contains("which is not there"),
        "{said}"
    );
    // Installed again from the binary in use, all is well.
    repo.ok(&["install"]);
    assert_eq!(problems(&repo), (vec![], Some(0)));
}

#[test]
fn doctor_warns_of_transcripts_claude_code_will_delete_before_they_are_read() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "init");
    repo.ok(&["install"]);
    let folder = repo.project_dir();
    fs::create_dir_all(&folder).unwrap();
    let transcript = folder.join("s-old.jsonl");
    fs::write(
        &transcript,
        edit_turn(
            &repo,
            1,
            "Add a cache",
            0,
            "I'll use a TTL map.",
            "cache.py",
        ),
    )
    .unwrap();
    let old = SystemTime::now() - Duration::from_secs(25 * 86_400);
    fs::File::options()
        .write(true)
        .open(&transcript)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let (found, code) = problems(&repo);
    assert_eq!(code, Some(1));
    assert_eq!(
        found,
        [(
            "transcripts".to_owned(),
            "1 transcript of this repository not read yet, to be deleted by Claude Code within \
             7 days (cleanupPeriodDays = 30)"
                .to_owned()
        )]
    );
    // A longer period in the user's settings puts it off.
    let settings = repo.home.join(".claude/settings.json");
    fs::write(&settings, r#"{"cleanupPeriodDays": 90}"#).unwrap();
    assert_eq!(problems(&repo), (vec![], Some(0)));
    fs::write(&settings, r#"{"cleanupPeriodDays": 0}"#).unwrap();
    assert!(problems(&repo).0[0].1.contains("cleanupPeriodDays is 0"));
    fs::remove_file(&settings).unwrap();
    // Once read, nothing is lost when it goes.
    repo.ok(&["extract"]);
    assert_eq!(problems(&repo), (vec![], Some(0)));
}

#[test]
fn doctor_in_a_bare_repository_judges_only_what_applies_there() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "first");
    let bare = repo.home.parent().unwrap().join("bare.git");
    repo.git(&[
        "clone",
        "-q",
        "--bare",
        repo.root.to_str().unwrap(),
        bare.to_str().unwrap(),
    ]);
    let out = repo
        .cmd_in(&bare)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    assert!(
        !checks.iter().any(|c| c["check"] == "settings"),
        "no working tree is no broken settings file: {report}"
    );
}
