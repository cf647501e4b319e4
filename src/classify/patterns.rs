//! What the classifier's and the redactor's pattern sets share.

use std::sync::Mutex;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, Builder, NFA, Transition, WhichCaptures};
use regex_automata::util::look::Look;
use regex_automata::util::primitives::StateID;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet};

/// Patterns matched at once, as `regex::RegexSet` does, but built as forward lazy DFAs and
/// nothing more: no literal prefilter (working one out for a hundred case-insensitive patterns
/// took most of the 4.6 ms that building the largest set took in every process that used it)
/// and no reverse automaton, which only finds where a match starts — a set tells which
/// patterns match, not where. The texts these sets look at are sentences and tool outputs,
/// where a prefilter saves little.
///
/// A set of more than [`GROUP`] patterns is split into automata of at most that many, each
/// run over the text in turn. A lazy DFA makes its states as the text leads it to them, and
/// nearly all of its time on the text a process reads goes there, not to matching: one state
/// for each set of partial matches met together, so that one automaton of eighty patterns
/// meets far more of them than four of twenty (docs/performance.md).
///
/// A search cannot fail: nothing makes the DFA quit (no Unicode word boundary; the sets use
/// ASCII ones) or give up (it clears its cache as often as it must). Were it to fail all the
/// same, a set says that every pattern of that automaton may match, which costs time, never a
/// secret kept.
pub(crate) struct Set {
    groups: Vec<Group>,
}

/// One automaton of a [`Set`]: its patterns are the set's from `first` on.
struct Group {
    dfa: DFA,
    cache: Mutex<Cache>,
    first: usize,
}

/// The most patterns one automaton of a [`Set`] holds.
pub(crate) const GROUP: usize = 20;

impl Set {
    /// The set of `patterns` under `syntax` (Unicode or not, case or not), with `cache` bytes
    /// for its lazy DFAs' states, shared out among its automata.
    pub(crate) fn new<S: AsRef<str>>(
        patterns: impl IntoIterator<Item = S>,
        syntax: syntax::Config,
        cache: usize,
    ) -> Set {
        let patterns: Vec<S> = patterns.into_iter().collect();
        Set::of(compile_groups(&patterns, syntax), cache)
    }

    /// The set that `build.rs` compiled into `table` ([`load_groups`]), with `cache` bytes
    /// for its lazy DFAs' states, shared out among its automata: the automata [`Set::new`]
    /// makes of the same patterns under the syntax `build.rs` compiles them with
    /// ([`ascii_folded`] or [`ascii`]), without compiling them (what it saves is in
    /// `docs/performance.md`).
    pub(crate) fn prebuilt(table: &[u8], cache: usize) -> Set {
        Set::of(
            load_groups(table).expect("the table build.rs wrote is read back"),
            cache,
        )
    }

    fn of(nfas: Vec<NFA>, cache: usize) -> Set {
        let share = cache / nfas.len().max(1);
        let mut first = 0;
        let groups = nfas
            .into_iter()
            .map(|nfa| {
                let config = DFA::config().match_kind(MatchKind::All);
                // Never below what the automaton needs to build at all.
                let least = config.get_minimum_cache_capacity(&nfa).unwrap_or(0);
                let dfa = DFA::builder()
                    .configure(config.cache_capacity(share.max(least)))
                    .build_from_nfa(nfa)
                    .expect("the lazy DFA of a set builds");
                let cache = Mutex::new(dfa.create_cache());
                let group = Group { dfa, cache, first };
                first += group.dfa.pattern_len();
                group
            })
            .collect();
        Set { groups }
    }

    /// The automata the set runs, to compare how they were made.
    #[cfg(test)]
    pub(crate) fn nfas(&self) -> Vec<&NFA> {
        self.groups.iter().map(|g| g.dfa.get_nfa()).collect()
    }

    pub(crate) fn is_match(&self, haystack: &[u8]) -> bool {
        self.groups.iter().any(|group| {
            let mut cache = group.cache.lock().unwrap_or_else(|e| e.into_inner());
            group
                .dfa
                .try_search_fwd(&mut cache, &Input::new(haystack).earliest(true))
                .map_or(true, |found| found.is_some())
        })
    }

    /// The patterns that match somewhere in `haystack`, by their position in the set.
    pub(crate) fn matches(&self, haystack: &[u8]) -> impl Iterator<Item = usize> {
        let mut found = Vec::new();
        for group in &self.groups {
            let patterns = group.dfa.pattern_len();
            let mut set = PatternSet::new(patterns);
            let mut cache = group.cache.lock().unwrap_or_else(|e| e.into_inner());
            match group.dfa.try_which_overlapping_matches(
                &mut cache,
                &Input::new(haystack),
                &mut set,
            ) {
                Ok(()) => found.extend(set.iter().map(|p| group.first + p.as_usize())),
                Err(_) => found.extend(group.first..group.first + patterns),
            }
        }
        found.into_iter()
    }
}

/// Word boundaries that look at ASCII only. A Unicode `\b` makes the regex engine fall back
/// from its lazy DFA to a much slower NFA whenever the text holds a non-ASCII character, and
/// the patterns' words are all ASCII anyway.
pub(crate) fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// The syntax of the classifier's sets: case-insensitive, matched against the UTF-8 bytes of
/// a sentence with Unicode off: `\b`, `\w`, `\s` and case folding look at ASCII only (the
/// patterns' words are all ASCII), `.` is any byte but a newline. That makes the sets quick to
/// build and keeps the engine on its lazy DFA for non-ASCII text.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn ascii_folded() -> syntax::Config {
    ascii().case_insensitive(true)
}

/// Patterns matched against the UTF-8 bytes of a text with Unicode off: the syntax of the
/// tables `build.rs` writes ([`ascii_folded`] for the classifier's; as written for the
/// redaction rules', whose patterns say where case does not matter). The binary reads the
/// tables; it compiles nothing under these but in its tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn ascii() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

/// The Thompson NFA of `patterns` under `syntax`, as a set matches them: no capture groups.
pub(crate) fn compile<S: AsRef<str>>(patterns: &[S], syntax: syntax::Config) -> NFA {
    thompson::Compiler::new()
        .syntax(syntax)
        .configure(
            thompson::Config::new()
                .which_captures(WhichCaptures::None)
                .utf8(syntax.get_utf8())
                .nfa_size_limit(Some(10 << 20)),
        )
        .build_many(patterns)
        .expect("the patterns of a set compile")
}

/// The automata of a [`Set`] of `patterns`: [`compile`]d in consecutive groups of at most
/// [`GROUP`], whose sizes differ by one at most; none for no patterns.
pub(crate) fn compile_groups<S: AsRef<str>>(patterns: &[S], syntax: syntax::Config) -> Vec<NFA> {
    let groups = patterns.len().div_ceil(GROUP);
    let mut rest = patterns;
    (0..groups)
        .map(|g| {
            // The first `len % groups` groups take one pattern more than the others.
            let size = rest.len().div_ceil(groups - g);
            let (group, after) = rest.split_at(size);
            rest = after;
            compile(group, syntax)
        })
        .collect()
}

/// That `set` runs the automata [`compile_groups`] makes of `patterns` under `syntax`, state
/// for state ([`shape`]), each of at most [`GROUP`] patterns, and every pattern in one of them.
#[cfg(test)]
pub(crate) fn assert_built_of<S: AsRef<str>>(
    set: &Set,
    patterns: &[S],
    syntax: syntax::Config,
    name: &str,
) {
    let nfas = set.nfas();
    let compiled = compile_groups(patterns, syntax);
    assert_eq!(nfas.len(), compiled.len(), "{name}");
    let held: usize = nfas.iter().map(|nfa| nfa.pattern_len()).sum();
    assert_eq!(held, patterns.len(), "{name}");
    for (nfa, compiled) in nfas.into_iter().zip(&compiled) {
        assert!(nfa.pattern_len() <= GROUP, "{name}");
        assert_eq!(shape(nfa), shape(compiled), "{name}");
    }
}

#[cfg(test)]
/// All that tells two NFAs apart: their states, starts and classes (their `Debug`), and
/// what they say of themselves.
pub(crate) fn shape(nfa: &NFA) -> String {
    let starts: Vec<_> = nfa.patterns().map(|p| nfa.start_pattern(p)).collect();
    format!(
        "{nfa:?} utf8 {} reverse {} empty {} looks {:?} prefix looks {:?} {:?} starts {starts:?}",
        nfa.is_utf8(),
        nfa.is_reverse(),
        nfa.has_empty(),
        nfa.look_set_any(),
        nfa.look_set_prefix_any(),
        nfa.look_matcher(),
    )
}

/// What a table of `build.rs` says a state is: the first of its words. Public to the crate
/// because `build.rs` includes this file to write the tables.
pub(crate) mod tag {
    pub(crate) const RANGE: u32 = 0;
    pub(crate) const SPARSE: u32 = 1;
    pub(crate) const LOOK: u32 = 2;
    pub(crate) const UNION: u32 = 3;
    pub(crate) const FAIL: u32 = 4;
    pub(crate) const MATCH: u32 = 5;
}

/// The NFA that `build.rs` wrote as `table`, one automaton of a set ([`load_groups`]):
/// little-endian 32-bit words, the number of states and of patterns, the anchored and
/// unanchored start states, each pattern's start state, then each state in order, a [`tag`]
/// and its fields: a byte range as `start | end << 8` and the next state; a sparse state's
/// count and its ranges and next states; a look-around's `Look::as_repr` and next state; a
/// union's count and its alternates; a match's pattern.
/// Rebuilt state by state with thompson's `Builder`, in the order of their ids, which the
/// builder keeps (it only drops empty states, and an NFA has none), so the result is the NFA
/// the table was written from (the tests compare the two). `None` when the table does not
/// hold together, or holds a state the compiler does not make of a set's patterns with
/// Unicode off ([`ascii`]): a union of fewer than two alternates (the builder would drop it,
/// and one that points at itself would make it loop), a sparse state of fewer than two ranges or of
/// ranges out of order, a range that ends before it starts, a Unicode look-around.
pub(crate) fn load(table: &[u8]) -> Option<NFA> {
    if !table.len().is_multiple_of(4) {
        return None;
    }
    let mut words = table
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let mut next = || words.next();
    let (states, patterns) = (next()? as usize, next()? as usize);
    let id = |w: u32| {
        StateID::new(w as usize)
            .ok()
            .filter(|s| s.as_usize() < states)
    };
    let (anchored, unanchored) = (id(next()?)?, id(next()?)?);
    let starts: Vec<StateID> = (0..patterns)
        .map(|_| next().and_then(id))
        .collect::<Option<_>>()?;
    let range = |span: u32, to: u32| {
        let (start, end) = (span & 0xff, span >> 8);
        if start > end || end > 0xff {
            return None;
        }
        Some(Transition {
            start: start as u8,
            end: end as u8,
            next: id(to)?,
        })
    };
    let mut builder = Builder::new();
    builder.set_utf8(false);
    for _ in 0..states {
        let added = match next()? {
            tag::RANGE => builder.add_range(range(next()?, next()?)?),
            tag::SPARSE => {
                let count = next()?;
                let ranges: Vec<Transition> = (0..count)
                    .map(|_| range(next()?, next()?))
                    .collect::<Option<_>>()?;
                if ranges.len() < 2 || ranges.windows(2).any(|w| w[0].end >= w[1].start) {
                    return None;
                }
                builder.add_sparse(ranges)
            }
            tag::LOOK => {
                let look = Look::from_repr(next()?).filter(|look| !unicode(*look))?;
                builder.add_look(id(next()?)?, look)
            }
            tag::UNION => {
                let count = next()?;
                let alternates: Vec<StateID> = (0..count)
                    .map(|_| next().and_then(id))
                    .collect::<Option<_>>()?;
                if alternates.len() < 2 {
                    return None;
                }
                builder.add_union(alternates)
            }
            tag::FAIL => builder.add_fail(),
            tag::MATCH => {
                // Patterns are numbered in the order their match states come.
                let pattern = next()? as usize;
                if pattern != builder.pattern_len() || pattern >= patterns {
                    return None;
                }
                builder.start_pattern().ok()?;
                let added = builder.add_match();
                builder.finish_pattern(starts[pattern]).ok()?;
                added
            }
            _ => return None,
        };
        added.ok()?;
    }
    if next().is_some() || builder.pattern_len() != patterns {
        return None;
    }
    builder.build(anchored, unanchored).ok()
}

/// The automata that `build.rs` wrote as `table`, as [`compile_groups`] makes them: the
/// number of automata, then for each the length of its table in words and the table
/// ([`load`]). `None` when one does not hold together, or words are left over.
pub(crate) fn load_groups(table: &[u8]) -> Option<Vec<NFA>> {
    let word = |at: usize| {
        let w = table.get(at * 4..at * 4 + 4)?;
        Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    let count = word(0)?;
    let mut at = 1;
    let mut nfas = Vec::new();
    for _ in 0..count {
        let len = word(at)?;
        let end = (at + 1).checked_add(len)?;
        nfas.push(load(table.get((at + 1) * 4..end.checked_mul(4)?)?)?);
        at = end;
    }
    (at * 4 == table.len() && !nfas.is_empty()).then_some(nfas)
}

/// Whether `look` asks what Unicode calls a word: never in a set compiled with Unicode off
/// ([`ascii`]), and what the lazy DFA cannot run.
fn unicode(look: Look) -> bool {
    matches!(
        look,
        Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode
    )
}

/// `pattern` with every counted repetition made open: `{n,m}`, `{n,}` and `{n}` become `+`
/// (`*` when n is 0). What a pattern matches only grows, so the set of loosened rules finds
/// every text a rule would; and it builds several times faster (`{36,255}` is 255 copies of
/// a class), which every process that uses them pays once.
pub(crate) fn loosened(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let counted = after
            .find('}')
            .map(|close| &after[..close])
            .filter(|inner| {
                !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == ',')
            });
        match counted {
            Some(inner) => {
                let at_least_one = inner
                    .split(',')
                    .next()
                    .is_some_and(|n| n.parse::<u32>().unwrap_or(0) > 0);
                out.push(if at_least_one { '+' } else { '*' });
                rest = &after[inner.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_of_many_patterns_tells_each_by_its_place_in_the_set() {
        let patterns: Vec<String> = (0..2 * GROUP + 5).map(|i| format!(r"\bw{i}\b")).collect();
        let set = Set::new(&patterns, ascii(), 1 << 20);
        assert_eq!(set.nfas().len(), 3);
        let last = patterns.len() - 1;
        let found: Vec<usize> = set
            .matches(format!("w3, w21 and w{last}").as_bytes())
            .collect();
        assert_eq!(found, [3, 21, last]);
        assert!(set.is_match(format!("only w{last}").as_bytes()));
        assert!(!set.is_match(b"w1000 and nothing else"));
        assert_eq!(set.matches(b"w").count(), 0);
        let sizes = |n: usize| -> Vec<usize> {
            let patterns: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
            let nfas = compile_groups(&patterns, ascii());
            nfas.iter().map(|nfa| nfa.pattern_len()).collect()
        };
        assert_eq!(sizes(GROUP), [GROUP]);
        assert_eq!(sizes(GROUP + 1), [11, 10]);
        assert_eq!(sizes(3 * GROUP + 1), [16, 15, 15, 15]);
        assert!(sizes(0).is_empty());
        assert!(!Set::new(Vec::<String>::new(), ascii(), 1 << 20).is_match(b"w1"));
    }

    #[test]
    fn loosening_opens_counted_repetitions_only() {
        assert_eq!(loosened(r"a[0-9]{16}\b"), r"a[0-9]+\b");
        assert_eq!(loosened(r"x{0,20}?y{36,255}z{8,}"), r"x*?y+z+");
        assert_eq!(loosened(r"\{not{a,count}"), r"\{not{a,count}");
    }
}
