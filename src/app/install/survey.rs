//! What is installed where, read without changing anything: each scope's Claude Code hooks, MCP
//! server and plugin, the git hooks and the binary they run, and whether notes follow rewritten
//! commits. `status` shows it, `doctor` judges it, and `install`/`uninstall` look at the other
//! scopes in it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Scope, hooks_folder, keys, mcp_file, settings_file, shown};
use crate::deliver::hookup::codex_trust;
use crate::deliver::hookup::git_hooks::{self, Found};
use crate::deliver::hookup::settings::{GUARD, Settings};
use crate::store::{Store, git_config};
use crate::transcript::agent::Agent;
use crate::transcript::codex::codex_home;

#[derive(Debug, Serialize)]
pub struct Installation {
    pub scopes: Vec<ScopeState>,
    /// Our hooks in the other agents' configuration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentHooks>,
    pub git_hooks: GitHooks,
    /// Whether notes follow commits through `commit --amend` and `rebase`.
    pub notes_rewrite: bool,
}

/// Our hooks in the configuration of an agent other than Claude Code, in one scope.
#[derive(Debug, Serialize)]
pub struct AgentHooks {
    pub agent: Agent,
    pub scope: Scope,
    /// The file, as shown.
    pub settings: String,
    /// The events of our hooks there.
    pub hooks: Vec<String>,
    /// For Codex CLI's user hooks: whether its configuration trusts each of ours as it stands
    /// (it runs none it does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted: Option<bool>,
}

/// One scope of Claude Code's settings.
#[derive(Debug, Serialize)]
pub struct ScopeState {
    pub scope: Scope,
    /// The settings file, as shown to the user.
    pub settings: String,
    /// The events our hooks are registered for, in the file's order.
    pub hooks: Vec<String>,
    /// The programs they run (each command without its `hook <Event>`), each once.
    pub commands: Vec<String>,
    /// Our MCP server: the file it is in and its command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp: Option<Mcp>,
    /// The git-agent-context plugins the settings file enables.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plugins: Vec<String>,
    /// Why a file of the scope could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

impl ScopeState {
    /// Whether our Claude Code hooks run in this scope, registered or by a plugin.
    pub fn registers_hooks(&self) -> bool {
        !self.hooks.is_empty() || !self.plugins.is_empty()
    }
}

#[derive(Debug, Serialize)]
pub struct Mcp {
    pub file: String,
    /// The program Claude Code starts.
    pub program: String,
    /// Its command line.
    pub command: String,
}

#[derive(Debug, Serialize)]
pub struct GitHooks {
    pub folder: String,
    pub hooks: Vec<GitHook>,
    /// The binary ours call first, if they name one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// The binary ours would run now: theirs if it is there, else git-agent-context on PATH.
    pub runs: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct GitHook {
    pub name: &'static str,
    pub found: Found,
    /// A hook that was there before ours, kept beside it and run first.
    pub chained: bool,
}

pub fn survey(store: &Store) -> Installation {
    let scopes = [Scope::Local, Scope::Project, Scope::User]
        .into_iter()
        .map(|scope| scope_state(store, scope))
        .collect();
    Installation {
        scopes,
        agents: agents_state(store),
        git_hooks: git_hooks_state(store),
        notes_rewrite: git_config::note_rewrites(store),
    }
}

/// Our hooks in Codex CLI's and Gemini CLI's files, where there are any.
fn agents_state(store: &Store) -> Vec<AgentHooks> {
    let mut out = Vec::new();
    for agent in [Agent::Codex, Agent::GeminiCli] {
        for scope in [Scope::User, Scope::Project] {
            let Ok(file) = settings_file(store, agent, scope) else {
                continue;
            };
            if !file.had_ours() {
                continue;
            }
            let trusted = match (agent, scope, codex_home()) {
                (Agent::Codex, Scope::User, Some(home)) => {
                    Some(codex_trust::trusted(&home.join("config.toml"), &file))
                }
                _ => None,
            };
            out.push(AgentHooks {
                agent,
                scope,
                settings: shown(store, file.path()),
                hooks: file.ours().into_iter().map(|(event, _)| event).collect(),
                trusted,
            });
        }
    }
    out
}

fn scope_state(store: &Store, scope: Scope) -> ScopeState {
    // A scope that does not apply here (no working tree for the repository's files, no home
    // for the user's) holds nothing, and that is no error.
    let applies = match scope {
        Scope::Local | Scope::Project => store.workdir().is_some(),
        Scope::User => crate::transcript::locate::claude_dir().is_some(),
    };
    let mut state = ScopeState {
        scope,
        settings: String::new(),
        hooks: Vec::new(),
        commands: Vec::new(),
        mcp: None,
        plugins: Vec::new(),
        errors: Vec::new(),
    };
    if !applies {
        return state;
    }
    match settings_file(store, Agent::ClaudeCode, scope) {
        Ok(file) => {
            state.settings = shown(store, file.path());
            for (event, command) in file.ours() {
                // The program, without the `hook <Event>` every handler ends with, nor the
                // guard of a shared file.
                let suffix = format!(" hook {event}");
                let command = command.trim_end();
                let command = command.strip_suffix(&suffix).unwrap_or(command);
                let command = command
                    .strip_prefix(GUARD)
                    .unwrap_or(command)
                    .trim()
                    .to_owned();
                state.hooks.push(event);
                if !state.commands.contains(&command) {
                    state.commands.push(command);
                }
            }
            state.plugins = file.our_plugins();
        }
        Err(e) => state.errors.push(message(e)),
    }
    match mcp_file(store, scope) {
        Ok((file, at)) => {
            state.mcp = file.our_server(&keys(&at)).map(|(program, command)| Mcp {
                file: shown(store, file.path()),
                program,
                command,
            });
        }
        Err(e) => state.errors.push(message(e)),
    }
    state
}

/// The settings files of the other worktrees of the repository (local and project scope) that
/// register our Claude Code hooks or enable our plugin, as shown to the user.
pub fn other_worktrees_registering(store: &Store) -> Vec<String> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let here = store.workdir().map(real);
    let mut out = Vec::new();
    for root in store.worktrees() {
        if Some(real(&root)) == here {
            continue;
        }
        for name in [".claude/settings.local.json", ".claude/settings.json"] {
            let Ok(file) = Settings::read(&root, Path::new(name), Some(store.common_dir())) else {
                continue;
            };
            if !file.ours().is_empty() || !file.our_plugins().is_empty() {
                out.push(crate::app::display_path(file.path()));
            }
        }
    }
    out
}

fn git_hooks_state(store: &Store) -> GitHooks {
    let folder = hooks_folder(store).unwrap_or_else(|_| store.common_dir().join("hooks"));
    let found = git_hooks::survey(&folder);
    let binary = (found.iter())
        .find(|(_, _, f, _)| *f == Found::Ours)
        .and_then(|(_, path, _, _)| git_hooks::binary_of(path));
    let runs = match &binary {
        Some(b) if executable(Path::new(b)) => Some(b.clone()),
        _ => on_path("git-agent-context").map(|p| p.display().to_string()),
    };
    GitHooks {
        folder: shown(store, &folder),
        hooks: (found.into_iter())
            .map(|(name, _, found, chained)| GitHook {
                name,
                found,
                chained,
            })
            .collect(),
        binary,
        runs,
    }
}

fn message(e: super::Error) -> String {
    crate::store::error_chain(&e)
}

/// Whether `path` is a file that can be run.
pub fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where `program` is on PATH, if it is.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}
