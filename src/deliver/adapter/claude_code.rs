//! Claude Code: its hook events are our moments' names, its payloads our terms.

use super::Adapter;
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

impl Adapter for ClaudeCode {
    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn events(&self) -> &'static [(&'static str, Moment)] {
        &EVENTS
    }
}
