//! `install` and `uninstall`: hook git-agent-context into Claude Code (the settings file of a
//! scope) and into git (`post-commit`, `post-merge`, `post-rewrite`), and take it out again
//! (`app::install`). Everything is read and checked before anything is written: a settings
//! file that cannot be merged, or a git hook that cannot be chained, fails the command with
//! nothing changed.
//!
//! Several scopes may register our hooks; Claude Code would run each set. `install` warns of
//! it, and `uninstall` keeps the git hooks while another scope (or the plugin) still runs ours.

use std::io::Write;

pub use crate::app::install::Scope;
use crate::app::install::{self, Options};
use crate::cli::CmdResult;
use crate::store::Store;
use crate::transcript::agent::Agent;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent whose hooks go in: claude-code, codex (Codex CLI: `hooks.json` in
    /// $CODEX_HOME or ~/.codex, trusted in its config.toml; .codex/hooks.json for the project)
    /// or gemini-cli (Gemini CLI: ~/.gemini/settings.json; .gemini/settings.json for the
    /// project).
    #[arg(long, value_name = "agent", default_value = "claude-code", value_parser = agent)]
    agent: Agent,
    /// The settings file the hooks go in. The default, local, changes no file other people
    /// share; Codex CLI and Gemini CLI have none of their own, and take user by default.
    #[arg(long, value_enum, value_name = "scope")]
    scope: Option<Scope>,
    /// How the Claude Code hooks call the binary [default: this binary's absolute path for
    /// the local scope; `git-agent-context`, found on PATH, for the project and user scopes,
    /// whose files are shared or outlive this binary].
    #[arg(long, value_name = "command")]
    command: Option<String>,
    /// Leave the settings files alone: the Claude Code hooks come from the git-agent-context
    /// plugin. Installs the git hooks and the store only.
    #[arg(long, conflicts_with_all = ["scope", "command", "agent"])]
    plugin: bool,
    /// Also register the MCP server (`git agent-context mcp`) for the scope: in .mcp.json at
    /// the top of the working tree (project), or in Claude Code's ~/.claude.json, for this
    /// working tree (local) or every project (user).
    #[arg(long, conflicts_with = "plugin")]
    mcp: bool,
    /// Share the notes through the remote (the current branch's, else origin, else the only
    /// one): `git fetch` brings its notes beside ours, merged at the next pull, and a pre-push
    /// hook pushes ours beside each branch pushed.
    #[arg(long)]
    sync: bool,
}

#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// The agent whose hooks to take out: claude-code, codex or gemini-cli.
    #[arg(long, value_name = "agent", default_value = "claude-code", value_parser = agent)]
    agent: Agent,
    /// The settings file to take the hooks out of [default: local; user for codex and
    /// gemini-cli].
    #[arg(long, value_enum, value_name = "scope")]
    scope: Option<Scope>,
}

/// An agent as `--agent` names it.
fn agent(name: &str) -> Result<Agent, String> {
    Agent::named(name)
        .filter(|_| !name.is_empty())
        .ok_or_else(|| format!("unknown agent {name:?}: claude-code, codex or gemini-cli"))
}

/// The scope `--scope` names, else the agent's default: local for Claude Code, which has a
/// settings file of one's own in the project, user for the others.
fn scope_of(agent: Agent, scope: Option<Scope>) -> Scope {
    match (scope, agent) {
        (Some(scope), _) => scope,
        (None, Agent::ClaudeCode) => Scope::Local,
        (None, Agent::Codex | Agent::GeminiCli) => Scope::User,
    }
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let options = Options {
        agent: args.agent,
        scope: scope_of(args.agent, args.scope),
        command: args.command,
        plugin: args.plugin,
        mcp: args.mcp,
        sync: args.sync,
    };
    let said = install::install(store, &options)?;
    if said.done.is_empty() {
        writeln!(
            out,
            "already installed: {}, the store and the notes config",
            said.in_place.join(", ")
        )?;
    }
    for line in said.done.iter().chain(&said.advice) {
        writeln!(out, "{line}")?;
    }
    super::man::install(out)?;
    writeln!(
        out,
        "check it: `git agent-context status` shows what is installed where, `git agent-context \
         doctor` what is wrong"
    )?;
    Ok(())
}

pub fn uninstall(store: &Store, args: UninstallArgs, out: &mut dyn Write) -> CmdResult {
    let said = install::uninstall(store, args.agent, scope_of(args.agent, args.scope))?;
    for line in said.done.iter().chain(&said.in_place) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
