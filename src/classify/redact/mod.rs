//! Redaction: every string that goes into an event passes here before it is stored or sent.
//!
//! A [`Redactor`] holds the built-in rules (`shapes.rs`: token formats, and values next to a
//! secret's name; `rules.rs`: where in a match the secret is) and what the configuration adds (`[redact]`: rules of the user's own, an
//! allow-list, and the globs of files whose content is never captured, `exclude.rs`). A match
//! becomes `[REDACTED:<rule>]`; redacting twice changes nothing. [`Taint`] scrubs what a
//! session saw of excluded files from everything it said after; a [`Cleaner`] applies both.
//!
//! Text is redacted whole, before it is split or cut: a split can part a secret from the name
//! that tells it is one, and a cut can leave part of a secret that no rule recognises.

mod exclude;
mod rules;
mod shapes;
mod taint;
mod user;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use exclude::Exclude;
pub use exclude::check_glob;
use rules::{RULES, any, each, may_match};
pub use taint::Taint;
pub use user::{DEFAULT_EXCLUDE, Invalid, Settings};

use crate::event::{Event, SUMMARY_MAX, truncate_words};

/// What a redaction leaves in place of a secret.
static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z0-9-]+\]").expect("the marker compiles"));

/// A rule of the user's own (`[redact.rules]`).
#[derive(Debug, Clone)]
struct UserRule {
    name: String,
    re: Regex,
    /// The index of the group named `secret`, if the rule has one; else the whole match is.
    group: Option<usize>,
}

/// The redaction pass: the built-in rules, then the user's, an allow-list over both, and the
/// globs of paths never to capture.
#[derive(Debug, Clone)]
pub struct Redactor {
    user: Vec<UserRule>,
    /// Anchored: a would-be secret is kept when one of them matches it whole.
    allow: Vec<Regex>,
    exclude: Exclude,
}

impl Default for Redactor {
    /// The built-in rules and the default exclude globs.
    fn default() -> Redactor {
        Redactor::new(&Settings::default()).expect("the defaults are valid")
    }
}

/// Why a user rule cannot be used, in one line.
pub fn check_rule(name: &str, pattern: &str) -> Result<(), Invalid> {
    user_rule(name, pattern).map(drop)
}

fn user_rule(name: &str, pattern: &str) -> Result<UserRule, Invalid> {
    let named = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !named {
        return Err(Invalid::RuleName(name.to_owned()));
    }
    let re = compile(pattern)?;
    if re.is_match("") {
        return Err(Invalid::MatchesEmpty(pattern.to_owned()));
    }
    let group = re.capture_names().position(|n| n == Some("secret"));
    Ok(UserRule {
        name: name.to_owned(),
        re,
        group,
    })
}

/// Why an allow-list pattern cannot be used, in one line.
pub fn check_allow(pattern: &str) -> Result<(), Invalid> {
    allow_regex(pattern).map(drop)
}

/// An allow-list pattern, anchored so that it matches a secret whole.
fn allow_regex(pattern: &str) -> Result<Regex, Invalid> {
    compile(pattern)?;
    compile(&format!("^(?:{pattern})$")).map_err(|_| Invalid::NotWhole(pattern.to_owned()))
}

fn compile(pattern: &str) -> Result<Regex, Invalid> {
    Regex::new(pattern).map_err(|e| {
        // The regex crate draws the place on several lines; its last one says what is wrong.
        let what = e.to_string();
        let what = what
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Invalid::Regex {
            pattern: pattern.to_owned(),
            why: what.trim().trim_start_matches("error: ").to_owned(),
        }
    })
}

/// The characters that end a word of a shell command or of prose, for finding paths in
/// commands and values in text.
fn separator(c: char) -> bool {
    c.is_whitespace() || "\"'`,;()[]{}<>=|&$".contains(c)
}

impl Redactor {
    /// The built-in rules with what `settings` adds; a pattern that does not compile is an
    /// error (the configuration checks them all when it is read).
    pub fn new(settings: &Settings) -> Result<Redactor, Invalid> {
        let user = settings
            .rules
            .iter()
            .map(|(name, pattern)| user_rule(name, pattern))
            .collect::<Result<_, _>>()?;
        let allow = settings
            .allow
            .iter()
            .map(|p| allow_regex(p))
            .collect::<Result<_, _>>()?;
        Ok(Redactor {
            user,
            allow,
            exclude: Exclude::new(&settings.exclude)?,
        })
    }

    /// Whether the content of `path` (relative to the top of the working tree) must never be
    /// captured.
    pub fn excluded(&self, path: &str) -> bool {
        self.exclude.matches(path)
    }

    /// Whether a shell command names a path whose content must not be captured (`cat .env`,
    /// `echo … >> secrets/prod.txt`, `git show HEAD:.env`); `relative` makes a word a path
    /// from the top of the working tree (an absolute path inside it). Quotes inside a word do
    /// not split it (`cat 'secrets'/prod.txt`), and a `cd` moves where the words after it are
    /// read from (`cd sub && cat ../secrets/prod.txt`).
    pub fn names_excluded(&self, command: &str, relative: impl Fn(&str) -> String) -> bool {
        // Where the command is, relative to where it started, after its `cd`s.
        let mut here: Option<String> = None;
        for part in command.split(['\n', ';', '&', '|']) {
            let unquoted: String = part.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
            let mut words = unquoted
                .split(separator)
                .filter(|w| !w.is_empty())
                .peekable();
            if words.next_if_eq(&"cd").is_some() {
                here = match (words.next(), here) {
                    (Some(dir), _) if dir.starts_with(['/', '~']) => Some(dir.to_owned()),
                    (Some(dir), Some(at)) => Some(format!("{at}/{dir}")),
                    (Some(dir), None) => Some(dir.to_owned()),
                    (None, _) => Some("~".to_owned()),
                };
                continue;
            }
            let from_here = |w: &str| match &here {
                Some(at) if !w.starts_with(['/', '~']) => relative(&format!("{at}/{w}")),
                _ => relative(w),
            };
            let named = words
                .filter(|w| !w.starts_with('-'))
                .flat_map(|w| [Some(w), w.rsplit_once(':').map(|(_, path)| path)])
                .flatten()
                .any(|w| !w.is_empty() && self.excluded(&from_here(w)));
            if named {
                return true;
            }
        }
        false
    }

    /// `text` with every secret replaced by `[REDACTED:<rule>]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        // Most text holds no secret: a plain search says so faster than an overlapping one,
        // and a look for the words rules need, before the search is built, faster still.
        let any = may_match(text).then(|| any(text));
        if let Some(any) = any.filter(|any| any.is_match(text.as_bytes())) {
            for i in any.matches(text.as_bytes()) {
                let rule = &RULES[i];
                self.apply(&mut out, each(i), rule.name, rule.secret);
            }
        }
        for rule in &self.user {
            let group = rule.group;
            self.apply(&mut out, &rule.re, &rule.name, |_, caps| {
                group
                    .and_then(|g| caps.get(g))
                    .or_else(|| caps.get(0))
                    .map(|m| m.range())
            });
        }
        out
    }

    /// One rule over `text`: each match, from left to right, is replaced where `secret` finds
    /// a secret in it. A match that holds none (code, a placeholder) moves the search on by one
    /// character only, so that it hides no secret after it; one that touches an earlier
    /// redaction, or reads into one, is left alone, so that redacting again changes nothing.
    fn apply(
        &self,
        text: &mut Cow<'_, str>,
        re: &Regex,
        name: &str,
        secret: impl Fn(&str, &Captures<'_>) -> Option<Range<usize>>,
    ) {
        if !re.is_match(text) {
            return;
        }
        let markers: Vec<Range<usize>> = if text.contains("[REDACTED:") {
            MARKER.find_iter(text).map(|m| m.range()).collect()
        } else {
            Vec::new()
        };
        let next_char = |at: usize| {
            text[at..]
                .chars()
                .next()
                .map_or(text.len() + 1, |c| at + c.len_utf8())
        };
        let mut spans: Vec<Range<usize>> = Vec::new();
        let mut at = 0;
        while at <= text.len() {
            let Some(caps) = re.captures_at(text, at) else {
                break;
            };
            let whole = caps.get(0).expect("group 0 is the match");
            // A match that reaches into a redaction read the marker's words (`…-token]`) as
            // text: it is not one.
            let into_marker = markers
                .iter()
                .any(|m| m.start < whole.end() && whole.start() < m.end);
            let found = secret(text, &caps).filter(|s| {
                !into_marker
                    && !s.is_empty()
                    && !markers.iter().any(|m| m.start <= s.end && s.start <= m.end)
                    && !self.allowed(&text[s.clone()])
            });
            match found {
                Some(s) => {
                    at = whole.end().max(s.end);
                    if whole.is_empty() {
                        at = next_char(at);
                    }
                    spans.push(s);
                }
                None => at = next_char(whole.start()),
            }
        }
        if spans.is_empty() {
            return;
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = 0;
        for s in spans {
            out.push_str(&text[rest..s.start]);
            out.push_str("[REDACTED:");
            out.push_str(name);
            out.push(']');
            rest = s.end;
        }
        out.push_str(&text[rest..]);
        *text = Cow::Owned(out);
    }

    fn allowed(&self, secret: &str) -> bool {
        self.allow.iter().any(|a| a.is_match(secret))
    }

    /// Redact every string of an event.
    pub fn redact_event(&self, event: &mut Event) {
        for_each_text(event, |s| {
            if let Cow::Owned(clean) = self.redact(s) {
                *s = clean;
            }
        });
        keep_summary_short(event);
    }
}

/// Redaction and a session's [`Taint`] together: what every string of an event passes through.
#[derive(Debug, Clone, Copy)]
pub struct Cleaner<'a> {
    pub redactor: &'a Redactor,
    pub taint: &'a Taint,
}

impl Cleaner<'_> {
    /// `text` redacted, and scrubbed of what the session saw of excluded files.
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let redacted = self.redactor.redact(text);
        match self.taint.scrub(&redacted) {
            Cow::Borrowed(_) => redacted,
            Cow::Owned(scrubbed) => Cow::Owned(scrubbed),
        }
    }

    /// Clean every string of an event.
    pub fn event(&self, event: &mut Event) {
        self.redactor.redact_event(event);
        self.taint.scrub_event(event);
        keep_summary_short(event);
    }
}

/// A marker can be longer than what it replaces, and a summary cut to length can read
/// differently to a rule than the text it was cut from: the summary is cut again to its
/// length, should it have grown past it (fuzzing found such a `Searched for …` summary).
fn keep_summary_short(event: &mut Event) {
    if event.summary.chars().count() > SUMMARY_MAX {
        event.summary = truncate_words(&event.summary, SUMMARY_MAX);
    }
}

/// Every string of an event that says something: what it says, the files and commands it
/// names, its source (a read's path, a search's pattern), where and on which branch it ran.
fn for_each_text(event: &mut Event, mut f: impl FnMut(&mut String)) {
    f(&mut event.summary);
    f(&mut event.rationale);
    f(&mut event.prompt_context);
    f(&mut event.source);
    f(&mut event.session.cwd);
    f(&mut event.session.branch);
    event.alternatives.iter_mut().for_each(&mut f);
    event.files_affected.iter_mut().for_each(&mut f);
    for call in &mut event.tool_calls {
        f(&mut call.input);
    }
    for task in &mut event.tasks {
        f(&mut task.subject);
    }
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
        let positives = include_str!("../../../tests/data/redaction/positives.tsv");
        let negatives = include_str!("../../../tests/data/redaction/negatives.txt");
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
        let positives = count;
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
        // docs/security.md, "What is redacted", quotes this line
        // (`cargo test --lib corpus -- --nocapture`).
        println!(
            "redaction corpus: {positives} secrets, all redacted; {count} negatives, {} false \
             positives{}",
            flagged.len(),
            flagged
                .iter()
                .map(|f| format!("\n  {f}"))
                .collect::<String>()
        );
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
            (
                "//registry.npmjs.org/:_authToken=npm_Xq8Lm2Vt9RkP4wZy7NcB3hJd6FsA1GuE5oTi",
                "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]",
            ),
            (
                "login with 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 then push",
                "login with [REDACTED:huggingface-token] then push",
            ),
            (
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=q8Hf3Lm9Vx2Rt7Kp4Wz1Nc6Bj0Ys5Ga+Ue/Do8Ti3Xr7Lm2Vq9Hf3Kp4Wz1Nc6Bj0Ys5GaUeDo8Ti3Xr7Lm2Vq9HfA==;EndpointSuffix=core.windows.net",
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net",
            ),
            (
                "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=Zk4Lp8Qr2Tv6Xy0Bc3Fg7Jm1Np5Rs9Uw3Yz7Ab2De=",
                "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=[REDACTED:azure-key]",
            ),
            (
                "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&se=2026-01-01T00:00:00Z&sig=Wq3Rt8%2BYu1Io5Pa9Sd2Fg6Hj0Kl4Zx7Cv%3D",
                "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&se=2026-01-01T00:00:00Z&sig=[REDACTED:azure-key]",
            ),
            (
                "redis-cli -h cache.internal -p 6379 -a Tq7mWx2kLp9v ping",
                "redis-cli -h cache.internal -p 6379 -a [REDACTED:command-line-secret] ping",
            ),
            (
                "redis-cli -a 'two words here' --no-auth-warning",
                "redis-cli -a '[REDACTED:command-line-secret]' --no-auth-warning",
            ),
            (
                "redis-cli --user app --pass Tq7mWx2kLp9v info",
                "redis-cli --user app --pass [REDACTED:command-line-secret] info",
            ),
            (
                "./deploy --password \"correct horse battery\" --env prod",
                "./deploy --password \"[REDACTED:command-line-secret]\" --env prod",
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
            "npm_config_cache=/home/u/.npm and npm_package_version",
            "hf_hub_download(repo_id, filename)",
            "use AccountName=acme;AccountKey=${AZURE_KEY}",
            "redis-cli -a $REDIS_PASSWORD ping",
            "redis-cli --askpass -h cache.internal",
            "ls -a /tmp && grep -a pattern file.bin",
            "let sig = sign(&key); let url = format!(\"{base}&sig={sig}\");",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn redacts_random_values_in_environment_dumps_and_keeps_the_rest() {
        let dump = "HOME=/home/u\n\
                    PATH=/usr/local/bin:/usr/bin:/bin:~/.cargo/bin\n\
                    LANG=en_US.UTF-8\n\
                    SHELL=/bin/bash\n\
                    PWD=/home/u/src\n\
                    OLDPWD=/home/u\n\
                    TERM=xterm-256color\n\
                    MY_APP_THING=Zx9fK2pQ7vLm3RtY8wBn\n\
                    LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01\n\
                    CARGO_BUILD_TARGET=x86_64-unknown-linux-gnu\n\
                    DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus\n\
                    HOSTNAME=ip-172-31-20-115.ec2.internal\n\
                    WT_SESSION=f09d989d-c2d1-4016-89ee-21b62258d54a\n\
                    EDITOR_URL=https://docs.example.com/guide/getting-started\n\
                    BACKUP_BLOB=q8Hf3Lm9Vx2Rt7Kp4W/z1Nc6Bj0Ys5Ga+Ue/Do8Ti3X==\n\
                    GITHUB_SHA=5afb02e1c3d4e5f60718293a4b5c6d7e8f901234\n\
                    PS1=\\u@\\h:\\w\\$\n\
                    _=/usr/bin/env";
        let want = dump
            .replace("Zx9fK2pQ7vLm3RtY8wBn", "[REDACTED:env-dump]")
            .replace(
                "q8Hf3Lm9Vx2Rt7Kp4W/z1Nc6Bj0Ys5Ga+Ue/Do8Ti3X==",
                "[REDACTED:env-dump]",
            )
            .replace(
                "5afb02e1c3d4e5f60718293a4b5c6d7e8f901234",
                "[REDACTED:env-dump]",
            );
        assert_eq!(redact(dump), want);
        assert_eq!(redact(&want), want, "redaction is idempotent");
        // `export -p` in bash and in dash, and `set`: the quotes stay.
        assert_eq!(
            redact("declare -x HOME=\"/home/u\"\ndeclare -x MY_APP_THING=\"Zx9fK2pQ7vLm3RtY8wBn\""),
            "declare -x HOME=\"/home/u\"\ndeclare -x MY_APP_THING=\"[REDACTED:env-dump]\""
        );
        assert_eq!(
            redact("export HOME='/home/u'\r\nexport MY_APP_THING='Zx9fK2pQ7vLm3RtY8wBn'\r\n"),
            "export HOME='/home/u'\r\nexport MY_APP_THING='[REDACTED:env-dump]'\r\n"
        );
        // One line is no dump: in prose or code, a value is judged by its name alone.
        for text in [
            "MY_APP_THING=Zx9fK2pQ7vLm3RtY8wBn",
            "I set it with\nMY_APP_THING=Zx9fK2pQ7vLm3RtY8wBn\nand it worked",
            "let x = 1;\nlet hash = \"5afb02e1c3d4e5f60718293a4b5c6d7e8f901234\";",
        ] {
            assert_eq!(redact(text), text);
        }
        assert_eq!(
            redact("{\"user\": \"bob\", \"pwd\": \"hunter22\"}\nDB_PWD=hunter22"),
            "{\"user\": \"bob\", \"pwd\": \"[REDACTED:secret-assignment]\"}\n\
             DB_PWD=[REDACTED:secret-assignment]",
            "only the shell's folders are let through"
        );
        // A value a rule names keeps that rule's name.
        assert_eq!(
            redact("HOME=/home/u\nGH=ghp_0123456789abcdefghijABCDEFGHIJ012345"),
            "HOME=/home/u\nGH=[REDACTED:github-token]"
        );
    }

    fn configured(rules: &[(&str, &str)], allow: &[&str], exclude: &[&str]) -> Redactor {
        let defaults = Settings::default();
        let settings = Settings {
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
                ("ticket", r"TICKET-(?P<secret>\d{6,})"),
                ("vendor", r"(acme|ACME)-[0-9]{8}"),
            ],
            &["AKIAIOSFODNN7EXAMPLE", "sk_test_[A-Za-z0-9]+"],
            &[],
        );
        assert_eq!(
            r.redact("use acme_0123456789abcdef now, TICKET-123456, ACME-12345678"),
            "use [REDACTED:acme-key] now, TICKET-[REDACTED:ticket], [REDACTED:vendor]",
            "the group named `secret` is the secret; without one, the whole match (a group \
             that only groups is not)"
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
        let e = check_rule("acme", "acme_(").unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("not a valid regex"), "{e}");
        assert!(
            check_rule("Acme Key", "x")
                .unwrap_err()
                .to_string()
                .contains("lowercase")
        );
        assert!(
            check_rule("any", "x*")
                .unwrap_err()
                .to_string()
                .contains("matches empty text")
        );
        assert!(
            check_glob("[abc")
                .unwrap_err()
                .to_string()
                .contains("without its ']'")
        );
        assert!(check_glob("/").is_err());
    }

    #[test]
    fn exclude_globs_read_as_gitignore_reads_them() {
        let r = configured(&[], &[], &["config/*.cred", "private/"]);
        for path in [
            ".env",
            ".env.local",
            "app/.env.production",
            "certs/server.pem",
            "/home/me/.ssh/id_rsa",
            "/home/me/.ssh/id_rsa.pub",
            "secrets/prod/db.txt",
            "config/app.cred",
            "./config/app.cred",
            "/home/me/.ssh/id_ed25519",
            "/home/me/.aws/credentials",
            "certs/server.key",
            ".netrc",
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
            "config/sub/app.cred",
            "x/config/app.cred",
            "src/keys.rs",
            "docs/aws/credentials.md",
            "pem.rs",
            "README.md",
        ] {
            assert!(!r.excluded(path), "{path} is not excluded");
        }
        let names = |command: &str| {
            r.names_excluded(command, |w| {
                let w = crate::transcript::root::clean(w);
                w.strip_prefix("/work/repo/").unwrap_or(&w).to_owned()
            })
        };
        assert!(names("cat .env"));
        assert!(names("echo \"A=1\" >> app/.env.local"));
        assert!(names("ssh-keygen -f ~/.ssh/id_rsa -y"));
        assert!(names("cat /work/repo/secrets/prod.txt"));
        assert!(names("git show HEAD:.env.production"));
        assert!(names("cat .ENV"), "case does not matter");
        assert!(!names("cargo test --env-file"));
        assert!(!names("git commit -m 'read env'"));
        assert!(!names("cat /elsewhere/secrets/prod.txt"));
        assert!(names("cat 'secrets'/prod.txt"));
        assert!(names("cd sub && cat ../secrets/prod.txt"));
        assert!(names("cd /work/repo/secrets; cat prod.txt"));
        assert!(!names("cd secrets/.. && cat README.md"));
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
                // A rejected candidate (`…_token:api_key`, code) hides no secret after it.
                Just("x_token:api_key = \"abcdefgh123\"".to_owned()),
                Just("credentials:\n  password: ".to_owned()),
                Just("mysql -u root -p".to_owned()),
                Just("\"Authorization\": \"Bearer ".to_owned()),
                // Lines of an environment dump, next to one another or not.
                Just("\nHOME=/home/u\n".to_owned()),
                Just("MY_APP_THING=Zx9fK2pQ7vLm3RtY8wBn\n".to_owned()),
                Just("redis-cli -a \"".to_owned()),
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
