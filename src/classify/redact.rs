//! Redaction: every string that goes into an event passes here before it is stored or sent.
//!
//! The rules follow the token formats catalogued by gitleaks (MIT License, Copyright (c) 2019
//! Zachary Rice; <https://github.com/gitleaks/gitleaks>), written anew as Rust regexes. A match
//! becomes `[REDACTED:<rule>]`; redacting twice changes nothing.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use super::heuristic::ascii_boundaries;
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

/// A value assigned to a secret-looking name is taken for a secret unless it reads like code:
/// an identifier or call (`form.get`, `password_field`) rather than a literal.
fn literal_value(value: &str) -> bool {
    let identifier = value
        .chars()
        .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '.');
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
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
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
            r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:([^/\s@]{3,})@",
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
                r#"(?i)\b[A-Z0-9_.-]*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|private[_-]?key|access[_-]?key|credentials?|auth[_-]?key)[A-Z0-9_]*["']?\s*[:=]\s*["']?([^\s"',;()]{6,})"#,
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

/// `text` with every secret replaced by `[REDACTED:<rule>]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    // Most text holds no secret: a plain search says so faster than an overlapping one.
    if !ANY.is_match(text) {
        return Cow::Borrowed(text);
    }
    let hits = ANY.matches(text);
    let mut out = Cow::Borrowed(text);
    for ((i, rule), re) in RULES.iter().enumerate().zip(EACH.iter()) {
        if !hits.matched(i) {
            continue;
        }
        let replaced = re
            .replace_all(&out, |caps: &Captures| {
                let whole = caps.get(0).expect("group 0 is the match");
                let Some(secret) = caps.get(rule.group) else {
                    return whole.as_str().to_owned();
                };
                if secret.as_str().starts_with("[REDACTED") || !(rule.accept)(secret.as_str()) {
                    return whole.as_str().to_owned();
                }
                let (start, end) = (secret.start() - whole.start(), secret.end() - whole.start());
                let w = whole.as_str();
                format!("{}[REDACTED:{}]{}", &w[..start], rule.name, &w[end..])
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    out
}

fn redact_in_place(s: &mut String) {
    if let Cow::Owned(clean) = redact(s) {
        *s = clean;
    }
}

/// Redact every free-text field of an event.
pub fn redact_event(event: &mut Event) {
    redact_in_place(&mut event.summary);
    redact_in_place(&mut event.rationale);
    redact_in_place(&mut event.prompt_context);
    event.alternatives.iter_mut().for_each(redact_in_place);
    event.files_affected.iter_mut().for_each(redact_in_place);
    for call in &mut event.tool_calls {
        redact_in_place(&mut call.input);
    }
    for task in &mut event.tasks {
        redact_in_place(&mut task.subject);
    }
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
}
