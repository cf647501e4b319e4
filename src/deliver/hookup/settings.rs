//! Our entries in a Claude Code settings file (`.claude/settings.json`, `settings.local.json`,
//! `~/.claude/settings.json`), and in the files of the same shape of the other agents (Codex
//! CLI's `hooks.json`, Gemini CLI's `settings.json`): one matcher group per entry of the agent's
//! adapter (`crate::deliver::adapter`), each with one command handler, `<command> hook <Event>`
//! (`<command> hook --agent <agent> <Event>` for the others). With `install --mcp`, our MCP
//! server in the file Claude Code reads MCP servers from (`.mcp.json`, `~/.claude.json`):
//! `mcpServers.agent-context`.
//!
//! A handler is ours when it is a command handler whose command ends with `hook <Event>` or
//! `hook --agent <agent> <Event>` (an event `hook` answers) and names the binary — a word whose file name is `git-agent-context`,
//! or `git agent-context` — whatever path or quoting it was installed with, so that installing
//! with another `--command` replaces ours and `uninstall` finds them. Everything else in the
//! file is kept as it was, in its order (serde_json's `preserve_order`), and the file keeps its
//! indentation; a file we leave unchanged is not written at all.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Error, Result, io_error, mode_of};
use crate::deliver::adapter::{self, Adapter};
use crate::deliver::links;
use crate::store::Store;
use crate::store::write_atomic_with_mode;

/// What a shared settings file's hooks say before the command: a teammate without the binary
/// gets hooks that do nothing, not an error on every event.
pub const GUARD: &str = "command -v git-agent-context >/dev/null 2>&1 || exit 0;";

/// One of our handlers in a settings file, and where it is.
#[derive(Debug)]
pub struct Placed<'a> {
    pub event: &'a str,
    pub matcher: Option<&'a str>,
    pub group: usize,
    pub index: usize,
    pub handler: &'a Value,
}

/// What [`Settings::write`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Nothing changed: the file was not touched.
    Unchanged,
    /// The file was written (or created).
    Written,
    /// Our entries were all it held: the file was removed.
    Removed,
}

/// A settings file, read, to be changed and written back.
#[derive(Debug)]
pub struct Settings {
    /// The path as named (for messages).
    path: PathBuf,
    /// The file written: `path`, or the file the links on the way to it lead to, inside the
    /// scope's folder ([`links`]).
    target: PathBuf,
    existed: bool,
    indent: Vec<u8>,
    before: Map<String, Value>,
    value: Map<String, Value>,
}

impl Settings {
    /// Read the settings file `name` in the scope's `folder` (not in `git_dir`); a missing (or
    /// blank) file is an empty object. A file that is not a JSON object is an error, and so is a
    /// link on the way to it that leads out of `folder` or into `git_dir`.
    pub fn read(folder: &Path, name: &Path, git_dir: Option<&Path>) -> Result<Settings> {
        let target = links::follow(folder, name, git_dir)?;
        let path = folder.join(name);
        let (existed, bytes) = match fs::read(&target) {
            Ok(bytes) => (true, bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, Vec::new()),
            Err(e) => return Err(io_error("cannot read", &path)(e)),
        };
        let value = if bytes.trim_ascii().is_empty() {
            Map::new()
        } else {
            let parsed = serde_json::from_slice(&bytes).map_err(|source| Error::NotJson {
                path: path.clone(),
                source,
            })?;
            match parsed {
                Value::Object(map) => map,
                _ => return Err(shape(&path, "the top level is not a JSON object")),
            }
        };
        Ok(Settings {
            path,
            target,
            existed,
            indent: indent_of(&bytes),
            before: value.clone(),
            value,
        })
    }

    /// The settings file, as named.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file existed before.
    pub fn existed(&self) -> bool {
        self.existed
    }

    /// Whether the file held any of our handlers when it was read.
    pub fn had_ours(&self) -> bool {
        !self.ours().is_empty()
    }

    /// Our handlers in the file as it was read: each event's command, in the file's order.
    pub fn ours(&self) -> Vec<(String, String)> {
        let Some(hooks) = hooks_of(&self.before) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (event, groups) in hooks {
            let handlers = (groups.as_array().into_iter().flatten())
                .filter_map(handlers_of)
                .flatten();
            for handler in handlers.filter(|h| is_ours(h)) {
                let command = handler["command"].as_str().unwrap_or_default();
                out.push((event.clone(), command.to_owned()));
            }
        }
        out
    }

    /// Our handlers in the file as it now stands: each with its event, the matcher of its
    /// group, and its place (the group's index in the event's list, its own in the group's).
    pub fn ours_placed(&self) -> Vec<Placed<'_>> {
        let Some(hooks) = hooks_of(&self.value) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (event, groups) in hooks {
            for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
                for (h, handler) in handlers_of(group).into_iter().flatten().enumerate() {
                    if is_ours(handler) {
                        out.push(Placed {
                            event,
                            matcher: matcher_of(group),
                            group: g,
                            index: h,
                            handler,
                        });
                    }
                }
            }
        }
        out
    }

    /// Our MCP server in the object at `at`, as the file was read: the program it runs, and
    /// its command line.
    pub fn our_server(&self, at: &[&str]) -> Option<(String, String)> {
        let mut object = Some(&self.before);
        for key in at {
            object = object.and_then(|o| o.get(*key)).and_then(Value::as_object);
        }
        let server = object?.get("mcpServers")?.get(MCP_SERVER)?;
        if !is_our_server(server) {
            return None;
        }
        let args = (server
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten())
        .filter_map(Value::as_str);
        let command = server.get("command").and_then(Value::as_str).unwrap_or("");
        let line = std::iter::once(command)
            .chain(args)
            .collect::<Vec<_>>()
            .join(" ");
        Some((command.to_owned(), line))
    }

    /// The git-agent-context plugins the file enables (`enabledPlugins`, `<name>@<marketplace>`).
    pub fn our_plugins(&self) -> Vec<String> {
        let Some(plugins) = self.before.get("enabledPlugins").and_then(Value::as_object) else {
            return Vec::new();
        };
        (plugins.iter())
            .filter(|(id, on)| {
                id.split('@').next() == Some("git-agent-context") && on.as_bool() == Some(true)
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Put the `agent`'s entries of ours in, calling `command`: a handler of ours already in
    /// place (under the right matcher) is updated where it is; any other of ours is taken out
    /// first.
    pub fn install(&mut self, agent: &dyn Adapter, command: &str) -> Result<()> {
        let Settings { path, value, .. } = self;
        let path: &Path = path;
        let hooks = value
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| shape(path, "`hooks` is not an object"))?;
        let entries = agent.entries();
        for entry in entries {
            let wanted = agent.handler(entry, command);
            let groups = hooks
                .entry(entry.event)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .ok_or_else(|| shape(path, format!("`hooks.{}` is not an array", entry.event)))?;
            let ours: Vec<(usize, usize)> = groups
                .iter()
                .enumerate()
                .filter_map(|(g, group)| handlers_of(group).map(|h| (g, h)))
                .flat_map(|(g, handlers)| {
                    handlers
                        .iter()
                        .enumerate()
                        .filter(|(_, h)| is_ours(h))
                        .map(move |(h, _)| (g, h))
                })
                .collect();
            match ours.as_slice() {
                [(g, h)] if matcher_of(&groups[*g]) == entry.matcher => {
                    if let Some(handler) = groups[*g]
                        .get_mut("hooks")
                        .and_then(Value::as_array_mut)
                        .and_then(|handlers| handlers.get_mut(*h))
                    {
                        *handler = wanted;
                    }
                }
                _ => {
                    strip(groups);
                    let mut group = Map::new();
                    if let Some(matcher) = entry.matcher {
                        group.insert("matcher".to_owned(), matcher.into());
                    }
                    group.insert("hooks".to_owned(), Value::Array(vec![wanted]));
                    groups.push(Value::Object(group));
                }
            }
        }
        // Ours under events we no longer install (an earlier version's) go.
        strip_events(hooks, |event| entries.iter().all(|e| e.event != event));
        Ok(())
    }

    /// Take every handler of ours out, with the matcher groups, event lists and `hooks`
    /// object that are left empty by it.
    pub fn uninstall(&mut self) -> Result<()> {
        let Settings { path, value, .. } = self;
        let path: &Path = path;
        let Some(hooks) = value.get_mut("hooks") else {
            return Ok(());
        };
        let hooks = hooks
            .as_object_mut()
            .ok_or_else(|| shape(path, "`hooks` is not an object"))?;
        if strip_events(hooks, |_| true) && hooks.is_empty() {
            value.retain(|key, _| key != "hooks");
        }
        Ok(())
    }

    /// Put our MCP server in the `mcpServers` of the object at `at` (keys from the top level:
    /// none in `.mcp.json` or for the user in `~/.claude.json`, `["projects", <folder>]` for one
    /// project there), under [`MCP_SERVER`], started as `command` with `args`. An entry of that
    /// name that is not ours is a conflict, left as it is.
    pub fn install_mcp(&mut self, at: &[&str], command: &str, args: &[String]) -> Result<()> {
        let Settings { path, value, .. } = self;
        let path: &Path = path;
        let mut object = value;
        for key in at {
            object = object
                .entry(*key)
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .ok_or_else(|| shape(path, format!("`{key}` is not an object")))?;
        }
        let servers = object
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| shape(path, "`mcpServers` is not an object"))?;
        if servers.get(MCP_SERVER).is_some_and(|s| !is_our_server(s)) {
            return Err(Error::Conflict {
                path: path.to_owned(),
                what: format!("`mcpServers.{MCP_SERVER}` runs another program"),
            });
        }
        let wanted = json!({"type": "stdio", "command": command, "args": args});
        match servers.get_mut(MCP_SERVER) {
            // What we wrote before keeps its place and whatever was added to it (`env`).
            Some(Value::Object(ours)) => {
                for (key, value) in wanted.as_object().into_iter().flatten() {
                    ours.insert(key.clone(), value.clone());
                }
            }
            _ => {
                servers.insert(MCP_SERVER.to_owned(), wanted);
            }
        }
        Ok(())
    }

    /// Take our MCP server out of the `mcpServers` of the object at `at`; with `prune`, the
    /// `mcpServers` object too when it held nothing else.
    pub fn uninstall_mcp(&mut self, at: &[&str], prune: bool) -> Result<()> {
        let Settings { path, value, .. } = self;
        let path: &Path = path;
        let mut object = value;
        for key in at {
            match object.get_mut(*key) {
                Some(Value::Object(inner)) => object = inner,
                Some(_) => return Err(shape(path, format!("`{key}` is not an object"))),
                None => return Ok(()),
            }
        }
        let Some(servers) = object.get_mut("mcpServers") else {
            return Ok(());
        };
        let servers = servers
            .as_object_mut()
            .ok_or_else(|| shape(path, "`mcpServers` is not an object"))?;
        if servers.get(MCP_SERVER).is_some_and(is_our_server) {
            servers.remove(MCP_SERVER);
            if prune && servers.is_empty() {
                object.remove("mcpServers");
            }
        }
        Ok(())
    }

    /// Whether the file held our MCP server in the object at `at` when it was read.
    pub fn had_our_server(&self, at: &[&str]) -> bool {
        self.our_server(at).is_some()
    }

    /// Whether the content differs from the file's.
    fn changed(&self) -> bool {
        self.value != self.before
    }

    /// Write the file if it changed, with its permissions, indentation and a final newline;
    /// remove it instead when our entries were all it held.
    pub fn write(&self) -> Result<Written> {
        if !self.changed() {
            return Ok(Written::Unchanged);
        }
        if self.value.is_empty() && self.target == self.path {
            fs::remove_file(&self.path).map_err(io_error("cannot remove", &self.path))?;
            return Ok(Written::Removed);
        }
        let mut bytes = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(&self.indent);
        let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
        self.value
            .serialize(&mut serializer)
            .map_err(|e| io_error("cannot write", &self.path)(e.into()))?;
        bytes.push(b'\n');
        write_atomic_with_mode(&self.target, &bytes, mode_of(&self.target))?;
        Ok(Written::Written)
    }
}

/// Add `pattern` to the repository's own ignore list (`info/exclude` in the common git
/// directory, which is never shared) unless a line there is it already; whether it was added.
/// A settings file that names this machine's binary must not be committed by `git add -A`.
pub fn ignore_locally(store: &Store, pattern: &str) -> Result<bool> {
    let path = store.common_dir().join("info").join("exclude");
    let mut text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error("cannot read", &path)(e)),
    };
    if text.lines().any(|line| line.trim_end() == pattern) {
        return Ok(false);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(pattern);
    text.push('\n');
    write_atomic_with_mode(&path, text.as_bytes(), mode_of(&path))?;
    Ok(true)
}

/// The name our MCP server is registered under: its tools reach the model as
/// `mcp__agent-context__<tool>`.
pub const MCP_SERVER: &str = "agent-context";

/// Whether an MCP server entry is ours: a program that [`names_us`], run with `mcp` last.
fn is_our_server(server: &Value) -> bool {
    let command = server.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = (server
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    .collect();
    args.last() == Some(&"mcp")
        && program_is_ours(
            &std::iter::once(command)
                .chain(args.iter().copied())
                .map(|w| w.trim_matches(['\'', '"']))
                .collect::<Vec<_>>(),
        )
}

/// Whether a hook handler is one of ours (see the module's documentation).
pub fn is_ours(handler: &Value) -> bool {
    handler.get("type").and_then(Value::as_str) == Some("command")
        && handler
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(|command| {
                let words = words(command);
                // `… hook <Event>` or `… hook --agent <agent> <Event>`.
                let hook = (words.iter()).rposition(|w| *w == "hook");
                hook.is_some_and(|at| {
                    adapter::is_hook_call(&words[at + 1..]) && program_is_ours(&words[..at])
                })
            })
}

/// Whether a command line names our binary, so that a handler calling it is recognised as
/// ours.
pub fn names_us(command: &str) -> bool {
    program_is_ours(&words(command))
}

/// The words of a command line, their quotes aside (enough to find a program's name, which
/// has no spaces, in a quoted path that may).
fn words(command: &str) -> Vec<&str> {
    command
        .split_whitespace()
        .map(|w| w.trim_matches(['\'', '"']))
        .collect()
}

fn program_is_ours(words: &[&str]) -> bool {
    let file_name = |w: &str| w.rsplit(['/', '\\']).next().unwrap_or(w).to_owned();
    words.iter().any(|w| {
        matches!(
            file_name(w).as_str(),
            "git-agent-context" | "git-agent-context.exe"
        )
    }) || words
        .windows(2)
        .any(|pair| file_name(pair[0]) == "git" && pair[1] == "agent-context")
}

fn shape(path: &Path, what: impl Into<String>) -> Error {
    Error::Shape {
        path: path.to_owned(),
        what: what.into(),
    }
}

fn hooks_of(settings: &Map<String, Value>) -> Option<&Map<String, Value>> {
    settings.get("hooks").and_then(Value::as_object)
}

/// A matcher group's handlers; `None` for anything that is not a group.
fn handlers_of(group: &Value) -> Option<&Vec<Value>> {
    group.get("hooks").and_then(Value::as_array)
}

fn matcher_of(group: &Value) -> Option<&str> {
    group.get("matcher").and_then(Value::as_str)
}

/// Take our handlers out of the events `which` selects, and the groups and events left empty
/// by it; whether any was taken out.
fn strip_events(hooks: &mut Map<String, Value>, which: impl Fn(&str) -> bool) -> bool {
    let mut emptied = Vec::new();
    let mut any = false;
    for (event, groups) in hooks.iter_mut() {
        if let Some(groups) = groups.as_array_mut().filter(|_| which(event))
            && strip(groups)
        {
            any = true;
            if groups.is_empty() {
                emptied.push(event.clone());
            }
        }
    }
    // `retain` keeps the order of what stays.
    hooks.retain(|event, _| !emptied.contains(event));
    any
}

/// Take our handlers out of a list of matcher groups, and the groups left empty by it; whether
/// any was taken out. A group that was empty already is not ours to remove.
fn strip(groups: &mut Vec<Value>) -> bool {
    let mut any = false;
    groups.retain_mut(|group| {
        let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|h| !is_ours(h));
        let stripped = handlers.len() < before;
        any |= stripped;
        !(stripped && handlers.is_empty())
    });
    any
}

/// The indentation of a JSON text: its second line's leading blanks; two spaces when it has
/// none (a new or one-line file), as Claude Code writes.
fn indent_of(text: &[u8]) -> Vec<u8> {
    text.split(|&b| b == b'\n')
        .nth(1)
        .map(|line| {
            line.iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .copied()
                .collect::<Vec<u8>>()
        })
        .filter(|indent| !indent.is_empty())
        .unwrap_or_else(|| b"  ".to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(command: &str) -> Value {
        json!({"type": "command", "command": command})
    }

    #[test]
    fn ours_are_known_by_the_program_they_name_and_the_hook_they_run() {
        for command in [
            "/home/me/.cargo/bin/git-agent-context hook Stop",
            "'/Users/Jo Doe/bin/git-agent-context' hook PreToolUse",
            "git-agent-context hook SessionStart",
            "git agent-context hook UserPromptSubmit",
            "/usr/bin/git agent-context hook SessionEnd",
            "env RUST_LOG=1 git-agent-context -C /repo hook PostCompact",
            "C:\\tools\\git-agent-context.exe hook Stop",
        ] {
            assert!(is_ours(&handler(command)), "{command}");
        }
        for command in [
            // Another tool's hook, or ours for something we do not answer.
            "other-tool hook Stop",
            "git-agent-context-wrapper hook Stop",
            "git-agent-context hook post-commit",
            "git-agent-context hook",
            "\"${CLAUDE_PLUGIN_ROOT}/hooks/agent-context-hook\" Stop",
            "git-agent-context hook Stop && echo done",
        ] {
            assert!(!is_ours(&handler(command)), "{command}");
        }
        let http = json!({"type": "http", "command": "git-agent-context hook Stop"});
        assert!(!is_ours(&http));
    }

    #[test]
    fn indentation_is_taken_from_the_file() {
        assert_eq!(indent_of(b"{\n    \"a\": 1\n}\n"), b"    ");
        assert_eq!(indent_of(b"{\n\t\"a\": 1\n}\n"), b"\t");
        assert_eq!(indent_of(b"{\"a\": 1}"), b"  ");
        assert_eq!(indent_of(b""), b"  ");
    }
}
