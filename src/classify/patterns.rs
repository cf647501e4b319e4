//! What the classifier's and the redactor's pattern sets share.

use std::sync::Mutex;

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet};

/// Patterns matched at once, as `regex::RegexSet` does, but built as one forward lazy DFA and
/// nothing more: no literal prefilter (working one out for a hundred case-insensitive patterns
/// took most of the 4.6 ms that building the largest set took in every process that used it)
/// and no reverse automaton, which only finds where a match starts — a set tells which
/// patterns match, not where. The texts these sets look at are sentences and tool outputs,
/// where a prefilter saves little.
///
/// A search cannot fail: nothing makes the DFA quit (no Unicode word boundary; the sets use
/// ASCII ones) or give up (it clears its cache as often as it must). Were it to fail all the
/// same, a set says that every pattern may match, which costs time, never a secret kept.
pub(crate) struct Set {
    dfa: DFA,
    cache: Mutex<Cache>,
}

impl Set {
    /// The set of `patterns` under `syntax` (Unicode or not, case or not), with `cache` bytes
    /// for the lazy DFA's states.
    pub(crate) fn new<S: AsRef<str>>(
        patterns: impl IntoIterator<Item = S>,
        syntax: syntax::Config,
        cache: usize,
    ) -> Set {
        let patterns: Vec<S> = patterns.into_iter().collect();
        let nfa = thompson::Compiler::new()
            .syntax(syntax)
            .configure(
                thompson::Config::new()
                    .which_captures(WhichCaptures::None)
                    .utf8(syntax.get_utf8())
                    .nfa_size_limit(Some(10 << 20)),
            )
            .build_many(&patterns)
            .expect("the patterns of a set compile");
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::All)
                    .cache_capacity(cache),
            )
            .build_from_nfa(nfa)
            .expect("the lazy DFA of a set builds");
        let cache = Mutex::new(dfa.create_cache());
        Set { dfa, cache }
    }

    pub(crate) fn is_match(&self, haystack: &[u8]) -> bool {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        self.dfa
            .try_search_fwd(&mut cache, &Input::new(haystack).earliest(true))
            .map_or(true, |found| found.is_some())
    }

    /// The patterns that match somewhere in `haystack`, by their position in the set.
    pub(crate) fn matches(&self, haystack: &[u8]) -> impl Iterator<Item = usize> {
        let mut set = PatternSet::new(self.dfa.pattern_len());
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if self
            .dfa
            .try_which_overlapping_matches(&mut cache, &Input::new(haystack), &mut set)
            .is_err()
        {
            set = PatternSet::new(self.dfa.pattern_len());
            for p in 0..self.dfa.pattern_len() {
                set.insert(regex_automata::PatternID::must(p));
            }
        }
        set.iter()
            .map(|p| p.as_usize())
            .collect::<Vec<_>>()
            .into_iter()
    }
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
    fn loosening_opens_counted_repetitions_only() {
        assert_eq!(loosened(r"a[0-9]{16}\b"), r"a[0-9]+\b");
        assert_eq!(loosened(r"x{0,20}?y{36,255}z{8,}"), r"x*?y+z+");
        assert_eq!(loosened(r"\{not{a,count}"), r"\{not{a,count}");
    }
}
