//! Colour and paging for the output a person reads, decided the way git decides them, so that
//! `git agent-context` behaves like any other git command: `--paginate`, `--no-pager`,
//! `pager.agent-context`, `--color`, `NO_COLOR`, `color.ui`, `GIT_PAGER`, `core.pager`, `PAGER`,
//! `less` with `LESS=FRX`.
//!
//! Each decision is a pure function of its inputs (environment values, config values, whether
//! stdout is a terminal), so it is tested without a terminal; only [`use_color`],
//! [`wants_pager`] and [`pager_command`] read the process's environment and the repository's
//! config.
//!
//! gix does not read `GIT_CONFIG_PARAMETERS`, where git puts `git -c key=value`: it is parsed
//! by [`parameters`], and wins over the config files as it does in git.

use std::ffi::OsStr;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::{Command, Stdio};

use super::failure::Code;
use super::{CmdResult, Failure};
use crate::store::{Store, parameters};

/// --color=<when>
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour for a terminal or a pager, unless NO_COLOR or color.ui says otherwise.
    #[default]
    Auto,
    Always,
    Never,
}

/// Whether to colour output: `--color`, then `NO_COLOR`, then `color.ui`; `auto` colours for a
/// terminal, or for the pager when we page or git pages us (as git colours for its pager).
pub fn use_color(store: &Store, when: ColorWhen, paging: bool) -> bool {
    let params = env_string("GIT_CONFIG_PARAMETERS");
    let repo = store.repo();
    let config = |key| config_string(&repo, params.as_deref(), key);
    // color.pager=false is for pagers that show escape codes as text.
    let color_pager = config("color.pager").is_none_or(|v| parse_bool(&v) != Some(false));
    let in_use = pager_in_use(std::env::var_os("GIT_PAGER_IN_USE").as_deref());
    decide_color(
        when,
        std::env::var_os("NO_COLOR").as_deref(),
        config("color.ui").as_deref(),
        color_pager,
        std::env::var_os("TERM").as_deref(),
        io::stdout().is_terminal(),
        paging || in_use,
    )
}

/// How a command's output is shown: whether it goes through a pager, and `--color`.
#[derive(Debug, Clone, Copy)]
pub struct Look {
    pub color: ColorWhen,
    pub paging: bool,
}

/// Whether `git agent-context` pages: `--paginate` yes, `--no-pager` no; else `pager.agent-context`
/// (a truth value, or a pager command, which is a yes), as git reads `pager.<cmd>`; else whether
/// the command pages by default (those that print history, as `git log` does).
pub fn wants_pager(store: &Store, paginate: bool, no_pager: bool, by_default: bool) -> bool {
    if paginate || no_pager {
        return paginate;
    }
    let params = env_string("GIT_CONFIG_PARAMETERS");
    match config_string(&store.repo(), params.as_deref(), "pager.agent-context") {
        Some(value) => parse_bool(&value) != Some(false),
        None => by_default,
    }
}

/// The pager command git would use, or `None` for no paging: `GIT_PAGER`, `core.pager`,
/// `PAGER`, then `less`; only when stdout is a terminal and git does not page us already.
pub fn pager_command(store: &Store, no_pager: bool) -> Option<String> {
    let params = env_string("GIT_CONFIG_PARAMETERS");
    choose_pager(
        env_string("GIT_PAGER").as_deref(),
        config_string(&store.repo(), params.as_deref(), "core.pager").as_deref(),
        env_string("PAGER").as_deref(),
        pager_in_use(std::env::var_os("GIT_PAGER_IN_USE").as_deref()),
        io::stdout().is_terminal(),
        no_pager,
    )
}

/// Run `body` with its output going to `pager` (a shell command), or to `out` when there is
/// none or it cannot be started. Returns once the pager has exited; a pager quit before the
/// end (a closed pipe) is a success.
pub fn paged(
    pager: Option<String>,
    out: &mut dyn Write,
    body: impl FnOnce(&mut dyn Write) -> CmdResult,
) -> CmdResult {
    let Some(pager) = pager else {
        return body(out);
    };
    // Whatever `out` holds was written before the paged text and must reach the terminal first.
    out.flush()?;
    // As git: a command with nothing for a shell to read is run as it is, so that a pager that
    // is not there fails to start (and the text is shown unpaged) instead of taking it away.
    let mut command = match pager.contains(SHELL_CHARS) {
        true => {
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(&pager);
            sh
        }
        false => Command::new(&pager),
    };
    command
        .stdin(Stdio::piped())
        // So that a git we run does not start a pager of its own inside ours.
        .env("GIT_PAGER_IN_USE", "true");
    // git's defaults: less quits when the text fits a screen (F), passes colours (R) and leaves
    // the text on screen (X); lv passes colours (-c). A user's own setting wins.
    for (var, value) in [("LESS", "FRX"), ("LV", "-c")] {
        if std::env::var_os(var).is_none() {
            command.env(var, value);
        }
    }
    // git says nothing when its pager cannot be started either, and shows the text unpaged.
    let Ok(mut child) = command.spawn() else {
        return body(out);
    };
    let stdin = child.stdin.take().expect("the pager's stdin is piped");
    let mut pipe = BufWriter::new(stdin);
    let result = body(&mut pipe).and_then(|()| pipe.flush().map_err(Failure::from));
    // The pager reads until the pipe closes.
    drop(pipe);
    // The terminal is the pager's until it exits: returning earlier would let the shell's prompt
    // run over it. Its exit status says nothing about our output (git ignores it too).
    let _ = child.wait();
    match result {
        Err(failure) if is_broken_pipe(&failure) => Ok(()),
        other => other,
    }
}

/// What makes git hand a pager command to the shell (git's `run-command.c`).
const SHELL_CHARS: &[char] = &[
    '|', '&', ';', '<', '>', '(', ')', '$', '`', '\\', '"', '\'', ' ', '\t', '\n', '*', '?', '[',
    '#', '~', '=', '%',
];

/// Whether the failure is a write to a closed pipe: the pager was quit before the end.
fn is_broken_pipe(failure: &Failure) -> bool {
    failure.code() == Code::Closed
}

/// An environment variable as text; a non-UTF-8 value is read lossily rather than ignored.
fn env_string(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// Whether git pages us already: `GIT_PAGER_IN_USE` holds a boolean (git sets `true`).
fn pager_in_use(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| parse_bool(&v.to_string_lossy()) != Some(false))
}

/// `key`'s value as git would see it: `git -c` first, then the config files.
fn config_string(repo: &gix::Repository, params: Option<&str>, key: &str) -> Option<String> {
    params
        .and_then(|params| parameters::last(params, key))
        .or_else(|| {
            repo.config_snapshot()
                .string(key)
                .map(|value| value.to_string())
        })
}

fn decide_color(
    when: ColorWhen,
    no_color: Option<&OsStr>,
    color_ui: Option<&str>,
    color_pager: bool,
    term: Option<&OsStr>,
    tty: bool,
    paging: bool,
) -> bool {
    let when = match when {
        ColorWhen::Auto if no_color.is_some_and(|v| !v.is_empty()) => ColorWhen::Never,
        ColorWhen::Auto => color_ui.map_or(ColorWhen::Auto, color_setting),
        explicit => explicit,
    };
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            // As git's is_terminal_dumb: no TERM at all is as dumb as TERM=dumb.
            let dumb = term.is_none_or(|t| t == "dumb");
            // Paged, the text goes to the pager (ours or git's), not to the terminal.
            !dumb && if paging { color_pager } else { tty }
        }
    }
}

/// A `color.ui` value read as git reads it: a truth value means `auto`, not `always`. git
/// refuses to run on a value it does not know; we take the default.
fn color_setting(value: &str) -> ColorWhen {
    if value.eq_ignore_ascii_case("always") {
        ColorWhen::Always
    } else if value.eq_ignore_ascii_case("never") || parse_bool(value) == Some(false) {
        ColorWhen::Never
    } else {
        ColorWhen::Auto
    }
}

/// A git boolean: `true`/`yes`/`on`, `false`/`no`/`off`, an integer, or empty (false).
fn parse_bool(value: &str) -> Option<bool> {
    let value = value.trim();
    if value.is_empty() {
        return Some(false);
    }
    for (word, meaning) in [
        ("true", true),
        ("yes", true),
        ("on", true),
        ("false", false),
        ("no", false),
        ("off", false),
    ] {
        if value.eq_ignore_ascii_case(word) {
            return Some(meaning);
        }
    }
    value.parse::<i64>().ok().map(|n| n != 0)
}

fn choose_pager(
    git_pager: Option<&str>,
    core_pager: Option<&str>,
    pager: Option<&str>,
    in_use: bool,
    tty: bool,
    no_pager: bool,
) -> Option<String> {
    if !tty || no_pager || in_use {
        return None;
    }
    // The first one set wins even when empty: `GIT_PAGER=` turns paging off, as in git.
    let command = git_pager.or(core_pager).or(pager).unwrap_or("less").trim();
    (!command.is_empty() && command != "cat").then(|| command.to_owned())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::store::parameters::tests::git;

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    /// `decide_color` for `auto` with nothing set but a usable TERM, varying one input.
    fn auto(no_color: Option<&OsStr>, color_ui: Option<&str>, tty: bool) -> bool {
        decide_color(
            ColorWhen::Auto,
            no_color,
            color_ui,
            true,
            os("xterm"),
            tty,
            false,
        )
    }

    #[test]
    fn the_color_flag_wins_over_everything() {
        for (no_color, color_ui, term, tty) in [
            (os("1"), Some("never"), os("dumb"), false),
            (None, Some("always"), os("xterm"), true),
        ] {
            let decide = |when| decide_color(when, no_color, color_ui, true, term, tty, true);
            assert!(decide(ColorWhen::Always));
            assert!(!decide(ColorWhen::Never));
        }
    }

    #[test]
    fn no_color_counts_only_when_not_empty() {
        assert!(!auto(os("1"), None, true));
        assert!(auto(os(""), None, true));
        assert!(auto(None, None, true));
    }

    #[test]
    fn no_color_wins_over_color_ui() {
        assert!(!auto(os("1"), Some("always"), true));
    }

    #[test]
    fn color_ui_is_read_as_git_reads_it() {
        for (value, tty, expected) in [
            ("always", false, true),
            ("ALWAYS", false, true),
            ("never", true, false),
            ("false", true, false),
            ("off", true, false),
            ("0", true, false),
            ("", true, false),
            // A truth value is auto: colour on a terminal only.
            ("true", true, true),
            ("true", false, false),
            ("yes", false, false),
            ("1", false, false),
            ("auto", true, true),
            ("auto", false, false),
            ("nonsense", true, true),
            ("nonsense", false, false),
        ] {
            assert_eq!(
                auto(None, Some(value), tty),
                expected,
                "color.ui={value:?} tty={tty}"
            );
        }
    }

    #[test]
    fn auto_colours_for_a_terminal_or_a_pager() {
        let decide = |color_pager, tty, paging| {
            decide_color(
                ColorWhen::Auto,
                None,
                None,
                color_pager,
                os("xterm"),
                tty,
                paging,
            )
        };
        assert!(decide(true, true, false));
        assert!(decide(true, false, true));
        assert!(!decide(true, false, false));
        // color.pager=false: not for the pager, still for a terminal.
        assert!(!decide(false, false, true));
        assert!(decide(false, true, false));
    }

    #[test]
    fn a_dumb_or_missing_terminal_gets_no_colour_unless_asked() {
        for term in [os("dumb"), None] {
            let decide =
                |when, color_ui| decide_color(when, None, color_ui, true, term, true, true);
            assert!(!decide(ColorWhen::Auto, None));
            assert!(!decide(ColorWhen::Auto, Some("auto")));
            assert!(decide(ColorWhen::Auto, Some("always")));
            assert!(decide(ColorWhen::Always, None));
        }
    }

    #[test]
    fn pager_sources_in_git_order() {
        let choose = |git, core, env| choose_pager(git, core, env, false, true, false);
        assert_eq!(
            choose(Some("g"), Some("c"), Some("p")).as_deref(),
            Some("g")
        );
        assert_eq!(choose(None, Some("c"), Some("p")).as_deref(), Some("c"));
        assert_eq!(choose(None, None, Some("p")).as_deref(), Some("p"));
        assert_eq!(choose(None, None, None).as_deref(), Some("less"));
    }

    #[test]
    fn empty_or_cat_means_no_pager() {
        let choose = |git, core, env| choose_pager(git, core, env, false, true, false);
        assert_eq!(choose(Some(""), Some("c"), Some("p")), None);
        assert_eq!(choose(Some("cat"), Some("c"), Some("p")), None);
        assert_eq!(choose(None, Some(""), Some("p")), None);
        assert_eq!(choose(None, Some("cat"), Some("p")), None);
        assert_eq!(choose(None, None, Some("")), None);
        assert_eq!(choose(None, None, Some(" cat ")), None);
        assert_eq!(
            choose(None, None, Some("cat -n")).as_deref(),
            Some("cat -n")
        );
    }

    #[test]
    fn no_pager_without_a_terminal_with_no_pager_or_inside_git_s() {
        let choose =
            |in_use, tty, no_pager| choose_pager(Some("g"), None, None, in_use, tty, no_pager);
        assert_eq!(choose(false, true, false).as_deref(), Some("g"));
        assert_eq!(choose(false, false, false), None);
        assert_eq!(choose(false, true, true), None);
        assert_eq!(choose(true, true, false), None);
    }

    #[test]
    fn git_pager_in_use_is_a_boolean() {
        assert!(pager_in_use(os("true")));
        assert!(pager_in_use(os("1")));
        assert!(!pager_in_use(os("false")));
        assert!(!pager_in_use(os("0")));
        assert!(!pager_in_use(None));
    }

    #[test]
    fn git_c_wins_over_the_config_files() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["config", "color.ui", "never"]);
        git(dir.path(), &["config", "core.pager", "more"]);
        let store = Store::discover(dir.path()).unwrap();
        let repo = store.repo();
        assert_eq!(
            config_string(&repo, None, "color.ui").as_deref(),
            Some("never")
        );
        assert_eq!(
            config_string(&repo, None, "core.pager").as_deref(),
            Some("more")
        );
        let params = Some("'color.ui'='always'");
        assert_eq!(
            config_string(&repo, params, "color.ui").as_deref(),
            Some("always")
        );
        assert_eq!(
            config_string(&repo, params, "core.pager").as_deref(),
            Some("more")
        );
    }

    fn ok(result: CmdResult) -> bool {
        matches!(result, Ok(()))
    }

    fn shell_quote(path: &Path) -> String {
        format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
    }

    #[test]
    fn without_a_pager_the_text_goes_to_out() {
        let mut out = Vec::new();
        assert!(ok(paged(None, &mut out, |w| Ok(w.write_all(b"text\n")?))));
        assert_eq!(out, b"text\n");
    }

    #[test]
    fn the_pager_gets_the_text_and_git_s_environment() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("text");
        let env = dir.path().join("env");
        let pager = format!(
            r#"printf '%s|%s' "$GIT_PAGER_IN_USE" "$LESS" > {}; cat > {}"#,
            shell_quote(&env),
            shell_quote(&text)
        );
        let mut out = Vec::new();
        out.extend_from_slice(b"before\n");
        let body: Vec<u8> = (0..100_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        assert!(ok(paged(
            Some(pager),
            &mut out,
            |w| Ok(w.write_all(&body)?)
        )));
        assert_eq!(std::fs::read(&text).unwrap(), body);
        assert_eq!(out, b"before\n", "nothing more goes to out");
        let less = std::env::var("LESS").unwrap_or_else(|_| "FRX".to_owned());
        assert_eq!(
            std::fs::read_to_string(&env).unwrap(),
            format!("true|{less}")
        );
    }

    #[test]
    fn a_pager_quit_early_is_a_success() {
        let mut broken = false;
        let chunk = vec![b'x'; 64 * 1024];
        let result = paged(Some("true".to_owned()), &mut Vec::new(), |w| {
            for _ in 0..256 {
                w.write_all(&chunk).inspect_err(|_| broken = true)?;
            }
            Ok(())
        });
        assert!(broken, "the writes met the closed pipe");
        assert!(ok(result));
    }

    #[test]
    fn other_failures_come_through_the_pager() {
        let result = paged(Some("cat > /dev/null".to_owned()), &mut Vec::new(), |w| {
            w.write_all(b"partial")?;
            Err(Failure::usage(anyhow::anyhow!("bad input")))
        });
        assert!(
            matches!(result, Err(f) if f.code() == Code::Usage && f.message().as_deref() == Some("error: bad input"))
        );
    }
}
