//! Redaction: every string that goes into an event passes here before it is stored or sent.
//!
//! The built-in rules follow the token formats catalogued by gitleaks (MIT License, Copyright
//! (c) 2019 Zachary Rice; <https://github.com/gitleaks/gitleaks>), written anew as Rust regexes.
//! A match becomes `[REDACTED:<rule>]`; redacting twice changes nothing. A [`Redactor`] adds
//! what the configuration says (`[redact]`: rules of the user's own, an allow-list, and the
//! globs of files whose content is never captured), and [`Taint`] scrubs what was seen of such
//! files from everything said after.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};
use serde::{Deserialize, Serialize};

use super::heuristic::ascii_boundaries;
use crate::config;
use crate::event::Event;

struct Rule {
    name: &'static str,
    /// The pattern, ASCII word boundaries in place.
    pattern: String,
    /// The capture group holding the secret (0: the whole match).
    group: usize,
    /// Whether a candidate secret is one (rules that match loosely check the value).
    accept: fn(&str) -> bool,
}

fn any_value(_: &str) -> bool {
    true
}

/// A word next to a secret-looking name is a secret when it looks random: long, with letters
/// and digits, and many different characters (Shannon entropy, in bits a character).
fn high_entropy(word: &str) -> bool {
    let mut counts = [0u32; 256];
    for b in word.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = word.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    let digits = word.bytes().any(|b| b.is_ascii_digit());
    let letters = word.bytes().any(|b| b.is_ascii_alphabetic());
    letters && (digits || entropy > 4.0) && entropy > 3.5
}

/// A value assigned to a secret-looking name is taken for a secret unless it reads like code:
/// an identifier, path or call (`form.get`, `password_field`, `std::env::var`) rather than a
/// literal.
fn literal_value(value: &str) -> bool {
    let identifier = value
        .chars()
        .all(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '.' | ':'));
    !identifier && !value.ends_with('(') && !value.starts_with('$')
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |name, pattern: &str, group| Rule {
        name,
        pattern: ascii_boundaries(pattern),
        group,
        accept: any_value,
    };
    vec![
        rule(
            "private-key",
            r"-----BEGIN[A-Z ]* PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[A-Z ]* PRIVATE KEY( BLOCK)?-----|\z)",
            0,
        ),
        rule(
            "aws-access-key",
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
            0,
        ),
        rule(
            "aws-secret-key",
            r#"(?i)aws[\w.-]{0,20}?(?:secret|private)[\w.-]{0,20}?["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})\b"#,
            1,
        ),
        rule(
            "github-token",
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
            0,
        ),
        rule(
            "gitlab-token",
            r"\bgl(?:pat|dt|ptt|rt|cbt|oas)-[A-Za-z0-9_-]{20,}\b",
            0,
        ),
        rule(
            "slack-token",
            r"\bxox[abposre]-[A-Za-z0-9-]{10,}\b|\bxapp-\d-[A-Za-z0-9-]{10,}\b|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
            0,
        ),
        rule(
            "stripe-key",
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
            0,
        ),
        rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
        rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", 0),
        rule(
            "openai-key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
            0,
        ),
        rule(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            0,
        ),
        rule(
            "url-password",
            r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:([^/\s@]{3,})@",
            1,
        ),
        rule(
            "authorization",
            r"(?i)\b(?:authorization|proxy-authorization)\s*[:=]\s*(?:bearer |basic |token )?([A-Za-z0-9._~+/=-]{8,})",
            1,
        ),
        Rule {
            accept: literal_value,
            ..rule(
                "secret-assignment",
                // The name ends at the secret word or goes on after a separator: `tokenizer`
                // and `secretary` are not secrets.
                r#"(?i)\b[A-Z0-9_.-]*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|private[_-]?key|access[_-]?key|credentials?|auth[_-]?key)s?(?:[_.-][A-Z0-9_.-]*)?["']?\s*[:=]\s*["']?([^\s"',;()]{6,})"#,
                1,
            )
        },
        Rule {
            accept: high_entropy,
            ..rule(
                "generic-secret",
                r#"(?i)\b(?:api[ _-]?key|secret|token|password|passwd|passphrase)\s+(?:is|was|of|=|:)?\s*["'`]?([A-Za-z0-9_+/=.~-]{16,})"#,
                1,
            )
        },
    ]
});

/// All rules at once, loosened: one pass over the text tells which rules need a closer look.
static ANY: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(RULES.iter().map(|r| loosened(&r.pattern)))
        .expect("redaction rules compile as a set")
});

/// `pattern` with every counted repetition made open: `{n,m}`, `{n,}` and `{n}` become `+`
/// (`*` when n is 0). What a pattern matches only grows, so the set of loosened rules finds
/// every text a rule would; and it builds several times faster (`{36,255}` is 255 copies of
/// a class), which every process that redacts anything pays once.
fn loosened(pattern: &str) -> String {
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

/// Each rule on its own, to find where its secret is: built only when some text holds one,
/// which spares most runs (a hook, say) the time to build them.
static EACH: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    RULES
        .iter()
        .map(|r| Regex::new(&r.pattern).expect("redaction rule compiles"))
        .collect()
});

/// What a redaction leaves in place of a secret.
static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z0-9-]+\]").expect("the marker compiles"));

/// A rule of the user's own (`[redact.rules]`).
#[derive(Debug, Clone)]
struct UserRule {
    name: String,
    re: Regex,
    group: usize,
}

/// The redaction pass: the built-in rules, then the user's, an allow-list over both, and the
/// globs of paths never to capture.
#[derive(Debug, Clone)]
pub struct Redactor {
    user: Vec<UserRule>,
    /// Anchored: a would-be secret is kept when one of them matches it whole.
    allow: Vec<Regex>,
    /// One regex for all the exclude globs.
    exclude: Regex,
}

impl Default for Redactor {
    /// The built-in rules and the default exclude globs.
    fn default() -> Redactor {
        Redactor::new(&config::Redact::default()).expect("the defaults are valid")
    }
}

/// Why a user rule cannot be used, in one line.
pub fn check_rule(name: &str, pattern: &str) -> Result<(), String> {
    user_rule(name, pattern).map(drop)
}

fn user_rule(name: &str, pattern: &str) -> Result<UserRule, String> {
    let named = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !named {
        return Err(format!(
            "the rule name {name:?} must be lowercase letters, digits and '-'"
        ));
    }
    let re = compile(pattern)?;
    if re.is_match("") {
        return Err(format!("{pattern:?} matches empty text"));
    }
    let group = usize::from(re.captures_len() > 1);
    Ok(UserRule {
        name: name.to_owned(),
        re,
        group,
    })
}

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| {
        // The regex crate draws the place on several lines; its last one says what is wrong.
        let what = e.to_string();
        let what = what
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        format!(
            "{pattern:?} is not a valid regex: {}",
            what.trim().trim_start_matches("error: ")
        )
    })
}

/// Why an exclude glob cannot be used, in one line.
pub fn check_glob(glob: &str) -> Result<(), String> {
    glob_regex(glob).map(drop)
}

/// A glob as a regex over `/`-separated paths, read as `.gitignore` reads it: `*` and `?` stay
/// within a path component, `**` crosses them, `[...]` is a class (`[!...]` its complement); a
/// glob without a `/` (but a trailing one) matches at any depth, one with a `/` from the top of
/// the working tree; and whatever a glob matches, it matches everything below too.
fn glob_regex(glob: &str) -> Result<String, String> {
    let trimmed = glob.strip_suffix('/').unwrap_or(glob);
    if trimmed.is_empty() {
        return Err(format!("the glob {glob:?} matches nothing"));
    }
    let anchored = trimmed.contains('/');
    let body = trimmed.strip_prefix('/').unwrap_or(trimmed);
    let mut out = String::from(if anchored { "^" } else { "^(?:.*/)?" });
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let whole =
                    (i == 0 || chars[i - 1] == '/') && matches!(chars.get(i + 2), None | Some('/'));
                if whole && chars.get(i + 2) == Some(&'/') {
                    out.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    out.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let close = (i + 2..chars.len())
                    .find(|&j| chars[j] == ']')
                    .ok_or_else(|| format!("the glob {glob:?} has a '[' without its ']'"))?;
                out.push('[');
                let mut inner = &chars[i + 1..close];
                if let Some(('!' | '^', rest)) = inner.split_first() {
                    out.push('^');
                    inner = rest;
                }
                for c in inner {
                    if matches!(c, '\\' | '[' | ']' | '^' | '&' | '~') {
                        out.push('\\');
                    }
                    out.push(*c);
                }
                out.push(']');
                i = close + 1;
                continue;
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out.push_str("(?:/.*)?$");
    Ok(out)
}

/// The characters that end a word of a shell command or of prose, for finding paths in
/// commands and values in text.
fn separator(c: char) -> bool {
    c.is_whitespace() || "\"'`,;()[]{}<>=|&$".contains(c)
}

impl Redactor {
    /// The built-in rules with what `settings` adds; a pattern that does not compile is an
    /// error (the configuration checks them all when it is read).
    pub fn new(settings: &config::Redact) -> Result<Redactor, String> {
        let user = settings
            .rules
            .iter()
            .map(|(name, pattern)| user_rule(name, pattern))
            .collect::<Result<_, _>>()?;
        let allow = settings
            .allow
            .iter()
            .map(|p| compile(&format!("^(?:{p})$")))
            .collect::<Result<_, _>>()?;
        let globs = settings
            .exclude
            .iter()
            .map(|g| glob_regex(g))
            .collect::<Result<Vec<_>, _>>()?;
        let exclude = Regex::new(&globs.join("|")).map_err(|e| e.to_string())?;
        Ok(Redactor {
            user,
            allow,
            exclude,
        })
    }

    /// Whether the content of `path` (relative to the top of the working tree, or absolute)
    /// must never be captured.
    pub fn excluded(&self, path: &str) -> bool {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.exclude.is_match(path)
    }

    /// Whether a shell command names a path whose content must not be captured (`cat .env`,
    /// `echo … >> secrets/prod.txt`).
    pub fn names_excluded(&self, command: &str) -> bool {
        command
            .split(separator)
            .filter(|w| !w.is_empty() && !w.starts_with('-'))
            .any(|w| self.excluded(w))
    }

    /// `text` with every secret replaced by `[REDACTED:<rule>]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        // Most text holds no secret: a plain search says so faster than an overlapping one.
        if ANY.is_match(text) {
            let hits = ANY.matches(text);
            for ((i, rule), re) in RULES.iter().enumerate().zip(EACH.iter()) {
                if hits.matched(i) {
                    self.apply(&mut out, re, rule.group, rule.name, rule.accept);
                }
            }
        }
        for rule in &self.user {
            self.apply(&mut out, &rule.re, rule.group, &rule.name, any_value);
        }
        out
    }

    /// One rule over `text`. A match that touches an earlier redaction is left alone, so that
    /// redacting again changes nothing.
    fn apply(
        &self,
        text: &mut Cow<'_, str>,
        re: &Regex,
        group: usize,
        name: &str,
        accept: fn(&str) -> bool,
    ) {
        if !re.is_match(text) {
            return;
        }
        let markers: Vec<Range<usize>> = if text.contains("[REDACTED:") {
            MARKER.find_iter(text).map(|m| m.range()).collect()
        } else {
            Vec::new()
        };
        let replaced = re.replace_all(text, |caps: &Captures| {
            let whole = caps.get(0).expect("group 0 is the match");
            let Some(secret) = caps.get(group).filter(|s| !s.is_empty()) else {
                return whole.as_str().to_owned();
            };
            let touches = markers
                .iter()
                .any(|m| m.start <= secret.end() && secret.start() <= m.end);
            if touches || !accept(secret.as_str()) || self.allowed(secret.as_str()) {
                return whole.as_str().to_owned();
            }
            let (start, end) = (secret.start() - whole.start(), secret.end() - whole.start());
            let w = whole.as_str();
            format!("{}[REDACTED:{name}]{}", &w[..start], &w[end..])
        });
        if let Cow::Owned(replaced) = replaced {
            *text = Cow::Owned(replaced);
        }
    }

    fn allowed(&self, secret: &str) -> bool {
        self.allow.iter().any(|a| a.is_match(secret))
    }

    pub(crate) fn redact_in_place(&self, s: &mut String) {
        if let Cow::Owned(clean) = self.redact(s) {
            *s = clean;
        }
    }

    /// Redact every free-text field of an event.
    pub fn redact_event(&self, event: &mut Event) {
        for_each_text(event, |s| self.redact_in_place(s));
    }
}

/// Every free-text field of an event.
fn for_each_text(event: &mut Event, mut f: impl FnMut(&mut String)) {
    f(&mut event.summary);
    f(&mut event.rationale);
    f(&mut event.prompt_context);
    event.alternatives.iter_mut().for_each(&mut f);
    event.files_affected.iter_mut().for_each(&mut f);
    for call in &mut event.tool_calls {
        f(&mut call.input);
    }
    for task in &mut event.tasks {
        f(&mut task.subject);
    }
}

/// The most values of excluded files a session remembers.
const TAINT_MAX: usize = 4096;

/// What a session has seen of files whose content is never captured (a `.env` it read, a key
/// it wrote), kept as hashes of the values — never the values — so that the same values are
/// scrubbed from whatever is said after (`[REDACTED:excluded-file]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Taint(BTreeSet<u64>);

impl Taint {
    /// Remember the values in `content`, the text of an excluded file or a command's output
    /// about one: on a `KEY=value` or `key: value` line the value, on other lines every long
    /// word; a value must look like one (a word of letters alone, such as `production`, is
    /// taken for a word unless it is 16 letters or more).
    pub fn add(&mut self, content: &str) {
        for line in content.lines() {
            // The Read tool numbers lines: `     1→KEY=value` (a tab in older versions).
            let line = line.trim();
            let line = match line.find(['→', '\t']) {
                Some(at) if at > 0 && line[..at].bytes().all(|b| b.is_ascii_digit()) => {
                    line[at..].trim_start_matches(['→', '\t']).trim()
                }
                _ => line,
            };
            if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            // A key is a name: UPPER_SNAKE, lower, or with separators (a line of base64,
            // mixed case and digits, can hold '=' too).
            let key = |k: &str| {
                let named = k
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
                let one_case = !k.bytes().any(|b| b.is_ascii_lowercase())
                    || !k.bytes().any(|b| b.is_ascii_uppercase());
                let separated = k.bytes().any(|b| b"_.-".contains(&b));
                (1..=48).contains(&k.len()) && named && (one_case || separated)
            };
            let (value, min) = match line.find(['=', ':']) {
                Some(at) if key(line[..at].trim_end()) => (&line[at + 1..], 6),
                _ => (line, 8),
            };
            for word in words(value) {
                let letters_only = word.chars().all(|c| c.is_alphabetic() || c == '-');
                let digits_only = word.chars().all(|c| c.is_ascii_digit() || c == '.');
                let valuelike = word.len() >= 16 || !(letters_only || digits_only);
                if word.len() >= min && valuelike && self.0.len() < TAINT_MAX {
                    self.0.insert(taint_hash(word));
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every remembered value replaced.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.0.is_empty() {
            return Cow::Borrowed(text);
        }
        let hits: Vec<&str> = words(text)
            .filter(|w| self.0.contains(&taint_hash(w)))
            .collect();
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = 0;
        for word in hits {
            // `words` gives slices of `text`: their offsets place them.
            let start = word.as_ptr() as usize - text.as_ptr() as usize;
            out.push_str(&text[rest..start]);
            out.push_str("[REDACTED:excluded-file]");
            rest = start + word.len();
        }
        out.push_str(&text[rest..]);
        Cow::Owned(out)
    }

    /// Scrub every free-text field of an event.
    pub fn scrub_event(&self, event: &mut Event) {
        if self.0.is_empty() {
            return;
        }
        for_each_text(event, |s| {
            if let Cow::Owned(clean) = self.scrub(s) {
                *s = clean;
            }
        });
    }
}

/// The words of `text` as values are written: split at spaces, quotes and brackets, without
/// the punctuation that ends a sentence.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(separator)
        .map(|w| w.trim_end_matches(['.', ',', ':', '!', '?']))
        .filter(|w| !w.is_empty())
}

fn taint_hash(word: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(text: &str) -> Cow<'_, str> {
        static DEFAULT: LazyLock<Redactor> = LazyLock::new(Redactor::default);
        DEFAULT.redact(text)
    }

    /// `tests/data/redaction/`: one sample a line, `\n`, `\t` and `\\` escaped.
    fn unescape(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                },
                (c, false) => out.push(c),
            }
        }
        out
    }

    fn samples(text: &str) -> impl Iterator<Item = &str> {
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
    }

    #[test]
    fn the_corpus_every_secret_redacted_at_most_two_false_positives() {
        let positives = include_str!("../../tests/data/redaction/positives.tsv");
        let negatives = include_str!("../../tests/data/redaction/negatives.txt");
        let mut missed = Vec::new();
        let mut count = 0;
        for line in samples(positives) {
            let fields: Vec<&str> = line.split('\t').collect();
            let [rule, secret, text] = fields[..] else {
                panic!("not rule<TAB>secret<TAB>text: {line}");
            };
            let (secret, text) = (unescape(secret), unescape(text));
            assert!(
                text.contains(&secret),
                "the sample holds its secret: {line}"
            );
            count += 1;
            let out = redact(&text);
            if out.contains(&secret) || !out.contains(&format!("[REDACTED:{rule}]")) {
                missed.push(format!("{rule}: {text:?} -> {out:?}"));
            }
            assert_eq!(redact(&out), out, "redaction is idempotent");
        }
        assert!(count >= 60, "{count} positive samples");
        assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
        let mut flagged = Vec::new();
        let mut count = 0;
        for line in samples(negatives) {
            let text = unescape(line);
            count += 1;
            let out = redact(&text);
            if out != text {
                flagged.push(format!("{text:?} -> {out:?}"));
            }
        }
        assert!(count >= 60, "{count} negative samples");
        assert!(
            flagged.len() <= 2,
            "false positives:\n{}",
            flagged.join("\n")
        );
    }

    #[test]
    fn loosening_opens_counted_repetitions_only() {
        assert_eq!(loosened(r"a[0-9]{16}\b"), r"a[0-9]+\b");
        assert_eq!(loosened(r"x{0,20}?y{36,255}z{8,}"), r"x*?y+z+");
        assert_eq!(loosened(r"\{not{a,count}"), r"\{not{a,count}");
    }

    #[test]
    fn redacts_common_secrets_and_keeps_context() {
        let cases = [
            (
                "key AKIAIOSFODNN7EXAMPLE here",
                "key [REDACTED:aws-access-key] here",
            ),
            (
                "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
                "export GITHUB_TOKEN=[REDACTED:github-token]",
            ),
            (
                "git clone https://bob:hunter22@example.com/r.git",
                "git clone https://bob:[REDACTED:url-password]@example.com/r.git",
            ),
            (
                "curl -H 'Authorization: Bearer abcdef0123456789'",
                "curl -H 'Authorization: Bearer [REDACTED:authorization]'",
            ),
            (
                "DB_PASSWORD=s3cr3tvalue",
                "DB_PASSWORD=[REDACTED:secret-assignment]",
            ),
            (
                "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
                "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
            assert_eq!(redact(want), want, "redaction is idempotent for {input}");
        }
        let pem = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(redact(pem), "a\n[REDACTED:private-key]\nb");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in [
            "commit 5afb02e1c3d4e5f60718293a4b5c6d7e8f901234 fixed it",
            "uuid f09d989d-c2d1-4016-89ee-21b62258d54a",
            "the token count is 2000",
            "let password_field = form.get(\"password\");",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    fn configured(rules: &[(&str, &str)], allow: &[&str], exclude: &[&str]) -> Redactor {
        let defaults = config::Redact::default();
        let settings = config::Redact {
            rules: rules
                .iter()
                .map(|(n, p)| ((*n).to_owned(), (*p).to_owned()))
                .collect(),
            allow: allow.iter().map(|a| (*a).to_owned()).collect(),
            exclude: (defaults.exclude.iter().cloned())
                .chain(exclude.iter().map(|g| (*g).to_owned()))
                .collect(),
        };
        Redactor::new(&settings).unwrap()
    }

    #[test]
    fn user_rules_add_and_the_allow_list_keeps() {
        let r = configured(
            &[
                ("acme-key", r"acme_[0-9a-f]{16}"),
                ("ticket", r"TICKET-(\d{6,})"),
            ],
            &["AKIAIOSFODNN7EXAMPLE", "sk_test_[A-Za-z0-9]+"],
            &[],
        );
        assert_eq!(
            r.redact("use acme_0123456789abcdef now, TICKET-123456"),
            "use [REDACTED:acme-key] now, TICKET-[REDACTED:ticket]"
        );
        assert_eq!(
            r.redact("AKIAIOSFODNN7EXAMPLE and sk_test_0123456789abcdefABCD"),
            "AKIAIOSFODNN7EXAMPLE and sk_test_0123456789abcdefABCD"
        );
        assert_eq!(
            r.redact("AKIAIOSFODNN7EXAMPLF"),
            "[REDACTED:aws-access-key]",
            "the allow-list keeps what it matches whole, nothing else"
        );
        // A rule that would match the marker itself leaves earlier redactions alone.
        let greedy = configured(&[("word", r"[A-Za-z:-]{8,}")], &[], &[]);
        let once = greedy.redact("token ghp_0123456789abcdefghijABCDEFGHIJ012345 leaked");
        assert_eq!(once, "token [REDACTED:github-token] leaked");
        assert_eq!(greedy.redact(&once), once);
    }

    #[test]
    fn bad_rules_say_what_is_wrong_in_one_line() {
        let e = check_rule("acme", "acme_(").unwrap_err();
        assert!(!e.contains('\n') && e.contains("not a valid regex"), "{e}");
        assert!(
            check_rule("Acme Key", "x")
                .unwrap_err()
                .contains("lowercase")
        );
        assert!(
            check_rule("any", "x*")
                .unwrap_err()
                .contains("matches empty text")
        );
        assert!(check_glob("[abc").unwrap_err().contains("without its ']'"));
        assert!(check_glob("/").is_err());
    }

    #[test]
    fn exclude_globs_read_as_gitignore_reads_them() {
        let r = configured(&[], &[], &["config/*.key", "private/"]);
        for path in [
            ".env",
            ".env.local",
            "app/.env.production",
            "certs/server.pem",
            "/home/me/.ssh/id_rsa",
            "/home/me/.ssh/id_rsa.pub",
            "secrets/prod/db.txt",
            "config/app.key",
            "./config/app.key",
            "private/notes.md",
            "x/private/y",
        ] {
            assert!(r.excluded(path), "{path} is excluded");
        }
        for path in [
            "src/env.rs",
            "environment.md",
            "docs/secrets.md",
            "app/secrets.rs",
            "config/sub/app.key",
            "x/config/app.key",
            "pem.rs",
            "README.md",
        ] {
            assert!(!r.excluded(path), "{path} is not excluded");
        }
        assert!(r.names_excluded("cat .env"));
        assert!(r.names_excluded("echo \"A=1\" >> app/.env.local"));
        assert!(r.names_excluded("ssh-keygen -f ~/.ssh/id_rsa -y"));
        assert!(!r.names_excluded("cargo test --env-file"));
        assert!(!r.names_excluded("git commit -m 'read env'"));
    }

    #[test]
    fn taint_scrubs_the_values_of_excluded_files_and_keeps_words() {
        let mut taint = Taint::default();
        taint.add(
            "     1→# local settings\n     2→DB_URL=postgres://app:pw@db/prod\n     3→\
             NODE_ENV=production\n     4→FLAG=blue-kiwi-42\n     5→PORT=8080\n",
        );
        taint.add("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n");
        let said = "Set FLAG to blue-kiwi-42. The URL is `postgres://app:pw@db/prod`; \
                    in production on port 8080 the key b3BlbnNzaC1rZXktdjEAAAAABG5vbmU= works.";
        assert_eq!(
            taint.scrub(said),
            "Set FLAG to [REDACTED:excluded-file]. The URL is `[REDACTED:excluded-file]`; \
             in production on port 8080 the key [REDACTED:excluded-file]= works."
        );
        let json = serde_json::to_string(&taint).unwrap();
        assert!(
            !json.contains("kiwi") && !json.contains("postgres"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Taint>(&json).unwrap(), taint);
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        /// Text made of pieces that rules look for, around and inside one another.
        fn text() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                Just("password=".to_owned()),
                Just("Authorization: Bearer ".to_owned()),
                Just("https://u:".to_owned()),
                Just("@".to_owned()),
                Just("[REDACTED:".to_owned()),
                Just("]".to_owned()),
                Just("ghp_0123456789abcdefghijABCDEFGHIJ012345".to_owned()),
                Just("AKIAIOSFODNN7EXAMPLE".to_owned()),
                Just("sk-ant-api03-abcdefghijklmnopqrstuvwxyz".to_owned()),
                Just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz".to_owned()),
                Just("-----BEGIN RSA PRIVATE KEY-----\nMIIE".to_owned()),
                Just("the api key is ".to_owned()),
                "[A-Za-z0-9_=:/+. -]{0,24}",
                ".{0,8}",
            ];
            proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat())
        }

        proptest! {
            #[test]
            fn redacting_twice_is_redacting_once(text in text()) {
                let greedy = configured(&[("word", r"[A-Za-z:-]{8,}")], &[], &[]);
                for r in [&Redactor::default(), &greedy] {
                    let once = r.redact(&text).into_owned();
                    prop_assert_eq!(r.redact(&once), once.as_str());
                }
            }
        }
    }
}
