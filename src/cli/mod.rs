//! The command line: parsing, output, exit codes. One file per command.
//!
//! Exit codes: 0 success, 1 nothing found or a failure, 2 bad usage or bad input (including
//! "not a git repository"). A closed stdout (`| head`) ends the command quietly with 0. Which
//! one an error gives is decided where it becomes a [`Failure`] (`failure.rs`).

mod claude_md;
mod completions;
mod demo;
mod distill;
mod doctor;
mod export;
mod extract;
mod failure;
mod forget;
mod hook;
mod init;
mod install;
mod log;
mod man;
mod mcp;
mod progress;
mod query;
mod rebuild;
mod record;
mod repair;
mod report;
mod review;
mod show;
mod status;
mod switch;
mod sync;
mod terminal;
mod why;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use failure::Failure;

use crate::app::display_path;

use crate::store::{self, Store};

#[derive(Debug, Parser)]
#[command(
    name = "git-agent-context",
    bin_name = "git agent-context",
    version,
    about = "The why behind the code: Claude Code reasoning kept in git",
    max_term_width = 100
)]
struct Cli {
    /// Run as if started in <path> (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "path")]
    directory: Option<PathBuf>,
    /// Page the output on a terminal, whatever the command (as `git -p`).
    #[arg(short = 'p', long, global = true)]
    paginate: bool,
    /// Do not page the output (why, show, review and log are paged on a terminal through
    /// core.pager, GIT_PAGER or less, as git pages log).
    #[arg(long, global = true, conflicts_with = "paginate")]
    no_pager: bool,
    /// Colour the text: auto (for a terminal or its pager, as color.ui and NO_COLOR allow),
    /// always, never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        value_name = "when",
        num_args = 0..=1,
        default_missing_value = "always",
        require_equals = true
    )]
    color: terminal::ColorWhen,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// A tour on two real sessions in a scratch repository: why, query, the brief, review.
    Demo(demo::Args),
    /// Create the local store in $GIT_DIR/agent-context.
    Init(init::Args),
    /// Hook into Claude Code (a settings file) and git (post-commit, post-merge,
    /// post-rewrite); runs init and writes the manual beside the binary.
    Install(install::Args),
    /// Take our hooks out of Claude Code's settings and git's hooks; notes and store stay.
    Uninstall(install::UninstallArgs),
    /// Read new transcript lines and turn them into events.
    Extract(extract::Args),
    /// Read every past transcript of this repository (its worktrees and subfolders too),
    /// showing progress; run again, it goes on where it stopped.
    Import(extract::ImportArgs),
    /// Show what is installed where, what is stored and how far each transcript was read.
    Status(status::Args),
    /// Check what `install` set up and say how to fix what is wrong (exit 1 on a problem).
    Doctor(doctor::Args),
    /// The commits that own a file's lines (or a range of them), and their reasoning.
    Why(why::Args),
    /// The recorded reasoning that bears on a prompt, packed into a token budget.
    Query(query::Args),
    /// A commit's diff with the reasoning behind it beside the hunks it explains.
    Show(show::Args),
    /// A branch's change set as a reviewer reads it: per file, the net diff and the reasoning
    /// of every commit in the range that touched it.
    Review(review::Args),
    /// Commits, one line each, with their decisions, rejections and trade-offs underneath.
    Log(log::Args),
    /// Serve Model Context Protocol over stdio: tools for the agent to record decisions and
    /// ask for the reasoning kept here (`install --mcp` registers it with Claude Code).
    Mcp(mcp::Args),
    /// Record a decision, rejection, trade-off or constraint in your own words: for the
    /// session's next commit (inside a Claude Code session) or on a commit.
    Record(record::Args),
    /// Have a small model draw decisions, rejections, trade-offs and constraints from what
    /// sessions said since the last time (distill.mode = "api"), within a token budget.
    Distill(distill::Args),
    /// Make the decision graph (refs/agent-context) again from the notes.
    Rebuild(rebuild::Args),
    /// Carry the notes of commits no branch reaches any more (squash or rebase merges,
    /// force-pushes) to the commits that now hold their lines.
    Repair(repair::Args),
    /// Share the notes through a remote: fetch its notes, merge them into ours by event id,
    /// push ours back (never forced; retried when another clone pushed first).
    Sync(sync::Args),
    /// Write what the notes hold for other tools: Agent Trace records of the commits sessions
    /// made, or one session's log as Markdown or JSON.
    Export(export::Args),
    /// Set the default query backend (file, session, decision) for this clone.
    Switch(switch::Args),
    /// Regenerate the marked section of CLAUDE.md from the decision graph.
    #[command(name = "claude-md")]
    ClaudeMd(claude_md::Args),
    /// Take events out of the notes, the decision graph, the pending queue and the caches, by
    /// session, id or text; the refs get new commits (their history keeps the old text).
    Forget(forget::Args),
    /// Run a git hook (post-commit, post-merge, post-rewrite) or a Claude Code hook; always
    /// exits 0.
    Hook(hook::Args),
    /// Print the manual page (roff), or write every page into a folder (`install` writes them
    /// where man finds them).
    Man(man::Args),
    /// Print the completion script for bash, zsh or fish, which also completes
    /// `git agent-context`.
    Completions(completions::Args),
}

pub type CmdResult = Result<(), Failure>;

pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match hook::Args::simple(args.get(1..).unwrap_or_default()) {
        Some(hook) => Cli {
            directory: None,
            paginate: false,
            no_pager: false,
            color: terminal::ColorWhen::default(),
            command: Command::Hook(hook),
        },
        None => Cli::parse_from(args),
    };
    // A hook writes and flushes its answer itself, and says why when it cannot: whatever is
    // left, it exits 0.
    let hook = matches!(cli.command, Command::Hook(_));
    let mut stdout = io::stdout().lock();
    let result = run(cli, &mut stdout).and_then(|()| stdout.flush().map_err(Failure::from));
    match result {
        _ if hook => ExitCode::SUCCESS,
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Some(message) = failure.message() {
                eprintln!("{message}");
            }
            ExitCode::from(failure.code() as u8)
        }
    }
}

fn run(cli: Cli, out: &mut dyn Write) -> CmdResult {
    let cwd = match cli.directory {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| {
            Failure::usage(anyhow::anyhow!("cannot read the current directory: {e}"))
        })?,
    };
    // What a program reads (a hook's answer, the MCP stream, a script or a page for a file) is
    // never paged; history is, as git pages log; the rest with --paginate.
    let pageable = !matches!(
        cli.command,
        Command::Hook(_) | Command::Mcp(_) | Command::Man(_) | Command::Completions(_)
    );
    let by_default = matches!(
        cli.command,
        Command::Why(_) | Command::Show(_) | Command::Review(_) | Command::Log(_)
    );
    // Only a terminal is paged: anywhere else no configuration is read for it.
    let pager = match pageable && !cli.no_pager && io::stdout().is_terminal() {
        // Outside a repository there is no pager configuration to read: git's defaults.
        true => match open(&cwd) {
            Ok(store) => terminal::wants_pager(&store, cli.paginate, false, by_default)
                .then(|| terminal::pager_command(&store, false))
                .flatten(),
            Err(_) => None,
        },
        false => None,
    };
    let look = terminal::Look {
        color: cli.color,
        paging: pager.is_some(),
    };
    terminal::paged(pager, out, |out| command(cli.command, cwd, look, out))
}

fn command(command: Command, cwd: PathBuf, look: terminal::Look, out: &mut dyn Write) -> CmdResult {
    match command {
        Command::Demo(args) => demo::run(args, out),
        Command::Init(args) => init::run(&open(&cwd)?, args, out),
        Command::Install(args) => install::run(&open(&cwd)?, args, out),
        Command::Uninstall(args) => install::uninstall(&open(&cwd)?, args, out),
        Command::Extract(args) => packing(&open(&cwd)?, |s| extract::run(s, &cwd, args, out)),
        Command::Import(args) => packing(&open(&cwd)?, |s| extract::import(s, &cwd, args, out)),
        Command::Status(args) => status::run(&open(&cwd)?, args, out),
        Command::Doctor(args) => doctor::run(&open(&cwd)?, args, out),
        Command::Why(args) => why::run(&open(&cwd)?, &cwd, args, look, out),
        Command::Query(args) => query::run(&open(&cwd)?, &cwd, args, out),
        Command::Show(args) => show::run(&open(&cwd)?, args, look, out),
        Command::Review(args) => review::run(&open(&cwd)?, args, look, out),
        Command::Log(args) => log::run(&open(&cwd)?, &cwd, args, look, out),
        // Each call opens the repository afresh; one that cannot be opened at all is said at
        // once, as for every command, so that Claude Code shows the server as failed.
        Command::Mcp(args) => open(&cwd).and_then(|_| mcp::run(&cwd, args, out)),
        Command::Record(args) => record::run(&open(&cwd)?, &cwd, args, out),
        Command::Distill(args) => distill::run(&open(&cwd)?, args, out),
        Command::Rebuild(args) => packing(&open(&cwd)?, |s| rebuild::run(s, args, out)),
        Command::Repair(args) => packing(&open(&cwd)?, |s| repair::run(s, args, out)),
        Command::Switch(args) => switch::run(&open(&cwd)?, args, out),
        Command::Export(args) => export::run(&open(&cwd)?, args, out),
        Command::Sync(args) => packing(&open(&cwd)?, |s| sync::run(s, args, out)),
        Command::ClaudeMd(args) => claude_md::run(&open(&cwd)?, args, out),
        Command::Forget(args) => forget::run(&open(&cwd)?, args, out),
        Command::Hook(args) => hook::run(&cwd, args, out),
        Command::Man(args) => man::run(args, out),
        Command::Completions(args) => completions::run(args, out),
    }
}

/// Run a command that may write many objects (notes, the graph), then pack the repository's
/// loose objects if there are many, and write git's commit-graph if there is none or it lacks
/// many commits ([`store::pack`]); either failing is a warning, the objects being there loose,
/// the history readable without the graph.
fn packing(store: &Store, command: impl FnOnce(&Store) -> CmdResult) -> CmdResult {
    let done = command(store);
    if let Err(e) = store::pack::pack_if_loose(store) {
        eprintln!("warning: the objects written were left loose: {e}");
    }
    if let Err(e) = store::pack::commit_graph_if_behind(store) {
        eprintln!("warning: no commit-graph was written: {e}");
    }
    done
}

/// The store of the repository at `cwd`; not being in a repository is a usage error.
fn open(cwd: &std::path::Path) -> Result<Store, Failure> {
    Ok(Store::discover(cwd)?)
}

/// Say, in one `warning:` line, which notes the retrieval index left out because they cannot
/// be read: what a command that answers from the index may be missing.
fn warn_unread(store: &Store) {
    if let Some(line) = crate::retrieve::index::read(store).unread_line() {
        eprintln!("warning: {line}");
    }
}

/// Write a value as pretty JSON followed by a newline.
fn write_json(out: &mut dyn Write, value: &serde_json::Value) -> CmdResult {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::from)?;
    write_escaped(out, &text)
}

/// Write a value as JSON on one line (JSON Lines).
fn write_json_line(out: &mut dyn Write, value: &serde_json::Value) -> CmdResult {
    let text = serde_json::to_string(value).map_err(io::Error::from)?;
    write_escaped(out, &text)
}

/// Write JSON text and a newline. serde_json escapes the C0 controls only: DEL and the 8-bit
/// controls (an 8-bit CSI) are escaped too, so that JSON read in a terminal drives it no more
/// than text does. They can only be inside strings, where `\u00XX` means the same.
fn write_escaped(out: &mut dyn Write, text: &str) -> CmdResult {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{7f}'..='\u{9f}' => escaped.push_str(&format!("\\u{:04x}", c as u32)),
            c => escaped.push(c),
        }
    }
    // As an io::Error, so that a closed pipe (`| head`) ends the command quietly.
    writeln!(out, "{escaped}")?;
    Ok(())
}

/// `path` as git names it: relative to the top of the working tree, `/`-separated.
pub(crate) fn repo_path(store: &Store, cwd: &Path, path: &str) -> Result<String, Failure> {
    Ok(store.repo_path(cwd, path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_escapes_8_bit_controls() {
        let mut out = Vec::new();
        let value = serde_json::json!({"summary": "a\u{9b}2Jb\u{7f}\u{1b}[m é"});
        assert!(write_json(&mut out, &value).is_ok());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r#""a\u009b2Jb\u007f\u001b[m é""#), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    /// A hook's command line read without the parser reads as the parser reads it; any other
    /// is left to the parser.
    #[test]
    fn a_hook_s_command_line_reads_as_the_parser_reads_it() {
        let words = |line: &str| -> Vec<std::ffi::OsString> {
            line.split(' ').map(std::ffi::OsString::from).collect()
        };
        for line in [
            "hook PreToolUse",
            "hook SessionStart",
            "hook post-commit",
            "hook --agent codex Stop",
            "hook --agent gemini-cli BeforeAgent",
            "hook --agent nobody Stop",
        ] {
            let simple = hook::Args::simple(&words(line)).expect(line);
            let parsed =
                Cli::try_parse_from(["git-agent-context"].into_iter().chain(line.split(' ')))
                    .expect(line);
            assert!(parsed.directory.is_none() && !parsed.paginate && !parsed.no_pager);
            assert_eq!(parsed.color, terminal::ColorWhen::default());
            match parsed.command {
                Command::Hook(args) => assert_eq!(args, simple, "{line}"),
                other => panic!("{line}: {other:?}"),
            }
        }
        for line in [
            "hook",
            "hook --help",
            "hook post-rewrite amend",
            "hook --agent=codex Stop",
            "hook --agent codex",
            "-C sub hook Stop",
            "--no-pager hook Stop",
            "hook Stop --agent codex",
            "why hook",
        ] {
            assert_eq!(hook::Args::simple(&words(line)), None, "{line}");
        }
    }
}
