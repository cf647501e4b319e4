//! Which coding agent wrote a transcript, and how each one's transcripts are read.
//!
//! Claude Code's transcripts are read as they are. Codex CLI's rollouts and Gemini CLI's
//! session files are translated into the same records first ([`super::codex`],
//! [`super::gemini`]), so that everything above this layer reads one shape whoever wrote it.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A coding agent whose sessions we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

    /// The name events and reports give it (`claude-code`, `codex`, `gemini-cli`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
        }
    }

    /// The name people know it by.
    pub fn title(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::GeminiCli => "Gemini CLI",
        }
    }

    /// The agent a name given by [`Agent::name`] means; an empty name is Claude Code's, which
    /// events recorded before other agents were read do not name.
    pub fn named(name: &str) -> Option<Agent> {
        match name {
            "" | "claude-code" => Some(Agent::ClaudeCode),
            "codex" => Some(Agent::Codex),
            "gemini-cli" => Some(Agent::GeminiCli),
            _ => None,
        }
    }

    /// The agent that wrote the transcript at `path`: from its name where the agent names its
    /// files its own way (`rollout-<date>T….jsonl`, `session-<date>T….json[l]`), else from its
    /// first bytes (a copy kept under another name). Claude Code's own files
    /// (`<session>.jsonl`, `agent-….jsonl`) are never opened to tell.
    pub fn of(path: &Path) -> Agent {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.strip_prefix("rollout-").is_some_and(dated) && name.ends_with(".jsonl") {
            return Agent::Codex;
        }
        if name.strip_prefix("session-").is_some_and(dated)
            && (name.ends_with(".json") || name.ends_with(".jsonl"))
        {
            return Agent::GeminiCli;
        }
        if is_claude_code_name(name) {
            return Agent::ClaudeCode;
        }
        let mut head = Vec::with_capacity(HEAD_SNIFF);
        let read = super::open(path).and_then(|f| f.take(HEAD_SNIFF as u64).read_to_end(&mut head));
        match read {
            Ok(_) => Agent::sniff(&head),
            Err(_) => Agent::ClaudeCode,
        }
    }

    /// The agent whose transcript begins with `head`: a Codex rollout opens with its
    /// `session_meta` line; a Gemini CLI session with a line of its `sessionId` and
    /// `projectHash` (since 0.39), or is one indented JSON object (before). A Claude Code line is
    /// one object of its own, whatever text it quotes.
    pub fn sniff(head: &[u8]) -> Agent {
        let first = head.split(|&b| b == b'\n').next().unwrap_or(head);
        let has = |hay: &[u8], needle: &[u8]| memchr::memmem::find(hay, needle).is_some();
        let indented = first.trim_ascii() == b"{";
        if has(first, b"\"type\":\"session_meta\"") {
            Agent::Codex
        } else if (indented && has(head, b"\"projectHash\""))
            || (has(first, b"\"projectHash\"") && !has(first, b"\"type\""))
        {
            Agent::GeminiCli
        } else {
            Agent::ClaudeCode
        }
    }
}

/// How much of an unknown file is read to tell its agent.
const HEAD_SNIFF: usize = 4096;

/// `<uuid>.jsonl` or `agent-<id>.jsonl`: the names Claude Code gives its transcripts.
/// `rest` begins with a date and a time's `T` (`2026-11-26T`), as Codex and Gemini CLI name their
/// files; a name like `session-4mb.jsonl` is anybody's.
fn dated(rest: &str) -> bool {
    let b = rest.as_bytes();
    b.len() > 11
        && b[..11].iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            _ => c.is_ascii_digit(),
        })
}

fn is_claude_code_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".jsonl") else {
        return false;
    };
    if stem.starts_with("agent-") {
        return true;
    }
    stem.len() == 36
        && stem.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_agents_by_name_and_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let claude = "{\"parentUuid\":null,\"sessionId\":\"s\",\"type\":\"user\"}\n";
        let codex = "{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n";
        let gemini =
            "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"ab\",\n  \"messages\": []\n}";
        for (name, text, agent) in [
            (
                "0b0e6c1e-3b8e-4f57-9d1e-2c3a4b5c6d7e.jsonl",
                codex,
                Agent::ClaudeCode,
            ),
            ("agent-a1.jsonl", gemini, Agent::ClaudeCode),
            (
                "rollout-2026-11-26T04-06-45-01a2.jsonl",
                claude,
                Agent::Codex,
            ),
            (
                "session-2026-11-26T04-07-9e620eba.jsonl",
                claude,
                Agent::GeminiCli,
            ),
            (
                "session-2026-01-15T12-50-f7633853.json",
                claude,
                Agent::GeminiCli,
            ),
            ("full.jsonl", claude, Agent::ClaudeCode),
            // Named like theirs, but not by them: told by content.
            ("session-4mb.jsonl", claude, Agent::ClaudeCode),
            ("rollout-notes.jsonl", gemini, Agent::GeminiCli),
            ("copy.jsonl", codex, Agent::Codex),
            ("copy.json", gemini, Agent::GeminiCli),
        ] {
            assert_eq!(Agent::of(&write(name, text)), agent, "{name}");
        }
        assert_eq!(
            Agent::of(&dir.path().join("missing.jsonl")),
            Agent::ClaudeCode
        );
    }

    #[test]
    fn names_round_trip_and_the_empty_name_is_claude_codes() {
        for agent in Agent::ALL {
            assert_eq!(Agent::named(agent.name()), Some(agent));
        }
        assert_eq!(Agent::named(""), Some(Agent::ClaudeCode));
        assert_eq!(Agent::named("cursor"), None);
    }
}
