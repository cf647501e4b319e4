//! The heuristic classifier: which sentences of a session are reasoning worth keeping.
//!
//! Most of what an agent writes narrates its next step ("Let me look at the hook.", "Now I need
//! to add the import."), reports ("All tests pass."), introduces a list ("Recommendation:") or
//! guesses. A sentence is kept only when a pattern of a reasoning kind matches and none of the
//! gates says it is one of those. Precision matters more than recall — a wrong "rejected: X"
//! shown to the next session is worse than a missed one — so patterns ask for a stated choice,
//! a verdict with its reason, or a confirmed finding, not a keyword.
//!
//! Measured against `tests/data/reasoning-labelled.jsonl` (real sessions, labelled blind to this
//! code; see `tests/data/README.md`) by the `reasoning_set` test: the rules were written on its
//! tuning half, and the test half gives the figures.

use std::sync::{LazyLock, OnceLock};

use regex::Regex;

use crate::classify::cues::{GROUPS, keep_patterns};
use crate::classify::patterns::{Set, ascii_boundaries};
use crate::classify::sentences::Form;
use crate::event::{Kind, SUMMARY_MAX};

/// The room for a classifier set's lazy DFA states, shared out among its automata: the sets
/// are large and the default cache thrashes.
const CACHE: usize = 32 << 20;

/// The set that `build.rs` compiled from the patterns it names `$name` (each set of
/// [`super::cues`]), so that no process compiles them.
macro_rules! prebuilt {
    ($name:literal) => {
        LazyLock::new(|| {
            Set::prebuilt(
                include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".nfa")),
                CACHE,
            )
        })
    };
}

/// A lead-in's tail that only announces an example.
static EXAMPLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i),? (like|e\.g\.|for example|such as)$").expect("the example pattern compiles")
});

/// All of [`keep_patterns`] at once, loosened ([`loosened`](crate::classify::patterns::loosened)): one pass tells which of them may
/// match, and [`keep`] says which do. Compiled by `build.rs`, the largest set of all.
static KEEP: LazyLock<Set> = prebuilt!("keep");
/// The [`keep_patterns`] one by one, each built the first time the set says it may match.
static KEEP_EACH: LazyLock<Vec<OnceLock<regex::bytes::Regex>>> =
    LazyLock::new(|| keep_patterns().map(|_| OnceLock::new()).collect());

/// Keep pattern `i` on its own.
fn keep(i: usize) -> &'static regex::bytes::Regex {
    KEEP_EACH[i].get_or_init(|| {
        regex::bytes::RegexBuilder::new(keep_patterns().nth(i).expect("a keep pattern"))
            .case_insensitive(true)
            .unicode(false)
            .build()
            .expect("classifier patterns compile")
    })
}

/// The first of [`keep_patterns`] that `bytes` matches.
fn first_kept(bytes: &[u8]) -> Option<usize> {
    KEEP.matches(bytes).find(|&i| keep(i).is_match(bytes))
}

static DROP: LazyLock<Set> = prebuilt!("not_reasoning");
static HEDGES: LazyLock<Set> = prebuilt!("hedge");
static NARRATES: LazyLock<Set> = prebuilt!("narration");
static STEPS: LazyLock<Set> = prebuilt!("step");
static REASONS: LazyLock<Set> = prebuilt!("reasoned");
static LEADS_IN: LazyLock<Set> = prebuilt!("lead_in");

/// An arrow, a box, a check mark or an emoji: what starts a status line ("✅ Tests pass", "→
/// next"), not a sentence. Letters of any script are not symbols.
fn symbol(c: char) -> bool {
    matches!(c as u32, 0x2190..=0x2BFF | 0x1F000..)
}

/// What a sentence holds that is worth keeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub kind: Kind,
    /// Where the statement starts: past a preamble (a clause before it) when the sentence is
    /// too long to be a summary whole, so that a cut summary keeps the choice.
    pub from: usize,
}

/// The reasoning one sentence carries — a decision or a constraint ([`Kind::Decision`]), a
/// rejected alternative, a trade-off or a finding ([`Kind::Discovery`]) — or `None` for
/// narration, lead-ins, status, questions, guesses and everything else.
pub fn classify(sentence: &str, form: Form) -> Option<Verdict> {
    let mut s = sentence.trim();
    if form == Form::Heading || s.len() < 12 || s.ends_with('?') || s.starts_with(symbol) {
        return None;
    }
    if let Some(head) = s.strip_suffix(':') {
        // "The fix is to:" introduces its content; "Use X, since Y:" states it, with its reason.
        let head = head.trim_end();
        let head = match EXAMPLE.find(head) {
            Some(m) => &head[..m.start()],
            None => head,
        };
        if head.split_whitespace().count() <= 5
            || !REASONS.is_match(head.as_bytes())
            || LEADS_IN.is_match(head.as_bytes())
        {
            return None;
        }
        s = head;
    }
    let bytes = s.as_bytes();
    if DROP.is_match(bytes) {
        return None;
    }
    let first = first_kept(bytes)?;
    // A line with no sentence in it ("Simplified pools (recommended)") names, it does not say.
    let sentence_like = s.ends_with(['.', '!', ')', '`', '"', '\'']);
    if !sentence_like && s.split_whitespace().count() < 6 {
        return None;
    }
    if HEDGES.is_match(bytes) || STEPS.is_match(bytes) {
        return None;
    }
    let reasoned = REASONS.is_match(bytes);
    // A list item is a plan's step or a change's summary unless it says why.
    if (NARRATES.is_match(bytes) || form == Form::Item) && !reasoned {
        return None;
    }
    let mut at = 0;
    let mut kind = Kind::Decision;
    for (k, patterns) in GROUPS {
        if first < at + patterns.len() {
            kind = k;
            break;
        }
        at += patterns.len();
    }
    let from = if sentence.trim().chars().count() > SUMMARY_MAX {
        statement_start(s, first)
    } else {
        0
    };
    let offset = s.as_ptr() as usize - sentence.as_ptr() as usize;
    Some(Verdict {
        kind,
        from: offset + from,
    })
}

/// [`super::cues::CONSEQUENCE`].
static CONSEQUENCE: LazyLock<Set> = prebuilt!("consequence");

/// Whether a sentence of prose gives a reason for what is done just after it: it says why (a
/// cause, a consequence) or carries reasoning the classifier keeps, and is not the next step,
/// a status, an acknowledgement, a lead-in or a question ("They're in the same package, so
/// the names conflict.", not "Now revert `setup.go`." nor "Now I understand the structure.").
pub fn says_why(sentence: &str, form: Form) -> bool {
    let s = sentence.trim();
    if form != Form::Prose
        || s.ends_with(['?', ':'])
        || s.starts_with(symbol)
        || s.split_whitespace().count() < 4
    {
        return false;
    }
    let bytes = s.as_bytes();
    if DROP.is_match(bytes) || NARRATES.is_match(bytes) || STEPS.is_match(bytes) {
        return false;
    }
    REASONS.is_match(bytes) || CONSEQUENCE.is_match(bytes) || first_kept(bytes).is_some()
}

/// [`super::cues::INTERJECTION`].
static INTERJECTION: LazyLock<Set> = prebuilt!("interjection");

/// Whether a sentence only narrates the work: the next step or a look to take, said in a few
/// words and without a reason or a choice ("Let me fix that.", "Now I need to update the
/// test.", "Let me check what we'd need:"), or an interjection ("Good!"). A longer one says how
/// ("I can fix this by iterating over the array directly instead of…") and is kept.
pub fn narrates(sentence: &str) -> bool {
    /// Words past which the next step says how it is done.
    const WORDS: usize = 12;
    let s = sentence.trim();
    let bytes = s.trim_end_matches(':').as_bytes();
    let next = NARRATES.is_match(bytes) || STEPS.is_match(bytes) || EXPLORES.is_match(bytes);
    INTERJECTION.is_match(bytes)
        || (next
            && s.split_whitespace().count() <= WORDS
            && !REASONS.is_match(bytes)
            && !CONSEQUENCE.is_match(bytes)
            && !CHOICE.is_match(bytes))
}

/// [`super::cues::CHOICE`].
static CHOICE: LazyLock<Set> = prebuilt!("choice");

/// Whether a sentence is a step of the work itself ("Let me fix the helper:", "I'll update the
/// test."), as against a look to take or what is needed ("I need to either:").
pub fn is_step(sentence: &str) -> bool {
    STEPS.is_match(sentence.trim().as_bytes())
}

/// Where the clause holding the match of [`KEEP`] pattern `pattern` starts in `s`: after the
/// last clause break (`, `, `; `, ` — `, ` - `, `: `) before the match.
fn statement_start(s: &str, pattern: usize) -> usize {
    let Some(m) = keep(pattern).find(s.as_bytes()) else {
        return 0;
    };
    let before = &s[..m.start()];
    [", ", "; ", " — ", " - ", ": "]
        .iter()
        .filter_map(|sep| before.rfind(sep).map(|i| i + sep.len()))
        .max()
        .unwrap_or(0)
}

/// [`super::cues::EXPLORING`].
static EXPLORES: LazyLock<Set> = prebuilt!("exploring");

/// The kind of a sentence: the reasoning it carries ([`classify`]), else whether it explores.
pub fn kind_of(sentence: &str, form: Form) -> Option<Verdict> {
    classify(sentence, form).or_else(|| {
        EXPLORES
            .is_match(sentence.trim().as_bytes())
            .then_some(Verdict {
                kind: Kind::Exploration,
                from: 0,
            })
    })
}

/// Where a pattern finds the alternative it names.
#[derive(Clone, Copy)]
enum Names {
    /// In its capture: what was considered, what won't work.
    Captured,
    /// In the clause after its match: "instead of …", "ruled out …".
    After,
}

/// Words one of which a pattern needs, the pattern, where it names its alternative, and the
/// pattern built.
type Alternative = (&'static [&'static str], String, Names, OnceLock<Regex>);

/// The patterns of an alternative not taken, each with words it cannot match without (in
/// lower case, one of them): a pattern is built the first time a sentence has one of its words,
/// and a sentence without any is not searched.
static ALTERNATIVE: LazyLock<Vec<Alternative>> = LazyLock::new(|| {
    let alternatives: [(&'static [&'static str], &str, Names); 7] = [
        (&["over"], r"(?i)\bover\s+`([^`]{1,80})`", Names::Captured),
        (
            &["instead of", "rather than"],
            r"(?i)\b(?:instead of|rather than)\s+",
            Names::After,
        ),
        (
            &["considered"],
            r"(?i)\bconsidered\s+(.{3,80}?)\s+but\b",
            Names::Captured,
        ),
        (
            &["over"],
            r"(?i)\b(?:chose|chosen|picked|prefer|preferred|went with|go with|going with|use|using)\s+.{1,60}?\s+over\s+",
            Names::After,
        ),
        (
            &[
                "ruled out",
                "rejected",
                "dropped",
                "abandoned",
                "scrapped",
                "reverted",
            ],
            r"(?i)\b(?:ruled out|rejected|dropped|abandoned|scrapped|reverted)\s+(?:the\s+)?",
            Names::After,
        ),
        (
            &["work"],
            r"(?i)^(?:using\s+)?(.{3,60}?)\s+(?:won'?t|doesn'?t|didn'?t|can'?t|will not|does not) work\b",
            Names::Captured,
        ),
        (
            &["overkill", "worth", "too"],
            r"(?i)^(?:using\s+)?(.{3,60}?)\s+(?:is|would be) (?:overkill|not worth it|too \w+)\b",
            Names::Captured,
        ),
    ];
    alternatives
        .into_iter()
        .map(|(words, p, names)| (words, ascii_boundaries(p), names, OnceLock::new()))
        .collect()
});

/// The alternatives a sentence names as not taken ("X instead of Y", "rather than Y",
/// "considered Y but", "Y won't work").
pub fn alternatives(sentence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // As `(?i)` reads them: the long s is an s.
    let lower = sentence.to_lowercase().replace('ſ', "s");
    for (words, pattern, names, re) in ALTERNATIVE.iter() {
        if !words.iter().any(|w| lower.contains(w)) {
            continue;
        }
        let re = re.get_or_init(|| Regex::new(pattern).expect("alternative patterns compile"));
        for caps in re.captures_iter(sentence) {
            let found = match names {
                // A capture that parts a code span or a quotation names half of something.
                Names::Captured if !balanced(&caps[1]) => continue,
                Names::Captured => subject(&caps[1]),
                Names::After => clause(&sentence[caps.get(0).map_or(0, |m| m.end())..]),
            };
            let alt = unwrapped(found.trim())
                .trim_end_matches([',', ';', ':'])
                .trim();
            if named(alt) && !out.iter().any(|o| o == alt) {
                out.push(alt.to_owned());
            }
        }
    }
    out
}

/// The alternative that starts `text`: up to its first punctuation or linking word ("…, since",
/// " because", " which") outside a code span, brackets or quotes, so that "calling
/// `GetAgent()` directly" and "`s.Phase`" stay whole; a full stop ends it only before a space.
/// Past 80 characters, only a code span it starts with, or nothing.
fn clause(text: &str) -> &str {
    const LINKS: [&str; 10] = [
        " - ",
        " because",
        " since",
        " which",
        " so ",
        " as ",
        " but ",
        " and then",
        " to avoid",
        " to keep",
    ];
    let (mut code, mut quoted, mut depth) = (false, false, 0usize);
    let mut end = text.len();
    for (at, c) in text.char_indices() {
        match c {
            '`' => code = !code,
            _ if code => {}
            '"' => quoted = !quoted,
            _ if quoted => {}
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            ',' | ';' | ':' | '!' | '?' | '—' | '…' | ')' | ']' | '}' => {
                end = at;
                break;
            }
            '.' if text[at + 1..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace) =>
            {
                end = at;
                break;
            }
            ' ' if LINKS.iter().any(|l| {
                text.get(at..at + l.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(l))
            }) =>
            {
                end = at;
                break;
            }
            _ => {}
        }
    }
    let found = &text[..end];
    if found.chars().count() <= 80 {
        return found;
    }
    // Past the limit, a code span that starts it is named on its own.
    match text.strip_prefix('`').and_then(|t| t.find('`')) {
        Some(close) if text[..close + 2].chars().count() <= 80 => &text[..close + 2],
        _ => "",
    }
}

/// The thing a sentence says won't work or is overkill, without the words that lead into it
/// ("So", "Actually, on second thought,") or the clause it is the object of ("I'm realizing
/// that cherry-pick", not "A cache that expires"): nothing when only a pronoun or a noun after
/// a definite article is left ("So this", "The function"), which points back rather than
/// names an alternative ("A mutex" names one).
fn subject(found: &str) -> &str {
    static LEAD: LazyLock<Regex> = LazyLock::new(|| {
        let pattern = r"(?i)^(?:(?:so|also|actually|but|and|then|however|on second thought|for \w+)\b[,:]?\s+)+";
        Regex::new(&ascii_boundaries(pattern)).expect("the lead pattern compiles")
    });
    static REPORTED: LazyLock<Regex> = LazyLock::new(|| {
        let pattern = r"(?i)^.*\b(?:realiz\w*|realis\w*|think|thought|noticed?|notice|seems?|means|is|was|turns out|found)\s+that\s+";
        Regex::new(&ascii_boundaries(pattern)).expect("the reported pattern compiles")
    });
    let found = REPORTED.find(found).map_or(found, |m| &found[m.end()..]);
    let found = LEAD.find(found).map_or(found, |m| &found[m.end()..]);
    let words: Vec<&str> = found.split_whitespace().collect();
    let bare = words.len() <= 2
        && words.first().is_some_and(|w| {
            ["the", "this", "that", "these", "those", "our", "my", "its"]
                .contains(&w.to_ascii_lowercase().as_str())
        });
    // "The one thing that still doesn't work": the verb is the clause's, and the subject is
    // cut inside it.
    let cut = words.last().is_some_and(|w| {
        [
            "that", "which", "who", "still", "also", "just", "really", "even", "never",
        ]
        .contains(&w.to_ascii_lowercase().as_str())
    });
    if bare || cut { "" } else { found }
}

/// Whether `text` closes every code span and quotation it opens.
fn balanced(text: &str) -> bool {
    text.matches('`').count().is_multiple_of(2) && text.matches('"').count().is_multiple_of(2)
}

/// `alt` without the backticks or quotes around it when it is one code span or quotation
/// ("`enabled`"), and as it is when they belong to a span inside it.
fn unwrapped(alt: &str) -> &str {
    for mark in ['`', '"', '\''] {
        if let Some(inner) = (alt.strip_prefix(mark)).and_then(|a| a.strip_suffix(mark))
            && !inner.contains(mark)
        {
            return inner;
        }
    }
    alt
}

/// Whether `alt` names something: three characters at least, starting as a word, a code span,
/// a quotation or a path does, and not a pronoun ("this", "that").
fn named(alt: &str) -> bool {
    let starts = alt
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || "`\"'./_$~@".contains(c));
    let generic = matches!(
        alt.to_ascii_lowercase().as_str(),
        "this" | "that" | "it" | "them" | "these" | "those" | "one" | "any" | "just" | "still"
    );
    starts && alt.chars().count() >= 3 && !generic
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::cues;
    use crate::classify::patterns::{ascii_folded, assert_built_of, load, load_groups, tag};
    use regex_automata::util::look::Look;

    /// Each set `build.rs` compiled is the automaton its patterns compile to here, state for
    /// state; and a table that does not hold together, or holds what the compiler does not
    /// make, is no automaton.
    #[test]
    fn the_sets_compiled_with_the_binary_are_those_of_their_patterns() {
        for (name, patterns) in cues::prebuilt() {
            let set: &Set = match name {
                "keep" => &KEEP,
                "not_reasoning" => &DROP,
                "hedge" => &HEDGES,
                "narration" => &NARRATES,
                "step" => &STEPS,
                "reasoned" => &REASONS,
                "lead_in" => &LEADS_IN,
                "consequence" => &CONSEQUENCE,
                "interjection" => &INTERJECTION,
                "choice" => &CHOICE,
                "exploring" => &EXPLORES,
                other => panic!("no set reads the table {other}"),
            };
            assert_built_of(set, &patterns, ascii_folded(), name);
        }
        let groups = include_bytes!(concat!(env!("OUT_DIR"), "/keep.nfa"));
        assert!(load_groups(groups).is_some_and(|g| g.len() > 1));
        assert!(
            load_groups(&groups[..groups.len() - 4]).is_none(),
            "cut short"
        );
        let mut more = groups.to_vec();
        more.extend(0u32.to_le_bytes());
        assert!(load_groups(&more).is_none(), "words after the tables");
        let mut fewer = groups.to_vec();
        fewer[..4].copy_from_slice(&1u32.to_le_bytes());
        assert!(load_groups(&fewer).is_none(), "fewer tables than written");
        let step = include_bytes!(concat!(env!("OUT_DIR"), "/step.nfa"));
        assert_eq!(
            step[..4],
            1u32.to_le_bytes(),
            "a set of few patterns is one automaton"
        );
        let table = &step[8..];
        assert!(load(table).is_some());
        assert!(load(&table[..table.len() - 4]).is_none(), "cut short");
        assert!(load(&table[..table.len() - 1]).is_none(), "not in words");
        let mut past = table.to_vec();
        past[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(load(&past).is_none(), "a start past the states");
        let mut more = table.to_vec();
        more.extend(0u32.to_le_bytes());
        assert!(load(&more).is_none(), "words after the states");

        // One pattern: state 0 as given, leading to state 1, its match.
        let one = |first: &[u32]| {
            let mut words = vec![2, 1, 0, 0, 0];
            words.extend(first);
            words.extend([tag::MATCH, 0]);
            load(
                &words
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect::<Vec<_>>(),
            )
        };
        let span = |a: u8, b: u8| u32::from(a) | u32::from(b) << 8;
        assert!(one(&[tag::RANGE, span(b'a', b'z'), 1]).is_some());
        assert!(
            one(&[tag::RANGE, span(b'z', b'a'), 1]).is_none(),
            "a range backwards"
        );
        assert!(
            one(&[tag::RANGE, 1 << 16, 1]).is_none(),
            "a span past 16 bits"
        );
        let sparse = |a: u8, b: u8| [tag::SPARSE, 2, span(a, a), 1, span(b, b), 1];
        assert!(one(&sparse(b'a', b'b')).is_some());
        assert!(one(&sparse(b'b', b'a')).is_none(), "ranges out of order");
        assert!(one(&sparse(b'a', b'a')).is_none(), "ranges that overlap");
        assert!(
            one(&[tag::SPARSE, 1, span(b'a', b'a'), 1]).is_none(),
            "one range"
        );
        assert!(one(&[tag::UNION, 2, 1, 1]).is_some());
        assert!(
            one(&[tag::UNION, 1, 0]).is_none(),
            "a union of itself alone"
        );
        assert!(one(&[tag::UNION, 0]).is_none(), "a union of nothing");
        assert!(one(&[tag::LOOK, Look::WordAscii.as_repr(), 1]).is_some());
        let unicode = Look::WordUnicode.as_repr();
        assert!(one(&[tag::LOOK, unicode, 1]).is_none(), "a Unicode look");
    }

    #[test]
    fn a_reason_says_why_and_is_not_the_next_step() {
        for why in [
            "They're in the same package, so the names conflict.",
            "Right, they're in the same package so the names conflict.",
            "The re-exports exist to avoid shadowing the settings package.",
            "The real issue is that the hook runs before the branch exists.",
        ] {
            assert!(says_why(why, Form::Prose), "{why}");
        }
        for not in [
            "Now revert `setup.go` back to the unqualified names.",
            "Now I understand the structure.",
            "Let me revert it, since it broke the build.",
            "So the transcript path is under the projects folder.",
            "Why does the build fail here?",
            "The fix, in short, is this:",
            "✅ Tests pass, so it is done.",
            "Keep the prefix, so the names stay apart.",
        ] {
            let form = if not.starts_with("Keep") {
                Form::Item
            } else {
                Form::Prose
            };
            assert!(!says_why(not, form), "{not}");
        }
        assert!(symbol('✅') && symbol('→') && !symbol('設') && !symbol('é'));
    }

    fn kind(s: &str) -> Option<Kind> {
        kind_of(s, Form::Prose).map(|v| v.kind)
    }

    fn keeps(s: &str) -> bool {
        classify(s, Form::Prose).is_some()
    }

    /// Reasoning said as a decision, or by what the choice does, in words the sessions the
    /// rules were written on seldom use.
    #[test]
    fn reasoning_in_other_words_is_kept() {
        for (s, k) in [
            (
                "I decided against retrying on 429 because the budget is per day.",
                Kind::Rejection,
            ),
            (
                "Chose not to add a dependency on tokio; the tool does no network I/O.",
                Kind::Rejection,
            ),
            (
                "Rejected the background daemon: users complained about stray processes.",
                Kind::Rejection,
            ),
            (
                "I'm not using a regex here because the input is a fixed prefix.",
                Kind::Rejection,
            ),
            (
                "Using `BTreeMap` keeps the output sorted, which makes the snapshots stable.",
                Kind::Decision,
            ),
            (
                "Don't cache the config: it can change between hooks.",
                Kind::Decision,
            ),
            (
                "The reason for the two-pass design is that the first pass finds the roots.",
                Kind::Decision,
            ),
            (
                "It's important that the summary is redacted before it is cut.",
                Kind::Decision,
            ),
            (
                "We can't use mmap on network drives, so the reader falls back to read().",
                Kind::Decision,
            ),
            (
                "Memoizing with `useMemo` avoids recomputing the sorted list on every render.",
                Kind::Decision,
            ),
            (
                "Timestamps are stored as integers rather than strings, so comparisons are exact.",
                Kind::Decision,
            ),
            (
                "Rather than patching every caller, I'll enforce the invariant in the constructor.",
                Kind::Decision,
            ),
            (
                "I'm keeping the old endpoint for now because the mobile app still calls it.",
                Kind::Decision,
            ),
            (
                "This can't be a unique index because soft-deleted rows keep their email.",
                Kind::Decision,
            ),
            (
                "I considered a trie but a sorted vector is faster for this size.",
                Kind::Decision,
            ),
            (
                "We shouldn't catch the exception here: the caller needs it to roll back.",
                Kind::Rejection,
            ),
            (
                "Debouncing at 300ms is a compromise: shorter fires too often.",
                Kind::Tradeoff,
            ),
        ] {
            assert_eq!(kind(s), Some(k), "{s}");
        }
        // What code does, or what should not happen, is no choice.
        for s in [
            "Looking at the CI configuration, it uses `--new-from-patch` which means it only checks new issues.",
            "We shouldn't be getting a conflict error because both sessions share the branch.",
            "If `messages` is a string instead of an array, the unmarshal fails, so it returns false.",
        ] {
            assert!(
                !matches!(kind(s), Some(Kind::Decision | Kind::Rejection)),
                "{s}"
            );
        }
        // What someone else chose is no alternative the session ruled out.
        assert_ne!(
            kind("Deleting them is safe: if the user committed, they chose not to keep it."),
            Some(Kind::Rejection)
        );
    }

    #[test]
    fn recognises_each_kind() {
        assert_eq!(
            kind("I'll go with the streaming parser because memory must stay bounded."),
            Some(Kind::Decision)
        );
        assert_eq!(
            kind("That won't work because gix has no push support."),
            Some(Kind::Rejection)
        );
        assert_eq!(
            kind("This is slower but keeps memory bounded, which is acceptable here."),
            Some(Kind::Tradeoff)
        );
        assert_eq!(
            kind("The root cause is that the hook runs before the index is written."),
            Some(Kind::Discovery)
        );
        // What the code rejects is no alternative ruled out; what the session rejected is.
        assert_ne!(
            kind("Invalid IDs will be rejected when loading persisted data."),
            Some(Kind::Rejection)
        );
        assert_ne!(
            kind("The suffix changes because the previous work stream was abandoned."),
            Some(Kind::Rejection)
        );
        assert_eq!(
            kind("We rejected the lru crate: entries must expire by time."),
            Some(Kind::Rejection)
        );
        assert_eq!(
            kind("The retry loop was abandoned because it hid the real error."),
            Some(Kind::Rejection)
        );
        // What would not do is an option ruled out; what does not do, as the code stands, is a
        // finding, unless it is said of a fix or an approach tried.
        for (s, k) in [
            (
                "An environment variable wouldn't work since the binary is already running.",
                Kind::Rejection,
            ),
            (
                "My first fix doesn't help because both sessions share the worktree.",
                Kind::Rejection,
            ),
            (
                "Doesn't help the other cases, and adds a flag to every call.",
                Kind::Rejection,
            ),
            (
                "Polling will get too expensive once there are hundreds of sessions.",
                Kind::Rejection,
            ),
            (
                "The reader slices by line, which doesn't work for pretty-printed JSON.",
                Kind::Discovery,
            ),
            (
                "If someone renames the default branch, this won't work correctly.",
                Kind::Discovery,
            ),
            (
                "The current design doesn't scale past one writer per repository.",
                Kind::Discovery,
            ),
            (
                "The check is too strict and counts ignored files as changes.",
                Kind::Discovery,
            ),
            (
                "It doesn't work on Windows because the separator differs.",
                Kind::Discovery,
            ),
            // A choice that says why the other option does not do stays a choice.
            (
                "Use a cursor instead of re-reading the file, since re-reading doesn't scale.",
                Kind::Decision,
            ),
            (
                "Don't fix the flaky test here: it hides the race we are chasing.",
                Kind::Decision,
            ),
        ] {
            assert_eq!(kind(s), Some(k), "{s}");
        }
        // A check that misses something is a gap found, not an alternative ruled out.
        assert_eq!(
            kind("Callers need a new case in their switch, but the compiler won't catch that."),
            Some(Kind::Discovery)
        );
        assert_eq!(
            kind("Let me check how the cursor is stored."),
            Some(Kind::Exploration)
        );
        assert_eq!(kind("The function returns a vector of events."), None);
        assert_eq!(
            kind("feat: use the streaming parser instead of the DOM"),
            None
        );
    }

    #[test]
    fn narration_lead_ins_status_and_questions_are_not_reasoning() {
        for s in [
            "Now I need to add the `settings` import.",
            "I need to add the migration check after the session is loaded.",
            "Recommendation:",
            "The fix would be to:",
            "I think the best approach is to either:",
            "Why the migration doesn't help:",
            "The fix is complete.",
            "gofmt didn't help with the linter issue.",
            "Should we go with the cache instead of the map, since it is faster?",
            "The user chose option 1, the TTL map instead of the LRU because of expiry.",
            "❌ NOT tested: the cache won't work on Windows",
            "Maybe the fix is to reset the cursor instead of re-reading the file.",
            "The linter wants us to use `slices.Sort` instead of `sort.Slice`.",
            "The gocritic linter wants me to use `else if` instead of `else { if`.",
            "ESLint wants me to use `unknown` instead of `any` here.",
            "Ruff suggests using a list comprehension instead of the loop.",
            "I also see there's a new diagnostic about using `interface{}` instead of `any` here.",
            "Need to use `exec.CommandContext` instead of `exec.Command` in the test.",
            "The issue is that my refactoring accidentally removed the contribution calculation.",
            "The message says \"always use go run\", which suggests this was intentional instead of a slip.",
            "The issue is that I renamed `describe` instead of `Describe` in session.go.",
            "They want to just fix the bug simply, without over-engineering it.",
            "Got it — I'll skip the commit and write the plan to a file instead.",
            "But I'm wondering if that's over-engineering for a rare edge case.",
            "Now step 4: update telemetry.go to use the enabled parameter instead of env var.",
            "The PR description explains the trade-off in detail.",
            "The reviewer said it's better to keep the old API.",
            "Wait, we should use the TTL map instead because entries expire by time.",
            "But wait - the cache is keyed by path instead of by id, so renames miss it.",
        ] {
            assert!(!keeps(s), "{s}");
        }
        // A relative clause is no inference, a first-person problem no slip.
        assert!(keeps(
            "I'll use a sentinel that indicates a miss instead of `None`, because `None` is a valid value."
        ));
        assert!(keeps(
            "The problem is that I can't hold the lock across the await, so I'll clone it instead."
        ));
        // A trade-off stated, not one mentioned.
        assert!(keeps(
            "The tradeoff is between a simpler API and fewer allocations."
        ));
        assert!(keeps("Seems like a reasonable tradeoff."));
        // "Wait" is a second thought, not the verb.
        assert!(keeps(
            "I'll use a channel instead of a mutex, because writers should not wait."
        ));
        // A choice with its reason, a lead-in that states its content, are kept.
        assert!(keeps(
            "I'll keep the cursor instead of re-reading the file, because the file only grows."
        ));
        assert!(keeps(
            "The simplest fix is to add a nolint comment, since the pattern is deliberate:"
        ));
        // A list item is a step of a plan unless it says why.
        let item = "Use the writer instead of `os.Stdout`";
        assert!(classify(item, Form::Item).is_none());
        assert!(
            classify(
                &format!("{item}, because tests capture the writer"),
                Form::Item
            )
            .is_some()
        );
        assert!(
            classify(
                "The fix is to use the writer, since tests capture it.",
                Form::Heading
            )
            .is_none()
        );
    }

    #[test]
    fn a_long_sentence_is_told_from_its_choice() {
        let s = "I could use a JSON file for the cache, and that was my first idea given how \
                 little data there is and how rarely it is read, but instead I'll go with a TTL \
                 map because entries expire.";
        assert!(s.chars().count() > SUMMARY_MAX);
        let v = classify(s, Form::Prose).expect("a decision");
        assert_eq!(v.kind, Kind::Decision);
        assert!(
            s[v.from..].starts_with("but instead I'll go with a TTL map"),
            "{}",
            &s[v.from..]
        );
        let short = "I'll go with a TTL map because entries expire.";
        assert_eq!(classify(short, Form::Prose).map(|v| v.from), Some(0));
    }

    #[test]
    fn pulls_out_rejected_alternatives() {
        assert_eq!(
            alternatives("Use a cursor instead of re-reading the file, since it is cheaper."),
            ["re-reading the file"]
        );
        assert_eq!(
            alternatives("We considered a SQLite cache but it needs a daemon."),
            ["a SQLite cache"]
        );
        assert_eq!(
            alternatives("A libgit2 binding is overkill for three commands."),
            ["A libgit2 binding"]
        );
        assert!(alternatives("Do it rather than that.").is_empty());
        assert_eq!(
            alternatives("I chose a TTL map over an LRU because entries expire."),
            ["an LRU"]
        );
    }

    #[test]
    fn narration_is_told_from_a_step_that_says_how() {
        for narrates_only in [
            "Let me fix that.",
            "Now I need to update the assertions in the test.",
            "Let me check what we'd need:",
            "Good!",
            "Let me look at how the hooks are set up in tests:",
        ] {
            assert!(narrates(narrates_only), "{narrates_only}");
        }
        for says_more in [
            "I can fix this by iterating over the array directly instead of over its length.",
            "I'll need to implement my own version or duplicate it.",
            "I'll split it into smaller helpers to reduce its complexity.",
            "I need to add exclusions for these paths so only user changes are counted.",
            "Let me keep the cursor because the file only grows.",
            "The issue is that the hook runs before stdin is parsed.",
            "I need to fix this by having the check read the interaction time from the state file and stop refreshing it on commits.",
        ] {
            assert!(!narrates(says_more), "{says_more}");
        }
    }

    #[test]
    fn an_alternative_is_not_cut_inside_its_code() {
        for (sentence, alt) in [
            (
                "Use `state.Root` instead of calling `FindRoot()` — it avoids a subprocess.",
                "calling `FindRoot()`",
            ),
            (
                "I should use the store's getter instead of accessing `s.store` directly.",
                "accessing `s.store` directly",
            ),
            (
                "Check `!id.IsEmpty()` instead of `id != \"\"`.",
                "id != \"\"",
            ),
            (
                "It goes into the typed struct rather than a `map[string]json.RawMessage`.",
                "a `map[string]json.RawMessage`",
            ),
            (
                "Keep the constants in `agent` rather than in each sub-package (claude/gemini) because the caller is there.",
                "in each sub-package (claude/gemini)",
            ),
            (
                "Upgrade to v1.2 instead of pinning v1.1.3 for now.",
                "pinning v1.1.3 for now",
            ),
            (
                "A custom `UnmarshalJSON` is overkill here.",
                "A custom `UnmarshalJSON`",
            ),
            ("Use `enabled` over `disabled`.", "disabled"),
        ] {
            assert_eq!(alternatives(sentence), [alt], "{sentence}");
        }
    }

    #[test]
    fn an_alternative_names_something() {
        for (sentence, alt) in [
            ("Also: `flock` doesn't work on NFS.", Some("flock")),
            (
                "Actually, on second thought, debug logging with println is overkill.",
                Some("debug logging with println"),
            ),
            (
                "I'm realizing that cherry-pick won't work here.",
                Some("cherry-pick"),
            ),
            (
                "A cache that expires won't work here.",
                Some("A cache that expires"),
            ),
            (
                "A mutex won't work here because it is per process.",
                Some("A mutex"),
            ),
            ("An LRU is overkill for four entries.", Some("An LRU")),
            ("We considered an LRU but entries expire.", Some("an LRU")),
            ("I considered `foo but bar` but it was slow.", None),
            ("The one thing that still doesn't work.", None),
            ("So this won't work.", None),
            ("The function won't work for symlinks.", None),
            ("But the issue is that this won't work.", None),
            ("The problem is that <= 2 won't work.", None),
            ("Going with the map over 4 entries, which is plenty.", None),
        ] {
            assert_eq!(
                alternatives(sentence).first().map(String::as_str),
                alt,
                "{sentence}"
            );
        }
    }
}
