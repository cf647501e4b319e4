//! Claude Code: its hook events are our moments' names, its payloads our terms.

use super::{Adapter, Entry, entry};
use crate::deliver::hooks::Moment;
use crate::transcript::agent::Agent;

pub struct ClaudeCode;

/// Claude Code's hook events; Codex CLI's are the same.
pub const EVENTS: [(&str, Moment); 8] = [
    ("SessionStart", Moment::SessionStart),
    ("UserPromptSubmit", Moment::Prompt),
    ("PreToolUse", Moment::BeforeTool),
    ("PostToolUse", Moment::AfterTool { file: false }),
    ("PreCompact", Moment::BeforeCompact),
    ("PostCompact", Moment::AfterCompact),
    ("Stop", Moment::TurnEnd),
    ("SessionEnd", Moment::SessionEnd),
];

const ENTRIES: [Entry; 7] = [
    entry("SessionStart", None, 10),
    entry("UserPromptSubmit", None, 10),
    entry("PreToolUse", Some("Read|Edit|MultiEdit|Write"), 10),
    entry("PostToolUse", Some("Read|Grep|Glob"), 10),
    entry("PreCompact", None, 30),
    entry("Stop", None, 30),
    entry("SessionEnd", None, 30),
];

impl Adapter for ClaudeCode {
    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn events(&self) -> &'static [(&'static str, Moment)] {
        &EVENTS
    }

    /// The plugin's `hooks/hooks.json` has the same events, matchers and timeouts (a test
    /// holds them together). A hook answers within `hook.budget_ms` whatever its timeout; the
    /// timeout is Claude Code's backstop. The hooks that extract and store (PreCompact, Stop,
    /// SessionEnd) get more: SessionEnd's hooks share a budget of 1.5 s that Claude Code raises
    /// to the largest timeout.
    fn entries(&self) -> &'static [Entry] {
        &ENTRIES
    }

    /// `<command> hook <Event>`: Claude Code's hooks name no agent, as before there were others.
    fn command_line(&self, command: &str, event: &str) -> String {
        format!("{command} hook {event}")
    }
}
