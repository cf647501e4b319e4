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

/// Every hook event name some agent's adapter answers.
pub fn answers(event: &str) -> bool {
    Agent::ALL.iter().any(|&a| of(a).moment(event).is_some())
}
