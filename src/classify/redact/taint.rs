//! What a session saw of files whose content is never captured (a `.env` it read, a key it
//! wrote, a `grep` line from one), kept as 64-bit hashes of the values — never the values — so
//! that the same values are scrubbed from whatever is said after (`[REDACTED:excluded-file]`).
//!
//! Values are compared word by word: a value is a word (split as [`words`] splits), and text is
//! scrubbed of the words whose hash was seen. A phrase with spaces is not remembered, lest its
//! common words be scrubbed everywhere.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::separator;
use crate::event::Event;

/// The most values a session remembers.
const TAINT_MAX: usize = 4096;

/// A key that names a secret: its value is remembered whatever it looks like.
static SECRET_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)pass|secret|token|key|auth|credential|pwd|private|cert")
        .expect("the secret key pattern compiles")
});

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Taint(BTreeSet<u64>);

impl Taint {
    /// Remember the values in `content`, the text of an excluded file: on a `KEY=value` or
    /// `key: value` line the value, on other lines every long word. A value must look like one
    /// (a word of letters alone, such as `production`, is taken for a word unless it is 16
    /// letters or more), except under a name that says it is a secret (`DB_PASS=Sunshine`).
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
            let (value, min, secret) = match line.find(['=', ':']) {
                Some(at) if key(line[..at].trim_end()) => {
                    let name = line[..at].trim_end();
                    (&line[at + 1..], 6, SECRET_KEY.is_match(name))
                }
                _ => (line, 8, false),
            };
            let value = value.trim().trim_matches(['"', '\'']);
            let single = !value.contains(char::is_whitespace);
            for word in words(value) {
                let letters_only = word.chars().all(|c| c.is_alphabetic() || c == '-');
                let digits_only = word.chars().all(|c| c.is_ascii_digit() || c == '.');
                let valuelike = word.len() >= 16 || !(letters_only || digits_only);
                let kept =
                    (word.len() >= min && valuelike) || (secret && single && word.len() >= 4);
                if kept && self.0.len() < TAINT_MAX {
                    self.0.insert(hash(word));
                }
            }
        }
    }

    /// Remember what the lines of a search's or a command's output say of excluded files: a
    /// line `path:content` or `path:line:content` (grep's, rg's, the Grep tool's) whose path
    /// `excluded` says is one.
    pub fn add_lines_of(&mut self, output: &str, excluded: impl Fn(&str) -> bool) {
        for line in output.lines() {
            let Some((path, rest)) = line.split_once(':') else {
                continue;
            };
            if path.is_empty() || path.contains(char::is_whitespace) || !excluded(path) {
                continue;
            }
            let rest = match rest.split_once(':') {
                Some((n, content)) if n.bytes().all(|b| b.is_ascii_digit()) => content,
                _ => rest,
            };
            self.add(rest);
        }
    }

    /// Remember what a tool's structured output (a `PostToolUse` hook's `tool_response`) shows
    /// of excluded files: the text a Read gave of one (`read_excluded`), or the lines of one a
    /// Grep printed.
    pub fn add_response(
        &mut self,
        tool: &str,
        response: &serde_json::Value,
        read_excluded: bool,
        excluded: impl Fn(&str) -> bool,
    ) {
        let mut texts = Vec::new();
        // A read gives the file's text in `file.content`, beside its path and line counts.
        match response.pointer("/file/content") {
            Some(content) if read_excluded => strings(content, &mut texts),
            _ => strings(response, &mut texts),
        }
        for text in texts {
            if read_excluded {
                self.add(text);
            } else if tool == "Grep" {
                self.add_lines_of(text, &excluded);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The hashes, to share with the session's other readers (see `store::seen`).
    pub fn hashes(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().copied()
    }

    /// Take in what another reader of the session saw.
    pub fn extend(&mut self, hashes: impl IntoIterator<Item = u64>) {
        for h in hashes {
            if self.0.len() >= TAINT_MAX {
                break;
            }
            self.0.insert(h);
        }
    }

    /// `text` with every remembered value replaced.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.0.is_empty() {
            return Cow::Borrowed(text);
        }
        let hits: Vec<&str> = words(text).filter(|w| self.0.contains(&hash(w))).collect();
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

    /// Scrub every string of an event.
    pub fn scrub_event(&self, event: &mut Event) {
        if self.0.is_empty() {
            return;
        }
        super::for_each_text(event, |s| {
            if let Cow::Owned(clean) = self.scrub(s) {
                *s = clean;
            }
        });
    }
}

/// Every string in `value`.
fn strings<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// A key is a name: UPPER_SNAKE, lower, or with separators (a line of base64, mixed case and
/// digits, can hold '=' too).
fn key(k: &str) -> bool {
    let named = k
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    let one_case =
        !k.bytes().any(|b| b.is_ascii_lowercase()) || !k.bytes().any(|b| b.is_ascii_uppercase());
    let separated = k.bytes().any(|b| b"_.-".contains(&b));
    (1..=48).contains(&k.len()) && named && (one_case || separated)
}

/// The words of `text` as values are written: split at spaces, quotes and brackets, without
/// the punctuation that ends a sentence or the Markdown around a word (`**value**`, `_value_`,
/// `value/`).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(separator)
        .map(|w| {
            w.trim_start_matches(['*', '_', '~'])
                .trim_end_matches(['.', ',', ':', '!', '?', '/', '*', '_', '~'])
        })
        .filter(|w| !w.is_empty())
}

fn hash(word: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taint_scrubs_the_values_of_excluded_files_and_keeps_words() {
        let mut taint = Taint::default();
        taint.add(
            "     1→# local settings\n     2→DB_URL=postgres://app:pw@db/prod\n     3→\
             NODE_ENV=production\n     4→FLAG=blue-kiwi-42\n     5→PORT=8080\n     6→\
             DB_PASS=\"Sunshine\"\n",
        );
        taint.add("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n");
        let said = "Set FLAG to **blue-kiwi-42**. The URL is `postgres://app:pw@db/prod`; \
                    in production on port 8080 the key b3BlbnNzaC1rZXktdjEAAAAABG5vbmU= works, \
                    with Sunshine.";
        assert_eq!(
            taint.scrub(said),
            "Set FLAG to **[REDACTED:excluded-file]**. The URL is `[REDACTED:excluded-file]`; \
             in production on port 8080 the key [REDACTED:excluded-file]= works, \
             with [REDACTED:excluded-file]."
        );
        let json = serde_json::to_string(&taint).unwrap();
        assert!(
            !json.contains("kiwi") && !json.contains("postgres"),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Taint>(&json).unwrap(), taint);
    }

    #[test]
    fn lines_of_excluded_files_in_a_search_taint() {
        let mut taint = Taint::default();
        taint.add_lines_of(
            ".env.staging:3:STAGING_FLAG=plum-sauce-314\nsrc/app.rs:10:let flag = orange-lamp-99;\n",
            |p| p.starts_with(".env"),
        );
        assert_eq!(
            taint.scrub("plum-sauce-314 and orange-lamp-99"),
            "[REDACTED:excluded-file] and orange-lamp-99"
        );
    }
}
