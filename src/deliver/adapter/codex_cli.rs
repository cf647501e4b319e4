//! Codex CLI (0.124 and later, whose hooks are on by default): the same events and payloads as
//! Claude Code's, but for its tools: a shell command is `Bash`, and a change is an
//! `apply_patch` whose input is the patch, given here as the files it writes.

use serde_json::{Value, json};

use super::claude_code;
use super::{Adapter, Entry, entry};
use crate::deliver::hooks::{Moment, Payload};
use crate::transcript::agent::Agent;
use crate::transcript::codex;

pub struct CodexCli;

const ENTRIES: [Entry; 6] = [
    entry("SessionStart", None, 10),
    entry("UserPromptSubmit", None, 10),
    entry("PreToolUse", Some("^apply_patch$"), 10),
    entry("PreCompact", None, 30),
    entry("Stop", None, 30),
    // Codex CLI holds a SessionEnd hook to 3 seconds (and says so when asked for more).
    entry("SessionEnd", None, 3),
];

impl Adapter for CodexCli {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn events(&self) -> &'static [(&'static str, Moment)] {
        &claude_code::EVENTS
    }

    /// Codex reads files through its shell, which names none: before a tool, only a patch is
    /// given its files' reasoning, and no read is recorded after one.
    fn entries(&self) -> &'static [Entry] {
        &ENTRIES
    }

    fn normalize(&self, payload: &mut Payload) {
        if payload.tool_name.as_deref() != Some("apply_patch") {
            return;
        }
        let patch = payload
            .tool_input
            .as_ref()
            .and_then(|i| i.get("command").or(i.get("input")))
            .and_then(Value::as_str)
            .unwrap_or("");
        let files = codex::patch_files(patch);
        payload.tool_name = Some("MultiEdit".to_owned());
        payload.tool_input = Some(json!({"file_path": files.first(), "file_paths": files}));
    }
}
