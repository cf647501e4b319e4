//! The note codec (`event::note`): any bytes a note blob may hold — a note edited by hand, cut
//! short, or merged by git — decode without panicking, and what decodes is stable:
//! decode → encode → decode gives the same events, and encoding them again gives the same
//! bytes. An encoded note keeps the format's promises (docs/format.md): sorted unique lines,
//! each one event starting with its kind and summary, one event per id.
#![no_main]

use git_agent_context::event::note::{decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (events, unreadable) = decode(data);
    let lines = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count();
    // Every line is read or counted; lines with the same id give one event.
    assert!(unreadable <= lines && events.len() <= lines - unreadable);
    assert!(
        events.windows(2).all(|w| w[0].id < w[1].id),
        "one event per id, in id order"
    );

    let note = encode(&events);
    if events.is_empty() {
        assert!(note.is_empty());
    } else {
        assert_eq!(note.last(), Some(&b'\n'));
    }
    let text = std::str::from_utf8(&note).expect("a note is UTF-8");
    let encoded: Vec<&str> = text.lines().collect();
    assert_eq!(encoded.len(), events.len());
    assert!(
        encoded.windows(2).all(|w| w[0] < w[1]),
        "sorted unique lines"
    );
    for line in &encoded {
        let rest = line.strip_prefix(r#"{"kind":""#).expect("kind first");
        let (_kind, rest) = rest.split_once('"').expect("kind is a string");
        assert!(
            rest.starts_with(r#","summary":""#),
            "summary second: {line}"
        );
    }

    let (again, unreadable) = decode(&note);
    assert_eq!(unreadable, 0);
    assert_eq!(again, events);
    assert_eq!(encode(&again), note);
});
