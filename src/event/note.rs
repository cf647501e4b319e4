//! The note codec: the events attached to one commit, as the text of its git note.
//!
//! A note is JSON Lines, one complete event per line, each line starting with the
//! human-readable `kind` and `summary`. Lines are unique and sorted, so that the union of two
//! notes is what `git notes merge -s cat_sort_uniq` makes of them; when two lines carry the
//! same event id (two versions of one event), readers keep one, deterministically. Writers add
//! events with [`super::merge`].

use std::collections::BTreeMap;

use super::{Event, Kind};

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
    let (events, _, unreadable) = read(note, |_| true, |_| false);
    (events, unreadable)
}

/// What a reader that weighs a note's events by the files they name needs of one it does not
/// give: its id, kind, session and files. Its text is skipped, not read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Glance {
    pub id: String,
    pub kind: Kind,
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_affected: Vec<String>,
}

impl Glance {
    fn of(e: Event) -> Glance {
        Glance {
            id: e.id,
            kind: e.kind,
            session_id: e.session_id,
            files_affected: e.files_affected,
        }
    }
}

/// A note's line read as a [`Glance`]: the fields every event has must be there, of their
/// types, so that a line read whole as no event is mostly no glance either (a malformed field
/// an event may lack is not looked at).
#[derive(serde::Deserialize)]
struct GlancedLine {
    id: String,
    kind: Kind,
    session_id: String,
    #[serde(default)]
    files_affected: Vec<String>,
    #[serde(rename = "summary")]
    _summary: serde::de::IgnoredAny,
    #[serde(rename = "schema_version")]
    _schema_version: u32,
    #[serde(rename = "timestamp")]
    _timestamp: serde::de::IgnoredAny,
    #[serde(rename = "origin")]
    _origin: super::Origin,
    #[serde(rename = "source")]
    _source: serde::de::IgnoredAny,
}

impl From<GlancedLine> for Glance {
    fn from(g: GlancedLine) -> Glance {
        Glance {
            id: g.id,
            kind: g.kind,
            session_id: g.session_id,
            files_affected: g.files_affected,
        }
    }
}

/// The events of a note of the kinds `wanted` holds, and a [`Glance`] at those of the kinds
/// `glanced` holds, one per id as [`decode`] gives them (of two lines with one id, the one that
/// sorts last). The lines of the other kinds (operations and the session event, much of a note)
/// are not parsed when they start as this program writes them (`{"kind":"read",…`), and a
/// glanced line is read for its id, session and files alone. This program makes an event's id
/// from its kind ([`super::event_id`]), so leaving its lines out by their kind lets no other
/// line of the same id through.
pub fn decode_kinds(
    note: &[u8],
    wanted: impl Fn(Kind) -> bool,
    glanced: impl Fn(Kind) -> bool,
) -> (Vec<Event>, Vec<Glance>) {
    let (events, glances, _) = read(note, wanted, glanced);
    (events, glances)
}

/// [`decode_kinds`], and how many of the lines it parsed could not be read.
fn read(
    note: &[u8],
    wanted: impl Fn(Kind) -> bool,
    glanced: impl Fn(Kind) -> bool,
) -> (Vec<Event>, Vec<Glance>, usize) {
    enum Read {
        Whole(Box<Event>),
        Glanced(Glance),
    }
    let starts = |keep: &dyn Fn(Kind) -> bool| -> Vec<String> {
        (Kind::ALL.into_iter())
            .filter(|&k| keep(k))
            .map(|k| format!("{{\"kind\":\"{}\",", k.as_str()))
            .collect()
    };
    let skipped = starts(&|k| !wanted(k) && !glanced(k));
    let glimpsed = starts(&|k| !wanted(k) && glanced(k));
    let starts_with =
        |line: &[u8], starts: &[String]| starts.iter().any(|s| line.starts_with(s.as_bytes()));
    let mut lines: Vec<&[u8]> = lines_of(note)
        .filter(|l| !l.trim_ascii().is_empty() && !starts_with(l, &skipped))
        .collect();
    lines.sort();
    let mut by_id: BTreeMap<String, Read> = BTreeMap::new();
    let mut unreadable = 0;
    for line in lines {
        let read = match starts_with(line, &glimpsed) {
            true => serde_json::from_slice::<GlancedLine>(line).map(|g| Read::Glanced(g.into())),
            false => serde_json::from_slice::<Event>(line).map(|e| Read::Whole(Box::new(e))),
        };
        match read {
            Ok(read) => {
                let id = match &read {
                    Read::Whole(e) => e.id.clone(),
                    Read::Glanced(g) => g.id.clone(),
                };
                by_id.insert(id, read);
            }
            Err(_) => unreadable += 1,
        }
    }
    let (mut events, mut glances) = (Vec::new(), Vec::new());
    for read in by_id.into_values() {
        match read {
            Read::Whole(e) if wanted(e.kind) => events.push(*e),
            Read::Whole(e) if glanced(e.kind) => glances.push(Glance::of(*e)),
            Read::Whole(_) => {}
            Read::Glanced(g) => glances.push(g),
        }
    }
    (events, glances, unreadable)
}

/// The lines of `note`, found with `memchr`: a note can hold hundreds of kilobytes of
/// operations that the readers of its reasoning skip.
fn lines_of(note: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    (memchr::memchr_iter(b'\n', note).chain([note.len()])).filter_map(move |end| {
        let line = note.get(start..end)?;
        start = end + 1;
        Some(line)
    })
}

/// The union of two notes, line by line, as `git notes merge -s cat_sort_uniq` makes it, with
/// one line per event id kept (the one that sorts last, the line [`decode`] reads) and the
/// lines of events `dropped` says to leave out left out. Lines are kept as written, so fields a
/// newer version wrote survive a merge made by an older one; a line that is not an event is
/// kept too (readers skip it). Also returns the (event id, session) of each line that `ours`
/// did not hold: what the merge brought. When the line kept for an id is `copy_of` one of ours
/// (the shared copy of our own event, come back from a remote), ours is kept instead: the
/// copy is not a newer version, only a shorter one.
pub fn union(
    ours: &[u8],
    theirs: &[u8],
    dropped: impl Fn(&str) -> bool,
    copy_of: impl Fn(&[u8]) -> Option<Vec<u8>>,
) -> (Vec<u8>, Vec<(String, String)>) {
    /// The two fields a merge looks at; the others are carried as text.
    #[derive(serde::Deserialize)]
    struct Head {
        id: String,
        session_id: String,
    }
    let split = |note: &[u8]| -> Vec<Vec<u8>> {
        note.split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let ours = split(ours);
    let held: std::collections::HashSet<&[u8]> = ours.iter().map(Vec::as_slice).collect();
    let mut lines: Vec<Vec<u8>> = ours.iter().cloned().chain(split(theirs)).collect();
    lines.sort();
    lines.dedup();
    // The last line of each id, by position in the sorted lines.
    let mut last: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut heads: Vec<Option<String>> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let head = serde_json::from_slice::<Head>(line).ok();
        heads.push(head.as_ref().map(|h| h.id.clone()));
        if let Some(h) = head {
            last.insert(h.id, (i, h.session_id));
        }
    }
    // Our line of each id (the last, the lines being sorted), for the copies that come back.
    let mut mine: BTreeMap<&str, &[u8]> = BTreeMap::new();
    for (line, id) in lines.iter().zip(&heads) {
        if let Some(id) = id
            && held.contains(line.as_slice())
        {
            mine.insert(id, line);
        }
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    let mut brought = Vec::new();
    for (i, (line, id)) in lines.iter().zip(&heads).enumerate() {
        let mut line = line.as_slice();
        if let Some(id) = id {
            let (at, session) = &last[id];
            if *at != i || dropped(id) {
                continue;
            }
            if let Some(&own) = mine.get(id.as_str())
                && !held.contains(line)
                && copy_of(own).as_deref() == Some(line)
            {
                line = own;
            }
            if !held.contains(line) {
                brought.push((id.clone(), session.clone()));
            }
        }
        kept.push(line);
    }
    kept.sort();
    let mut out = Vec::new();
    for line in kept {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    (out, brought)
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
    fn the_events_of_some_kinds_are_told_by_their_kind_whatever_the_order_of_their_fields() {
        let mut events: Vec<Event> = (Kind::ALL.into_iter().enumerate())
            .map(|(n, k)| event(&format!("m{n}"), k, &format!("the {k:?}")))
            .collect();
        // Two versions of an event given whole and of one glanced at: the line that sorts last
        // is read, as `decode` reads it.
        for n in [0, 3] {
            let mut revised = events[n].clone();
            revised.summary.push_str(", revised");
            revised.files_affected = vec!["src/revised.rs".to_owned()];
            events.push(revised);
        }
        let mut note = encode(&events);
        // Another writer's lines, the kind not first: parsed, and told by their kind all the same.
        let moved = [Kind::Read, Kind::Decision, Kind::Exploration, Kind::Session];
        for (n, kind) in moved.into_iter().enumerate() {
            let e = event(&format!("m9{n}"), kind, "moved");
            let mut value = serde_json::to_value(&e).unwrap();
            let kind = value.as_object_mut().unwrap().remove("kind").unwrap();
            value
                .as_object_mut()
                .unwrap()
                .insert("kind".to_owned(), kind);
            let line = serde_json::to_string(&value).unwrap();
            assert!(!line.starts_with(r#"{"kind""#), "{line}");
            note.extend_from_slice(line.as_bytes());
            note.push(b'\n');
        }
        let all = decode(&note).0;
        assert_eq!(all.len(), Kind::ALL.len() + moved.len());
        let told: fn(Kind) -> bool = Kind::is_told;
        for (wanted, glanced) in [(told, Kind::is_reason), (Kind::stands, Kind::is_reason)] {
            let some: Vec<Event> = all.iter().filter(|e| wanted(e.kind)).cloned().collect();
            let glances: Vec<Glance> = (all.iter())
                .filter(|e| !wanted(e.kind) && glanced(e.kind))
                .map(|e| Glance::of(e.clone()))
                .collect();
            let (read, glanced) = decode_kinds(&note, wanted, glanced);
            assert_eq!((&read, &glanced), (&some, &glances));
            assert!(read.iter().any(|e| e.summary == "the Decision, revised"));
            assert!(read.iter().any(|e| e.summary == "moved"));
            let files = |id: &str| {
                glanced
                    .iter()
                    .find(|g| g.id == id)
                    .map(|g| &g.files_affected)
            };
            assert_eq!(files(&events[3].id), Some(&events[15].files_affected));
            assert!(files(&event("m92", Kind::Exploration, "").id).is_some());
        }
        // A glance is of an event: a line that is none is none.
        let torn = br#"{"kind":"exploration","id":"x","session_id":"s"}
{"kind":"exploration","summary":"s","id":"y","schema_version":1,"session_id":"s","timestamp":"t","origin":"nonsense","source":"x"}"#;
        assert_eq!(
            decode_kinds(torn, Kind::is_told, Kind::is_reason),
            (vec![], vec![])
        );
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
    fn union_keeps_one_line_per_event_unknown_fields_and_says_what_it_brought() {
        let a = event("m1", Kind::Decision, "use notes");
        let b = event("m2", Kind::Tradeoff, "slower but safe");
        let c = event("m3", Kind::Rejection, "no daemon");
        let mut a2 = a.clone();
        a2.rationale = "more text".to_owned();
        let ours = encode(&[a.clone(), c.clone()]);
        // A newer writer's field, which this version does not know.
        let newer = serde_json::to_string(&b)
            .unwrap()
            .replacen('{', r#"{"agent":"codex","#, 1);
        let mut theirs = encode(std::slice::from_ref(&a2));
        theirs.extend_from_slice(format!("{newer}\n").as_bytes());
        let (merged, brought) = union(&ours, &theirs, |id| id == c.id, |_| None);
        let (events, bad) = decode(&merged);
        assert_eq!(bad, 0);
        assert_eq!(events.len(), 2, "{}", String::from_utf8_lossy(&merged));
        assert!(String::from_utf8_lossy(&merged).contains(r#""agent":"codex""#));
        assert!(!events.iter().any(|e| e.id == c.id), "a dropped id goes");
        let line = |e: &Event| serde_json::to_string(e).unwrap();
        let winner = if line(&a2) > line(&a) { &a2 } else { &a };
        assert_eq!(events.iter().find(|e| e.id == a.id), Some(winner));
        let mut expected = vec![(b.id.clone(), "s".to_owned())];
        if winner == &a2 {
            expected.push((a.id.clone(), "s".to_owned()));
        }
        let mut brought = brought;
        brought.sort();
        expected.sort();
        assert_eq!(brought, expected);
        // The same either way round, and nothing new the second time.
        let (back, _) = union(&theirs, &ours, |id| id == c.id, |_| None);
        assert_eq!(back, merged);
        assert!(union(&merged, &theirs, |_| false, |_| None).1.is_empty());
        // A shorter copy of our own event that comes back does not replace it.
        let short = |line: &[u8]| {
            Some(
                String::from_utf8_lossy(line)
                    .replace("more text", "")
                    .into_bytes(),
            )
        };
        let copy = short(serde_json::to_string(&a2).unwrap().as_bytes()).unwrap();
        let mine = encode(std::slice::from_ref(&a2));
        let (kept, brought) = union(&mine, &[copy.as_slice(), b"\n"].concat(), |_| false, short);
        assert_eq!(kept, mine);
        assert!(brought.is_empty());
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
