//! A repository owned by another user, as git's `safe.directory` sees it: git refuses to work
//! in it unless the user's own configuration (the global or system file, or `git -c`) allows
//! it, and so do we. git is the oracle: each case is run through `git status` first.
//!
//! Changing a repository's owner needs root: run as another user, the tests say so and pass.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::repo::{TestRepo, hook_answer, stderr};
use crate::scenario;

/// A user id no one on the machine is.
const STRANGER: &str = "12345:12345";

/// Give the scenario repository to [`STRANGER`]; `false` (said on stderr) when we cannot.
fn give_away(root: &Path) -> bool {
    let chown = Command::new("chown")
        .arg("-R")
        .arg(STRANGER)
        .arg(root)
        .output();
    match chown {
        Ok(out) if out.status.success() => true,
        _ => {
            eprintln!("note: cannot chown {} (not root): skipped", root.display());
            false
        }
    }
}

/// Every file and folder under `dir` with its size: what a run must leave as it was.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                todo.push(entry.path());
            }
            out.push((entry.path(), meta.len()));
        }
    }
    out.sort();
    out
}

/// `git <args>` in the repository with extra environment, whatever the outcome.
fn git(repo: &TestRepo, args: &[&str], vars: &[(&str, &str)]) -> Output {
    repo.git_output(&repo.root, args, vars)
}

/// `git -c <each of config> agent-context status`, as a user runs it through git.
fn status_through_git(repo: &TestRepo, config: &[&str]) -> Output {
    let mut args: Vec<&str> = config.iter().flat_map(|c| ["-c", c]).collect();
    args.extend(["agent-context", "status"]);
    git(repo, &args, &[])
}

/// `git -c <each of config> status`: the oracle.
fn git_status(repo: &TestRepo, config: &[&str]) -> Output {
    let mut args: Vec<&str> = config.iter().flat_map(|c| ["-c", c]).collect();
    args.push("status");
    git(repo, &args, &[])
}

const PROMPT: &str = "Why a TTL map in src/cache.rs?";

/// `hook UserPromptSubmit` for [`PROMPT`] in `session` (a new one each time: a session is
/// given the same reasoning once), run from the repository.
fn asked(repo: &TestRepo, session: &str, vars: &[(&str, &str)]) -> Output {
    let transcript = repo.project_dir().join(format!("{session}.jsonl"));
    let payload = repo.hook_payload(
        "UserPromptSubmit",
        session,
        &transcript,
        &[("prompt", PROMPT.into())],
    );
    repo.run_with_input(
        &repo.root,
        &["hook", "UserPromptSubmit"],
        payload.to_string().as_bytes(),
        vars,
    )
}

#[test]
fn another_users_repository_is_refused_as_git_refuses_it() {
    let s = scenario::build();
    let repo = &s.repo;
    // The repository's own configuration cannot vouch for itself: git ignores it.
    repo.git(&["config", "safe.directory", "*"]);
    let dot_git = repo.root.join(".git");
    // The hook answers while the repository is ours.
    assert!(hook_answer("UserPromptSubmit", &asked(repo, "session-1", &[])).is_some());
    if !give_away(&repo.root) {
        return;
    }
    let before = files(&dot_git);

    let refused = git(repo, &["status"], &[]);
    assert_eq!(refused.status.code(), Some(128));
    let told = stderr(&refused);
    assert!(
        told.starts_with("fatal: detected dubious ownership"),
        "{told}"
    );
    // git's words, as an error of ours.
    let expected = told.replacen("fatal: ", "error: ", 1);
    for args in [
        &["status"][..],
        &["log"],
        &["why", "src/cache.rs"],
        &["show", "HEAD"],
        &["init"],
        &["rebuild"],
    ] {
        let out = repo.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), expected, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }

    // A hook does nothing: no answer, no line, no log (the log is in the repository).
    let out = asked(repo, "session-2", &[]);
    assert_eq!(hook_answer("UserPromptSubmit", &out), None);
    assert_eq!(stderr(&out), "");
    let out = repo.run_with_input(&repo.root, &["hook", "post-commit"], b"", &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        files(&dot_git),
        before,
        "nothing was written to the repository"
    );
}

#[test]
fn safe_directory_in_the_users_configuration_lets_us_in() {
    let s = scenario::build();
    let repo = &s.repo;
    if !give_away(&repo.root) {
        return;
    }
    let root = repo.root.to_str().unwrap();

    // `git -c safe.directory=<repo>`, `*`, `<parent>/*`; an empty value resets the list.
    let parent = format!("{}/*", repo.root.parent().unwrap().display());
    for value in [root, "*", &parent] {
        let allowed = format!("safe.directory={value}");
        assert!(git_status(repo, &[&allowed]).status.success());
        let out = status_through_git(repo, &[&allowed]);
        assert!(out.status.success(), "{value}: {}", stderr(&out));
    }
    let reset = ["safe.directory=*", "safe.directory="];
    assert_eq!(git_status(repo, &reset).status.code(), Some(128));
    assert_eq!(status_through_git(repo, &reset).status.code(), Some(2));
    // A hook run by git (or by Claude Code under `git -c`) sees the same.
    let params = format!("'safe.directory'='{root}'");
    let out = asked(repo, "session-3", &[("GIT_CONFIG_PARAMETERS", &params)]);
    assert!(hook_answer("UserPromptSubmit", &out).is_some());

    // A repository named by GIT_DIR is the user's choice: git does not check its owner.
    let git_dir = repo.root.join(".git");
    let vars = [("GIT_DIR", git_dir.to_str().unwrap())];
    assert!(git(repo, &["status"], &vars).status.success());
    let out = repo.run_with_input(&repo.root, &["status"], b"", &vars);
    assert!(out.status.success(), "{}", stderr(&out));

    // The user's global configuration.
    let global = repo.home.join(".gitconfig");
    fs::write(&global, format!("[safe]\n\tdirectory = {root}\n")).unwrap();
    let global = global.to_str().unwrap();
    let vars = [("GIT_CONFIG_GLOBAL", global)];
    assert!(git(repo, &["status"], &vars).status.success());
    let out = repo.run_with_input(&repo.root, &["status"], b"", &vars);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = asked(repo, "session-4", &vars);
    assert!(hook_answer("UserPromptSubmit", &out).is_some());
}
