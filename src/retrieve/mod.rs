//! Retrieval: from git's own signals back to the reasoning (docs/commands.md, `why` and `query`).

pub mod binary;
pub mod diff;
pub mod head;
pub mod hints;
pub mod index;
pub mod query;
pub mod review;
pub mod why;

use crate::event::{Event, Kind};

/// What makes two events one thing said twice: the same session, kind and words (white space
/// folded, a closing "…" left out), as when a plan given as the prompt is approved and written
/// out again.
pub(crate) fn twin_key(e: &Event) -> (String, Kind, String) {
    let words = e
        .summary
        .trim_end()
        .trim_end_matches('…')
        .split_whitespace();
    let words = words.collect::<Vec<_>>().join(" ");
    (e.session_id.clone(), e.kind, words)
}
