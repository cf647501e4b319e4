//! The built-in rules: what a secret looks like ([`super::shapes`]), and where in a match it
//! is. The rules for values next to a secret's name (`secret-assignment`,
//! `command-line-secret`, `generic-secret`) judge the value: a literal is a secret, code that
//! computes one (`form.get`, `env::var`, `Option<String>`, `$TOKEN`) is not; so does
//! `env-dump`, for the values no name marks as secret.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use regex::{Captures, Regex};
use regex_automata::util::syntax::Config;

use super::shapes::{ENV_LINE, Secret, shapes};
use crate::classify::patterns::{Set, ascii_boundaries, loosened};

pub(super) struct Rule {
    pub name: &'static str,
    /// The pattern, ASCII word boundaries in place.
    pub pattern: String,
    /// Where the secret is in a match (`haystack` is the whole text), or `None` when the match
    /// holds no secret after all.
    pub secret: fn(haystack: &str, caps: &Captures<'_>) -> Option<Range<usize>>,
    /// Every match of the pattern holds one of these, in ASCII lower case, once the match is
    /// put in lower case too (see [`may_match`]).
    pub needs: &'static [&'static str],
}

/// The secret is the group named `s`, or the whole match when the rule has none.
fn group_s(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    caps.name("s").or_else(|| caps.get(0)).map(|m| m.range())
}

/// Shannon entropy of `word`, in bits a character.
fn entropy(word: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in word.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = word.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A word is random-looking: letters with digits, or many different characters.
fn high_entropy(word: &str) -> bool {
    let digits = word.bytes().any(|b| b.is_ascii_digit());
    let letters = word.bytes().any(|b| b.is_ascii_alphabetic());
    let e = entropy(word);
    letters && (digits || e > 4.0) && e > 3.5
}

/// A value that stands for a secret without being one: a variable (`$TOKEN`, `${{ secrets.X }}`,
/// `%(pass)s`), a template (`{token}`, `<your-key>`), a mask (`******`), or the word itself.
fn placeholder(value: &str) -> bool {
    let v = value.trim();
    let first = v.chars().next().unwrap_or(' ');
    let masked = v.chars().all(|c| c == first);
    let word = [
        "password", "secret", "token", "changeme", "example", "redacted",
    ]
    .iter()
    .any(|w| v.eq_ignore_ascii_case(w));
    "$<{%[".contains(first) || v.ends_with('}') || v.ends_with('>') || masked || word
}

/// A bare value that reads as code rather than a literal: an identifier, a path or a call
/// (`form.get`, `password_field`, `std::env::var`), a type (`Option<String>`, `&str`), or a
/// number (`max_tokens = 4096`).
fn code(value: &str, next: Option<char>) -> bool {
    // `process.env.KEY!`, `env::var(…)?`: TypeScript's and Rust's postfix operators.
    let value = value.trim_end_matches(['!', '?']);
    let identifier = value
        .chars()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '.' | ':'));
    let number = value
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '_');
    identifier || number || value.starts_with('&') || matches!(next, Some('(' | '<' | '['))
}

/// `KEY=value` with an upper-case name and no spaces, as in a `.env` file or a shell: the value
/// is a literal whatever it looks like (`DB_PASSWORD=supersecret`).
fn env_style(key: &str, op: &str) -> bool {
    op == "="
        && key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// `secret-assignment`: a quoted value (`q`, `r`, `g` in backticks) is a secret unless a placeholder; a bare one
/// (`b`) unless it reads as code, or, in the `.env` style, whatever it is.
fn assignment(haystack: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let (key, op) = (&caps["key"], caps["op"].trim());
    // The shell's working folders (`PWD=/home/u/src` in any environment dump), not a
    // password's short name (`"pwd": "…"`, `DB_PWD=…` are).
    let folder = ["q", "r", "b"]
        .iter()
        .find_map(|g| caps.name(g))
        .is_some_and(|v| v.as_str().starts_with(['/', '~']));
    if matches!(key, "PWD" | "OLDPWD") && op == "=" && folder {
        return None;
    }
    if let Some(quoted) = caps
        .name("q")
        .or_else(|| caps.name("r"))
        .or_else(|| caps.name("g"))
    {
        return (!placeholder(quoted.as_str())).then(|| quoted.range());
    }
    let bare = caps.name("b")?;
    let value = bare.as_str();
    if placeholder(value) {
        return None;
    }
    let next = haystack[bare.end()..].chars().next();
    let literal = (env_style(key, op) && !value.contains('.')) || !code(value, next);
    literal.then(|| bare.range())
}

/// `authorization`: after a scheme (`Bearer …`) any token; without one, a literal; a lone
/// `Bearer` token must look random.
fn authorization(haystack: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    if let Some(token) = caps.name("t") {
        return high_entropy(token.as_str()).then(|| token.range());
    }
    let s = caps.name("s")?;
    let next = haystack[s.end()..].chars().next();
    let literal = caps.name("scheme").is_some() || !code(s.as_str(), next);
    (literal && !placeholder(s.as_str())).then(|| s.range())
}

/// `command-line-secret`: the value of a password or token option, quoted (`q`, `r`: spaces
/// and all) or bare (`s`), unless a placeholder.
fn option_value(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let s = caps
        .name("q")
        .or_else(|| caps.name("r"))
        .or_else(|| caps.name("s"))?;
    (!placeholder(s.as_str())).then(|| s.range())
}

/// `generic-secret`: a random-looking word after a secret's name.
fn random_word(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let s = caps.name("s")?;
    high_entropy(s.as_str()).then(|| s.range())
}

static ENV_LINE_WHOLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{ENV_LINE}")).expect("the line pattern compiles"));

/// `env-dump`: the value of a line of an environment, when the line before or after is one too
/// and the value looks random.
///
/// What is stored is what a session said — its reasoning, its prompts, its commands — never a
/// command's output as such: a dump reaches a note when the agent or the user quotes it, far
/// from the `env` that printed it. So the dump is known by its shape, two or more `NAME=value`
/// lines in a row, not by the command; a single `NAME=value` in prose or code is left to the
/// rules that read its name.
fn dump_value(haystack: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let v = caps.name("v")?;
    let line_start = caps.get(0)?.start();
    let before = haystack[..line_start]
        .strip_suffix('\n')
        .map(|b| b.rsplit('\n').next().unwrap_or(b));
    let after = haystack[v.end()..]
        .strip_prefix('\n')
        .map(|a| a.split('\n').next().unwrap_or(a));
    let in_dump = [before, after]
        .into_iter()
        .flatten()
        .any(|line| ENV_LINE_WHOLE.is_match(line));
    if !in_dump {
        return None;
    }
    let raw = v.as_str().trim_end_matches('\r');
    // `"…"` from bash's `export -p`, `'…'` from dash's and from `set`, `$'…'` for a value
    // with control characters in it.
    let (open, value) = [("\"", '"'), ("$'", '\''), ("'", '\'')]
        .iter()
        .find_map(|&(open, close)| {
            let inner = raw.strip_prefix(open)?.strip_suffix(close)?;
            Some((open.len(), inner))
        })
        .unwrap_or((0, raw));
    let start = v.start() + open;
    random_value(value).then(|| start..start + value.len())
}

/// An environment's value that may be a secret: 16 characters or more with a random-looking
/// run of letters and digits in it. Kept: paths and lists of them (`PATH`, `HOME`, `SHELL`),
/// words, versions, locales (`en_US.UTF-8`), UUIDs (runs of 12 at most), hosts, URLs whose
/// every part is a word. A hash or a commit id is not kept: 40 or 32 hex digits are also
/// what many keys are (GitHub's older OAuth tokens, Datadog's, Mailgun's), and a dump tells
/// nothing apart.
fn random_value(value: &str) -> bool {
    if value.len() < 16 {
        return false;
    }
    let paths = value
        .split(':')
        .all(|p| p.is_empty() || p.starts_with(['/', '~', '.']));
    if paths {
        return false;
    }
    // Base64 is judged whole: its `/` and `+` fall anywhere.
    let base64 = value.trim_end_matches('=');
    let encoded = base64.len() >= 20
        && base64
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    (encoded && high_entropy(base64))
        || value
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '+')
            .any(|run| run.len() >= 16 && high_entropy(run))
}

pub(super) static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    shapes()
        .into_iter()
        .map(|shape| Rule {
            name: shape.name,
            pattern: ascii_boundaries(&shape.pattern),
            secret: match shape.secret {
                Secret::Matched => group_s,
                Secret::Authorization => authorization,
                Secret::OptionValue => option_value,
                Secret::Assignment => assignment,
                Secret::RandomWord => random_word,
                Secret::EnvDump => dump_value,
            },
            needs: shape.needs,
        })
        .collect()
});

/// All rules at once, loosened: one pass over `text` tells which rules need a closer look.
/// One of two sets: for text of ASCII alone (nearly all a hook sees: paths, code, commands),
/// the set `build.rs` compiled with Unicode off, which on such text matches where the Unicode
/// one does — case folding, `\w`, `\s`, `\b`, `.` and the classes differ only on characters
/// past ASCII; for other text, with Unicode on, compiled once in the process that needs it.
pub(super) fn any(text: &str) -> &'static Set {
    match text.is_ascii() {
        true => ASCII.get_or_init(|| {
            Set::prebuilt(
                include_bytes!(concat!(env!("OUT_DIR"), "/redaction.nfa")),
                CACHE,
            )
        }),
        false => UNICODE.get_or_init(|| Set::new(set_patterns(), Config::new(), CACHE)),
    }
}

/// The room for a set's lazy DFA states, shared out among its automata.
const CACHE: usize = 2 << 20;

static ASCII: OnceLock<Set> = OnceLock::new();
static UNICODE: OnceLock<Set> = OnceLock::new();

/// The patterns of the set of all rules, loosened, in the rules' order: what `build.rs`
/// compiles too.
fn set_patterns() -> Vec<String> {
    RULES.iter().map(|rule| loosened(&rule.pattern)).collect()
}

/// Whether some rule may match `text`; `false` when none can: the text is ASCII and holds
/// none of what each rule's every match holds (its `needs`, case aside). A process that
/// redacts a few short strings and nothing else — a hook recording "Read <path>" — is spared
/// loading the set. Once the set is loaded, or for long text, it answers `true` and the set
/// decides.
pub(super) fn may_match(text: &str) -> bool {
    !text.is_ascii() || text.len() > 4096 || ASCII.get().is_some() || holds_a_need(text)
}

/// Whether `text` holds what every match of some rule holds ([`Rule::needs`]).
fn holds_a_need(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    RULES
        .iter()
        .any(|rule| rule.needs.iter().any(|n| lower.contains(n)))
}

/// Each rule on its own, to find where its secret is: built when some text holds what that
/// rule looks for, which spares most runs (a hook, say) the time to build them, and the others
/// all but the few rules their texts call for (building all of them took 10 ms).
static EACH: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| RULES.iter().map(|_| OnceLock::new()).collect());

/// Rule `i` on its own (see [`EACH`]).
pub(super) fn each(i: usize) -> &'static Regex {
    EACH[i].get_or_init(|| Regex::new(&RULES[i].pattern).expect("redaction rule compiles"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::patterns::{ascii, assert_built_of};

    /// The automata of the set `build.rs` compiled for ASCII text are those the rules compile
    /// to here, state for state.
    #[test]
    fn the_set_compiled_with_the_binary_is_that_of_the_rules() {
        let patterns = set_patterns();
        assert_eq!(patterns.len(), RULES.len());
        assert_built_of(any("ascii"), &patterns, ascii(), "redaction");
    }

    /// The corpus's samples, each in other cases and spacings, and 20,000 texts made of the
    /// pieces secrets and their names are made of.
    fn texts() -> Vec<String> {
        let corpus = [
            include_str!("../../../tests/data/redaction/positives.tsv"),
            include_str!("../../../tests/data/redaction/negatives.txt"),
        ];
        let mut texts: Vec<String> = Vec::new();
        for line in corpus.iter().flat_map(|c| c.lines()) {
            let text = line.rsplit('\t').next().unwrap_or(line);
            let text = text.replace("\\n", "\n").replace("\\t", "\t");
            texts.extend([
                text.to_uppercase(),
                text.to_lowercase(),
                text.replace(' ', "\t"),
                text.replace(['=', ':'], " = "),
                text.clone(),
            ]);
        }
        let pieces = [
            "password",
            "Secret",
            "TOKEN",
            "api_key",
            "API-KEY",
            "passphrase",
            "AKIA",
            "ghp_",
            "sk-",
            "xoxb-",
            "-----BEGIN ",
            "PRIVATE KEY-----",
            "Bearer ",
            "Authorization:",
            "export ",
            "--password",
            "-p",
            "=",
            ": ",
            "\"",
            "'",
            "`",
            " is ",
            "\t",
            "\n",
            "$TOKEN",
            "${{ secrets.X }}",
            "Zk3q9XbT7vLm2PwR8sYd",
            "aGVsbG8gd29ybGQ=",
            "/",
            "+",
            "0123456789abcdef",
            "mongodb://",
            "@",
            "postgres://user:",
            "https://",
            ".",
            "_",
            "AIza",
            "glpat-",
            "npm_",
            "AccountKey=",
            "xprv",
            "eyJhbGciOi",
            "aws_secret_access_key",
            "sshpass -p ",
            "mysql -u root -p",
            "docker login -u x -p ",
            "redis-cli -a ",
            "curl -u user:",
            "https://hooks.slack.com/services/",
            "xapp-1-",
            "whsec_",
            "sk_live_",
            "hf_",
            "api_org_",
            "&sig=",
            "SharedAccessKey=",
            "github_pat_",
            "GR1348941",
            "DB_PWD",
            "credentials",
            "auth_token",
            "access_key",
            "k",
            "s",
            " ",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..1 + seed % 9 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            texts.push(text);
        }
        texts
    }

    /// On text of ASCII alone, the set compiled without Unicode finds the rules the Unicode one
    /// does: over the corpus's samples, each in other cases and spacings, and 20,000 texts
    /// made of the pieces secrets and their names are made of.
    #[test]
    fn on_ascii_text_the_ascii_set_finds_what_the_unicode_set_finds() {
        let (ascii, unicode) = (any("ascii"), any("ünicode"));
        let texts = texts();
        let mut rules_found = std::collections::BTreeSet::new();
        for text in texts.iter().filter(|t| t.is_ascii()) {
            let found = |set: &Set| set.matches(text.as_bytes()).collect::<Vec<_>>();
            assert_eq!(found(ascii), found(unicode), "{text:?}");
            rules_found.extend(found(unicode));
        }
        // Every rule was put to the test by some text.
        assert_eq!(rules_found.len(), RULES.len());
    }

    /// A text with nothing a rule needs is let through unsearched, so each rule's needs must
    /// hold of every text the rule can match: here, every text the loosened set (which matches
    /// where the rule does, and more) finds the rule in.
    #[test]
    fn every_match_holds_what_its_rule_needs() {
        let set = any("ascii");
        let mut rules_met = std::collections::BTreeSet::new();
        for text in texts().iter().filter(|t| t.is_ascii()) {
            let lower = text.to_ascii_lowercase();
            for i in set.matches(text.as_bytes()) {
                let rule = &RULES[i];
                let met = rule.needs.iter().any(|n| lower.contains(n));
                assert!(met, "{} matches {text:?} without what it needs", rule.name);
                assert!(holds_a_need(text));
                rules_met.insert(i);
            }
        }
        assert_eq!(rules_met.len(), RULES.len());
    }

    /// What the texts above sample, for every text: no text of ASCII holds a match of a rule's
    /// loosened pattern (which matches wherever the rule does) without what the rule needs.
    /// Each rule's automaton is walked in step with one that finds its needs (case aside), over
    /// every ASCII byte from the start, pair of states by pair of states; a pair in which the
    /// rule has matched and no need has been seen would be such a text.
    #[test]
    fn no_text_matches_a_rule_without_what_it_needs() {
        use regex_automata::hybrid::dfa::DFA;
        use regex_automata::nfa::thompson;
        use regex_automata::util::syntax;
        use regex_automata::{Input, MatchKind};
        let build = |pattern: &str| {
            DFA::builder()
                .syntax(syntax::Config::new().unicode(false).utf8(false))
                .thompson(thompson::Config::new().utf8(false))
                .configure(
                    DFA::config()
                        .match_kind(MatchKind::All)
                        .cache_capacity(64 << 20),
                )
                .build(pattern)
                .expect("the pattern builds")
        };
        for rule in RULES.iter() {
            assert!(!rule.needs.is_empty(), "{}", rule.name);
            let matches = build(&loosened(&rule.pattern));
            let needs: Vec<String> = rule.needs.iter().map(|n| regex::escape(n)).collect();
            let needed = build(&format!("(?i:{})", needs.join("|")));
            let (mut m, mut n) = (matches.create_cache(), needed.create_cache());
            let start = |dfa: &DFA, cache| {
                dfa.start_state_forward(cache, &Input::new(""))
                    .expect("a start state")
            };
            let first = (start(&matches, &mut m), start(&needed, &mut n));
            let mut reached = std::collections::HashSet::from([first]);
            let mut queue = vec![first];
            while let Some((at, seen)) = queue.pop() {
                // The text ends here.
                let end = matches.next_eoi_state(&mut m, at).expect("a state");
                let ended = needed.next_eoi_state(&mut n, seen).expect("a state");
                assert!(
                    ended.is_match() || !end.is_match(),
                    "{} matches a text without what it needs",
                    rule.name
                );
                for byte in 0..128u8 {
                    // A match state comes one byte after its match: both tell of the text
                    // before `byte`.
                    let seen = needed.next_state(&mut n, seen, byte).expect("a state");
                    if seen.is_match() {
                        continue;
                    }
                    let at = matches.next_state(&mut m, at, byte).expect("a state");
                    assert!(
                        !at.is_match(),
                        "{} matches a text without what it needs",
                        rule.name
                    );
                    if !at.is_dead() && reached.insert((at, seen)) {
                        queue.push((at, seen));
                    }
                }
            }
            // The states' ids held throughout: neither cache was cleared.
            assert_eq!(m.clear_count() + n.clear_count(), 0, "{}", rule.name);
        }
    }

    /// What a hook records of a read or an edit is let through without building the rules;
    /// every sample secret is looked at.
    #[test]
    fn a_path_needs_no_closer_look_and_a_secret_does() {
        for text in [
            "Read cmd/entire/cli/explain.go",
            r#"{"file_path":"/home/dev/src/app/src/store/notes.rs"}"#,
            "Edited src/classify/heuristic.rs",
            "feature/faster-hooks",
        ] {
            assert!(!holds_a_need(text), "{text}");
        }
        let positives = include_str!("../../../tests/data/redaction/positives.tsv");
        for line in positives.lines().filter(|l| !l.starts_with('#')) {
            let text = line.rsplit('\t').next().unwrap_or(line);
            let text = text.replace("\\n", "\n").replace("\\t", "\t");
            assert!(!text.is_ascii() || holds_a_need(&text), "{text}");
        }
    }

    #[test]
    fn values_that_are_code_or_placeholders_are_not_secrets() {
        for (value, next) in [
            ("form.get", Some('(')),
            ("std::env::var", Some('(')),
            ("Option", Some('<')),
            ("4096", None),
            ("&str", None),
            ("password_field", None),
        ] {
            assert!(code(value, next), "{value}");
        }
        for value in ["s3cr3t-value", "hunter22", "xY8u5YD^jUQ"] {
            assert!(!code(value, None), "{value}");
        }
        for value in [
            "$DB_PASS",
            "${{ secrets.X }}",
            "<your-key>",
            "********",
            "changeme",
        ] {
            assert!(placeholder(value), "{value}");
        }
        assert!(!placeholder("correct horse battery staple"));
    }
}
