//! Records → events: what a transcript's entries mean.
//!
//! [`extractor`] walks a transcript's entries and drafts events; [`heuristic`] decides what
//! kind of reasoning a sentence carries, and `options` which option a label ("Option 2")
//! names; [`tools`] compresses tool calls and reads commits out of Bash commands; [`redact`]
//! scrubs secrets from every event before it leaves this module.

mod cues;
pub mod extractor;
pub mod heuristic;
mod options;
mod patterns;
pub mod redact;
pub mod sentences;
pub mod tools;
