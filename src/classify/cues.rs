//! The patterns the heuristic classifier's sets are made of ([`super::heuristic`]).
//!
//! They are kept apart from the code that uses them because `build.rs` reads them too: it
//! compiles each set once, when the binary is built, so that no process pays for it
//! ([`super::patterns::Set::prebuilt`]).

use super::patterns::loosened;
use crate::event::Kind;

/// The patterns of what is kept, in the order of [`GROUPS`].
pub(crate) fn keep_patterns() -> impl Iterator<Item = &'static str> {
    GROUPS
        .iter()
        .flat_map(|(_, patterns)| patterns.iter().copied())
}

/// The sets `build.rs` compiles, each with the name of its table: every group's patterns at
/// once, loosened and in the order of [`GROUPS`], and each of the lists below. The binary reads
/// the tables; this list is otherwise read only by the test that compares them with it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn prebuilt() -> [(&'static str, Vec<String>); 11] {
    let list = |patterns: &[&str]| patterns.iter().map(|p| p.to_string()).collect();
    let keep = keep_patterns().map(loosened).collect();
    [
        ("keep", keep),
        ("not_reasoning", list(NOT_REASONING)),
        ("hedge", list(HEDGE)),
        ("narration", list(NARRATION)),
        ("step", list(STEP)),
        ("reasoned", list(REASONED)),
        ("lead_in", list(LEAD_IN)),
        ("consequence", list(CONSEQUENCE)),
        ("interjection", list(INTERJECTION)),
        ("choice", list(CHOICE)),
        ("exploring", list(EXPLORING)),
    ]
}

/// What reasoning is kept, and in which order a sentence's kind is decided: the first group
/// with a pattern that matches gives the kind. A constraint the code must respect stands like a
/// decision; a finding is a [`Kind::Discovery`].
pub(crate) const GROUPS: [(Kind, &[&str]); 7] = [
    // What is, said in the words of what won't do: a limitation under a condition of use ("If
    // someone uses another default branch, this won't work"), or the current design that
    // doesn't scale. Found, not an alternative the session ruled out.
    (
        Kind::Discovery,
        &[
            r"^if (someone|somebody|anyone|a user|users|the user|that|this|it|they|there)\b.{1,100}\b((won'?t|wouldn'?t|can'?t|cannot|would not|will not) (work|help|solve|fix|scale)|would (break|corrupt|lose|leak|deadlock))\b",
            r"\b(current|existing)\b.{0,40}\b(doesn'?t|does not) (work|help|solve|fix|scale)\b",
        ],
    ),
    (
        Kind::Rejection,
        &[
            // What would not do, said of an option; what does not do, said of a fix or an
            // approach tried, or of an option whose drawbacks are listed ("Doesn't help the
            // other cases"). Said of the code as it stands ("…slicing, which doesn't work for
            // Gemini JSON"), it is a finding (the last group).
            r"\b(won'?t|wouldn'?t|can'?t|cannot|would not|will not) (work|help|solve|fix|scale)\b",
            r"\b(fix|approach|filtering|option|idea|workaround|attempt|solution|alternative|trick|hack)\b.{0,30}\b(doesn'?t|does not) (work|help|solve|fix|scale)\b",
            r"^(doesn'?t|does not) (work|help|solve|fix|scale)\b",
            r"\bwould (change|break) (the )?(semantics|behaviou?r|compatibility|existing)\b",
            r"\b(overkill|over-?engineer\w*|not worth (it|the)|isn'?t worth|dead end|non-?starter)\b",
            r"\b(would|will|might|could|'d) (be|get|become|make \w+) (\w+ )?too (slow|complex|complicated|fragile|risky|expensive|brittle|heavy|invasive|strict)\b",
            r"\bwould (break|corrupt|lose|leak|deadlock)\b",
            r"\b(ruled? out|scrapp(ed|ing))\b",
            // Ruled out by the session, not what the code or a user rejects or abandons
            // ("empty strings are rejected", "the work stream was abandoned").
            r"\b(i|we)('ve| have| had| already)? (rejected|abandoned)\b",
            r"\b(rejected|abandoned) (it|this|that|the idea|(this|that|the|an?) (approach|option|idea|plan|attempt))\b",
            r"\b(was|were|is|been) (rejected|abandoned) (because|since|as|in favou?r of)\b",
            r"\b(we|i) (should not|shouldn'?t|must not|won'?t) (use|add|rely on|go with|mock|depend on|port)\b",
            // Said as a decision: "decided against retrying", "chose not to add…", "Rejected
            // the daemon: …", "I'm not using a regex here because…".
            r"(^|\b(i|we)('ve| have)? )(decided|chose|opted) (against|not to)\b",
            r"\b(we|i) (should not|shouldn'?t|must not|won'?t) (catch|throw|retry|cache|block|store|call|expose|change|touch|generate|create|write|delete|remove|modify|log|print|return|hardcode|hard-code|swallow|ignore)\b.{0,60}(: |\bbecause\b|\bsince\b| — )",
            r"^rejected\b",
            r"\b(i'?m|we'?re|i am|we are) not (using|adding|going with|relying on)\b.{1,80}\b(because|since)\b",
        ],
    ),
    (
        Kind::Discovery,
        &[
            r"\b(the|this|that) (real |actual |root |underlying |main |core )?(bug|problem|issue|cause|reason|culprit)( here)? (is|was) (that|because)\b",
            r"\broot cause (is|was)\b",
            r"\bkey (insight|point|observation|realization|finding) is\b",
            r"\blimitation of\b",
            r"\b(this|that) is the (bug|problem|issue|cause)\s*(—|:|-)+\s*\w",
            r"\bturns out\b",
            // A gap found, not an alternative ruled out: "the compiler won't catch that".
            r"\b(won'?t|wouldn'?t|doesn'?t|does not|can'?t|cannot|would not|will not) catch\b",
            r"\bprocess-(global|wide)\b",
            r"\bfixed (a|the) (long-standing |known )?bug\b",
            r"\bexists to\b",
            r"\bis never (executed|called|run|reached|set)\b",
            r"\bonly happens\b",
            r"\b(so|which means) there'?s no\b",
            r"\b(is|are) (always|never) (overwritten|set|called|empty|nil)\b",
            r"\bwould (use|read|write|return|point to|keep) the (stale|wrong|old)\b",
            r"\b(caused|causes|causing) (the|this|a|an) (bug|issue|problem|failure|regression|crash|race)\b",
        ],
    ),
    (
        Kind::Decision,
        &[
            r"\bthe (\w+ ){0,2}(fix|solution|approach|way|option|choice|plan|strategy|answer|idea)( here)? (is|will be|should be|is simply) (to|that)\b",
            r"\b(fix|solution|approach|way forward) is to\b",
            r"\b(is|are|seems|feels) (the |a |much |far )?(cleaner|cleanest|simpler|simplest|better|best|safer|safest|more robust|most robust|preferable|right call|more correct)\b.{0,40}(\bbecause\b|\bsince\b|\bas it\b| — | - |: |\bthan\b)",
            r"\b(it'?s|it is) (cleaner|simpler|better|safer|more robust) to\b",
            r"\bthe (fix|solution|change) is (simple|easy|straightforward|small)\s*(—|-|:)\s*\w",
            r"\b(go|going|went|stick|sticking) with\b",
            r"\b(opt(ed|ing)? for|settled? on|decided (to|on|that)|i chose|we chose|chose to)\b",
            r"\b(instead of|rather than)\b.{0,120}(\bbecause\b|\bsince\b|\bso that\b|\bwhich\b|\bto avoid\b|\bto keep\b| — | - )",
            r"\b(because|since|so that|to avoid|to keep|to match|to prevent)\b.{0,120}\b(instead of|rather than)\b",
            r"\b(use|using|keep|prefer)\b.{1,80}\b(instead of|rather than)\b",
            r"\bto match the existing\b",
            r"^(since|because|as|given) .{5,100}, (i'?ll|we'?ll|i will|we will|let'?s|i'?m going to)\b",
            r"^to \w+ .{0,80}, (i|we)( need to| should| must| will|'ll) (use|switch|keep|avoid|prefer|make)\b",
            r"\b(i|we)('ll| will| should| need to| must) (keep|use|avoid|prefer|leave|inline|reuse|skip)\b.{3,120}\b(because|since|so that|to avoid|to match|as it|instead)\b",
            r"^we should (use|keep|avoid|prefer)\b",
            r"\band instead\b",
            r"^this (ensures|guarantees|prevents|avoids)\b",
            r"\b(is|was) (intentional|deliberate|by design)\b",
            r"\bno need (for|to)\b",
            r"\bwe (don'?t|do not) need\b",
            // A choice by what it does: "Using `BTreeMap` keeps the output sorted", "Don't
            // cache the config: it can change", "The reason for the two passes is that…".
            r"^(using|keeping|storing|caching|putting|making|moving|splitting|returning|capturing|adding|removing|passing|wrapping|memoizing|switching|deferring|batching|pinning|inlining|extracting|centrali[sz]ing)\b[^.;:]{1,60}\b(keeps|makes|lets|avoids|means|ensures|prevents|saves)\b",
            r"\brather than\b.{0,120}, so\b",
            r"\bi considered\b.{1,60}\bbut\b",
            r"^(rather than|instead of) .{3,80}, (i'?ll|we'?ll|i will|we will|let'?s)\b",
            r"\b(i'?m|we'?re) keeping\b.{1,80}\b(because|since|so that)\b",
            r"\b(can'?t|cannot) be\b.{1,60}\bbecause\b",
            r"^(don'?t|do not|never) \w+\b.{1,80}(: |\bbecause\b|\bsince\b| — )",
            r"\bthe reason (for|behind|why) .{1,80} (is|was) (that|because|to)\b",
        ],
    ),
    (
        Kind::Tradeoff,
        &[
            // A trade-off stated, not one mentioned ("the PR explains the trade-off").
            r"\btrade-?offs? (is|are|was|between|here|though|of|for)\b|\btrade-?offs?\s*(:|—|-)",
            r"\b(is|it'?s|that'?s|was|seems like|looks like) (an? |the )?(\w+ )?trade-?off\b",
            r"\bat the (cost|expense|price) of\b",
            r"\bgood enough\b",
            r"\bbut (still )?(requires|keeps|costs|loses|adds|means)\b",
            r"\b(acceptable|worth the)\b",
            r"\bdownside\b",
            r"\bcompromise\b",
            r"\bis valuable\b",
        ],
    ),
    (
        Kind::Decision,
        &[
            r"\b(must|has to|have to) (stay|exit|run|happen|not|never|always)\b",
            r"\bshould (not|never) be\b.{20}",
            r"\bto satisfy the (compiler|linter|type checker)\b",
            r"\bto avoid (import cycles|a race|races|deadlock)\b",
            r"\bis (safe|necessary|required|needed) (because|since|as)\b",
            r"\bit'?s (important|essential|critical|crucial) (that|to)\b",
            r"\b(can'?t|cannot) use\b.{1,80}\b(so|because|since)\b",
        ],
    ),
    // What the code or a tool does not do, or is too much of, as it stands: a finding, when no
    // pattern above says more (a choice, an option ruled out).
    (
        Kind::Discovery,
        &[
            r"\b(doesn'?t|does not) (work|help|solve|fix|scale)\b",
            r"\btoo (slow|complex|complicated|fragile|risky|expensive|brittle|heavy|invasive|strict)\b",
        ],
    ),
];

/// Sentences that report, ask, restate or keep house rather than reason, whatever else they
/// say.
pub(crate) const NOT_REASONING: &[&str] = &[
    // Status: what was done or what happened.
    r"^(good|great|perfect|excellent|done|nice|ok|okay|all (tests|checks|\d+)|now the|this works|it works|summary|looks good|that worked|that fixed)\b",
    r"^the (fix|change|implementation|refactor|test|build|pr) (is|was|has been) (complete|done|in place|applied|pushed|merged|committed|passing|green)\b",
    r"^(i'?ve|i have|we'?ve|we have|i just|i already) \w+",
    r"^((i|we) )?(added|updated|fixed|changed|removed|created|implemented|moved|renamed|refactored|committed|pushed|replaced|switched)\b",
    r"\b(is|are) now (using|used|set|called|handled|done)\b",
    r"^(both|they|it|this|the code) now\b",
    r"^(the )?(tests?|build|lint|linter|ci) (pass|passes|passed|fail|fails|failed|is green|are green|succeeded)",
    r"^(feat|fix|chore|docs|test|tests|refactor|style|perf|build|ci|revert)(\([^)]*\))?!?:",
    // What the user asked or chose, said back.
    r"^(the )?user('s)? (wants|asked|asks|chose|is asking|said|says|requested|prefers|mentioned|wants me|approved|confirmed|selected|picked)\b",
    // The user as the model speaks of them in its thinking: "They want to just fix the bug".
    r"^(they|he|she)('re| are| is)? (asking|wants?|asked|said|says|prefers?|wondering)\b",
    r"^(you'?re right|good (question|point|catch)|got it|understood)\b",
    // What a tool asks for, said back: the linter's or the reviewer's wish, not a choice.
    r"^(the )?([a-z-]+ )?(linter|ide|compiler|checker|type-checker|reviewer|staticcheck|golangci-lint|clippy|copilot|eslint|mypy|ruff|pyright|rustc|tsc)( \w+)? (wants|suggests|is suggesting|is showing|flags|complains|said|says|thinks|pointed out)\b",
    r"\bthere'?s (a|an|another) (new )?(diagnostic|lint|linter warning|warning) (about|saying|for)\b",
    // A slip in the session's own work, found and mended in the same turn: "The issue is that I
    // renamed it but…", "my refactoring accidentally removed…" (not what its change does: "The
    // issue is that with my change, we now look for…").
    r"\b(issue|problem|bug|mistake) (here )?(is|was) that i (renamed|removed|deleted|changed|broke|forgot|missed|used)\b",
    r"\b(i|my \w+) (accidentally|mistakenly) (renamed|removed|deleted|dropped|changed|broke)\b|\bi forgot to\b",
    // The agent's own tooling, and second thoughts.
    r"\b(skill|the task tool|todo list|todowrite|mcp)\b",
    r"\b(launch|spawn|dispatch|use|start) (a |an |the )?(\w+ )?(sub-?agents?|agents?)\b",
    r"^(ah|oh|hmm|ok so|okay so)\b",
    r"\bnot too (slow|complex|complicated|fragile|risky|expensive|brittle|heavy|invasive|strict)\b",
    r"\b(cherry-picked|merged|rebased|reverted|squashed)\b",
    // Housekeeping: committing, staging, pull requests, replies, making a test pass.
    r"\b(to|is|and|then) (commit|stage|push|amend|rebase|cherry-pick|open a pr|create a pr|update the pr|reply)\b",
    r"\b(update|fix|change|adjust) (this|the|that) test\b",
];

/// Guesses, open questions and options still weighed: not settled, so not kept.
pub(crate) const HEDGE: &[&str] = &[
    r"\b(might|maybe|perhaps|possibly|i wonder|wondering|not sure|could be|i suspect|the question is|whether|i think|would be|must be|should be fine)\b",
    // "Wait, …", "But wait —": a second thought; not the verb ("writers must not wait").
    r"(^|\bbut |\bhmm,? )wait\b|\bwait\s*(,|—|–|:|!|-|\.\.\.|…)",
    r", or \w+|\bor to \w+| OR ",
    // An inference from a hint: "…which suggests this was intentional".
    r", which (suggests|implies|indicates)\b|^this (suggests|implies|indicates)\b",
];

/// The next step, told as it is taken ("Let me…", "Now I need to…"): kept only with a reason.
pub(crate) const NARRATION: &[&str] = &[
    r"^((now|next|first|then|ok|okay|so|actually|alright|also|finally|great|good|perfect|but|and|for now)[,!.]?\s+)*(let me|let's|i'?ll|i will|i need to|i'?m going to|i should|i must|i can|we need to|i want to|time to|i'?m now|i have to|i'?d need to|need to)\b",
];

/// A step of the work itself ("I'll update the test…", "Now add the import"): never kept.
pub(crate) const STEP: &[&str] = &[
    r"\b(i'?ll|i will|let me|let's|i need to|i should|i'?m going to|we need to|i must|i'?ll need to|i can) (now |also |first |then |just |need to )?(add|fix|update|create|write|run|check|look|read|remove|rename|move|make|implement|commit|push|start|try|verify|test|see|find|search|review|refactor|clean|change|modify|replace|edit|restore|revert|delete|put|wire|call|launch|set up|go through|examine|investigate|explore|document|stage|apply|debug|reply|respond|ask|mention|note|follow|selectively|do)\b",
    r"^now (update|add|fix|change|remove|run|let)\b",
    // A plan's step as it is carried out: "Now step 4: update telemetry.go to use…".
    r"^((now|next),? )?step \d+\b",
];

/// What lifts narration or a list item above itself: a reason given.
pub(crate) const REASONED: &[&str] =
    &[r"\b(because|so that|to avoid|otherwise|since (it|this|that|the|we|they)\b)"];

/// A lead-in whose content follows it (a list, a code block, the next paragraph), once its
/// colon is taken off.
pub(crate) const LEAD_IN: &[&str] = &[
    r"\b(to|either|because|that|for|where|by|are|is|as follows|simple|straightforward|complete|here|following|these|this|so|with|would be|be|all|both|two|three|options|steps|changes|ones)$",
    r"^(why|how|what|when|where|which)\b",
];

/// A clause of consequence inside a sentence: "…, so the names conflict", "…package so I
/// need the prefix" (not a sentence that starts "So the path is…": a conclusion drawn).
pub(crate) const CONSEQUENCE: &[&str] =
    &[r#"[,;-] so\b|[a-z0-9)`'"] so (the|it|this|that|we|they|i|there)\b"#];

/// An interjection that reports how it went, on its own: "Good!", "Perfect.", "Excellent!".
pub(crate) const INTERJECTION: &[&str] =
    &[r"^(good|great|perfect|excellent|nice|done|ok|okay|right|now|hmm|ah|oh)[!.]*$"];

/// A choice between things said in a sentence ("…instead of…", "…rather than…", "…or…"), or
/// what it is for ("…to reduce the complexity").
pub(crate) const CHOICE: &[&str] = &[
    r"\b(instead of|rather than|or)\b",
    r"\bto (reduce|avoid|prevent|ensure|simplify|satisfy|match)\b",
];

/// Investigating and checking (an exploration, not reasoning): what a session looked into.
pub(crate) const EXPLORING: &[&str] = &[
    r"^(now |first,? |ok,? |okay,? |so,? |then,? )?(let me|let's|i'?ll|i need to|i should|i want to|i'?m going to) (first |now |also |quickly )?(check|look|see|read|search|find|explore|investigate|examine|inspect|understand|verify|trace|figure|review|dig|grep|confirm|analy[sz]e|compare|re-?read|take a look)\b",
    r"\b(to|and) (see|check|understand|find out|figure out|determine|verify|confirm) (if|whether|what|how|why|where|which)\b",
];
