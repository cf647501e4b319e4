//! Claude Code transcripts (JSON Lines) as tolerant records, read incrementally.
//!
//! Nothing here knows about git or events: this layer turns bytes into [`record::Entry`]s,
//! counts what it had to skip, and tells where it may resume.

pub mod cursor;
pub mod locate;
pub mod reader;
pub mod record;
pub mod root;
