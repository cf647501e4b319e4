//! `share.level`: which events of a note go to the team, and in what form.
//!
//! - `reasoning` (the default): decisions, rejections, trade-offs and findings, what commits
//!   did (feature, bugfix, refactor), the session summaries, and writes (without the prompt
//!   behind them, which the reasoning events carry already).
//! - `summary`: the session summaries and what commits did.
//! - `none`: nothing.
//!
//! What stays behind — reads, searches, tool calls (those an event lists too, whose input
//! names files by their paths on the author's machine), explorations, unclassified thinking —
//! stays in this clone's notes, where retrieval still uses it. No shared event carries the
//! session's working folder either; only the session summary keeps the branch, model and
//! version. Lines are filtered as JSON values, so that fields a newer
//! version wrote survive, and a line with nothing to take out is kept byte for byte.

use serde_json::Value;

use crate::event::Kind;

/// What a clone shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Reasoning,
    Summary,
    None,
}

impl Level {
    /// The level a `share.level` value names.
    pub fn named(word: &str) -> Level {
        match word {
            "summary" => Level::Summary,
            "none" => Level::None,
            _ => Level::Reasoning,
        }
    }

    fn shares(self, kind: Kind) -> bool {
        match self {
            Level::None => false,
            Level::Summary => matches!(
                kind,
                Kind::Session | Kind::Feature | Kind::Bugfix | Kind::Refactor
            ),
            Level::Reasoning => !matches!(
                kind,
                Kind::Read | Kind::Search | Kind::ToolCall | Kind::Exploration | Kind::Raw
            ),
        }
    }
}

/// The lines of `note` that `level` shares, in the form it shares them; sorted and unique, as
/// every note is. A line that is not an event is left out.
pub fn filter(note: &[u8], level: Level) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = note
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .filter_map(|line| shared_line(line, level))
        .collect();
    lines.sort();
    lines.dedup();
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    out
}

fn shared_line(line: &[u8], level: Level) -> Option<Vec<u8>> {
    let (event, kind) = parse(line)?;
    level.shares(kind).then(|| shared_form(line, event, kind))?
}

/// The form an event's line is shared in, whatever the level, if it is an event: what `sync`
/// must know to tell a teammate's version of an event from the shared copy of its own.
pub fn shared_copy(line: &[u8]) -> Option<Vec<u8>> {
    let (event, kind) = parse(line)?;
    shared_form(line, event, kind)
}

/// A note's line as a JSON value, and its kind, if it is an event.
fn parse(line: &[u8]) -> Option<(Value, Kind)> {
    let event: Value = serde_json::from_slice(line).ok()?;
    let kind: Kind = serde_json::from_value(event.get("kind")?.clone()).ok()?;
    Some((event, kind))
}

fn shared_form(line: &[u8], mut event: Value, kind: Kind) -> Option<Vec<u8>> {
    let fields = event.as_object_mut()?;
    let mut changed = fields.remove("tool_calls").is_some();
    if kind == Kind::Write {
        changed |= fields.remove("prompt_context").is_some();
    }
    match kind {
        Kind::Session => {
            if let Some(meta) = fields.get_mut("session").and_then(Value::as_object_mut) {
                changed |= meta.remove("cwd").is_some();
            }
        }
        _ => {
            let meta = fields.get("session").and_then(Value::as_object);
            if meta.is_some_and(|m| !m.is_empty()) {
                fields.insert("session".to_owned(), Value::Object(Default::default()));
                changed = true;
            }
        }
    }
    match changed {
        false => Some(line.to_vec()),
        true => serde_json::to_vec(&event).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::note::{decode, encode};
    use crate::event::{Event, Origin, Outcome, SessionMeta, ToolCall};

    fn event(kind: Kind, source: &str) -> Event {
        let mut e = Event::new(
            "s1",
            source,
            kind,
            Origin::Text,
            "what",
            "2026-01-01T00:00:00Z",
        );
        e.session = SessionMeta {
            cwd: "/Users/jane/src/app".into(),
            branch: "main".into(),
            model: "claude".into(),
            version: "2.1".into(),
            agent: String::new(),
        };
        e.prompt_context = "make it fast".into();
        e.tool_calls = vec![ToolCall {
            name: "Edit".into(),
            input: "src/app.rs".into(),
            outcome: Outcome::Success,
        }];
        e
    }

    #[test]
    fn each_level_shares_its_kinds_in_their_shared_form() {
        let note = encode(&[
            event(Kind::Decision, "m1"),
            event(Kind::Read, "m2"),
            event(Kind::Write, "m3"),
            event(Kind::Session, "session"),
            event(Kind::Exploration, "m4"),
            event(Kind::Bugfix, "m5"),
        ]);
        let kinds = |level| -> Vec<Kind> {
            let (events, bad) = decode(&filter(&note, level));
            assert_eq!(bad, 0);
            events.iter().map(|e| e.kind).collect()
        };
        let mut reasoning = kinds(Level::Reasoning);
        reasoning.sort();
        assert_eq!(
            reasoning,
            [Kind::Decision, Kind::Bugfix, Kind::Write, Kind::Session]
        );
        let mut summary = kinds(Level::Summary);
        summary.sort();
        assert_eq!(summary, [Kind::Bugfix, Kind::Session]);
        assert!(filter(&note, Level::None).is_empty());

        let (shared, _) = decode(&filter(&note, Level::Reasoning));
        let text = String::from_utf8(filter(&note, Level::Reasoning)).unwrap();
        assert!(!text.contains("/Users/jane"), "{text}");
        for e in &shared {
            assert!(e.tool_calls.is_empty(), "{e:?}");
            match e.kind {
                Kind::Write => assert!(e.prompt_context.is_empty()),
                Kind::Session => {
                    assert_eq!(e.session.branch, "main");
                    assert_eq!(e.session.model, "claude");
                }
                _ => {
                    assert_eq!(e.session, SessionMeta::default());
                    assert_eq!(e.prompt_context, "make it fast");
                }
            }
        }
        // Filtering what is filtered changes nothing, byte for byte.
        let once = filter(&note, Level::Reasoning);
        assert_eq!(filter(&once, Level::Reasoning), once);
    }

    #[test]
    fn fields_of_a_newer_version_survive() {
        let line = serde_json::to_string(&event(Kind::Decision, "m1"))
            .unwrap()
            .replacen('{', r#"{"agent":"codex","#, 1);
        let shared = String::from_utf8(filter(line.as_bytes(), Level::Reasoning)).unwrap();
        assert!(shared.starts_with(r#"{"agent":"codex","#), "{shared}");
    }
}
