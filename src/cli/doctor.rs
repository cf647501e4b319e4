//! `doctor`: check what `install` set up, and say how to fix what is wrong. Each check says
//! what it found; a problem also says what to run. Exit 1 when any check finds a problem.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::anyhow;
use serde::Serialize;

use crate::app::install::Scope;
use crate::app::install::survey::{self, Installation, ScopeState};
use crate::cli::report::{self, Report};
use crate::cli::{CmdResult, Failure, display_path};
use crate::deliver::hookup::shell_words;
use crate::ingest::Saved;
use crate::sanitise::line;
use crate::store::{Store, state};
use crate::transcript::agent::Agent;
use crate::transcript::locate::{self, claude_dir};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// How long Claude Code keeps a transcript unless `cleanupPeriodDays` says otherwise.
const CLEANUP_DAYS: u64 = 30;
/// How long before Claude Code deletes a transcript that is not read yet we warn of it.
const WARN_DAYS: u64 = 7;

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    ok: bool,
    found: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

/// What `doctor` found.
#[derive(Serialize)]
struct Checked {
    checks: Vec<Check>,
}

impl Report for Checked {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        for c in &self.checks {
            let mark = if c.ok { "ok" } else { "problem" };
            writeln!(out, "{mark}: {}: {}", c.check, c.found)?;
            if let Some(fix) = &c.fix {
                writeln!(out, "  fix: {fix}")?;
            }
        }
        Ok(())
    }
}

fn ok(check: &'static str, found: String) -> Check {
    Check {
        check,
        ok: true,
        found,
        fix: None,
    }
}

fn problem(check: &'static str, found: String, fix: String) -> Check {
    Check {
        check,
        ok: false,
        found,
        fix: Some(fix),
    }
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let installed = survey::survey(store);
    let mut checks = Vec::new();
    registrations(&installed, &mut checks);
    other_agents(&installed, &mut checks);
    commands(&installed, &mut checks);
    git_hooks(&installed, &mut checks);
    checks.push(match installed.notes_rewrite {
        true => ok(
            "notes config",
            "notes follow commits through amend and rebase".to_owned(),
        ),
        false => problem(
            "notes config",
            "notes do not follow commits through amend and rebase (notes.rewriteRef)".to_owned(),
            "git agent-context init".to_owned(),
        ),
    });
    checks.push(transcripts(store));

    let failed = checks.iter().filter(|c| !c.ok).count();
    report::print(out, &Checked { checks }, args.json)?;
    match failed {
        0 => Ok(()),
        n => Err(Failure::failed(anyhow!(
            "{n} problem{} found",
            if n == 1 { "" } else { "s" }
        ))),
    }
}

/// Where our Claude Code hooks are registered, if anywhere, and only once.
fn registrations(installed: &Installation, checks: &mut Vec<Check>) {
    let mut by: Vec<(String, &ScopeState)> = Vec::new();
    for s in &installed.scopes {
        if !s.hooks.is_empty() {
            by.push((s.settings.clone(), s));
        }
        for plugin in &s.plugins {
            by.push((format!("the plugin {}", line(plugin)), s));
        }
    }
    for s in installed.scopes.iter().filter(|s| !s.errors.is_empty()) {
        checks.push(problem(
            "settings",
            format!("{} scope: {}", s.scope.as_str(), line(&s.errors.join("; "))),
            "fix or remove the file named".to_owned(),
        ));
    }
    match by.as_slice() {
        // Another agent's are: its sessions are read and served.
        [] if !installed.agents.is_empty() => {}
        [] => checks.push(problem(
            "Claude Code hooks",
            "registered in no scope: sessions are neither read as they happen nor given \
             the reasoning kept"
                .to_owned(),
            "git agent-context install".to_owned(),
        )),
        [(what, _)] => checks.push(ok("Claude Code hooks", format!("registered by {what}"))),
        [..] => {
            let names: Vec<&str> = by.iter().map(|(w, _)| w.as_str()).collect();
            // Not the project's file, which is the team's, when another will do.
            let settings = (by.iter().filter(|(w, _)| !w.starts_with("the plugin ")))
                .min_by_key(|(_, s)| s.scope == Scope::Project);
            let fix = match settings {
                Some((_, s)) => {
                    format!(
                        "keep one: git agent-context uninstall --scope {}",
                        s.scope.as_str()
                    )
                }
                None => "keep one plugin enabled (/plugin in Claude Code)".to_owned(),
            };
            checks.push(problem(
                "Claude Code hooks",
                format!(
                    "registered by {}: Claude Code runs each, so every hook runs twice",
                    names.join(" and ")
                ),
                fix,
            ));
        }
    }
}

/// Our hooks in the other agents' files, and whether Codex CLI trusts its.
fn other_agents(installed: &Installation, checks: &mut Vec<Check>) {
    for a in &installed.agents {
        let check = match a.agent {
            Agent::Codex => "Codex CLI hooks",
            _ => "Gemini CLI hooks",
        };
        let at = format!("{} scope ({})", a.scope.as_str(), a.settings);
        checks.push(match a.trusted {
            Some(false) => problem(
                check,
                format!("registered in the {at}, but not trusted: Codex CLI runs none of them"),
                "git agent-context install --agent codex (or trust them in Codex's /hooks)"
                    .to_owned(),
            ),
            Some(true) => ok(check, format!("registered in the {at}, and trusted")),
            None => ok(check, format!("registered in the {at}")),
        });
    }
}

/// Whether the programs the hooks and MCP servers run are there.
fn commands(installed: &Installation, checks: &mut Vec<Check>) {
    for s in &installed.scopes {
        let mut runs: Vec<(&str, String)> = s
            .commands
            .iter()
            .map(|c| ("hooks run", program(c)))
            .collect();
        if let Some(mcp) = &s.mcp {
            runs.push(("MCP server runs", mcp.program.clone()));
        }
        if !s.plugins.is_empty() {
            runs.push(("plugin runs", "git-agent-context".to_owned()));
        }
        for (what, program) in runs {
            let check = match found(&program) {
                Some(at) => ok(
                    "binary",
                    format!("the {} scope's {what} {}", s.scope.as_str(), line(&at)),
                ),
                None if !program.contains('/') => problem(
                    "binary",
                    format!(
                        "the {} scope's {what} {} from PATH, where it is not",
                        s.scope.as_str(),
                        line(&program)
                    ),
                    "put git-agent-context on PATH (`cargo install` puts it in ~/.cargo/bin)"
                        .to_owned(),
                ),
                None => problem(
                    "binary",
                    format!(
                        "the {} scope's {what} {}, which is not there",
                        s.scope.as_str(),
                        line(&program)
                    ),
                    format!(
                        "run `git agent-context install --scope {}` with the binary you use",
                        s.scope.as_str()
                    ),
                ),
            };
            checks.push(check);
        }
    }
}

/// Whether our git hooks are all in place and find a binary to run.
fn git_hooks(installed: &Installation, checks: &mut Vec<Check>) {
    let git = &installed.git_hooks;
    let missing: Vec<&str> = (git.hooks.iter())
        .filter(|h| h.found != crate::deliver::hookup::git_hooks::Found::Ours)
        .map(|h| h.name)
        .collect();
    checks.push(match missing.as_slice() {
        [] => ok(
            "git hooks",
            format!("post-commit, post-merge and post-rewrite in {}", git.folder),
        ),
        _ => problem(
            "git hooks",
            format!(
                "{} not ours in {}: commits do not get their notes as they are made",
                missing.join(", "),
                git.folder
            ),
            "git agent-context install (or install --plugin with the plugin)".to_owned(),
        ),
    });
    if missing.len() == git.hooks.len() {
        return;
    }
    checks.push(match (&git.runs, &git.binary) {
        (Some(binary), _) => ok("git hooks' binary", format!("they run {}", line(binary))),
        (None, Some(binary)) => problem(
            "git hooks' binary",
            format!(
                "they find no git-agent-context: {} is gone and none is on PATH",
                line(binary)
            ),
            "run `git agent-context install` with the binary you use, or put it on PATH".to_owned(),
        ),
        (None, None) => problem(
            "git hooks' binary",
            "they find no git-agent-context on PATH".to_owned(),
            "put git-agent-context on PATH, or run `git agent-context install` with the binary \
             you use"
                .to_owned(),
        ),
    });
}

/// Whether Claude Code will delete transcripts of this repository before they are read.
fn transcripts(store: &Store) -> Check {
    const CHECK: &str = "transcripts";
    let Some(claude) = claude_dir() else {
        return ok(CHECK, "no Claude Code folder (HOME is not set)".to_owned());
    };
    let (days, file) = cleanup_days(store, &claude);
    let file = file.map_or_else(
        || "~/.claude/settings.json".to_owned(),
        |f| display_path(&f),
    );
    if days == 0 {
        return problem(
            CHECK,
            format!("cleanupPeriodDays is 0 in {file}: Claude Code keeps no transcript to read"),
            format!("set cleanupPeriodDays to 30 or more in {file}"),
        );
    }
    let read: Vec<(std::path::PathBuf, u64)> = (state::all::<Saved>(store).into_iter())
        .flatten()
        .map(|s| (s.cursor.path, s.cursor.offset + s.cursor.tail_bytes))
        .collect();
    let now = SystemTime::now();
    let soon = Duration::from_secs(days.saturating_sub(WARN_DAYS) * 86_400);
    let mut unread = 0;
    for root in store.worktrees() {
        let nested = store.nested_in(&root);
        for path in locate::transcripts(&claude, &root, &nested) {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let age = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok());
            let done = read.iter().any(|(p, at)| *p == path && *at >= meta.len());
            if !done && age.is_some_and(|age| age >= soon) {
                unread += 1;
            }
        }
    }
    match unread {
        0 => ok(
            CHECK,
            format!("none unread near Claude Code's cleanup (cleanupPeriodDays = {days})"),
        ),
        n => problem(
            CHECK,
            format!(
                "{n} transcript{} of this repository not read yet, to be deleted by Claude Code \
                 within {WARN_DAYS} days (cleanupPeriodDays = {days})",
                if n == 1 { "" } else { "s" }
            ),
            format!(
                "git agent-context extract; raise cleanupPeriodDays in {file} to keep them longer"
            ),
        ),
    }
}

/// `cleanupPeriodDays` as Claude Code takes it, and the file it is set in: the local settings
/// over the project's over the user's, else its default.
fn cleanup_days(store: &Store, claude: &Path) -> (u64, Option<PathBuf>) {
    let mut files = Vec::new();
    if let Some(top) = store.workdir() {
        files.push(top.join(".claude/settings.local.json"));
        files.push(top.join(".claude/settings.json"));
    }
    files.push(claude.join("settings.json"));
    files
        .into_iter()
        .find_map(|f| {
            let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).ok()?).ok()?;
            Some((value.get("cleanupPeriodDays")?.as_u64()?, Some(f)))
        })
        .unwrap_or((CLEANUP_DAYS, None))
}

/// The program a command line runs: its first word as a shell reads it; `git agent-context`
/// runs git-agent-context from PATH.
fn program(command: &str) -> String {
    match shell_words(command).as_slice() {
        [git, sub, ..] if git == "git" && sub == "agent-context" => "git-agent-context".to_owned(),
        [first, ..] => first.clone(),
        [] => String::new(),
    }
}

/// Where `program` is: itself when it names a path, else on PATH.
fn found(program: &str) -> Option<String> {
    match program.contains('/') {
        true => survey::executable(Path::new(program)).then(|| program.to_owned()),
        false => survey::on_path(program).map(|p| p.display().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::program;

    #[test]
    fn the_program_of_a_hook_command_is_its_first_word_quoted_or_not() {
        assert_eq!(
            program("/usr/bin/git-agent-context"),
            "/usr/bin/git-agent-context"
        );
        assert_eq!(
            program("'/Users/Jo O'\\''Neil/b in/git-agent-context' hook Stop"),
            "/Users/Jo O'Neil/b in/git-agent-context"
        );
        assert_eq!(
            program("\"/opt/b in/git-agent-context\""),
            "/opt/b in/git-agent-context"
        );
        assert_eq!(
            program("'/opt/b in/git-agent-context'"),
            "/opt/b in/git-agent-context"
        );
        assert_eq!(program("git agent-context"), "git-agent-context");
        assert_eq!(program("git-agent-context"), "git-agent-context");
    }
}
