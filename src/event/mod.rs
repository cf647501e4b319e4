//! The domain: an [`Event`] is one piece of a session's reasoning or activity.
//!
//! Invariants: an event's `id` depends only on where it came from (session, source entry,
//! kind), never on its content, so extracting the same transcript twice — or resuming after a
//! crash — yields the same ids and a store can upsert by id. `summary` is at most
//! [`SUMMARY_MAX`] characters. Serialized field order puts the human-readable fields first.

pub mod fingerprint;
pub mod note;
pub mod summary;
pub mod time;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The version of the event format written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// The `source` of a session's [`Kind::Session`] event: one per session.
pub const SESSION_SOURCE: &str = "session";

/// The longest summary, in characters: four in five sentences kept as reasoning fit whole.
pub const SUMMARY_MAX: usize = 160;

/// What a plan's summary starts with, before what the plan sets out to do.
pub const PLAN_LABEL: &str = "Plan: ";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    // Reasoning.
    Decision,
    Rejection,
    Tradeoff,
    Exploration,
    Raw,
    // Observations.
    Feature,
    Bugfix,
    Refactor,
    Discovery,
    // Operations.
    Read,
    Write,
    Search,
    ToolCall,
    /// The session as a whole: its request, the files it edited, its commits, its task list.
    /// One per session; it goes on every commit the session produced.
    Session,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Decision,
        Kind::Rejection,
        Kind::Tradeoff,
        Kind::Exploration,
        Kind::Raw,
        Kind::Feature,
        Kind::Bugfix,
        Kind::Refactor,
        Kind::Discovery,
        Kind::Read,
        Kind::Write,
        Kind::Search,
        Kind::ToolCall,
        Kind::Session,
    ];

    /// Reasoning or an observation: what explains code, unlike operations and the session
    /// summary.
    pub fn is_reason(self) -> bool {
        !matches!(
            self,
            Kind::Read | Kind::Write | Kind::Search | Kind::ToolCall | Kind::Session
        )
    }

    /// What the session explored or thought without deciding (explorations, unclassified
    /// thinking): mostly narration ("Let me read the document first"), shown only when asked.
    pub fn is_musing(self) -> bool {
        matches!(self, Kind::Exploration | Kind::Raw)
    }

    /// What the hooks and `query` give: what was decided, ruled out, traded away or found.
    pub fn is_told(self) -> bool {
        matches!(
            self,
            Kind::Decision | Kind::Rejection | Kind::Tradeoff | Kind::Discovery
        )
    }

    /// What to keep to when changing code: what was decided, ruled out or traded away.
    pub fn stands(self) -> bool {
        matches!(self, Kind::Decision | Kind::Rejection | Kind::Tradeoff)
    }

    /// Where reasoning of this kind is shown among the rest: what was decided and ruled out
    /// first, then what was traded away, observations, findings, and explorations last.
    pub fn rank(self) -> u8 {
        match self {
            Kind::Decision => 0,
            Kind::Rejection => 1,
            Kind::Tradeoff => 2,
            Kind::Feature | Kind::Bugfix | Kind::Refactor => 3,
            Kind::Discovery => 4,
            Kind::Raw => 5,
            _ => 6,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Decision => "decision",
            Kind::Rejection => "rejection",
            Kind::Tradeoff => "tradeoff",
            Kind::Exploration => "exploration",
            Kind::Raw => "raw",
            Kind::Feature => "feature",
            Kind::Bugfix => "bugfix",
            Kind::Refactor => "refactor",
            Kind::Discovery => "discovery",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Search => "search",
            Kind::ToolCall => "tool_call",
            Kind::Session => "session",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in the transcript an event's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Thinking,
    Text,
    Prompt,
    Plan,
    Tasks,
    ToolSequence,
    Commit,
    /// Recorded by the agent itself (`record`, in its session).
    Agent,
    /// Recorded by a person (`record`, outside any session).
    Human,
    /// Drawn from the session's text by a small model (`distill`), its quote found in the text.
    Distilled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Error,
    Reverted,
    /// The result has not been seen (yet).
    Unknown,
}

/// A tool call, compressed: the name, a short form of its input, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    pub input: String,
    pub outcome: Outcome,
}

/// How a commit was found to be a session's (docs/linking.md, "The signals, in order of
/// trust"), the most trusted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// The session named the commit (`gitOperation`, `[branch sha]`, `git log` after a commit).
    Named,
    /// The commit the session named is gone (rebased, amended); this one alone has the subject
    /// the session wrote.
    Message,
    /// The post-commit hook ran with the session's `CLAUDE_CODE_SESSION_ID`.
    Hook,
    /// The post-commit hook found the session active in the worktree, and files in common.
    Active,
    /// The commit adds lines the session's writes added.
    Content,
    /// The commit's date falls in the session and it changes a file the session changed.
    Time,
}

/// How a session's events came to a commit: the signal, and how strongly it holds (1 for a
/// name or a hook; for content, the share of a write's lines the commit holds; for time, the
/// share of the commit's changed files the session changed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub signal: Signal,
    pub score: f32,
}

impl Link {
    /// The better founded of two links of one commit: the more trusted signal, else the higher
    /// score. Whichever order the links were found in, the same one stays.
    pub fn stronger(a: Option<Link>, b: Option<Link>) -> Option<Link> {
        match (a, b) {
            (Some(a), Some(b)) => {
                let key = |l: &Link| (std::cmp::Reverse(l.signal), l.score);
                Some(
                    if key(&b).partial_cmp(&key(&a)) == Some(std::cmp::Ordering::Greater) {
                        b
                    } else {
                        a
                    },
                )
            }
            (a, b) => a.or(b),
        }
    }
}

/// One item of a task list (TodoWrite, TaskCreate/TaskUpdate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub subject: String,
    pub status: String,
}

/// What the session was running in when the event happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cwd: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub branch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// The coding agent (`codex`, `gemini-cli`); absent for Claude Code, the only one read
    /// before others were (see `transcript::agent::Agent::named`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub kind: Kind,
    pub summary: String,
    pub id: String,
    pub schema_version: u32,
    pub session_id: String,
    pub timestamp: String,
    pub origin: Origin,
    /// The transcript entry (message id or line uuid) the event was drawn from.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rationale: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prompt_context: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_affected: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task>,
    #[serde(default)]
    pub session: SessionMeta,
    /// For a write event: hashes of the lines it added to its file (see [`fingerprint`]), by which a
    /// commit carrying them is recognised; in a note, a sample of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
    /// For the session event in a commit's note: how the commit was found to be the session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// For a recorded decision: the ids of earlier decisions its maker said it replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
}

impl Event {
    /// What its session said in it: the summary, the rationale, the alternatives.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        [self.summary.as_str(), self.rationale.as_str()]
            .into_iter()
            .chain(self.alternatives.iter().map(String::as_str))
    }

    /// Whether the event concerns one of `paths` ([`concerns`]).
    pub fn concerns(&self, paths: &[String]) -> bool {
        concerns(&self.files_affected, paths)
    }

    /// The event of `kind` drawn from `source` in `session`, with its id and the summary made
    /// from `text`; every other field empty.
    pub fn new(
        session_id: &str,
        source: &str,
        kind: Kind,
        origin: Origin,
        text: &str,
        timestamp: &str,
    ) -> Event {
        Event {
            kind,
            summary: summarize(text),
            id: event_id(session_id, source, kind),
            schema_version: SCHEMA_VERSION,
            session_id: session_id.to_owned(),
            timestamp: timestamp.to_owned(),
            origin,
            source: source.to_owned(),
            agent_id: None,
            rationale: String::new(),
            alternatives: Vec::new(),
            prompt_context: String::new(),
            tool_calls: Vec::new(),
            files_affected: Vec::new(),
            commits: Vec::new(),
            tasks: Vec::new(),
            supersedes: Vec::new(),
            session: SessionMeta::default(),
            lines: Vec::new(),
            link: None,
        }
    }
}

/// What adding events to (or taking them from) a set of events changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
}

impl Merged {
    pub fn changed(&self) -> bool {
        self.added + self.updated + self.removed > 0
    }
}

/// `old` with `new` added by id — the one union every store of events uses: an event of `new`
/// replaces the one with its id in `old`. The result is in id order.
pub fn merge(old: Vec<Event>, new: impl IntoIterator<Item = Event>) -> (Vec<Event>, Merged) {
    let mut by_id: BTreeMap<String, Event> = old.into_iter().map(|e| (e.id.clone(), e)).collect();
    let mut merged = Merged::default();
    for e in new {
        match by_id.get(&e.id) {
            Some(old) if *old == e => continue,
            Some(_) => merged.updated += 1,
            None => merged.added += 1,
        }
        by_id.insert(e.id.clone(), e);
    }
    (by_id.into_values().collect(), merged)
}

/// What names one stored event: its session and its id (the same id in two sessions is two
/// events). Kept on disk as the pair `[session, id]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(from = "(String, String)", into = "(String, String)")]
pub struct Key {
    pub session: String,
    pub id: String,
}

impl Key {
    /// The key of `event`.
    pub fn of(event: &Event) -> Key {
        Key {
            session: event.session_id.clone(),
            id: event.id.clone(),
        }
    }
}

impl From<(String, String)> for Key {
    fn from((session, id): (String, String)) -> Key {
        Key { session, id }
    }
}

impl From<Key> for (String, String) {
    fn from(key: Key) -> (String, String) {
        (key.session, key.id)
    }
}

/// Whether an event that names `files` concerns one of `paths`: it names one of them, or names
/// no file.
pub fn concerns(files: &[String], paths: &[String]) -> bool {
    files.is_empty() || files.iter().any(|f| paths.contains(f))
}

/// The stable id of the event of `kind` drawn from `source` in `session`.
pub fn event_id(session: &str, source: &str, kind: Kind) -> String {
    let key = format!("{session}\0{source}\0{}", kind.as_str());
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(key.as_bytes()))
}

/// `text` on one line, whitespace folded, cut at a word boundary to [`SUMMARY_MAX`] characters.
pub fn summarize(text: &str) -> String {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_words(&folded, SUMMARY_MAX)
}

/// Cut `text` to at most `max` characters, at a word boundary when one is near, marking the cut
/// with `…`.
pub fn truncate_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max - 1).collect();
    let at_word = match cut.rfind(' ') {
        Some(i) if i >= cut.len() * 2 / 3 => &cut[..i],
        _ => &cut,
    };
    format!("{}…", at_word.trim_end_matches([' ', ',', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_depend_on_source_not_content() {
        let a = event_id("s", "msg_1", Kind::Decision);
        assert_eq!(a, event_id("s", "msg_1", Kind::Decision));
        assert_ne!(a, event_id("s", "msg_1", Kind::Rejection));
        assert_ne!(a, event_id("s", "msg_2", Kind::Decision));
        assert_ne!(a, event_id("t", "msg_1", Kind::Decision));
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn summaries_fold_whitespace_and_stay_within_the_limit() {
        assert_eq!(summarize("  use a\n\tcursor  "), "use a cursor");
        let long = "word ".repeat(60);
        let s = summarize(&long);
        assert!(s.chars().count() <= SUMMARY_MAX, "{}", s.chars().count());
        assert!(s.ends_with("word…"));
        let unbroken = "é".repeat(300);
        assert_eq!(summarize(&unbroken).chars().count(), SUMMARY_MAX);
    }

    #[test]
    fn merge_adds_and_replaces_by_id_and_says_what_changed() {
        let a = Event::new("s", "m1", Kind::Decision, Origin::Text, "use notes", "t");
        let (same, merged) = merge(vec![a.clone()], [a.clone()]);
        assert!(!merged.changed());
        assert_eq!(same, vec![a.clone()]);
        let mut a2 = a.clone();
        a2.summary = "use git notes".to_owned();
        let b = Event::new("s", "m2", Kind::Rejection, Origin::Text, "no daemon", "t");
        let (events, merged) = merge(vec![a], [a2.clone(), b.clone()]);
        assert_eq!(
            merged,
            Merged {
                added: 1,
                updated: 1,
                removed: 0
            }
        );
        assert_eq!(events.len(), 2);
        assert!(events.contains(&a2) && events.contains(&b));
    }

    #[test]
    fn kinds_serialize_as_their_names() {
        for kind in Kind::ALL {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
    }
}
