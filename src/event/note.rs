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

    mod properties {
        use proptest::prelude::*;

        use super::super::*;
        use crate::event::{Kind, Origin, Outcome, ToolCall, merge};

        /// Any text, newlines, quotes, escapes and non-ASCII included.
        fn text() -> impl Strategy<Value = String> {
            prop_oneof![".{0,40}", "[a-z \\n\"\\\\]{0,12}", Just(String::new())]
        }

        /// Events from a few sources, so that notes share ids: the same event, or another
        /// version of it.
        fn event() -> impl Strategy<Value = Event> {
            (
                0..6usize,
                0..Kind::ALL.len(),
                text(),
                text(),
                proptest::collection::vec(text(), 0..3),
                proptest::option::of(text()),
            )
                .prop_map(|(source, kind, summary, rationale, alternatives, call)| {
                    let mut e = Event::new(
                        "session",
                        &format!("m{source}"),
                        Kind::ALL[kind],
                        Origin::Text,
                        &summary,
                        "2026-01-01T00:00:00Z",
                    );
                    e.rationale = rationale;
                    e.alternatives = alternatives;
                    e.tool_calls = call
                        .map(|input| ToolCall {
                            name: "Bash".to_owned(),
                            input,
                            outcome: Outcome::Success,
                        })
                        .into_iter()
                        .collect();
                    e
                })
        }

        fn note() -> impl Strategy<Value = Vec<u8>> {
            proptest::collection::vec(event(), 0..6).prop_map(|events| encode(&events))
        }

        /// What `git notes merge -s cat_sort_uniq` (and `notes.rewriteMode`) makes of two
        /// notes: their lines, sorted, each once.
        fn cat_sort_uniq(a: &[u8], b: &[u8]) -> Vec<u8> {
            let mut lines: Vec<&[u8]> = a
                .split(|&c| c == b'\n')
                .chain(b.split(|&c| c == b'\n'))
                .filter(|l| !l.is_empty())
                .collect();
            lines.sort();
            lines.dedup();
            lines
                .iter()
                .flat_map(|l| l.iter().chain(b"\n"))
                .copied()
                .collect()
        }

        fn read(note: &[u8]) -> Vec<Event> {
            let (events, unreadable) = decode(note);
            assert_eq!(unreadable, 0);
            events
        }

        proptest! {
            #[test]
            fn a_note_reads_back_as_written(events in proptest::collection::vec(event(), 0..8)) {
                let note = encode(&events);
                let back = read(&note);
                // One event an id, each as given (of two versions, one of them).
                let mut ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
                ids.sort();
                ids.dedup();
                prop_assert_eq!(back.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ids);
                for e in &back {
                    prop_assert!(events.contains(e));
                }
                // And writing what was read gives what was read.
                prop_assert_eq!(read(&encode(&back)), back);
            }

            #[test]
            fn the_union_of_notes_is_commutative_associative_idempotent(
                a in note(), b in note(), c in note()
            ) {
                let u = cat_sort_uniq;
                prop_assert_eq!(read(&u(&a, &b)), read(&u(&b, &a)));
                prop_assert_eq!(read(&u(&u(&a, &b), &c)), read(&u(&a, &u(&b, &c))));
                prop_assert_eq!(read(&u(&a, &a)), read(&a));
                // Writing what was read is a note that merges the same.
                let rewritten = encode(&read(&u(&a, &b)));
                prop_assert_eq!(read(&u(&rewritten, &c)), read(&u(&u(&a, &b), &c)));
            }

            #[test]
            fn adding_events_twice_is_adding_them_once(
                old in proptest::collection::vec(event(), 0..6),
                new in proptest::collection::vec(event(), 0..6),
            ) {
                // A batch holds one version of each event, as every writer's does.
                let mut new = new;
                new.sort_by(|a, b| a.id.cmp(&b.id));
                new.dedup_by(|a, b| a.id == b.id);
                let (once, _) = merge(old, new.clone());
                let (twice, again) = merge(once.clone(), new);
                prop_assert_eq!(twice, once);
                prop_assert!(!again.changed());
            }
        }
    }
}
