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

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The settings file the Claude Code hooks go in. The default, local, changes no file
    /// other people share.
    #[arg(long, value_enum, value_name = "scope", default_value_t = Scope::Local)]
    scope: Scope,
    /// How the Claude Code hooks call the binary [default: this binary's absolute path for
    /// the local scope; `git-agent-context`, found on PATH, for the project and user scopes,
    /// whose files are shared or outlive this binary].
    #[arg(long, value_name = "command")]
    command: Option<String>,
    /// Leave the settings files alone: the Claude Code hooks come from the git-agent-context
    /// plugin. Installs the git hooks and the store only.
    #[arg(long, conflicts_with_all = ["scope", "command"])]
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
    /// The settings file to take the Claude Code hooks out of.
    #[arg(long, value_enum, value_name = "scope", default_value_t = Scope::Local)]
    scope: Scope,
}

pub fn run(store: &Store, args: Args, out: &mut dyn Write) -> CmdResult {
    let options = Options {
        scope: args.scope,
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
    let said = install::uninstall(store, args.scope)?;
    for line in said.done.iter().chain(&said.in_place) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}
