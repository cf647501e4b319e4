//! Gemini CLI (0.26 and later, whose hooks are on by default): `BeforeAgent` is the prompt,
//! `AfterAgent` the end of a turn, `PreCompress` the compaction (not installed: Gemini CLI
//! 0.61.0 sends it before every model call, and the session file keeps what compression takes
//! from the model's context, to be read at the end of the turn). Its `BeforeTool` can allow,
//! deny or rewrite a call but not add to what the model reads, so a file's reasoning comes
//! with the tool's result (`AfterTool`): after a read, before the file is changed. Tools and
//! their inputs are given Claude Code's names, and the hook context Gemini CLI writes into a
//! prompt (`<hook_context>`, ours among it) is taken out of it.

use serde_json::{Value, json};

use super::{Adapter, Entry, entry};
use crate::deliver::hooks::{Moment, Payload};
use crate::transcript::agent::Agent;
use crate::transcript::gemini;

pub struct GeminiCli;

const ENTRIES: [Entry; 5] = [
    entry("SessionStart", None, 10),
    entry("BeforeAgent", None, 10),
    entry(
        "AfterTool",
        Some("^(read_file|write_file|replace|grep_search|search_file_content|glob)$"),
        10,
    ),
    entry("AfterAgent", None, 30),
    entry("SessionEnd", None, 30),
];

impl Adapter for GeminiCli {
    fn agent(&self) -> Agent {
        Agent::GeminiCli
    }

    fn events(&self) -> &'static [(&'static str, Moment)] {
        &[
            ("SessionStart", Moment::SessionStart),
            ("BeforeAgent", Moment::Prompt),
            ("AfterTool", Moment::AfterTool { file: true }),
            ("PreCompress", Moment::BeforeCompact),
            ("AfterAgent", Moment::TurnEnd),
            ("SessionEnd", Moment::SessionEnd),
        ]
    }

    fn entries(&self) -> &'static [Entry] {
        &ENTRIES
    }

    /// Gemini CLI wants a name on a handler, and its timeout in milliseconds.
    fn handler(&self, entry: &Entry, command: &str) -> Value {
        json!({
            "name": "git-agent-context",
            "type": "command",
            "command": self.command_line(command, entry.event),
            "timeout": entry.timeout * 1000,
        })
    }

    fn normalize(&self, payload: &mut Payload) {
        if let Some(prompt) = &mut payload.prompt {
            *prompt = gemini::without_hook_context(prompt);
        }
        if let Some(name) = payload.tool_name.take() {
            let input = payload.tool_input.take().unwrap_or_default();
            let (name, input) = gemini::tool_call(&name, &input);
            payload.tool_name = Some(name);
            payload.tool_input = Some(input);
        }
    }
}
