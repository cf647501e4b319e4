//! The transcript path, as `extract` runs it: bytes → lines (`LineReader`) → records
//! (`parse_line`) → events (`Extractor`).
//!
//! Beyond "never panics", it checks what the rest of the tool relies on:
//! - the reader gives the same lines through a tiny buffer as through a roomy one, and each
//!   line is the input's bytes at the offset it names;
//! - every event fits the format (summary length, id form) and survives a note round trip;
//! - the extractor's state, saved as JSON between runs, reads back to the same JSON, and a run
//!   resumed from it still works.
#![no_main]

use std::io::BufReader;
use std::path::Path;
use std::sync::LazyLock;

use git_agent_context::classify::extractor::{Extractor, State};
use git_agent_context::classify::redact::Redactor;
use git_agent_context::event::{Event, SUMMARY_MAX, note};
use git_agent_context::transcript::reader::{DEFAULT_MAX_LINE, Line, LineReader};
use git_agent_context::transcript::record::parse_line;
use libfuzzer_sys::fuzz_target;

/// For checking the reader alone: small, so that the fuzzer reaches the oversized-line path.
const SHORT_LINE: usize = 256;

static REDACTOR: LazyLock<Redactor> = LazyLock::new(Redactor::default);

/// One line as the reader gave it, owned, for comparing two readings.
#[derive(Debug, PartialEq)]
enum Read {
    Complete(u64, Vec<u8>),
    Oversized(u64, u64),
    Tail(u64, u64),
}

fn read_all(data: &[u8], capacity: usize, max_line: usize) -> (Vec<Read>, u64) {
    let mut reader = LineReader::new(BufReader::with_capacity(capacity, data), 0, max_line);
    let mut lines = Vec::new();
    while let Some(line) = reader.next_line().expect("reading a slice cannot fail") {
        lines.push(match line {
            Line::Complete { offset, bytes } => Read::Complete(offset, bytes.to_vec()),
            Line::Oversized { offset, len } => Read::Oversized(offset, len),
            Line::Tail { offset, len } => {
                // A tail is not consumed: the caller stops there, as ingest does.
                lines.push(Read::Tail(offset, len));
                break;
            }
        });
    }
    (lines, reader.offset())
}

fn check_event(e: &Event) {
    let chars = e.summary.chars().count();
    assert!(chars <= SUMMARY_MAX, "summary of {chars} characters: {e:?}");
    assert!(
        e.id.len() == 32 && e.id.bytes().all(|b| b.is_ascii_hexdigit()),
        "id {:?}",
        e.id
    );
}

fuzz_target!(|data: &[u8]| {
    let (short, end) = read_all(data, 1 << 16, SHORT_LINE);
    let (small, small_end) = read_all(data, 7, SHORT_LINE);
    assert_eq!(short, small, "the buffer size changed the lines");
    assert_eq!(end, small_end);
    assert!(end <= data.len() as u64);
    for line in &short {
        match line {
            Read::Complete(offset, bytes) => {
                let at = &data[*offset as usize..];
                assert_eq!(&at[..bytes.len()], &bytes[..], "line at {offset}");
            }
            Read::Oversized(offset, len) => {
                assert!(*len > SHORT_LINE as u64);
                assert_eq!(data.get((offset + len) as usize), Some(&b'\n'));
            }
            Read::Tail(offset, len) => assert_eq!(offset + len, data.len() as u64),
        }
    }

    // As ingest reads a transcript.
    let (lines, _) = read_all(data, 1 << 16, DEFAULT_MAX_LINE);
    let workdir = Path::new("/home/me/project");
    let mut extractor = Extractor::new(State::default(), Some(workdir), &REDACTOR);
    let mut events = Vec::new();
    for line in &lines {
        if let Read::Complete(_, bytes) = line
            && let Some(entry) = parse_line(bytes)
        {
            extractor.feed(&entry);
            events.append(&mut extractor.take_events());
        }
    }
    events.extend(extractor.provisional());
    for e in &events {
        check_event(e);
    }
    // The events go into notes (and the pending queue, the same JSON lines): every one must
    // read back, one per id, each equal to one of those written.
    let (back, unreadable) = note::decode(&note::encode(&events));
    assert_eq!(unreadable, 0);
    let mut ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(back.len(), ids.len());
    for e in &back {
        assert!(events.contains(e), "{e:?} was not written");
    }

    // The state between runs: saved as JSON, read back the same, and a run can go on from it.
    let saved = serde_json::to_string(&extractor.state_to_save()).expect("state serializes");
    let state: State = serde_json::from_str(&saved).expect("saved state reads back");
    assert_eq!(serde_json::to_string(&state).unwrap(), saved);
    let resumed = Extractor::new(state, Some(workdir), &REDACTOR);
    for e in resumed.provisional() {
        check_event(&e);
    }
});
