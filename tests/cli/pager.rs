//! Colour and paging of `log` (the same `Output` as `show` and `review`), `why`, and of any
//! command with `--paginate`, as git does them: `--no-pager`, `--paginate` and `pager.agent-context`,
//! the `--color` flag, `color.ui` and `color.pager` (from the config files and from `git -c`, which
//! git hands over in `GIT_CONFIG_PARAMETERS`), `NO_COLOR`, `TERM`, and the pager from
//! `GIT_PAGER`, `core.pager` or `PAGER`. Real git is the oracle for the coloured text.
//!
//! A terminal is a pseudo-terminal made by util-linux's `script`; a pager is a shell command
//! that writes what it reads to a file, so the test sees what the pager received.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::repo::{TestRepo, stderr};

const ESC: &str = "\x1b[";

/// A repository with two plain commits.
fn two_commits() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit("a.txt", "one\n", "first");
    repo.commit("a.txt", "two\n", "second");
    repo
}

/// What `git log --oneline` prints, coloured or not: `log` prints the same when it has no
/// reasoning to show.
fn git_oneline(repo: &TestRepo, color: bool) -> String {
    let when = if color {
        "--color=always"
    } else {
        "--color=never"
    };
    repo.git(&["log", "--oneline", "--no-decorate", when]) + "\n"
}

/// What a run printed on stdout.
fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// What a terminal showed and how the command ended.
struct Terminal {
    screen: String,
    code: Option<i32>,
}

/// Run the shell command `line` in the repository with its stdout and stderr on a
/// pseudo-terminal (`script -qec`), in the tests' hermetic environment with `TERM=xterm`, then
/// `vars`.
fn on_terminal(repo: &TestRepo, line: &str, vars: &[(&str, &str)]) -> Terminal {
    let mut cmd = Command::new("script");
    cmd.env_clear();
    for (name, value) in repo.cmd_in(&repo.root).get_envs() {
        if let Some(value) = value {
            cmd.env(name, value);
        }
    }
    cmd.env("TERM", "xterm")
        .envs(vars.iter().copied())
        .args(["-qec", line, "/dev/null"])
        .current_dir(&repo.root);
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "the terminal tests need util-linux's `script` on PATH \
             (Debian: package bsdutils; Alpine: util-linux-misc): {e}"
        )
    });
    assert!(
        out.stderr.is_empty(),
        "`script -qec` failed (util-linux's `script` is needed): {}",
        stderr(&out)
    );
    Terminal {
        // The terminal turns each newline into CR LF.
        screen: String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n"),
        code: out.status.code(),
    }
}

/// A pager command that writes what it receives to `name` in the tests' home folder: the
/// command, and the file.
fn pager_to(repo: &TestRepo, name: &str) -> (String, PathBuf) {
    let file = repo.home.join(name);
    (format!("cat > '{}'", file.display()), file)
}

fn read(file: &Path) -> String {
    fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Not a terminal: no colour by default, even for a terminal type that has colours.
#[test]
fn piped_output_is_not_coloured_by_default() {
    let repo = two_commits();
    let out = repo
        .cmd_in(&repo.root)
        .args(["log"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), git_oneline(&repo, false));
}

/// `--color=always` and a bare `--color` colour as `git log --oneline --color=always` does.
#[test]
fn color_always_or_bare_colours_as_git_log_does() {
    let repo = two_commits();
    let coloured = git_oneline(&repo, true);
    assert!(coloured.contains("\x1b[33m"), "git's oracle: {coloured:?}");
    assert_eq!(repo.ok(&["log", "--color=always"]), coloured);
    assert_eq!(repo.ok(&["log", "--color"]), coloured);
}

/// `--color=never` wins over `color.ui=always`.
#[test]
fn color_never_wins_over_color_ui_always() {
    let repo = two_commits();
    repo.git(&["config", "color.ui", "always"]);
    assert_eq!(
        repo.ok(&["log", "--color=never"]),
        git_oneline(&repo, false)
    );
}

/// `--color never` is `--color` then the revision `never`, as in git: an unknown revision, exit 2.
#[test]
fn color_with_a_space_takes_the_next_word_as_the_revision() {
    let repo = two_commits();
    let out = repo.run(&["log", "--color", "never"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.starts_with("error: ") && err.contains("never"), "{err}");
    // git refuses it too, for the same reason.
    let git = repo.git_output(&repo.root, &["log", "--color", "never"], &[]);
    assert!(!git.status.success());
    assert!(stderr(&git).contains("'never'"), "{}", stderr(&git));
}

/// JSON is never coloured, whatever `--color` says.
#[test]
fn json_is_not_coloured() {
    let repo = two_commits();
    let out = repo.ok(&["log", "--json", "--color=always"]);
    assert!(!out.contains(ESC), "{out:?}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["commits"].as_array().unwrap().len(), 2);
}

/// `git -c color.ui=always agent-context log` colours when piped (git hands `-c` over in
/// `GIT_CONFIG_PARAMETERS`); `color.ui=auto` does not.
#[test]
fn git_c_color_ui_always_colours_even_when_piped() {
    let repo = two_commits();
    let run = |value: &str| {
        let setting = format!("color.ui={value}");
        repo.git_in(
            &repo.root,
            &["-c", &setting, "agent-context", "log"],
            &[("TERM", "xterm")],
        ) + "\n"
    };
    assert_eq!(run("always"), git_oneline(&repo, true));
    assert_eq!(run("auto"), git_oneline(&repo, false));
}

/// `git -c color.ui=never` wins over `color.ui=always` in the config file, on a terminal.
#[test]
fn git_c_color_ui_never_wins_over_the_config_file_on_a_terminal() {
    let repo = two_commits();
    repo.git(&["config", "color.ui", "always"]);
    let line = "git -c color.ui=never agent-context log --color=auto --no-pager";
    let shown = on_terminal(&repo, line, &[]);
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(shown.screen, git_oneline(&repo, false));
    // The config file alone colours.
    let shown = on_terminal(&repo, "git agent-context log --no-pager", &[]);
    assert_eq!(shown.screen, git_oneline(&repo, true));
}

/// On a terminal the output goes to `GIT_PAGER`, coloured as git colours for its pager.
#[test]
fn a_terminal_pages_through_git_pager_with_colour() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    let shown = on_terminal(&repo, "git agent-context log", &[("GIT_PAGER", &pager)]);
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(read(&paged), git_oneline(&repo, true));
    assert_eq!(shown.screen, "", "the pager had it all");
}

/// `color.pager=false` keeps colour out of the pager.
#[test]
fn color_pager_false_pages_without_colour() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    // git's own log, paged on a terminal, leaves colour out.
    let line = "git -c color.pager=false log --oneline --no-decorate";
    on_terminal(&repo, line, &[("GIT_PAGER", &pager)]);
    let plain = git_oneline(&repo, false);
    assert_eq!(read(&paged), plain, "git's oracle");
    fs::remove_file(&paged).unwrap();
    let line = "git -c color.pager=false agent-context log";
    on_terminal(&repo, line, &[("GIT_PAGER", &pager)]);
    assert_eq!(read(&paged), plain);
}

/// The pager is `GIT_PAGER`, else `core.pager` (`git -c` over the config file), else `PAGER`.
#[test]
fn pager_sources_in_git_order() {
    let repo = two_commits();
    let (from_env, env_file) = pager_to(&repo, "git-pager");
    let (from_file, config_file) = pager_to(&repo, "core-pager");
    let (from_c, c_file) = pager_to(&repo, "core-pager-c");
    let (pager, pager_file) = pager_to(&repo, "pager");
    repo.git(&["config", "core.pager", &from_file]);
    let all = [&env_file, &config_file, &c_file, &pager_file];
    let only = |file: &Path, line: &str, vars: &[(&str, &str)]| {
        for f in all {
            let _ = fs::remove_file(f);
        }
        on_terminal(&repo, line, vars);
        for f in all {
            assert_eq!(f == file, f.exists(), "{line} {vars:?}: {}", f.display());
        }
        assert_eq!(read(file), git_oneline(&repo, true));
    };
    let log = "git agent-context log";
    let with_c = format!("git -c \"core.pager={from_c}\" agent-context log");
    only(
        &env_file,
        log,
        &[("GIT_PAGER", &from_env), ("PAGER", &pager)],
    );
    only(&env_file, &with_c, &[("GIT_PAGER", &from_env)]);
    only(&config_file, log, &[("PAGER", &pager)]);
    only(&c_file, &with_c, &[("PAGER", &pager)]);
    repo.git(&["config", "--unset", "core.pager"]);
    only(&pager_file, log, &[("PAGER", &pager)]);
}

/// `--no-pager`: no pager, the output goes to the terminal, coloured.
#[test]
fn no_pager_writes_to_the_terminal() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    let shown = on_terminal(
        &repo,
        "git agent-context log --no-pager",
        &[("GIT_PAGER", &pager)],
    );
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert!(!paged.exists(), "the pager ran");
    assert_eq!(shown.screen, git_oneline(&repo, true));
}

/// `GIT_PAGER=cat` means no pager, and so does an empty `GIT_PAGER` (over `core.pager`).
#[test]
fn git_pager_cat_or_empty_means_no_pager() {
    let repo = two_commits();
    // A `cat` first on PATH that leaves a mark: the real one could not be told from no pager.
    let bin = repo.home.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let ran = repo.home.join("cat-ran");
    let fake = bin.join("cat");
    fs::write(&fake, format!("#!/bin/sh\n: > '{}'\n", ran.display())).unwrap();
    let chmod = Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    assert!(chmod.success());
    let line = format!("PATH='{}':\"$PATH\" git agent-context log", bin.display());
    let shown = on_terminal(&repo, &line, &[("GIT_PAGER", "cat")]);
    assert!(!ran.exists(), "GIT_PAGER=cat ran cat");
    assert_eq!(shown.screen, git_oneline(&repo, true));

    let (pager, paged) = pager_to(&repo, "paged");
    repo.git(&["config", "core.pager", &pager]);
    let shown = on_terminal(&repo, "git agent-context log", &[("GIT_PAGER", "")]);
    assert!(
        !paged.exists(),
        "an empty GIT_PAGER fell back to core.pager"
    );
    assert_eq!(shown.screen, git_oneline(&repo, true));
}

/// `git --no-pager agent-context` and `pager.agent-context=false` (git sets `GIT_PAGER=cat`)
/// turn our pager off.
#[test]
fn git_s_no_pager_turns_our_pager_off() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    for line in [
        "git --no-pager agent-context log",
        "git -c pager.agent-context=false agent-context log",
    ] {
        let shown = on_terminal(&repo, line, &[("GIT_PAGER", &pager)]);
        assert!(!paged.exists(), "{line}: the pager ran");
        assert_eq!(shown.screen, git_oneline(&repo, true), "{line}");
    }
}

/// `GIT_PAGER_IN_USE=true`: git pages us already, so no pager of our own.
#[test]
fn no_pager_inside_git_s_pager() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    let vars = [("GIT_PAGER", pager.as_str()), ("GIT_PAGER_IN_USE", "true")];
    let shown = on_terminal(&repo, "git agent-context log", &vars);
    assert!(!paged.exists(), "a pager inside git's pager");
    assert_eq!(shown.screen, git_oneline(&repo, true));
}

/// `git -p agent-context log`: git's pager gets our output, coloured for it, once.
#[test]
fn git_s_own_pager_gets_colour() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    let shown = on_terminal(&repo, "git -p agent-context log", &[("GIT_PAGER", &pager)]);
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(read(&paged), git_oneline(&repo, true));
}

/// `NO_COLOR` turns auto colour off on a terminal and for the pager.
#[test]
fn no_color_turns_auto_colour_off() {
    let repo = two_commits();
    let shown = on_terminal(
        &repo,
        "git agent-context log --no-pager",
        &[("NO_COLOR", "1")],
    );
    assert_eq!(shown.screen, git_oneline(&repo, false));
    let (pager, paged) = pager_to(&repo, "paged");
    on_terminal(
        &repo,
        "git agent-context log",
        &[("NO_COLOR", "1"), ("GIT_PAGER", &pager)],
    );
    assert_eq!(read(&paged), git_oneline(&repo, false));
}

/// A dumb terminal (`TERM=dumb`, or no `TERM`) gets no auto colour, as in git.
#[test]
fn a_dumb_terminal_gets_no_colour() {
    let repo = two_commits();
    let line = "git agent-context log --no-pager";
    let shown = on_terminal(&repo, line, &[("TERM", "dumb")]);
    assert_eq!(shown.screen, git_oneline(&repo, false));
    let shown = on_terminal(&repo, &format!("unset TERM; {line}"), &[]);
    assert_eq!(shown.screen, git_oneline(&repo, false));
}

/// The pager gets `LESS=FRX` and `LV=-c` as git gives them, unless the user set their own.
#[test]
fn the_pager_gets_less_frx_unless_less_is_set() {
    let repo = two_commits();
    let env = repo.home.join("pager-env");
    let pager = format!("env > '{}'", env.display());
    let vars_of = |vars: &[(&str, &str)]| {
        let _ = fs::remove_file(&env);
        on_terminal(&repo, "git agent-context log", vars);
        read(&env)
    };
    let vars = vars_of(&[("GIT_PAGER", &pager)]);
    let lines: Vec<&str> = vars.lines().collect();
    assert!(lines.contains(&"LESS=FRX"), "{vars}");
    assert!(lines.contains(&"LV=-c"), "{vars}");
    let vars = vars_of(&[("GIT_PAGER", &pager), ("LESS", "-S")]);
    let lines: Vec<&str> = vars.lines().collect();
    assert!(lines.contains(&"LESS=-S"), "{vars}");
    assert!(!lines.contains(&"LESS=FRX"), "{vars}");
}

/// A pager that quits before reading it all (`GIT_PAGER=true`) is no error: exit 0, nothing
/// said.
#[test]
fn a_pager_that_quits_at_once_is_not_an_error() {
    let repo = TestRepo::new();
    // 100 commits of 1 KB subjects: more than a pipe holds, so the pager's end cuts the writes.
    let subject = "x".repeat(1000);
    let mut stream = String::new();
    for n in 0..100 {
        let message = format!("{n} {subject}\n");
        stream += &format!(
            "commit refs/heads/main\ncommitter C <c@example.com> {} +0000\ndata {}\n{message}\n",
            1_767_225_600 + n,
            message.len()
        );
    }
    repo.git_with_input(&["fast-import", "--quiet"], stream.as_bytes());
    assert!(repo.ok(&["log"]).len() > 100_000);
    let shown = on_terminal(&repo, "git agent-context log", &[("GIT_PAGER", "true")]);
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(
        shown.screen, "",
        "stdout went to the pager; stderr is empty"
    );
}

/// `--no-pager`, `--paginate` and `--color` are git's: they go before the command too, and
/// every command that prints takes them.
#[test]
fn the_pager_and_colour_flags_go_before_the_command_as_in_git() {
    let repo = two_commits();
    let (pager, paged) = pager_to(&repo, "paged");
    let vars = [("GIT_PAGER", pager.as_str())];
    let shown = on_terminal(&repo, "git agent-context --no-pager log", &vars);
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert!(!paged.exists(), "the pager ran");
    assert_eq!(shown.screen, git_oneline(&repo, true));

    // status does not page unless asked, as git status does not.
    let shown = on_terminal(&repo, "git agent-context status", &vars);
    assert!(!paged.exists(), "status was paged");
    assert!(shown.screen.contains("installed:"), "{}", shown.screen);
    on_terminal(&repo, "git agent-context -p status", &vars);
    assert!(read(&paged).contains("installed:"));
    fs::remove_file(&paged).unwrap();
    on_terminal(&repo, "git agent-context --paginate query anything", &vars);
    assert!(paged.exists(), "query was not paged with --paginate");
    fs::remove_file(&paged).unwrap();

    // pager.agent-context=false, as git reads pager.<cmd>: not even history is paged.
    let line = "git -c pager.agent-context=false agent-context log";
    let shown = on_terminal(&repo, line, &vars);
    assert!(!paged.exists(), "log was paged");
    assert_eq!(shown.screen, git_oneline(&repo, true));
}

/// `why` is paged on a terminal, its commit ids and kinds coloured; piped, it is plain.
#[test]
fn why_is_paged_and_coloured_as_git_blame_is() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "one\n", "first");
    repo.ok(&["record", "decision", "Keep one line", "--files", "a.txt"]);
    let (pager, paged) = pager_to(&repo, "paged");
    let shown = on_terminal(
        &repo,
        "git agent-context why a.txt",
        &[("GIT_PAGER", &pager)],
    );
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(shown.screen, "", "the pager had it all");
    let text = read(&paged);
    let short = &repo.git(&["rev-parse", "HEAD"])[..7];
    assert!(text.contains(&format!("{ESC}33m{short}{ESC}m")), "{text:?}");
    assert!(
        text.contains(&format!("{ESC}1m{ESC}32mdecision{ESC}m")),
        "{text:?}"
    );
    let piped = repo.ok(&["why", "a.txt"]);
    assert!(!piped.contains(ESC), "{piped:?}");
    assert!(piped.contains(&format!("{short}  ")) && piped.contains("  decision"));
    let never = on_terminal(
        &repo,
        "git agent-context --color=never --no-pager why a.txt",
        &[],
    );
    assert!(!never.screen.contains(ESC), "{:?}", never.screen);
}

/// A pager that is not there, as a `core.pager` from dotfiles on a machine without it: the text
/// is shown unpaged, as git shows it.
#[test]
fn a_pager_that_is_not_there_leaves_the_text_on_the_terminal() {
    let repo = two_commits();
    let shown = on_terminal(
        &repo,
        "git agent-context log",
        &[("GIT_PAGER", "no-such-pager-anywhere")],
    );
    assert_eq!(shown.code, Some(0), "{}", shown.screen);
    assert_eq!(shown.screen, git_oneline(&repo, true));
}
