//! Retrieval: from git's own signals back to the reasoning (docs/commands.md, `why` and `query`).

pub mod binary;
pub mod diff;
pub mod head;
pub mod hints;
pub mod index;
pub mod query;
pub mod review;
pub mod why;

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::event::{Event, Kind};

/// The reasoning among `events`, in their order, as `why` and `review` show it: what the session
/// explored or thought without deciding only with `musings`, and a thing said twice
/// ([`twin_key`]) once, with the files either names.
pub(crate) fn said_once<'e>(
    events: impl IntoIterator<Item = &'e Event>,
    musings: bool,
) -> Vec<Event> {
    let mut once: Vec<Event> = Vec::new();
    let mut at: HashMap<(String, Kind, String), usize> = HashMap::new();
    for e in (events.into_iter()).filter(|e| e.kind.is_reason() && (musings || !e.kind.is_musing()))
    {
        match at.entry(twin_key(e)) {
            Entry::Occupied(i) => {
                let first = &mut once[*i.get()];
                for file in &e.files_affected {
                    if !first.files_affected.contains(file) {
                        first.files_affected.push(file.clone());
                    }
                }
            }
            Entry::Vacant(v) => {
                v.insert(once.len());
                once.push(e.clone());
            }
        }
    }
    once
}

/// What makes two events one thing said twice: the same session, kind and words (white space
/// folded, a closing "…" left out), as when a plan given as the prompt is approved and written
/// out again.
fn twin_key(e: &Event) -> (String, Kind, String) {
    let words = e
        .summary
        .trim_end()
        .trim_end_matches('…')
        .split_whitespace();
    let words = words.collect::<Vec<_>>().join(" ");
    (e.session_id.clone(), e.kind, words)
}
