//! The manual: `install` writes it beside the binary, in `<prefix>/share/man/man1` for a binary
//! in `<prefix>/bin`, where man-db looks for a folder on PATH; then real git turns
//! `git agent-context --help` into `man git-agent-context`, and real man shows it. `man` prints
//! the page and `man --out` writes every page, as packagers want them.
//!
//! Without man on PATH the tests that need it print `skipped: …` and pass, unless
//! `$AGENT_CONTEXT_TESTS_NEED_MAN` is set (`.ci/run` sets it): then they fail.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use crate::repo::{BIN, TestRepo, stderr};

/// Whether man is on PATH; when it is not, prints `skipped: …` or, with
/// `$AGENT_CONTEXT_TESTS_NEED_MAN` set, fails the test.
fn man_installed() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| dir.join("man").is_file()) {
        return true;
    }
    if std::env::var_os("AGENT_CONTEXT_TESTS_NEED_MAN").is_some() {
        panic!("man is not on PATH (Debian: apt-get install man-db)");
    }
    eprintln!("skipped: man is not on PATH");
    false
}

/// The binary installed as a user installs it: `<tmp>/prefix/bin/git-agent-context` (a hard
/// link, or a copy), found first on PATH. The manual goes to `<tmp>/prefix/share/man/man1`.
struct Installed {
    prefix: PathBuf,
    path: OsString,
}

impl Installed {
    fn new(repo: &TestRepo) -> Installed {
        let prefix = repo.home.parent().unwrap().join("prefix");
        let bin = prefix.join("bin");
        fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("git-agent-context");
        if fs::hard_link(BIN, &exe).is_err() {
            fs::copy(BIN, &exe).unwrap();
        }
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap();
        Installed { prefix, path }
    }

    fn manual(&self) -> PathBuf {
        self.prefix.join("share/man/man1")
    }

    /// `program <args>` in the repository, in the tests' hermetic environment (no `MANPATH`)
    /// with PATH leading to this binary, and man showing pages as plain text 80 columns wide.
    fn run(&self, repo: &TestRepo, program: &str, args: &[&str]) -> Output {
        let mut cmd = Command::new(program);
        cmd.env_clear();
        for (name, value) in repo.git_command(&repo.root, &[], &[]).get_envs() {
            if let Some(value) = value {
                cmd.env(name, value);
            }
        }
        cmd.env("PATH", &self.path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .args(args)
            .current_dir(&repo.root)
            .output()
            .unwrap()
    }

    /// `git agent-context install`, which must succeed; returns its output.
    fn install(&self, repo: &TestRepo) -> String {
        let out = self.run(repo, "git", &["agent-context", "install"]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// What man shows of `git-agent-context(1)`: its name, a command and an option.
fn assert_shows_the_manual(out: &Output) {
    let text = stdout(out);
    assert!(out.status.success(), "{text}\n{}", stderr(out));
    assert!(
        text.starts_with("git-agent-context(1)") && text.contains("General Commands Manual"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for line in [
        "NAME",
        "git-agent-context - The why behind the code: Claude Code reasoning kept",
        "-C <path>",
        "git-agent-context-init(1)",
        "Create the local store in $GIT_DIR/agent-context",
        "git-agent-context-man(1)",
    ] {
        assert!(lines.contains(&line), "no line {line:?} in:\n{text}");
    }
    // The synopsis, however man justifies it.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "SYNOPSIS git agent-context [-C ] [-p|--paginate] [--no-pager] [--color] [-h|--help] \
             [-V|--version] <subcommands>"
        ),
        "{text}"
    );
}

/// Each page's name and modification time.
fn pages(dir: &Path) -> Vec<(OsString, SystemTime)> {
    let mut all: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name(), e.metadata().unwrap().modified().unwrap())
        })
        .collect();
    all.sort();
    all
}

#[test]
fn git_help_shows_the_manual_install_wrote_beside_the_binary() {
    if !man_installed() {
        return;
    }
    let repo = TestRepo::new();
    let installed = Installed::new(&repo);
    let manual = installed.manual();
    let text = installed.install(&repo);
    assert!(
        text.contains(&format!(
            "\nwrote the manual to {}: `git agent-context --help` shows it\n",
            manual.display()
        )),
        "{text}"
    );
    // The page man finds is ours, whatever else is installed.
    let found = installed.run(&repo, "man", &["-w", "git-agent-context"]);
    assert_eq!(
        stdout(&found).trim_end(),
        manual.join("git-agent-context.1").to_str().unwrap(),
        "{}",
        stderr(&found)
    );
    assert_shows_the_manual(&installed.run(&repo, "git", &["agent-context", "--help"]));
    assert_shows_the_manual(&installed.run(&repo, "git", &["help", "agent-context"]));
    // A command's page, its synopsis in git's words.
    let why = installed.run(&repo, "man", &["git-agent-context-why"]);
    let text = stdout(&why);
    assert!(
        text.starts_with("git-agent-context-why(1)")
            && text.contains("git agent-context why [-C ]")
            && text.contains("--exact"),
        "{text}{}",
        stderr(&why)
    );

    // Again: nothing is written. Uninstall leaves the manual to the other scopes.
    let written = pages(&manual);
    let again = installed.install(&repo);
    assert!(
        again.contains(&format!(
            "\nthe manual in {} is up to date\n",
            manual.display()
        )),
        "{again}"
    );
    assert_eq!(pages(&manual), written);
    let out = installed.run(&repo, "git", &["agent-context", "uninstall"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pages(&manual), written);
    assert_shows_the_manual(&installed.run(&repo, "git", &["agent-context", "--help"]));
}

#[test]
fn a_manual_that_cannot_be_written_fails_nothing_and_a_changed_page_is_written_again() {
    let repo = TestRepo::new();
    let installed = Installed::new(&repo);
    // A file where the folder would be: root cannot write there either.
    fs::write(installed.prefix.join("share"), "").unwrap();
    let text = installed.install(&repo);
    let last = (text.lines())
        .find(|l| l.contains("the manual"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        last.starts_with("note: the manual was not written (cannot create ")
            && last.ends_with("; `git agent-context --help` will not find it"),
        "{text}"
    );
    assert!(
        text.contains("installed the git hook .git/hooks/post-commit"),
        "{text}"
    );

    fs::remove_file(installed.prefix.join("share")).unwrap();
    installed.install(&repo);
    let page = installed.manual().join("git-agent-context.1");
    fs::write(&page, "an older page\n").unwrap();
    let text = installed.install(&repo);
    assert!(text.contains("wrote the manual to "), "{text}");
    assert_eq!(fs::read(&page).unwrap(), repo.run(&["man"]).stdout);
}

#[test]
fn man_prints_the_page_and_writes_every_page_to_a_folder() {
    let repo = TestRepo::new();
    let elsewhere = repo.outside();
    let page = repo.cmd_in(&elsewhere).arg("man").output().unwrap();
    assert!(page.status.success(), "{}", stderr(&page));
    let text = stdout(&page);
    assert!(
        text.contains("\n.TH git-agent-context 1 ") && text.contains("\n.SH SUBCOMMANDS\n"),
        "{text}"
    );

    let dir = elsewhere.join("pages");
    let out = repo
        .cmd_in(&elsewhere)
        .args(["man", "--out", "pages"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut names: Vec<String> = pages(&dir)
        .into_iter()
        .map(|(name, _)| name.into_string().unwrap())
        .collect();
    let listed = names.len();
    assert_eq!(
        stdout(&out),
        format!("pages: {listed} pages, {listed} of them new or changed\n")
    );
    assert_eq!(
        fs::read(dir.join("git-agent-context.1")).unwrap(),
        page.stdout
    );
    names.retain(|n| n.starts_with("git-agent-context-") && n.ends_with(".1"));
    for command in ["why", "install", "claude-md", "man", "hook"] {
        assert!(
            names.contains(&format!("git-agent-context-{command}.1")),
            "{names:?}"
        );
    }
    assert_eq!(names.len(), listed - 1, "no page for help");
    let again = repo
        .cmd_in(&elsewhere)
        .args(["man", "--out", "pages"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&again),
        format!("pages: {listed} pages, 0 of them new or changed\n")
    );
}
