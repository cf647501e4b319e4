//! Tolerant serde types for one line of a Claude Code transcript.
//!
//! The on-disk format has no schema and changes often, so every field is optional and
//! lenient: a field of the wrong type reads as absent instead of failing the whole line
//! ([`Lenient`] for small values, [`Obj`] for nested objects). Strings borrow from the line
//! where they can (`Cow`), and bulky values we rarely need (tool inputs, tool results) stay as
//! raw JSON until asked for. Each line is scanned once, except the raw values we go back to.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A field that reads as `None` when it is absent, `null`, or of an unexpected type.
#[derive(Debug, Clone, PartialEq)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<T> Lenient<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        Ok(Lenient(serde_json::from_str(raw.get()).ok()))
    }
}

/// A nested object that reads as `None` when the value is not an object. Unlike [`Lenient`]
/// it parses in place (no second scan), which matters for the big `message` objects; the
/// object's own fields must be lenient, so that reading it cannot fail half-way.
#[derive(Debug)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<T> Obj<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjVisitor(PhantomData))
    }
}

struct ObjVisitor<T>(PhantomData<T>);

/// Every kind of value but an object reads as `None`.
macro_rules! ignore_scalars {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method<E: serde::de::Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(Default::default())
        })*
    };
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjVisitor<T> {
    type Value = Obj<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Obj(None))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Obj(None))
    }

    ignore_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
}

pub type Text<'a> = Lenient<Cow<'a, str>>;

/// Borrow a lenient string field as `&str`.
pub fn text<'s>(field: &'s Text<'_>) -> Option<&'s str> {
    field.0.as_deref()
}

/// One transcript line. Only the fields the extractor reads are named; the rest are skipped.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Text<'a>,
    #[serde(borrow, default)]
    pub subtype: Text<'a>,
    #[serde(borrow, default)]
    pub uuid: Text<'a>,
    #[serde(borrow, default)]
    pub session_id: Text<'a>,
    #[serde(borrow, default)]
    pub timestamp: Text<'a>,
    #[serde(borrow, default)]
    pub cwd: Text<'a>,
    #[serde(borrow, default)]
    pub git_branch: Text<'a>,
    #[serde(borrow, default)]
    pub version: Text<'a>,
    #[serde(default)]
    pub is_sidechain: Lenient<bool>,
    #[serde(borrow, default)]
    pub agent_id: Text<'a>,
    #[serde(default)]
    pub is_meta: Lenient<bool>,
    #[serde(default)]
    pub is_compact_summary: Lenient<bool>,
    #[serde(borrow, default)]
    pub plan_content: Text<'a>,
    #[serde(borrow, default)]
    pub message: Obj<Message<'a>>,
    #[serde(borrow, default)]
    pub tool_use_result: Lenient<&'a RawValue>,
    /// `summary` entries: a session title.
    #[serde(borrow, default)]
    pub summary: Text<'a>,
    /// `progress` entries: what a tool or a subagent is doing meanwhile.
    #[serde(borrow, default)]
    pub data: Obj<ProgressData<'a>>,
}

/// A `progress` entry's `data`. Claude Code up to 2.1.4x mirrors each message of a running
/// subagent here (`agent_progress`) as well as in the subagent's own transcript: the message
/// is an entry of its own, without the fields every entry repeats.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressData<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Text<'a>,
    #[serde(borrow, default)]
    pub agent_id: Text<'a>,
    #[serde(borrow, default)]
    pub message: Obj<Box<Entry<'a>>>,
}

/// Whether an assistant message was written by Claude Code itself (an API error, an
/// interruption), not by the model: its model is `<synthetic>`.
pub fn is_synthetic(message: &Message<'_>) -> bool {
    text(&message.model) == Some("<synthetic>")
}

#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default)]
    pub id: Text<'a>,
    #[serde(borrow, default)]
    pub model: Text<'a>,
    #[serde(borrow, default)]
    pub content: Content<'a>,
}

/// `message.content`: a plain string (typed prompts) or a list of blocks.
#[derive(Debug, Default)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
    /// Absent, null, or of another type.
    #[default]
    None,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor(PhantomData))
    }
}

struct ContentVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ContentVisitor<'a> {
    type Value = Content<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a list of content blocks")
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // A block of an unknown shape is dropped; the others are kept.
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element::<Obj<Block<'a>>>()? {
            blocks.extend(block.0);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Content::None)
    }

    ignore_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64);
}

/// One content block, flattened: which fields are set depends on `kind`.
#[derive(Debug, Default, Deserialize)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    pub kind: Text<'a>,
    #[serde(borrow, default)]
    pub text: Text<'a>,
    #[serde(borrow, default)]
    pub thinking: Text<'a>,
    #[serde(borrow, default)]
    pub id: Text<'a>,
    #[serde(borrow, default)]
    pub name: Text<'a>,
    #[serde(borrow, default)]
    pub input: Lenient<&'a RawValue>,
    #[serde(borrow, default)]
    pub tool_use_id: Text<'a>,
    #[serde(borrow, default)]
    pub content: Lenient<&'a RawValue>,
    #[serde(default)]
    pub is_error: Lenient<bool>,
}

impl Block<'_> {
    pub fn is(&self, kind: &str) -> bool {
        text(&self.kind) == Some(kind)
    }
}

/// The parts of a tool's input the extractor understands, across tools.
#[derive(Debug, Default, Deserialize)]
pub struct ToolInput<'a> {
    #[serde(borrow, default)]
    pub file_path: Text<'a>,
    #[serde(borrow, default)]
    pub notebook_path: Text<'a>,
    #[serde(borrow, default)]
    pub path: Text<'a>,
    #[serde(borrow, default)]
    pub pattern: Text<'a>,
    #[serde(borrow, default)]
    pub command: Text<'a>,
    #[serde(borrow, default)]
    pub description: Text<'a>,
    #[serde(borrow, default)]
    pub old_string: Text<'a>,
    #[serde(borrow, default)]
    pub new_string: Text<'a>,
    #[serde(borrow, default)]
    pub content: Text<'a>,
    /// NotebookEdit: the cell's new text.
    #[serde(borrow, default)]
    pub new_source: Text<'a>,
    #[serde(borrow, default)]
    pub plan: Text<'a>,
    #[serde(borrow, default)]
    pub prompt: Text<'a>,
    #[serde(borrow, default)]
    pub subject: Text<'a>,
    #[serde(rename = "taskId", borrow, default)]
    pub task_id: Text<'a>,
    #[serde(borrow, default)]
    pub status: Text<'a>,
    #[serde(borrow, default)]
    pub url: Text<'a>,
    #[serde(borrow, default)]
    pub query: Text<'a>,
    #[serde(borrow, default)]
    pub todos: Lenient<Vec<Lenient<Todo<'a>>>>,
    #[serde(borrow, default)]
    pub edits: Lenient<Vec<Lenient<EditPair<'a>>>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Todo<'a> {
    #[serde(borrow, default)]
    pub content: Text<'a>,
    #[serde(borrow, default)]
    pub status: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
pub struct EditPair<'a> {
    #[serde(borrow, default)]
    pub old_string: Text<'a>,
    #[serde(borrow, default)]
    pub new_string: Text<'a>,
}

/// `toolUseResult` on a tool-result line; a plain string (an error) reads as all-absent.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseResult<'a> {
    #[serde(borrow, default)]
    pub stdout: Text<'a>,
    #[serde(borrow, default)]
    pub stderr: Text<'a>,
    #[serde(default)]
    pub interrupted: Lenient<bool>,
    #[serde(default)]
    pub git_operation: Lenient<GitOperation>,
    #[serde(borrow, default)]
    pub task: Lenient<CreatedTask<'a>>,
    #[serde(borrow, default)]
    pub agent_id: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
pub struct GitOperation {
    #[serde(default)]
    pub commit: Lenient<GitCommit>,
}

#[derive(Debug, Default, Deserialize)]
pub struct GitCommit {
    #[serde(default)]
    pub sha: Lenient<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct CreatedTask<'a> {
    #[serde(borrow, default)]
    pub id: Lenient<TaskId<'a>>,
    #[serde(borrow, default)]
    pub subject: Text<'a>,
}

/// Task ids are strings in some versions and numbers in others.
#[derive(Debug)]
pub struct TaskId<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for TaskId<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let json = raw.get();
        match serde_json::from_str::<Cow<'a, str>>(json) {
            Ok(s) => Ok(TaskId(s)),
            Err(_) => Ok(TaskId(Cow::Borrowed(json))),
        }
    }
}

/// Parse one line. `None` means the line is not a JSON object we can read at all.
pub fn parse_line(line: &[u8]) -> Option<Entry<'_>> {
    let line = std::str::from_utf8(line).ok()?;
    // serde would read a struct from an array too; a transcript entry is an object.
    if !line.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str(line).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_in_known_fields_read_as_absent() {
        let e = parse_line(br#"{"type":"user","timestamp":12,"isSidechain":"yes","message":{"content":7},"uuid":"u1"}"#)
            .unwrap();
        assert_eq!(text(&e.kind), Some("user"));
        assert_eq!(e.timestamp.0, None);
        assert_eq!(e.is_sidechain.0, None);
        assert!(matches!(e.message.get().unwrap().content, Content::None));
        assert_eq!(text(&e.uuid), Some("u1"));
    }

    #[test]
    fn unknown_blocks_are_dropped_and_known_ones_kept() {
        let e = parse_line(
            br#"{"type":"assistant","message":{"id":"m","content":[5,{"type":"text","text":"hi\nthere"},{"type":"future"}]}}"#,
        )
        .unwrap();
        let Content::Blocks(blocks) = &e.message.get().unwrap().content else {
            panic!("blocks expected");
        };
        assert_eq!(blocks.len(), 2);
        assert_eq!(text(&blocks[0].text), Some("hi\nthere"));
    }

    #[test]
    fn not_an_object_or_not_utf8_is_none() {
        assert!(parse_line(b"[1,2]").is_none());
        assert!(parse_line(b"{\"type\":\"user\"").is_none());
        assert!(parse_line(b"{\"type\":\"\xff\"}").is_none());
    }
}
