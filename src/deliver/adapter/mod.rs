//! The coding agents we serve, one adapter each (docs/agents.md): which of its hook events
//! mean which moment of ours, its hook payloads in Claude Code's terms, and what its answer
//! looks like. What an agent's
//! transcripts look like and where they are is read below, in `crate::transcript`
//! ([`Agent`] and its modules); an adapter names its agent.

mod claude_code;
mod codex_cli;
mod gemini_cli;

use serde_json::{Value, json};

use super::hooks::{self, Moment, Payload};
use crate::transcript::agent::Agent;

/// One of our hook entries in an agent's configuration: the event, the tools it is limited to
/// (a pattern of the agent's tool names), and its timeout in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub timeout: u64,
}

const fn entry(event: &'static str, matcher: Option<&'static str>, timeout: u64) -> Entry {
    Entry {
        event,
        matcher,
        timeout,
    }
}

/// A coding agent as its hooks meet us.
pub trait Adapter: Sync {
    fn agent(&self) -> Agent;

    /// The agent's hook events we answer, and the moment of ours each is.
    fn events(&self) -> &'static [(&'static str, Moment)];

    /// The moment of ours the agent's hook `event` is; `None` for one we do not answer.
    fn moment(&self, event: &str) -> Option<Moment> {
        (self.events().iter())
            .find(|(name, _)| *name == event)
            .map(|&(_, moment)| moment)
    }

    /// `payload` in Claude Code's terms: its tools' names and inputs, its prompt without what
    /// the agent added to it.
    fn normalize(&self, payload: &mut Payload) {
        let _ = payload;
    }

    /// The hook entries `install` writes into the agent's configuration, in that order.
    fn entries(&self) -> &'static [Entry];

    /// The command line of our hook for `event`, `command` calling the binary.
    fn command_line(&self, command: &str, event: &str) -> String {
        format!("{command} hook --agent {} {event}", self.agent().name())
    }

    /// Our handler for `entry` in the agent's configuration.
    fn handler(&self, entry: &Entry, command: &str) -> Value {
        json!({
            "type": "command",
            "command": self.command_line(command, entry.event),
            "timeout": entry.timeout,
        })
    }

    /// The answer that gives `context` to the model at the agent's hook `event`.
    fn answer(&self, event: &str, context: &str) -> Value {
        json!({"hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": hooks::capped(context),
        }})
    }
}

/// The adapter of `agent`.
pub fn of(agent: Agent) -> &'static dyn Adapter {
    match agent {
        Agent::ClaudeCode => &claude_code::ClaudeCode,
        Agent::Codex => &codex_cli::CodexCli,
        Agent::GeminiCli => &gemini_cli::GeminiCli,
    }
}

/// Whether the words after `hook` on a command line (`<Event>`, or `--agent <agent> <Event>`)
/// name an agent's event we answer.
pub fn is_hook_call(words: &[&str]) -> bool {
    let (agent, event) = match words {
        [event] => (Agent::ClaudeCode, *event),
        ["--agent", agent, event] => match Agent::named(agent) {
            Some(agent) => (agent, *event),
            None => return false,
        },
        _ => return false,
    };
    of(agent).moment(event).is_some()
}
