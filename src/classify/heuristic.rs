//! The heuristic classifier: pattern families per kind, no model needed.
//!
//! Each family is a set of case-insensitive patterns; a sentence belongs to the family with the
//! highest score, ties broken towards the rarer, more valuable kinds (rejection, trade-off,
//! decision, then exploration). Precision matters more than recall for decisions and
//! rejections — a wrong "do not re-propose X" is worse than a missed one — so their patterns
//! ask for commitment or a verdict, not just a keyword. Measured against the labelled real
//! sentences in `tests/data/classifier-labelled.jsonl` by the `classifier` test.

use std::sync::LazyLock;

use regex::Regex;
use regex::bytes::{RegexSet, RegexSetBuilder, SetMatches};

use crate::event::Kind;

struct Family {
    kind: Kind,
    /// Any one of these gives a sentence to the family.
    strong: &'static [&'static str],
    /// These only add weight.
    weak: &'static [&'static str],
}

/// A case-insensitive set of patterns, matched against the UTF-8 bytes of a sentence with
/// Unicode off: `\b`, `\w`, `\s` and case folding look at ASCII only (the patterns' words are
/// all ASCII), `.` is any byte but a newline. That makes the sets quick to build — a hook pays
/// for that on every run — and keeps the engine on its lazy DFA for non-ASCII text.
fn set<S: AsRef<str>>(patterns: impl IntoIterator<Item = S>) -> RegexSet {
    RegexSetBuilder::new(patterns)
        .case_insensitive(true)
        .unicode(false)
        // Room for the lazy DFA's states: the sets are large and the default cache thrashes.
        .dfa_size_limit(32 << 20)
        .build()
        .expect("classifier patterns compile")
}

/// Word boundaries that look at ASCII only. A Unicode `\b` makes the regex engine fall back
/// from its lazy DFA to a much slower NFA whenever the text holds a non-ASCII character, and
/// the patterns' words are all ASCII anyway.
pub(crate) fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// The families, in the order that breaks ties.
const FAMILIES: [Family; 4] = [
    Family {
        kind: Kind::Rejection,
        strong: &[
            r"\b(won'?t|will not|wouldn'?t|would not|doesn'?t|does not|didn'?t|did not|can'?t|cannot|isn'?t going to|not going to) (work|help|scale|fit|solve|fix)\b",
            r"\b(revert(ed|ing)?|roll(ed|ing)? (it |this |that )?back|back(ed|ing)? (it |this |that )?out|undid)\b",
            r"\b(ruled? out|rejected?|abandon(ed|ing)?|scrap(ped|ping)?|ditch(ed|ing)?)\b",
            r"\b(overkill|over-?engineer\w*|not worth (it|the)|isn'?t worth|bad idea|dead end|non-?starter)\b",
            r"\bproblem with (this|that|the|option|approach|using|doing)\b",
            r"\b(this|that|it|the (current|previous|old|first|original|existing) \w+) (is|was) (actually |just |simply )?(wrong|broken|incorrect|flawed|buggy)\b",
            r"\b(first|previous|earlier|initial|original) (attempt|approach|idea|version|fix)\b.*\b(fail|broke|didn'?t|wrong|problem)",
            r"\b(shouldn'?t|should not|must not|mustn'?t|don'?t want to) (use|mock|add|rely|go with|do that|do this)\b",
            r"\btoo (slow|complex|complicated|fragile|risky|expensive|brittle|heavy|invasive)\b",
            r"\bintroduced? a (potential )?(regression|bug)\b",
            r"\b(adds?|adding) (significant |unnecessary |extra |needless |a lot of )?complexity\b",
            r"\b(scope creep|overcomplicat\w*|unnecessary complexity|minimal benefit|no (actual|real) benefit)\b",
            r"\b(buys?|gains?|gets?) (us )?nothing\b",
            r"\b(beyond|out of) (the )?(current )?scope\b",
            r"\bthat'?s (actually |just )?(wrong|intrusive|too late|not right|a mistake)\b",
            r"\b(shouldn'?t|should not|must not|mustn'?t)\b",
            r"\b(don'?t|do not) need to (use|add)\b",
            r"\b(was|is) the (real )?(issue|problem|bug|mistake)\b",
            r"\b(dropp(ed|ing)|gave up on|giving up on) (that|the|this) (idea|approach|plan)\b",
            r"^❌",
        ],
        weak: &[
            r"\bincorrectly\b",
            r"\bspurious\b",
            r"\bwon'?t\b",
            r"\bavoid\b",
            r"\bbroke\b",
        ],
    },
    Family {
        kind: Kind::Tradeoff,
        strong: &[
            r"\btrade-?offs?\b",
            r"\bat the (cost|expense|price) of\b",
            r"\b(the )?(down|up)side\b",
            r"\b(reasonable|acceptable|small|worth the) (price|cost|trade|simplicity|complexity)\b",
            r"\bgood enough\b",
            r"\b(is|are|be) (slower|faster|simpler|heavier|cheaper|costlier|more complex|less \w+) but\b",
            r"\bbut (ideally|eventually|in the long run)\b",
            r"\bideally\b.*\b(for now|but)\b",
            r"\bfor now\b",
            r"\bcompromise\b",
            r"\b(accept(ing)?|live with) (the|this|that|some) (limitation|cost|risk|edge case)",
            r"\blimitations?\b",
            r"\bcan (always )?add .{0,60}\blater\b",
            r"\bin exchange for\b",
            r"\bsacrific\w+\b",
            r"\bpros and cons\b",
            r"\b(costs?|loses?|adds?) (a|an|us|some|more|extra) .{0,40}\b(but|which is|acceptable)\b",
            r"\bwhich is acceptable\b",
        ],
        weak: &[
            r"\bacceptable\b",
            r"\bworth\b",
            r"\bsimplicity\b",
            r"\bcosts?\b",
        ],
    },
    Family {
        kind: Kind::Decision,
        strong: &[
            r"\b(i'?ll|i will|we'?ll|we will|let'?s|i'?m going to|we'?re going to|decided to|i decided|we decided) (go with|use|stick with|opt for|choose|keep|rely on|replace|treat|store)\b",
            r"\b(go|going|went) with\b",
            r"\b(opt(ed|ing)? for|settled? on|chose|chosen|decided (on|to|that))\b",
            r"\b(the|a|my|our) (fix|solution|approach|plan|(right|best|cleanest|simplest|safest|correct|better) (approach|option|fix|way|choice|solution|place)) (here )?(is|would be|will be|should be) (to|that|a|an|the|in|at)\b",
            r"\b(the approach|the strategy|the idea) is\b",
            r"\brecommend(ed|ation)?\b",
            r"^(selected|decision|conclusion|choice|verdict)\b",
            r"\b(we|i) (should|need to|must) (use|reset|add|warn|skip|keep|restore|move|return|store|treat|restructure|distinguish|prefer|remove|avoid|change|create|make|put|count|ignore|default|require|split|merge|cache|initialize|always|never)\b",
            r"\b(is|seems|would be|sounds) (the )?(cleaner|cleanest|simpler|simplest|better|best|most appropriate|preferable|safer|safest|right call)\b",
            r"\b(handles|solves|works for) (this|it|that) better\b",
            r"\bthe fix( \([^)]*\))? is\b",
            r"\bi'?d (suggest|recommend|go with|prefer)\b",
            r"\b(try|take) a different approach\b",
            r"\bi'?m going to (make|use|keep|treat|store|write)\b",
            r"\ball (we|i) need is\b",
            r"\b(i'?ll|i will|we'?ll|we will|let'?s) .{0,80}\b(because|since|so that)\b",
            r"\b(i'?ll|we'?ll|let'?s|i will|we will|we should|i should) .{0,60}\b(instead of|rather than)\b",
            r"\b(use|using|prefer|keep|choose) .{1,60}\b(instead of|rather than|over)\b.{0,80}\b(because|since|so)\b",
        ],
        weak: &[
            r"\bprefer\b",
            r"\bbetter\b",
            r"\binstead\b",
            r"\bmakes (more )?sense\b",
        ],
    },
    Family {
        kind: Kind::Exploration,
        strong: &[
            r"^(now |first,? |ok,? |okay,? |so,? |then,? )?(let me|let's|i'?ll|i need to|i should|i want to|i'?m going to) (first |now |also |quickly )?(check|look|see|read|search|find|explore|investigate|examine|inspect|understand|verify|trace|figure|think|review|start|dig|grep|confirm|analy[sz]e|compare|re-?read|take a look|test)\b",
            r"\b(i wonder|wondering|i suspect|i'?m not sure|not sure (if|whether|why|what|how))\b",
            r"\b(this|that|which|it) (suggests|indicates|implies)\b",
            r"\bthe question (is|becomes)\b",
            r"\b(to|and) (see|check|understand|find out|figure out|determine|verify|confirm) (if|whether|what|how|why|where|which|the)\b",
            r"\b(maybe|perhaps|possibly|presumably)\b",
            r"\b(might|may|could) (be|have|not)\b",
            r"\bprobably\b",
            r"\b(seems?|appears?) (to|like|that)\b",
            r"\blooks like\b",
            r"\bwhat (if|happens|about)\b",
        ],
        weak: &[r"\?$", r"\b(check|look|investigate|explore|understand)\b"],
    },
];

/// Sentences that report, ask or describe rather than reason, whatever words they contain.
static NOT_REASONING: LazyLock<RegexSet> = LazyLock::new(|| {
    set([
        r"^(feat|fix|chore|docs|test|tests|refactor|style|perf|build|ci|revert)(\([^)]*\))?!?:",
        r"^(good|great|perfect|excellent|done|all (tests|checks)|now the|this works|it works|✅|summary)\b",
        r"^(i'?ve|i have|we'?ve|we have) (added|updated|fixed|changed|removed|created|implemented|made|written|moved|renamed)\b",
        r"^(added|updated|fixed|changed|removed|created|implemented|moved|renamed|refactored)\b",
        r"^(would you like|do you want|should i|shall i|want me to|let me know)\b",
        r"^(please|thanks|thank you)\b",
        // A description of what code does, not a choice about it.
        r"^(now |so )?(it|this|the \w+|\w+\(\)) (now |also |always |just )?(returns|uses|stores|creates|gives|changes|has|takes|finds|parses|processes|makes|removes|writes|reads|calls)\b",
    ])
});

/// The kind of one sentence, or `None` when it carries no reasoning we recognise.
pub fn classify(sentence: &str) -> Option<Kind> {
    let s = sentence.trim();
    by_family(s, &STRONG.matches(s.as_bytes()))
}

/// [`classify`], given which of the [`STRONG`] patterns `s` matches.
fn by_family(s: &str, strong_hits: &SetMatches) -> Option<Kind> {
    if s.len() < 12 || NOT_REASONING.is_match(s.as_bytes()) {
        return None;
    }
    // A question weighs options; it does not settle them.
    let question = s.ends_with('?');
    let mut best: Option<(Kind, usize)> = None;
    let mut first = 0;
    for (family, weak) in FAMILIES.iter().zip(WEAK.iter()) {
        let patterns = first..first + family.strong.len();
        first = patterns.end;
        if question && family.kind != Kind::Exploration {
            continue;
        }
        // A family needs one strong pattern; weak ones only break ties and add weight.
        let strong = patterns.filter(|&p| strong_hits.matched(p)).count();
        if strong == 0 {
            continue;
        }
        let score = 2 * strong + weak.matches(s.as_bytes()).iter().count();
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((family.kind, score));
        }
    }
    best.map(|(kind, _)| kind)
}

/// Findings about the code: observations, not reasoning.
const DISCOVERY: &[&str] = &[
    r"\b(turns out|root cause|i found (that|the)|found the (bug|issue|problem|cause)|the (bug|issue|problem) (was|is) (that|caused|in|because))\b",
    r"\bthat explains\b",
];

/// Every strong pattern of every family, in family order, then the [`DISCOVERY`] patterns: one
/// set, built once. Most sentences carry no reasoning, and one search of it tells so.
static STRONG: LazyLock<RegexSet> = LazyLock::new(|| {
    set(FAMILIES
        .iter()
        .flat_map(|f| f.strong.iter())
        .chain(DISCOVERY))
});

static WEAK: LazyLock<Vec<RegexSet>> =
    LazyLock::new(|| FAMILIES.iter().map(|f| set(f.weak)).collect());

/// The kind of a sentence: reasoning ([`classify`]) or, failing that, a finding about the code
/// (an observation, not reasoning).
pub fn kind_of(sentence: &str) -> Option<Kind> {
    let s = sentence.trim();
    if !STRONG.is_match(s.as_bytes()) {
        return None;
    }
    let hits = STRONG.matches(s.as_bytes());
    let discovery = FAMILIES.iter().map(|f| f.strong.len()).sum::<usize>()..STRONG.len();
    by_family(s, &hits).or_else(|| {
        discovery
            .into_iter()
            .any(|p| hits.matched(p))
            .then_some(Kind::Discovery)
    })
}

static ALTERNATIVE: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    let end = r"(?:[,;:.!?)—]|$| - | because| since| which| so | as | but | and then)";
    [
        r"(?i)\b(?:instead of|rather than|over)\s+`([^`]{1,80})`".to_owned(),
        format!(r"(?i)\b(?:instead of|rather than)\s+([^`].{{2,80}}?){end}"),
        r"(?i)\bconsidered\s+(.{3,80}?)\s+but\b".to_owned(),
        format!(r"(?i)\b(?:chose|chosen|picked|prefer|preferred|went with|go with|going with|use|using)\s+.{{1,60}}?\s+over\s+(.{{3,80}}?){end}"),
        format!(r"(?i)\b(?:ruled out|rejected|dropped|abandoned|scrapped|reverted)\s+(?:the\s+)?(.{{3,80}}?){end}"),
        r"(?i)^(?:using\s+)?(.{3,60}?)\s+(?:won'?t|doesn'?t|didn'?t|can'?t|will not|does not) work\b".to_owned(),
        r"(?i)^(?:using\s+)?(.{3,60}?)\s+(?:is|would be) (?:overkill|not worth it|too \w+)\b".to_owned(),
    ]
    .iter()
    .map(|p| Regex::new(&ascii_boundaries(p)).expect("alternative patterns compile"))
    .collect()
});

/// The alternatives a sentence names as not taken ("X instead of Y", "rather than Y",
/// "considered Y but", "Y won't work").
pub fn alternatives(sentence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for re in ALTERNATIVE.iter() {
        for caps in re.captures_iter(sentence) {
            let alt = caps[1]
                .trim()
                .trim_matches(|c: char| "`\"',;:".contains(c))
                .trim();
            let generic = matches!(
                alt.to_ascii_lowercase().as_str(),
                "this" | "that" | "it" | "them"
            );
            if alt.chars().count() >= 3 && !generic && !out.iter().any(|o| o == alt) {
                out.push(alt.to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_family() {
        assert_eq!(
            classify("I'll go with the streaming parser because memory must stay bounded."),
            Some(Kind::Decision)
        );
        assert_eq!(
            classify("That won't work because gix has no push support."),
            Some(Kind::Rejection)
        );
        assert_eq!(
            classify("This is slower but keeps memory bounded."),
            Some(Kind::Tradeoff)
        );
        assert_eq!(
            classify("Let me check how the cursor is stored."),
            Some(Kind::Exploration)
        );
        assert_eq!(classify("The function returns a vector of events."), None);
        assert_eq!(
            classify("feat: use the streaming parser instead of the DOM"),
            None
        );
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
}
