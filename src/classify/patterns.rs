//! What the classifier's and the redactor's pattern sets share.

use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet, meta};

/// Patterns matched at once, as `regex::RegexSet` does, but built without a literal prefilter:
/// working one out for a hundred case-insensitive patterns took most of the 4.6 ms that
/// building the largest set took in every process that used it (1.3 ms without). The texts
/// these sets look at are sentences and tool outputs, where a prefilter saves little.
pub(crate) struct Set(meta::Regex);

impl Set {
    /// The set of `patterns` under `syntax` (Unicode or not, case or not), with `cache` bytes
    /// for the lazy DFA's states.
    pub(crate) fn new<S: AsRef<str>>(
        patterns: impl IntoIterator<Item = S>,
        syntax: syntax::Config,
        cache: usize,
    ) -> Set {
        let patterns: Vec<S> = patterns.into_iter().collect();
        let config = meta::Config::new()
            .match_kind(MatchKind::All)
            .which_captures(WhichCaptures::None)
            .auto_prefilter(false)
            .utf8_empty(syntax.get_utf8())
            .nfa_size_limit(Some(10 << 20))
            .hybrid_cache_capacity(cache);
        let built = meta::Builder::new()
            .configure(config)
            .syntax(syntax)
            .build_many(&patterns)
            .expect("the patterns of a set compile");
        Set(built)
    }

    pub(crate) fn is_match(&self, haystack: &[u8]) -> bool {
        self.0.is_match(Input::new(haystack))
    }

    /// The patterns that match somewhere in `haystack`, by their position in the set.
    pub(crate) fn matches(&self, haystack: &[u8]) -> impl Iterator<Item = usize> {
        let mut set = PatternSet::new(self.0.pattern_len());
        self.0
            .which_overlapping_matches(&Input::new(haystack), &mut set);
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
