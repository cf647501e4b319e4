//! `completions <shell>`: the scripts, run by the real shells. Bash completes
//! `git agent-context …` through git's own completion, which calls `_git_agent_context`, and
//! `git-agent-context …` by itself; zsh and fish read theirs without a syntax error (`-n`). A
//! test whose shell, or git's bash completion, is not installed says `skipped: …` and passes.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::repo::{TestRepo, stderr};

/// Where Debian's bash-completion package keeps git's completion.
const GIT_COMPLETION: &str = "/usr/share/bash-completion/completions/git";

/// Whether `program` is on PATH; says `skipped: …` when it is not.
fn installed(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| dir.join(program).is_file());
    if !found {
        eprintln!("skipped: {program} is not on PATH");
    }
    found
}

/// `completions <shell>` written to a file outside the repository; returns its path.
fn script(repo: &TestRepo, shell: &str) -> std::path::PathBuf {
    let path = repo.outside().join(format!("completion.{shell}"));
    fs::write(&path, repo.ok(&["completions", shell])).unwrap();
    path
}

/// `program <args>` in the repository, in the tests' hermetic environment.
fn run(repo: &TestRepo, program: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.env_clear();
    for (name, value) in repo.cmd_in(&repo.root).get_envs() {
        if let Some(value) = value {
            cmd.env(name, value);
        }
    }
    cmd.args(args).current_dir(&repo.root).output().unwrap()
}

#[test]
fn bash_completes_git_agent_context_through_gits_completion() {
    if !installed("bash") {
        return;
    }
    if !Path::new(GIT_COMPLETION).is_file() {
        eprintln!("skipped: no bash completion for git at {GIT_COMPLETION}");
        return;
    }
    let repo = TestRepo::new();
    repo.git(&["config", "alias.ac", "agent-context"]);
    let ours = script(&repo, "bash");
    // As bash does on <TAB>: the words typed, the last one being completed, handed to the
    // function `complete -p` names for the command; prints the candidates.
    let program = format!(
        r#"
source {GIT_COMPLETION}
source {ours}
tab() {{
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${{#COMP_LINE}}
    COMPREPLY=()
    local f
    f=$(complete -p "$1" | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
    "$f" "$1" "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    echo "$*|${{COMPREPLY[*]}}"
}}
tab git agent-context wh
tab git -C . agent-context install --sc
tab git ac log --re
tab git agent-context completions ''
tab git-agent-context wh
tab git-agent-context install --sc
"#,
        ours = ours.display()
    );
    let out = run(&repo, "bash", &["-c", &program]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "git agent-context wh|why\n\
         git -C . agent-context install --sc|--scope\n\
         git ac log --re|--reasoned\n\
         git agent-context completions |-C -p -h --paginate --no-pager --color --help bash zsh fish\n\
         git-agent-context wh|why\n\
         git-agent-context install --sc|--scope\n",
        "{}",
        stderr(&out)
    );
}

#[test]
fn zsh_and_fish_read_their_scripts() {
    let repo = TestRepo::new();
    for shell in ["zsh", "fish"] {
        if !installed(shell) {
            continue;
        }
        let ours = script(&repo, shell);
        let out = run(&repo, shell, &["-n", ours.to_str().unwrap()]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let repo = TestRepo::new();
    let out = repo.run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with("error: invalid value 'tcsh' for '<shell>'\n"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error")).count(),
        1,
        "{err}"
    );
}
