//! The note codec: the events attached to one commit, as the text of its git note.
//!
//! A note is JSON Lines, one complete event per line, each line starting with the
//! human-readable `kind` and `summary`. Lines are unique and sorted, so that the union of two
//! notes is what `git notes merge -s cat_sort_uniq` makes of them; when two lines carry the
//! same event id (two versions of one event), readers keep one, deterministically. Writers add
//! events with [`super::merge`].

use std::collections::BTreeMap;

use super::Event;

/// The note text for `events`: sorted, unique lines, each ending in a newline.
pub fn encode(events: &[Event]) -> Vec<u8> {
    let mut lines: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).expect("events serialize"))
        .collect();
    lines.sort();
    lines.dedup();
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

/// The events of a note, one per id, and how many lines could not be read. Of two lines with
/// the same id, the one that sorts last wins (any fixed rule would do; this one needs no
/// clock and gives every reader the same answer).
pub fn decode(note: &[u8]) -> (Vec<Event>, usize) {
    let mut lines: Vec<&[u8]> = note
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .collect();
    lines.sort();
    let mut by_id: BTreeMap<String, Event> = BTreeMap::new();
    let mut unreadable = 0;
    for line in lines {
        match serde_json::from_slice::<Event>(line) {
            Ok(e) => {
                by_id.insert(e.id.clone(), e);
            }
            Err(_) => unreadable += 1,
        }
    }
    (by_id.into_values().collect(), unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Kind, Origin};

    fn event(source: &str, kind: Kind, summary: &str) -> Event {
        Event::new(
            "s",
            source,
            kind,
            Origin::Text,
            summary,
            "2026-01-01T00:00:00Z",
        )
    }

    #[test]
    fn lines_are_sorted_unique_and_start_with_kind_and_summary() {
        let a = event("m1", Kind::Rejection, "no daemon");
        let b = event("m2", Kind::Decision, "use notes");
        let note = encode(&[a.clone(), b.clone(), a.clone()]);
        let text = String::from_utf8(note.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with(r#"{"kind":"decision","summary":"use notes","#));
        assert!(lines[1].starts_with(r#"{"kind":"rejection","#));
        let (events, unreadable) = decode(&note);
        assert_eq!(unreadable, 0);
        assert_eq!(events.len(), 2);
        assert!(events.contains(&a) && events.contains(&b));
    }

    #[test]
    fn union_of_two_notes_like_cat_sort_uniq_reads_as_the_merge() {
        let a = event("m1", Kind::Decision, "use notes");
        let b = event("m2", Kind::Tradeoff, "slower but safe");
        let mut a2 = a.clone();
        a2.rationale = "more text".to_owned();
        // What cat_sort_uniq makes of two notes: the sorted, unique union of their lines.
        let mut lines: Vec<Vec<u8>> = [
            encode(std::slice::from_ref(&a)),
            encode(&[a2.clone(), b.clone()]),
        ]
        .iter()
        .flat_map(|n| {
            n.split(|&c| c == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect();
        lines.sort();
        lines.dedup();
        let union: Vec<u8> = lines
            .iter()
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect();
        let (events, bad) = decode(&union);
        assert_eq!(bad, 0);
        assert_eq!(events.len(), 2, "one event per id");
        let kept = events.iter().find(|e| e.id == a.id).unwrap();
        // The version whose line sorts last, whatever order the lines come in.
        let line = |e: &Event| serde_json::to_string(e).unwrap();
        let last = if line(&a2) > line(&a) { &a2 } else { &a };
        assert_eq!(kept, last);
        let reversed: Vec<u8> = lines
            .iter()
            .rev()
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect();
        let (events, _) = decode(&reversed);
        assert_eq!(events.iter().find(|e| e.id == a.id).unwrap(), last);
    }

    #[test]
    fn unreadable_lines_are_counted_not_fatal() {
        let a = event("m1", Kind::Decision, "use notes");
        let mut note = encode(std::slice::from_ref(&a));
        note.extend_from_slice(b"not json\n{\"kind\":7}\n");
        assert_eq!(decode(&note), (vec![a], 2));
    }
}
