//! Options laid out and then chosen by their label: "Option 2 is simpler since we already have
//! the data." says nothing on its own. The options are most often laid out earlier, in the same
//! text or an earlier message ("We need to either:\n1. Refactor to parse stdin once\n2. Use the
//! persisted session file"), so the extractor keeps the last list it met and a summary that
//! names one of its labels spells the option out: "Option 2 (use the persisted session file)
//! is simpler since…".

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};

use crate::classify::sentences::strip_emphasis;
use crate::event::{SUMMARY_MAX, truncate_words};

/// One option of a list: its label (a number or a lower-case letter) and what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    pub label: String,
    pub text: String,
}

/// Options in a list, at most: past them a list is a plan's steps, not a choice.
const OPTIONS_MAX: usize = 6;
/// Characters of an option kept, at most.
const TEXT_MAX: usize = 160;
/// Characters an option spelled out in a summary takes, at least: fewer say nothing.
const SPELLED_MIN: usize = 16;

/// A line that labels an option: "Option 2: …", "**Option A — …**", "### Approach 1: …".
static LABELLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^[\s#>*-]*(?:option|approach|alternative)\s+\(?([0-9]|[a-f])\)?\**\s*(?:[:.)—–-]|\*\*)[\s*]*(.+)$",
    )
    .expect("the option pattern compiles")
});

/// A line of a numbered or lettered list: "1. …", "2) …", "(a) …", "b) …".
static LISTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:([0-9])[.)]|\(?([a-f])\))\s+(.+)$").expect("the list pattern compiles")
});

/// A lead-in that says a numbered list is a choice: "We need to either:", "which could
/// mean:", "Two options:".
static OFFERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(either|options?|alternatives?|choices?|approaches|could|ways)\b")
        .expect("the offer pattern compiles")
});

/// A label named in a sentence: "Option 2", "option (a)", "Approach B" — a letter in capitals
/// or brackets, not the article of "this approach a bit cleaner".
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?i:option|approach|alternative)\s+(?:([0-9])\b|([A-F])\b|\(([a-fA-F])\))")
        .expect("the label pattern compiles")
});

/// Whether `text` holds a word that every label begins with ("option", "approach",
/// "alternative"), in any case: what each match of [`LABELLED`] and [`NAMED`] holds. Most texts
/// do not, and are not asked (the patterns, with their Unicode classes, take about a
/// millisecond to build in each process that asks).
fn names_an_option(text: &str) -> bool {
    // None of these words holds a `k` or an `s`, the only ASCII letters that another character
    // folds to under `(?i)` (the Kelvin sign, the long s): a match holds them in ASCII.
    ["option", "approach", "alternative"].iter().any(|word| {
        (text.as_bytes().windows(word.len())).any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    })
}

/// Whether `line` may be a line of a list ([`LISTED`]): past its white space, it begins with a
/// digit, a bracket or a letter from a to f.
fn may_be_listed(line: &str) -> bool {
    (line.trim_start())
        .starts_with(|c: char| c.is_ascii_digit() || c == '(' || ('a'..='f').contains(&c))
}

/// `pattern`'s captures in `text`, asked only when it `may` match (the text holds what each
/// of its matches holds).
fn captured<'t>(may: bool, pattern: &Regex, text: &'t str) -> Option<Captures<'t>> {
    may.then(|| pattern.captures(text)).flatten()
}

/// The options a text lays out, and where it first offers a choice.
#[derive(Debug, Default)]
pub struct LaidOut {
    /// Each list with the byte offset where its last option ends.
    pub lists: Vec<(usize, Vec<Choice>)>,
    /// Where the text first offers a choice, in bytes: its second line labelled as an option,
    /// or a line that leads into a list of them ("So I either need to:"). Options offered but
    /// not laid out as a list (one run together on one line) leave a label unknown rather
    /// than named by older ones; a reply that names one ("Option 2 - but keep it private")
    /// offers nothing.
    pub offered_at: Option<usize>,
}

impl LaidOut {
    /// The options a sentence whose paragraph starts at byte `at` may name: the last list laid
    /// out before it, else `older` ones unless a choice was offered before it and not laid out.
    pub fn before<'a>(&'a self, at: usize, older: &'a [Choice]) -> &'a [Choice] {
        match self.lists.iter().rev().find(|(end, _)| *end <= at) {
            Some((_, list)) => list,
            None if self.offered_at.is_some_and(|o| o < at) => &[],
            None => older,
        }
    }
}

/// The options `text` lays out (see [`LaidOut`]), each list with the byte offset where its last
/// option ends: lines labelled as options, whatever stands between them ("**Option A — …**", its example,
/// "**Option B — …**") until another choice is offered or the labels change from numbers to
/// letters; or a numbered or lettered list that a line offering a choice leads into ("We need
/// to either:"), its items' indented details included, up to the first line of prose. A list
/// has two options at least.
pub fn laid_out(text: &str) -> LaidOut {
    let mut lists = Vec::new();
    let (mut offered_at, mut labels) = (None, 0);
    let mut list: Vec<Choice> = Vec::new();
    // Whether the list being read is of labelled lines, and where its last option ends.
    let (mut labelled, mut end) = (false, 0);
    let mut offered = false;
    let mut at = 0;
    let mut close = |list: &mut Vec<Choice>, end: usize| {
        if list.len() >= 2 {
            lists.push((end, std::mem::take(list)));
        }
        list.clear();
    };
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let line = line.trim_end();
        if let Some(c) = captured(names_an_option(line), &LABELLED, line) {
            labels += 1;
            if labels == 2 {
                offered_at = offered_at.or(Some(start));
            }
            let label = c[1].to_ascii_lowercase();
            let numbered = |l: &str| l.starts_with(|c: char| c.is_ascii_digit());
            let other_kind = list
                .first()
                .is_some_and(|o| numbered(&o.label) != numbered(&label));
            if !labelled || other_kind {
                close(&mut list, end);
                labelled = true;
            }
            add(&mut list, label, &c[2]);
            end = at;
        } else if !labelled && !list.is_empty() && line.starts_with([' ', '\t']) {
            // An item's detail, indented under it.
        } else if let Some(c) = captured(!labelled && may_be_listed(line), &LISTED, line) {
            if offered || !list.is_empty() {
                let label = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
                add(&mut list, label.to_owned(), &c[3]);
                end = at;
            }
        } else if !line.trim().is_empty() {
            // Prose ends a numbered list; labelled options go on past it, until another
            // choice is offered.
            let offers = line.ends_with(':') && OFFERS.is_match(line);
            if offers {
                offered_at = offered_at.or(Some(start));
            }
            if !labelled || offers {
                close(&mut list, end);
                (labelled, offered) = (false, offers);
            }
        }
    }
    close(&mut list, end);
    LaidOut { lists, offered_at }
}

/// Add option `label` to `list` unless it is there, or the list is full; its emphasis
/// ("**Move it to `paths`** (cleaner)") left out.
fn add(list: &mut Vec<Choice>, label: String, said: &str) {
    if list.len() < OPTIONS_MAX && !list.iter().any(|o| o.label == label) {
        let said = strip_emphasis(said);
        list.push(Choice {
            label,
            text: truncate_words(said.trim(), TEXT_MAX),
        });
    }
}

/// `summary` with the option it names by its label spelled out after the label, as far as
/// [`SUMMARY_MAX`] leaves room: "Option 2 (use the persisted session file) is simpler…".
/// As it is when it names none of the `options` (asked for only when it names one), or says
/// the option already.
pub fn spelled_out<'s, 'o>(
    summary: &'s str,
    options: impl FnOnce() -> &'o [Choice],
) -> Cow<'s, str> {
    let Some(caps) = captured(names_an_option(summary), &NAMED, summary) else {
        return Cow::Borrowed(summary);
    };
    let options = options();
    let end = caps.get(0).map_or(0, |m| m.end());
    // "Option 2's cost…" is not parted from its possessive.
    if summary[end..].starts_with(['\'', '’']) {
        return Cow::Borrowed(summary);
    }
    let label = (caps.iter().skip(1).flatten().next())
        .map_or(String::new(), |m| m.as_str().to_ascii_lowercase());
    let Some(option) = options.iter().find(|o| o.label == label) else {
        return Cow::Borrowed(summary);
    };
    let said = option.text.trim_end_matches(['.', ':', ';', ',']);
    let first_words = said
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    if (summary.to_lowercase()).contains(&first_words.to_lowercase()) {
        return Cow::Borrowed(summary);
    }
    let room = SUMMARY_MAX.saturating_sub(summary.chars().count() + 3);
    if room < SPELLED_MIN {
        return Cow::Borrowed(summary);
    }
    let said = truncate_words(said, room);
    Cow::Owned(format!(
        "{} ({}){}",
        &summary[..end],
        lowered(&said),
        &summary[end..]
    ))
}

/// `text` with its first letter in lower case when it starts a sentence ("Use the file" →
/// "use the file"), not when it starts a name or code ("API", "`Foo`").
fn lowered(text: &str) -> Cow<'_, str> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => Cow::Owned(
            first
                .to_lowercase()
                .chain(text[first.len_utf8()..].chars())
                .collect(),
        ),
        _ => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(laid: &LaidOut) -> Vec<Vec<(&str, &str)>> {
        laid.lists
            .iter()
            .map(|(_, l)| {
                (l.iter())
                    .map(|o| (o.label.as_str(), o.text.as_str()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn what_a_label_or_a_list_line_holds_is_looked_for_before_its_pattern() {
        let lines = [
            "Option 2: use the file",
            "**OPTION A — keep it**",
            "### Approach 1: parse once",
            "> - Alternative (b): retry",
            "\u{a0}\u{2003}1. Refactor",
            "  (c) drop it",
            "f) last",
            "Option 2's cost is lower",
            "we could take option (a) or Approach B",
            "g) not a list",
            "the optional flag",
        ];
        for line in lines {
            if LABELLED.is_match(line) || NAMED.is_match(line) {
                assert!(names_an_option(line), "{line}");
            }
            if LISTED.is_match(line) {
                assert!(may_be_listed(line), "{line}");
            }
        }
        assert!(LABELLED.is_match(lines[1]) && LISTED.is_match(lines[4]));
        assert!(!may_be_listed(lines[9]) && names_an_option(lines[10]));
    }

    #[test]
    fn options_are_labelled_lines_or_a_list_a_choice_leads_into() {
        let numbered = "We need to either:\n1. Refactor to parse stdin once\n2. Use the \
                        persisted session file\nThen:\n1. Run the tests\n2. Commit\n";
        assert_eq!(
            labels(&laid_out(numbered)),
            [[
                ("1", "Refactor to parse stdin once"),
                ("2", "Use the persisted session file")
            ]],
            "a numbered list of steps is no choice"
        );
        let labelled = "**Option A — A footer**\n\nThanks at the bottom:\n1. one\n2. two\n\n\
                        **Option B — Inline**\nThat's all.\n\nThe choices:\n\
                        1. **Move it** (cleaner)\n2. Keep it";
        assert_eq!(
            labels(&laid_out(labelled)),
            [
                vec![("a", "A footer"), ("b", "Inline")],
                vec![("1", "Move it (cleaner)"), ("2", "Keep it")]
            ]
        );
        let lettered = "Looking at the options:\n(a) Validate the name\n(b) Update the comment";
        assert_eq!(
            labels(&laid_out(lettered)),
            [[("a", "Validate the name"), ("b", "Update the comment")]]
        );
        assert!(laid_out("Option 1: only one\nThe end.").lists.is_empty());
        let detailed = "Two options:\n1. Foo the bar\n   - with a detail\n2. Baz the qux";
        assert_eq!(
            labels(&laid_out(detailed)),
            [[("1", "Foo the bar"), ("2", "Baz the qux")]]
        );
        let kinds =
            "Option A: one\nOption B: two\n\nLater prose.\nOption 3 - three\nOption 4 - four";
        assert_eq!(
            labels(&laid_out(kinds)),
            [
                vec![("a", "one"), ("b", "two")],
                vec![("3", "three"), ("4", "four")]
            ]
        );
        let run_together = "So I either need to:\n1. Keep the struct2. Add a new one";
        let laid = laid_out(run_together);
        assert!(laid.lists.is_empty() && laid.offered_at == Some(0));
        assert_eq!(laid_out("1. Run the tests\n2. Commit").offered_at, None);
        assert_eq!(
            laid_out("Option 2 - but keep the reader private").offered_at,
            None
        );
    }

    #[test]
    fn a_summary_that_names_an_option_spells_it_out() {
        let options = &laid_out(
            "The fix is to either:\n1. Make the private helper check global config\n\
             2. Pass the author in",
        )
        .lists[0]
            .1;
        assert_eq!(
            spelled_out("Option 1 is simpler since it fixes all call sites.", || {
                options
            }),
            "Option 1 (make the private helper check global config) is simpler since it fixes \
             all call sites."
        );
        // Said already, not named, another label, a possessive, or a letter that is a word:
        // as it is.
        for same in [
            "Option 1 (make the private helper check global config) is simpler.",
            "The helper is simpler.",
            "Option 3 is simpler.",
            "Option 2's cost is lower.",
        ] {
            assert_eq!(spelled_out(same, || options), same);
        }
        let lettered =
            &laid_out("Options:\n(a) Validate the name first\n(b) Update the comment").lists[0].1;
        for same in ["This approach a bit cleaner.", "Option b is it."] {
            assert_eq!(spelled_out(same, || lettered), same);
        }
        assert_eq!(
            spelled_out("Option (a) is safer.", || lettered),
            "Option (a) (validate the name first) is safer."
        );
        assert_eq!(
            spelled_out("Option A is safer.", || lettered),
            "Option A (validate the name first) is safer."
        );
        // Within the summary's limit, cut at a word, or not at all when too little room is left.
        let long = format!("Option 1 is cleaner {}.", "because ".repeat(13).trim());
        let spelled = spelled_out(&long, || options);
        assert!(
            spelled.contains("…)") && spelled.chars().count() <= SUMMARY_MAX,
            "{spelled}"
        );
        let longer = format!("Option 2 is cleaner {}.", "because ".repeat(17).trim());
        assert_eq!(spelled_out(&longer, || options), longer);
    }
}
