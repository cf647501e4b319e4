//! `install` and `uninstall`: hook git-agent-context into Claude Code (the settings file of a
//! scope) and into git (`post-commit`, `post-merge`, `post-rewrite`), and take it out again
//! ([`crate::deliver::hookup`] does the merging). Everything is read and checked before
//! anything is written: a settings file that cannot be merged, or a git hook that cannot be
//! chained, fails the command with nothing changed.
//!
//! Several scopes may register our hooks; Claude Code would run each set. `install` warns of
//! it, and `uninstall` keeps the git hooks while another scope (or the plugin) still runs ours.

pub mod survey;

use std::path::{Path, PathBuf};

use crate::app::display_path;
use crate::deliver::adapter;
use crate::deliver::hookup::codex_trust;
use crate::deliver::hookup::git_hooks::{self, Action, Removal};
use crate::deliver::hookup::settings::{self, GUARD, MCP_SERVER, Settings, Written};
use crate::deliver::hookup::{shell_quote, shell_words};
use crate::deliver::links;
use crate::share::sync;
use crate::store::{Store, git_config, notes};
use crate::transcript::agent::Agent;
use crate::transcript::codex::codex_home;
use crate::transcript::gemini::gemini_dir;
use crate::transcript::locate::claude_dir;

/// The Claude Code settings file the hooks go in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// .claude/settings.json at the top of the working tree: shared with everyone who clones
    /// the repository.
    Project,
    /// .claude/settings.local.json at the top of the working tree: yours alone, not committed.
    Local,
    /// settings.json in $CLAUDE_CONFIG_DIR or ~/.claude: every project you open.
    User,
}

/// The pattern that keeps the local settings file out of commits.
const LOCAL_SETTINGS: &str = "/.claude/settings.local.json";

/// What to install, as `install`'s options say.
#[derive(Debug, Clone)]
pub struct Options {
    /// The agent whose hooks go in.
    pub agent: Agent,
    pub scope: Scope,
    /// How the hooks call the binary; `None`: the scope's default.
    pub command: Option<String>,
    /// The Claude Code hooks come from the plugin: the settings are left alone.
    pub plugin: bool,
    pub mcp: bool,
    pub sync: bool,
}

/// Why something cannot be installed or uninstalled.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("this repository has no working tree for {0}; use --scope user")]
    NoWorkTree(&'static str),
    #[error("cannot find Claude Code's {0}: neither CLAUDE_CONFIG_DIR nor HOME is set")]
    NoClaudeFolder(&'static str),
    #[error("cannot find {0}'s folder: HOME is not set")]
    NoAgentFolder(&'static str),
    #[error("{0} has no local settings of its own; use --scope user or --scope project")]
    NoLocalScope(&'static str),
    #[error("--mcp registers the MCP server with Claude Code only; install it for {0} by hand")]
    McpClaudeOnly(&'static str),
    #[error("the working tree's path {} is not UTF-8, as a project of .claude.json must be", .0.display())]
    NotUtf8(PathBuf),
    #[error(
        "--command {0:?} does not name git-agent-context, so its hooks could not be told from \
         other tools' (to replace or uninstall them)"
    )]
    NotUs(String),
    #[error("--command is empty")]
    EmptyCommand,
    #[error("cannot find this binary ({0}); use --command")]
    NoBinary(std::io::Error),
    #[error("this binary's path {} is not UTF-8; use --command", .0.display())]
    BinaryNotUtf8(PathBuf),
    #[error(transparent)]
    Settings(#[from] crate::deliver::hookup::Error),
    #[error(transparent)]
    Link(#[from] links::Error),
    #[error(transparent)]
    Sync(#[from] sync::Error),
    #[error(transparent)]
    Store(#[from] crate::store::Error),
}

/// What `init` made.
pub struct Initialized {
    /// The store was made.
    pub created: bool,
    /// The notes ref was made.
    pub started: bool,
    /// `.git/config` got the note-rewriting settings.
    pub configured: bool,
}

/// The store, the notes ref and the note-rewriting settings, each made if missing.
pub fn initialize(store: &Store) -> crate::store::Result<Initialized> {
    Ok(Initialized {
        created: store.init()?,
        started: notes::ensure_ref(store)?,
        configured: git_config::enable_note_rewrites(store)?,
    })
}

/// Install what `args` asks; what was done, what was in place, and what the installation as
/// it now stands needs.
pub fn install(store: &Store, args: &Options) -> Result<Said, Error> {
    if args.mcp && args.agent != Agent::ClaudeCode {
        return Err(Error::McpClaudeOnly(args.agent.title()));
    }
    let claude = agent_settings(store, args)?;
    let mcp = match args.mcp && claude.is_some() {
        true => Some(mcp_settings(store, args)?),
        false => None,
    };
    // The git hooks call this binary first, unless they are in the working tree: committed,
    // they would name this machine's path to everyone.
    let folder = hooks_folder(store)?;
    // Compared as the file system has them: `..`, links and other spellings resolved.
    let real = links::resolved(&folder);
    let shared = (store.worktrees().iter()).any(|top| real.starts_with(links::resolved(top)))
        && !real.starts_with(links::resolved(store.common_dir()));
    let binary = match shared {
        true => None,
        false => Some(exe()?),
    };
    // With --sync, the remote whose fetches bring the notes; a pre-push hook of ours already
    // there stays and is kept up to date.
    let sync_remote = match args.sync {
        true => Some(sync::default_remote(store)?),
        false => None,
    };
    let push = args.sync || git_hooks::pushes(&folder);
    let steps = git_hooks::plan(&folder, binary.as_deref(), push)?;

    let mut said = Said::default();
    // What `init` does, first: a hook that runs at once finds the store.
    let init = initialize(store)?;
    if init.created || init.started {
        said.done.push(format!(
            "initialized agent-context in {}",
            shown(store, store.dir())
        ));
    }
    if init.configured {
        said.done.push(
            "set notes.rewriteRef and notes.rewrite.*: notes follow commits through amend and \
             rebase"
                .to_owned(),
        );
    }
    if let Some(file) = &claude {
        write_agent_settings(store, args, file, &mut said)?;
    }
    if let Some((file, at)) = &mcp {
        let name = shown(store, file.path());
        match file.write()? {
            Written::Unchanged => said.in_place.push(name),
            _ if file.had_our_server(&keys(at)) => {
                said.done
                    .push(format!("updated the MCP server {MCP_SERVER} in {name}"));
            }
            _ => said
                .done
                .push(format!("registered the MCP server {MCP_SERVER} in {name}")),
        }
    }
    for step in &steps {
        git_hooks::apply(step)?;
        said.step(store, step);
    }
    if let Some(remote) = &sync_remote {
        let spec = git_config::notes_refspec(remote);
        match git_config::fetch_notes(store, remote)? {
            true => said.done.push(format!(
                "added the fetch refspec {spec} to the remote {remote}: fetches bring its notes"
            )),
            false => said.in_place.push(format!("the fetch refspec of {remote}")),
        }
    }
    said.advice = advise(store, args, claude.as_ref());
    Ok(said)
}

/// What `install` or `uninstall` did, what it found in place already (or left), and what the
/// installation as it now stands needs.
#[derive(Debug, Default)]
pub struct Said {
    pub done: Vec<String>,
    pub in_place: Vec<String>,
    pub advice: Vec<String>,
}

impl Said {
    /// A git hook's step, applied.
    fn step(&mut self, store: &Store, step: &git_hooks::Step) {
        let name = shown(store, &step.path);
        match step.action {
            Action::Nothing => self.in_place.push(name),
            Action::Create => self.done.push(format!("installed the git hook {name}")),
            Action::Update => self.done.push(format!("updated the git hook {name}")),
            Action::Chain => self.done.push(format!(
                "installed the git hook {name}; the hook that was there is kept as {} and runs \
                 first",
                file_name(&git_hooks::chained(&step.path))
            )),
        }
    }
}

/// The agent's settings file of `--scope` with our hooks in it, running `--command` or what
/// the scope runs by default; `None` with `--plugin`, which brings its own.
fn agent_settings(store: &Store, args: &Options) -> Result<Option<Settings>, Error> {
    let scope = args.scope;
    if args.plugin {
        return Ok(None);
    }
    let command = match (args.command.clone(), scope) {
        (Some(command), _) => command,
        (None, Scope::Local) => this_binary()?,
        (None, Scope::Project) => format!("{GUARD} git-agent-context"),
        (None, Scope::User) => "git-agent-context".to_owned(),
    };
    if !settings::names_us(&command) {
        return Err(Error::NotUs(command));
    }
    let mut file = settings_file(store, args.agent, scope)?;
    file.install(adapter::of(args.agent), &command)?;
    Ok(Some(file))
}

/// The file that registers MCP servers for `--scope`, with ours in it, and where in it.
fn mcp_settings(store: &Store, args: &Options) -> Result<(Settings, Vec<String>), Error> {
    let scope = args.scope;
    let (mut file, at) = mcp_file(store, scope)?;
    let (program, mut program_args) = match (&args.command, scope) {
        (Some(command), _) => split_command(command)?,
        (None, Scope::Local) => (exe()?, Vec::new()),
        (None, Scope::Project | Scope::User) => ("git-agent-context".to_owned(), Vec::new()),
    };
    program_args.push("mcp".to_owned());
    file.install_mcp(&keys(&at), &program, &program_args)?;
    Ok((file, at))
}

/// Write the agent's settings file; a local one new here is listed in `info/exclude`; Codex
/// CLI's user hooks are trusted in its configuration, which runs no hook it was not told to
/// trust.
fn write_agent_settings(
    store: &Store,
    args: &Options,
    file: &Settings,
    said: &mut Said,
) -> Result<(), Error> {
    let (scope, agent) = (args.scope, args.agent);
    let name = shown(store, file.path());
    match file.write()? {
        Written::Unchanged => said.in_place.push(name.clone()),
        Written::Written | Written::Removed if file.had_ours() => {
            said.done
                .push(format!("updated the {} hooks in {name}", agent.title()));
        }
        Written::Written | Written::Removed => said.done.push(format!(
            "added {} hooks for {} events to {name}",
            agent.title(),
            adapter::of(agent).entries().len()
        )),
    }
    if agent == Agent::Codex && scope == Scope::User {
        let home = codex_home().ok_or(Error::NoAgentFolder(agent.title()))?;
        let config = home.join("config.toml");
        if codex_trust::trust(&config, file)? {
            said.done.push(format!(
                "trusted our Codex CLI hooks in {}: Codex runs a hook only once it is trusted",
                shown(store, &config)
            ));
        }
    }
    if scope == Scope::Local && !file.existed() && settings::ignore_locally(store, LOCAL_SETTINGS)?
    {
        let exclude = store.common_dir().join("info").join("exclude");
        said.done.push(format!(
            "listed {name} in {}: it is yours alone, not for commits",
            shown(store, &exclude)
        ));
    }
    Ok(())
}

/// What the installation as it now stands needs: the binary on PATH where hooks look for it,
/// and one registration of our hooks, not two.
fn advise(store: &Store, args: &Options, claude: Option<&Settings>) -> Vec<String> {
    let scope = args.scope;
    let mut out = Vec::new();
    let installation = survey::survey(store);
    if let Some(file) = claude {
        let bare = installation.scopes.iter().find(|s| s.scope == scope);
        let needs_path = bare.is_some_and(|s| s.commands.iter().any(|c| !c.contains('/')));
        if needs_path && survey::on_path("git-agent-context").is_none() {
            out.push(format!(
                "note: the hooks in {} run git-agent-context from PATH, where it is not: put it \
                 there (cargo install puts it in ~/.cargo/bin) or install with --command <path>",
                shown(store, file.path())
            ));
        }
    }
    if args.plugin && survey::on_path("git-agent-context").is_none() {
        out.push(
            "note: git-agent-context is not on PATH, where the plugin looks for it".to_owned(),
        );
    }
    if args.agent != Agent::ClaudeCode {
        return out;
    }
    let here = (!args.plugin).then_some(scope);
    for other in installation
        .scopes
        .iter()
        .filter(|s| Some(s.scope) != here && !s.hooks.is_empty())
    {
        // The project's file is the team's: the one to take out is the one just put in.
        let out_of = match (other.scope, here) {
            (Scope::Project, Some(here)) => here,
            _ => other.scope,
        };
        out.push(format!(
            "warning: {} registers our Claude Code hooks too, and Claude Code runs both; keep \
             one: `git agent-context uninstall --scope {}`",
            other.settings,
            out_of.as_str()
        ));
    }
    for plugin in installation.scopes.iter().flat_map(|s| &s.plugins) {
        if !args.plugin {
            let plugin = crate::sanitise::line(plugin);
            out.push(format!(
                "warning: the plugin {plugin} registers our Claude Code hooks too, and Claude \
                 Code runs both; keep one (`install --plugin` leaves the settings alone)"
            ));
        }
    }
    out
}

/// What still registers our hooks once the `agent`'s `scope` is uninstalled, and so needs the
/// git hooks: this worktree's other Claude Code scopes and plugins, the worktrees sharing its
/// git directory, then the other agents' files; and how many of them are the Claude Code ones.
fn still_registering(store: &Store, agent: Agent, scope: Scope) -> (Vec<String>, usize) {
    let installation = survey::survey(store);
    let claude_left = |s: &survey::ScopeState| {
        agent != Agent::ClaudeCode || s.scope != scope || !s.plugins.is_empty()
    };
    let mut others: Vec<String> = (installation.scopes.into_iter())
        .filter(|s| s.registers_hooks() && claude_left(s))
        .map(|s| match s.plugins.first() {
            Some(plugin) => format!(
                "the plugin {} (enabled in {})",
                crate::sanitise::line(plugin),
                s.settings
            ),
            None => s.settings,
        })
        .collect();
    others.extend(survey::other_worktrees_registering(store));
    let claude_others = others.len();
    others.extend(
        (installation.agents.into_iter())
            .filter(|a| (a.agent, a.scope) != (agent, scope))
            .map(|a| format!("{} ({})", a.settings, a.agent.title())),
    );
    (others, claude_others)
}

impl Scope {
    /// The scope as `--scope` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::User => "user",
        }
    }
}

/// Take our hooks out of `scope`'s settings, and the git hooks when nothing else registers
/// ours; what was done, and what was left (`in_place`), the last line saying why when nothing
/// was done.
pub fn uninstall(store: &Store, agent: Agent, scope: Scope) -> Result<Said, Error> {
    let (others, claude_others) = still_registering(store, agent, scope);
    let mut file = settings_file(store, agent, scope)?;
    // Codex CLI's trust of our hooks goes with them.
    let codex_config = match (agent, scope) {
        (Agent::Codex, Scope::User) => codex_home().map(|home| home.join("config.toml")),
        _ => None,
    };
    let trusted = match &codex_config {
        Some(config) => codex_trust::untrust(config, &file)?,
        None => false,
    };
    file.uninstall()?;
    let path = file.path().to_owned();
    let folder = hooks_folder(store)?;
    let mcp = match agent {
        Agent::ClaudeCode => {
            let (mut mcp, at) = mcp_file(store, scope)?;
            // `.mcp.json` holds MCP servers alone: an `mcpServers` left empty goes, and the file
            // with it.
            mcp.uninstall_mcp(&keys(&at), scope == Scope::Project)?;
            Some(mcp)
        }
        Agent::Codex | Agent::GeminiCli => None,
    };

    let mut done = Vec::new();
    let name = shown(store, &path);
    let title = agent.title();
    match file.write()? {
        Written::Unchanged => {}
        Written::Written => done.push(format!("removed the {title} hooks from {name}")),
        Written::Removed => done.push(format!(
            "removed the {title} hooks from {name}, and the file: they were all it held"
        )),
    }
    if let (true, Some(config)) = (trusted, &codex_config) {
        done.push(format!(
            "removed the trust of our hooks from {}",
            shown(store, config)
        ));
    }
    if let Some(mcp) = &mcp {
        done.extend(write_mcp_removal(store, mcp)?);
    }
    let mut left = Vec::new();
    if !others.is_empty() {
        // Said as before other agents were served, when only Claude Code's settings hold ours.
        let whose = match others.len() > claude_others {
            true => "",
            false => " Claude Code",
        };
        left.push(format!(
            "kept the git hooks in {}: {} still registers our{whose} hooks",
            shown(store, &folder),
            others.join(" and ")
        ));
    }
    // A folder outside the repository (a global core.hooksPath) may serve other repositories.
    let real = links::resolved(&folder);
    let outside = !real.starts_with(links::resolved(store.common_dir()))
        && !(store.worktrees().iter()).any(|w| real.starts_with(links::resolved(w)));
    if outside && others.is_empty() {
        left.push(format!(
            "kept the git hooks in {}: a folder outside the repository, which other repositories \
             may use; take ours out by hand when none does",
            shown(store, &folder)
        ));
    }
    if others.is_empty() && !outside {
        take_out_git_hooks(store, &folder, &mut done, &mut left)?;
    }
    if done.is_empty() && others.is_empty() {
        left.insert(
            0,
            format!(
                "nothing to uninstall: no hooks of ours in {name} or {}",
                shown(store, &folder)
            ),
        );
    } else if done.is_empty() {
        left.insert(
            0,
            format!("nothing to uninstall: no hooks of ours in {name}"),
        );
    }
    left.push(format!(
        "kept the notes ({}), the store ({}) and the notes config",
        notes::REF,
        shown(store, store.dir())
    ));
    Ok(Said {
        done,
        in_place: left,
        advice: Vec::new(),
    })
}

/// Write the MCP servers' file with ours taken out; what that did.
fn write_mcp_removal(store: &Store, mcp: &Settings) -> Result<Option<String>, Error> {
    let name = shown(store, mcp.path());
    Ok(match mcp.write()? {
        Written::Unchanged => None,
        Written::Written => Some(format!("removed the MCP server {MCP_SERVER} from {name}")),
        Written::Removed => Some(format!(
            "removed the MCP server {MCP_SERVER} from {name}, and the file: it was all it held"
        )),
    })
}

/// Take our git hooks out of `folder`, and the fetch refspec of our notes out of the remotes:
/// what was done, what was left.
fn take_out_git_hooks(
    store: &Store,
    folder: &Path,
    done: &mut Vec<String>,
    left: &mut Vec<String>,
) -> Result<(), Error> {
    for remote in git_config::stop_fetching_notes(store)? {
        done.push(format!(
            "took the fetch refspec of our notes out of the remote {remote}"
        ));
    }
    for (hook, removal) in git_hooks::uninstall(folder)? {
        let hook_name = shown(store, &hook);
        match removal {
            Removal::Absent => {}
            Removal::Removed => done.push(format!("removed the git hook {hook_name}")),
            Removal::Restored => done.push(format!(
                "put back the git hook {hook_name} (kept as {} while ours ran it)",
                file_name(&git_hooks::chained(&hook))
            )),
            Removal::NotOurs => left.push(format!("left the git hook {hook_name}: it is not ours")),
        }
    }
    Ok(())
}

/// The settings file of `scope`, read. It is written only inside the scope's folder (the top
/// of the working tree, or Claude Code's folder), never through a link that leads out of it.
fn settings_file(store: &Store, agent: Agent, scope: Scope) -> Result<Settings, Error> {
    let folder = match agent {
        Agent::ClaudeCode => "a .claude folder",
        Agent::Codex => "a .codex folder",
        Agent::GeminiCli => "a .gemini folder",
    };
    let top = || (store.workdir()).ok_or(Error::NoWorkTree(folder));
    let home = |dir: Option<PathBuf>| dir.ok_or(Error::NoAgentFolder(agent.title()));
    let (folder, name, git_dir) = match (agent, scope) {
        (Agent::Codex | Agent::GeminiCli, Scope::Local) => {
            return Err(Error::NoLocalScope(agent.title()));
        }
        (Agent::Codex, Scope::Project) => (
            top()?.to_owned(),
            ".codex/hooks.json",
            Some(store.common_dir()),
        ),
        (Agent::Codex, Scope::User) => (home(codex_home())?, "hooks.json", None),
        (Agent::GeminiCli, Scope::Project) => (
            top()?.to_owned(),
            ".gemini/settings.json",
            Some(store.common_dir()),
        ),
        (Agent::GeminiCli, Scope::User) => (home(gemini_dir())?, "settings.json", None),
        (Agent::ClaudeCode, scope) => match scope {
            Scope::Project => (
                top()?.to_owned(),
                ".claude/settings.json",
                Some(store.common_dir()),
            ),
            Scope::Local => (
                top()?.to_owned(),
                ".claude/settings.local.json",
                Some(store.common_dir()),
            ),
            Scope::User => (
                claude_dir().ok_or(Error::NoClaudeFolder("folder"))?,
                "settings.json",
                None,
            ),
        },
    };
    Ok(Settings::read(&folder, Path::new(name), git_dir)?)
}

/// The file Claude Code reads the scope's MCP servers from, read, and the keys of the object
/// in it whose `mcpServers` are the scope's: `.mcp.json` at the top of the working tree
/// (project); `.claude.json` in `$CLAUDE_CONFIG_DIR` or the home folder, under
/// `projects.<top of the working tree>` (local) or at its top level (user). It is written only
/// inside that folder, never through a link that leads out of it.
fn mcp_file(store: &Store, scope: Scope) -> Result<(Settings, Vec<String>), Error> {
    let top = || (store.workdir()).ok_or(Error::NoWorkTree("a project's MCP servers"));
    if scope == Scope::Project {
        let file = Settings::read(top()?, Path::new(".mcp.json"), Some(store.common_dir()))?;
        return Ok((file, Vec::new()));
    }
    let folder = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()))
        .map(PathBuf::from)
        .ok_or(Error::NoClaudeFolder(".claude.json"))?;
    let at = match scope {
        Scope::Local => {
            let top = top()?;
            let top = (top.to_str()).ok_or_else(|| Error::NotUtf8(top.to_owned()))?;
            vec!["projects".to_owned(), top.to_owned()]
        }
        _ => Vec::new(),
    };
    let file = Settings::read(&folder, Path::new(".claude.json"), None)?;
    Ok((file, at))
}

fn keys(at: &[String]) -> Vec<&str> {
    at.iter().map(String::as_str).collect()
}

/// A `--command` as the program an MCP client starts and its arguments: its words, as a shell
/// reads them.
fn split_command(command: &str) -> Result<(String, Vec<String>), Error> {
    let mut words = shell_words(command).into_iter();
    let program = words.next().ok_or(Error::EmptyCommand)?;
    Ok((program, words.collect()))
}

/// The folder of the git hooks. One in the working tree (`core.hooksPath` naming a committed
/// folder) is written into only when no link on the way to it leads out of the tree; the git
/// directory is not cloned, so a link there (`.git/hooks` → a shared folder) is the user's.
fn hooks_folder(store: &Store) -> Result<PathBuf, Error> {
    let folder = git_config::hooks_dir(store)?;
    match store.workdir() {
        _ if folder.starts_with(store.common_dir()) => Ok(folder),
        Some(top) => match folder.strip_prefix(top) {
            Ok(name) => Ok(links::follow(top, name, None)?),
            Err(_) => Ok(folder),
        },
        None => Ok(folder),
    }
}

/// This binary's absolute path, quoted for the shell Claude Code runs hooks with.
fn this_binary() -> Result<String, Error> {
    Ok(shell_quote(&exe()?))
}

/// This binary's absolute path.
fn exe() -> Result<String, Error> {
    let path = std::env::current_exe().map_err(Error::NoBinary)?;
    (path.to_str().map(str::to_owned)).ok_or_else(|| Error::BinaryNotUtf8(path.clone()))
}

/// `path` relative to the top of the working tree when it is in it, else as
/// [`display_path`] shows it.
fn shown(store: &Store, path: &Path) -> String {
    match store.workdir().and_then(|top| path.strip_prefix(top).ok()) {
        Some(relative) => relative.display().to_string(),
        None => display_path(path),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_path_is_quoted_for_the_shell_and_still_known_as_ours() {
        assert_eq!(
            shell_quote("/home/me/.cargo/bin/git-agent-context"),
            "/home/me/.cargo/bin/git-agent-context"
        );
        let quoted = shell_quote("/Users/Jo O'Neil/bin/git-agent-context");
        assert_eq!(quoted, r"'/Users/Jo O'\''Neil/bin/git-agent-context'");
        let handler =
            serde_json::json!({"type": "command", "command": format!("{quoted} hook Stop")});
        assert!(settings::is_ours(&handler));
    }
}
