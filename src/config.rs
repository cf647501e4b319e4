//! Configuration, in TOML, from three places, each overriding the one before:
//!
//! 1. `.agent-context.toml` at the top of the working tree — shared with the team if they
//!    commit it;
//! 2. `$GIT_COMMON_DIR/agent-context/config.toml` — this clone only (`switch` writes here,
//!    keeping the file's comments and layout);
//! 3. environment variables `GIT_AGENT_CONTEXT_<SECTION>_<KEY>`, e.g.
//!    `GIT_AGENT_CONTEXT_QUERY_BACKEND=decision`.
//!
//! Every key is known: a misspelt key, a value of the wrong type or out of range is an error
//! that names the file, the line and the key (or the variable), never silently ignored.
//!
//! The `[redact]` section holds lists rather than one value a key: rules, allow-list patterns
//! and exclude globs ([`redact::Settings`]). Both files add to them (neither can take away the defaults
//! or what the other adds); they have no environment variables.
//!
//! The shared file comes with a clone: whoever wrote it is not the user (docs/security.md). It
//! may add redaction rules and exclusions and lower the hooks' budgets; it may not allow-list a
//! secret, raise a budget or have hooks write to the working tree. What it sets beyond that is
//! left out, and [`Config::refused`] says what, for `status`.

use std::borrow::Cow;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::classify::redact::{self, Redactor, check_allow, check_glob, check_rule};

/// The shared file, at the top of the working tree.
pub const SHARED_FILE: &str = ".agent-context.toml";
/// The local file, in the store folder.
pub const LOCAL_FILE: &str = "config.toml";
const ENV_PREFIX: &str = "GIT_AGENT_CONTEXT_";
/// `hook.budget_ms` and `hook.extract_budget_ms` by default: what a hook is held to until its
/// configuration has been read.
pub const DEFAULT_HOOK_BUDGET_MS: i64 = 1000;
pub const DEFAULT_EXTRACT_BUDGET_MS: i64 = 5000;

/// The number `key` (`hook.budget_ms`, say) as its environment variable sets it, when it does
/// with a valid value: what a hook is held to before the files are read.
pub fn number_from_env(key: &str) -> Option<i64> {
    let spec = SPECS.iter().find(|s| s.key() == key)?;
    let raw = std::env::var_os(spec.env_var())?;
    match spec.parse_env(&raw.to_string_lossy())? {
        Value::Number(n) => Some(n),
        Value::Word(_) | Value::Text(_) => None,
    }
}

/// How `query` finds reasoning by default (docs/commands.md, `query` and `switch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// file → sessions → decisions.
    File,
    /// The DAG of sessions, newest first.
    Session,
    /// From matching decisions along their edges, to depth 2.
    Decision,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::File, Backend::Session, Backend::Decision];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::File => "file",
            Backend::Session => "session",
            Backend::Decision => "decision",
        }
    }

    pub fn parse(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.as_str() == name)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a key holds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// One of these words.
    Word(&'static [&'static str]),
    /// A whole number in this range.
    Number { min: i64, max: i64 },
    /// One line of text (a model's name, a URL): not empty, at most [`MAX_TEXT`] characters,
    /// no control characters.
    Text,
}

/// The longest a [`Kind::Text`] value may be.
const MAX_TEXT: usize = 200;

/// What the shared file, which comes with a clone, may do with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shared {
    /// Set it.
    May,
    /// Lower it below its default, not raise it: a hook's budget is the user's time.
    Lower,
    /// Nothing, for this reason: only the user's own configuration sets it.
    Never(&'static str),
}

const WRITES_CLAUDE_MD: &str =
    "hooks would write CLAUDE.md in your working tree; only your own configuration may ask";
const SENDS_SESSIONS: &str =
    "it would send your sessions to a model of its choosing; only your own configuration may";

/// A key we know: where it lives, what it holds, its default, what the shared file may do.
struct Spec {
    section: &'static str,
    name: &'static str,
    kind: Kind,
    default: Value,
    shared: Shared,
}

const SPECS: [Spec; 14] = [
    Spec {
        section: "query",
        name: "backend",
        kind: Kind::Word(&["file", "session", "decision"]),
        default: Value::Word("file"),
        shared: Shared::May,
    },
    Spec {
        section: "link",
        name: "grace_minutes",
        kind: Kind::Number { min: 0, max: 1440 },
        default: Value::Number(30),
        shared: Shared::May,
    },
    Spec {
        section: "link",
        name: "active_minutes",
        kind: Kind::Number { min: 1, max: 10080 },
        default: Value::Number(60),
        shared: Shared::May,
    },
    Spec {
        section: "hook",
        name: "budget_ms",
        kind: Kind::Number {
            min: 50,
            max: 60000,
        },
        default: Value::Number(DEFAULT_HOOK_BUDGET_MS),
        shared: Shared::Lower,
    },
    Spec {
        section: "hook",
        name: "extract_budget_ms",
        kind: Kind::Number {
            min: 50,
            max: 600000,
        },
        default: Value::Number(DEFAULT_EXTRACT_BUDGET_MS),
        shared: Shared::Lower,
    },
    Spec {
        section: "share",
        name: "level",
        kind: Kind::Word(&["reasoning", "summary", "none"]),
        default: Value::Word("reasoning"),
        shared: Shared::May,
    },
    Spec {
        section: "sync",
        name: "push_budget_ms",
        kind: Kind::Number {
            min: 100,
            max: 600000,
        },
        default: Value::Number(10_000),
        shared: Shared::Lower,
    },
    Spec {
        section: "claude_md",
        name: "refresh",
        kind: Kind::Word(&["off", "on"]),
        default: Value::Word("off"),
        shared: Shared::Never(WRITES_CLAUDE_MD),
    },
    Spec {
        section: "distill",
        name: "mode",
        kind: Kind::Word(&["off", "api", "claude"]),
        default: Value::Word("off"),
        shared: Shared::Never(SENDS_SESSIONS),
    },
    Spec {
        section: "distill",
        name: "model",
        kind: Kind::Text,
        default: Value::Text(Cow::Borrowed("claude-haiku-4-5")),
        shared: Shared::Never(SENDS_SESSIONS),
    },
    Spec {
        section: "distill",
        name: "base_url",
        kind: Kind::Text,
        default: Value::Text(Cow::Borrowed("https://api.anthropic.com")),
        shared: Shared::Never(SENDS_SESSIONS),
    },
    Spec {
        section: "distill",
        name: "session_tokens",
        kind: Kind::Number {
            min: 0,
            max: 10_000_000,
        },
        default: Value::Number(50_000),
        shared: Shared::Lower,
    },
    Spec {
        section: "distill",
        name: "daily_tokens",
        kind: Kind::Number {
            min: 0,
            max: 100_000_000,
        },
        default: Value::Number(200_000),
        shared: Shared::Lower,
    },
    Spec {
        section: "distill",
        name: "timeout_ms",
        kind: Kind::Number {
            min: 100,
            max: 600_000,
        },
        default: Value::Number(30_000),
        shared: Shared::Lower,
    },
];

impl Spec {
    fn key(&self) -> String {
        format!("{}.{}", self.section, self.name)
    }

    /// The value an environment variable's text gives the key, if valid.
    fn parse_env(&self, raw: &str) -> Option<Value> {
        let raw = raw.trim();
        match self.kind {
            Kind::Word(_) => self.check_word(raw),
            Kind::Number { .. } => raw.parse().ok().and_then(|n| self.check_number(n)),
            Kind::Text => self.check_text(raw),
        }
    }

    fn env_var(&self) -> String {
        format!("{ENV_PREFIX}{}_{}", self.section, self.name).to_ascii_uppercase()
    }

    /// What the key must hold, for error messages.
    fn expects(&self) -> String {
        match self.kind {
            Kind::Word(words) => format!("one of {}", words.join(", ")),
            Kind::Number { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Text => format!("one line of text of at most {MAX_TEXT} characters"),
        }
    }

    fn check_word(&self, word: &str) -> Option<Value> {
        match self.kind {
            Kind::Word(words) => words.iter().find(|w| **w == word).map(|w| Value::Word(w)),
            Kind::Number { .. } | Kind::Text => None,
        }
    }

    fn check_text(&self, text: &str) -> Option<Value> {
        let fits = !text.is_empty()
            && text.chars().count() <= MAX_TEXT
            && !text.chars().any(char::is_control);
        match self.kind {
            Kind::Text if fits => Some(Value::Text(Cow::Owned(text.to_owned()))),
            _ => None,
        }
    }

    fn check_number(&self, n: i64) -> Option<Value> {
        match self.kind {
            Kind::Number { min, max } if (min..=max).contains(&n) => Some(Value::Number(n)),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Word(&'static str),
    Number(i64),
    Text(Cow<'static, str>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Word(w) => f.write_str(w),
            Value::Number(n) => write!(f, "{n}"),
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    File(PathBuf),
    Env(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(path) => write!(f, "{}", path.display()),
            Source::Env(var) => write!(f, "${var}"),
        }
    }
}

/// One key's effective value.
#[derive(Debug, Clone)]
pub struct Setting {
    pub key: String,
    pub value: Value,
    pub source: Source,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}:{line}: {message}", path.display())]
    File {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("${var}: {message}")]
    Env { var: String, message: String },
    // The cause is the error's source, not part of its message: `error: {:#}` prints it once.
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("[redact]: {0}")]
    Redact(#[from] redact::Invalid),
}

/// One value a file adds to `[redact]`: `redact.rules.<name>`, `redact.allow` or
/// `redact.exclude`, with the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addition {
    pub key: String,
    pub value: String,
    pub source: PathBuf,
}

/// A value the shared file sets that only the user may (see the module's documentation): left
/// out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub key: String,
    pub value: String,
    pub source: PathBuf,
    pub reason: &'static str,
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    settings: Vec<Setting>,
    redact: redact::Settings,
    additions: Vec<Addition>,
    refused: Vec<Refused>,
    redactor: std::sync::Arc<Redactor>,
}

impl Config {
    /// The defaults, overridden by the shared file in `workdir` (if any), the local file in
    /// `store_dir` and the environment.
    pub fn load(workdir: Option<&Path>, store_dir: &Path) -> Result<Config, Error> {
        let mut loading = Loading {
            settings: (SPECS.iter())
                .map(|spec| Setting {
                    key: spec.key(),
                    value: spec.default.clone(),
                    source: Source::Default,
                })
                .collect(),
            redact: redact::Settings::default(),
            additions: Vec::new(),
            refused: Vec::new(),
        };
        let files = workdir
            .map(|w| (w.join(SHARED_FILE), true))
            .into_iter()
            .chain([(store_dir.join(LOCAL_FILE), false)]);
        for (path, shared) in files {
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::Read { path, source }),
            };
            let file = read_file(&path, &text)?;
            loading.file(&path, shared, file);
        }
        loading.environment()?;
        let redactor = Redactor::new(&loading.redact)?;
        Ok(Config {
            settings: loading.settings,
            redact: loading.redact,
            additions: loading.additions,
            refused: loading.refused,
            redactor: std::sync::Arc::new(redactor),
        })
    }

    /// What the files add to redaction, in the order read, with the file each came from.
    pub fn additions(&self) -> &[Addition] {
        &self.additions
    }

    /// What the shared file sets that only the user may: left out.
    pub fn refused(&self) -> &[Refused] {
        &self.refused
    }

    /// What the files add to redaction, the default exclude globs first.
    pub fn redact(&self) -> &redact::Settings {
        &self.redact
    }

    /// The redaction pass this configuration asks for.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Every key with its effective value and source, in a fixed order.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    fn value(&self, key: &str) -> &Value {
        self.settings
            .iter()
            .find(|s| s.key == key)
            .map(|s| &s.value)
            .expect("every known key has a setting")
    }

    fn number(&self, key: &str) -> i64 {
        match self.value(key) {
            Value::Number(n) => *n,
            _ => unreachable!("{key} holds a number"),
        }
    }

    fn text(&self, key: &str) -> &str {
        match self.value(key) {
            Value::Text(t) => t,
            _ => unreachable!("{key} holds text"),
        }
    }

    fn word(&self, key: &str) -> &'static str {
        match self.value(key) {
            Value::Word(w) => w,
            _ => unreachable!("{key} holds a word"),
        }
    }

    /// `query.backend`.
    pub fn backend(&self) -> Backend {
        Backend::parse(self.word("query.backend")).expect("checked when read")
    }

    /// `link.grace_minutes`, in seconds.
    pub fn link_grace_seconds(&self) -> i64 {
        self.number("link.grace_minutes") * 60
    }

    /// `hook.budget_ms`: how long a Claude Code hook may take before it answers with nothing.
    pub fn hook_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.number("hook.budget_ms") as u64)
    }

    /// `hook.extract_budget_ms`: how long the hooks that extract a transcript (`PreCompact`,
    /// `Stop`, `SessionEnd`) may take before they give up, leaving the rest to the next run.
    pub fn hook_extract_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.number("hook.extract_budget_ms") as u64)
    }

    /// `share.level`: what `sync` pushes — `reasoning` (reasoning, session summaries, writes
    /// and commits), `summary` (session summaries and commits) or `none`.
    pub fn share_level(&self) -> &'static str {
        self.word("share.level")
    }

    /// `sync.push_budget_ms`: how long the pre-push hook (`install --sync`) may hold up a push
    /// to sync the notes.
    pub fn sync_push_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.number("sync.push_budget_ms") as u64)
    }

    /// `claude_md.refresh`: whether `Stop` and `SessionEnd` regenerate CLAUDE.md's section.
    pub fn claude_md_refresh(&self) -> bool {
        self.word("claude_md.refresh") == "on"
    }

    /// `distill.mode` is `api` or `claude`: whether sessions are distilled by a model
    /// (docs/extraction.md, "Distillation").
    pub fn distill_on(&self) -> bool {
        self.distill_mode() != "off"
    }

    /// `distill.mode`, as set.
    pub fn distill_mode(&self) -> &'static str {
        self.word("distill.mode")
    }

    /// `distill.model`: the model named in each request.
    pub fn distill_model(&self) -> &str {
        self.text("distill.model")
    }

    /// `distill.base_url`: where the Messages API is.
    pub fn distill_base_url(&self) -> &str {
        self.text("distill.base_url")
    }

    /// `distill.session_tokens`: what one session may spend, in tokens, over all its requests.
    pub fn distill_session_tokens(&self) -> u64 {
        self.number("distill.session_tokens") as u64
    }

    /// `distill.daily_tokens`: what every session together may spend in a day (UTC).
    pub fn distill_daily_tokens(&self) -> u64 {
        self.number("distill.daily_tokens") as u64
    }

    /// `distill.timeout_ms`: how long one request may take.
    pub fn distill_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.number("distill.timeout_ms") as u64)
    }

    /// `link.active_minutes`, in seconds.
    pub fn link_active_seconds(&self) -> u64 {
        self.number("link.active_minutes") as u64 * 60
    }
}

/// The configuration as the files and the environment make it, in the order they are read.
struct Loading {
    settings: Vec<Setting>,
    redact: redact::Settings,
    additions: Vec<Addition>,
    refused: Vec<Refused>,
}

impl Loading {
    /// What the file at `path` says, over what came before; of the shared file, what only the
    /// user may set is left out, and said.
    fn file(&mut self, path: &Path, shared: bool, mut file: FileValues) {
        let mut refuse = |key: String, value: String, reason| {
            self.refused.push(Refused {
                key,
                value,
                source: path.to_owned(),
                reason,
            })
        };
        for (i, value) in file.values {
            let spec = &SPECS[i];
            let refusal = match (spec.shared, &value, &spec.default) {
                _ if !shared => None,
                (Shared::Never(why), ..) => Some(why),
                (Shared::Lower, Value::Number(n), Value::Number(default)) if n > default => {
                    Some("a shared file may only lower it")
                }
                _ => None,
            };
            if let Some(reason) = refusal {
                refuse(spec.key(), value.to_string(), reason);
                continue;
            }
            self.settings[i].value = value;
            self.settings[i].source = Source::File(path.to_owned());
        }
        if shared {
            for allow in file.redact.allow.drain(..) {
                refuse(
                    "redact.allow".to_owned(),
                    allow,
                    "it would keep secrets from redaction; only your own configuration may",
                );
            }
        }
        let rules =
            (file.redact.rules.iter()).map(|(name, rule)| (format!("redact.rules.{name}"), rule));
        let allow = (file.redact.allow.iter()).map(|a| ("redact.allow".to_owned(), a));
        let exclude = (file.redact.exclude.iter()).map(|g| ("redact.exclude".to_owned(), g));
        for (key, value) in rules.chain(allow).chain(exclude) {
            self.additions.push(Addition {
                key,
                value: value.clone(),
                source: path.to_owned(),
            });
        }
        self.redact.rules.extend(file.redact.rules);
        self.redact.allow.extend(file.redact.allow);
        self.redact.exclude.extend(file.redact.exclude);
    }

    /// The environment's variables, over the files; one we do not know is an error.
    fn environment(&mut self) -> Result<(), Error> {
        let known: Vec<String> = SPECS.iter().map(Spec::env_var).collect();
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with(ENV_PREFIX) && !known.iter().any(|k| *k == name) {
                return Err(Error::Env {
                    var: name.into_owned(),
                    message: format!("unknown setting (known: {})", known.join(", ")),
                });
            }
        }
        for (i, spec) in SPECS.iter().enumerate() {
            let var = spec.env_var();
            let Some(raw) = std::env::var_os(&var) else {
                continue;
            };
            let raw = raw.to_string_lossy();
            let value = spec.parse_env(&raw).ok_or_else(|| Error::Env {
                var: var.clone(),
                message: format!("`{}` must be {}, not {raw:?}", spec.key(), spec.expects()),
            })?;
            self.settings[i].value = value;
            self.settings[i].source = Source::Env(var);
        }
        Ok(())
    }
}

/// What one config file says.
#[derive(Default)]
struct FileValues {
    /// (index in [`SPECS`], value) pairs.
    values: Vec<(usize, Value)>,
    /// The `[redact]` lists, without the defaults.
    redact: redact::Settings,
}

fn read_file(path: &Path, text: &str) -> Result<FileValues, Error> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let error = |offset: Option<usize>, message: String| Error::File {
        path: path.to_owned(),
        line: offset.map_or(1, line_of),
        message,
    };
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        let message = e.message().trim().to_owned();
        error(
            e.span().map(|s| s.start),
            format!("not valid TOML: {message}"),
        )
    })?;
    let known = || {
        SPECS
            .iter()
            .map(Spec::key)
            .chain(REDACT_KEYS.iter().map(|k| format!("redact.{k}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = FileValues {
        redact: redact::Settings {
            exclude: Vec::new(),
            ..redact::Settings::default()
        },
        ..FileValues::default()
    };
    for (section, item) in doc.as_table().iter() {
        let at = item.span().map(|s| s.start);
        let Some(table) = item.as_table_like() else {
            return Err(error(
                at,
                format!("`{section}` must be a table (known keys: {})", known()),
            ));
        };
        for (name, item) in table.iter() {
            let key = format!("{section}.{name}");
            let at = table
                .get_key_value(name)
                .and_then(|(k, _)| k.span())
                .or(item.span())
                .map(|s| s.start)
                .or(at);
            if section == "redact" && REDACT_KEYS.contains(&name) {
                read_redact(name, item, &mut out.redact)
                    .map_err(|(span, message)| error(span.or(at), message))?;
                continue;
            }
            let Some(i) = SPECS
                .iter()
                .position(|s| s.section == section && s.name == name)
            else {
                return Err(error(
                    at,
                    format!("unknown key `{key}` (known keys: {})", known()),
                ));
            };
            let spec = &SPECS[i];
            let value = item.as_value().and_then(|v| match (v, spec.kind) {
                (toml_edit::Value::String(s), Kind::Word(_)) => spec.check_word(s.value()),
                (toml_edit::Value::String(s), Kind::Text) => spec.check_text(s.value()),
                (toml_edit::Value::Integer(n), Kind::Number { .. }) => {
                    spec.check_number(*n.value())
                }
                _ => None,
            });
            let shown = item
                .as_value()
                .map_or("a table".to_owned(), |v| v.to_string());
            let value = value.ok_or_else(|| {
                error(
                    at,
                    format!("`{key}` must be {}, not {}", spec.expects(), shown.trim()),
                )
            })?;
            out.values.push((i, value));
        }
    }
    Ok(out)
}

const REDACT_KEYS: [&str; 3] = ["rules", "allow", "exclude"];

/// Where in the file a problem is (a byte offset), and what it is.
type Problem = (Option<usize>, String);

/// One key of `[redact]` into `redact`, each pattern checked as it would be used.
fn read_redact(
    name: &str,
    item: &toml_edit::Item,
    redact: &mut redact::Settings,
) -> Result<(), Problem> {
    let at = |item: &toml_edit::Item| item.span().map(|s| s.start);
    if name == "rules" {
        let Some(rules) = item.as_table_like() else {
            return Err((
                at(item),
                "`redact.rules` must be a table of name = \"regex\"".to_owned(),
            ));
        };
        for (rule, pattern) in rules.iter() {
            let key = format!("redact.rules.{rule}");
            let Some(text) = pattern.as_str() else {
                return Err((at(pattern), format!("`{key}` must be a string (a regex)")));
            };
            check_rule(rule, text).map_err(|m| (at(pattern), format!("`{key}`: {m}")))?;
            redact.rules.push((rule.to_owned(), text.to_owned()));
        }
        return Ok(());
    }
    let key = format!("redact.{name}");
    let what = if name == "allow" { "regex" } else { "glob" };
    let Some(list) = item.as_array() else {
        return Err((
            at(item),
            format!("`{key}` must be a list of strings (each a {what})"),
        ));
    };
    for value in list.iter() {
        let span = value.span().map(|s| s.start);
        let Some(text) = value.as_str() else {
            return Err((span, format!("`{key}` must hold strings, not {value}")));
        };
        if name == "allow" {
            check_allow(text).map_err(|m| (span, format!("`{key}`: {m}")))?;
            redact.allow.push(text.to_owned());
        } else {
            check_glob(text).map_err(|m| (span, format!("`{key}`: {m}")))?;
            redact.exclude.push(text.to_owned());
        }
    }
    Ok(())
}

/// Set `key` to `value` in the local file, keeping the rest of it as it is.
pub fn set_local(store_dir: &Path, key: &str, value: &str) -> Result<(), Error> {
    let path = store_dir.join(LOCAL_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(Error::Read { path, source }),
    };
    // What is there must be valid before we touch it.
    read_file(&path, &text)?;
    let mut doc: toml_edit::DocumentMut = text.parse().expect("checked above");
    let (section, name) = key.split_once('.').expect("keys are section.name");
    if !doc.contains_table(section) {
        doc[section] = toml_edit::table();
    }
    doc[section][name] = toml_edit::value(value);
    fs::create_dir_all(store_dir).map_err(|source| Error::Write {
        path: path.clone(),
        source,
    })?;
    fs::write(&path, doc.to_string()).map_err(|source| Error::Write { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(shared: Option<&str>, local: Option<&str>) -> Result<Config, Error> {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        fs::create_dir_all(&store).unwrap();
        if let Some(text) = shared {
            fs::write(dir.path().join(SHARED_FILE), text).unwrap();
        }
        if let Some(text) = local {
            fs::write(store.join(LOCAL_FILE), text).unwrap();
        }
        Config::load(Some(dir.path()), &store)
    }

    #[test]
    fn defaults_then_shared_then_local() {
        let c = load(None, None).unwrap();
        assert_eq!(c.backend(), Backend::File);
        assert_eq!(c.link_grace_seconds(), 30 * 60);
        assert!(c.settings().iter().all(|s| s.source == Source::Default));

        let c = load(
            Some("[query]\nbackend = \"session\"\n[link]\ngrace_minutes = 5\n"),
            Some("# mine\nquery.backend = \"decision\"\n"),
        )
        .unwrap();
        assert_eq!(c.backend(), Backend::Decision);
        assert_eq!(c.link_grace_seconds(), 5 * 60);
        let source = |key: &str| {
            let s = c.settings().iter().find(|s| s.key == key).unwrap();
            s.source.to_string()
        };
        assert!(source("query.backend").ends_with("store/config.toml"));
        assert!(source("link.grace_minutes").ends_with(".agent-context.toml"));
        assert_eq!(source("link.active_minutes"), "default");
    }

    #[test]
    fn bad_files_name_the_file_the_line_and_the_key() {
        let message = |shared: &str| load(Some(shared), None).unwrap_err().to_string();
        let m = message("[query]\n\nbakend = \"file\"\n");
        assert!(m.ends_with(".agent-context.toml:3: unknown key `query.bakend` (known keys: query.backend, link.grace_minutes, link.active_minutes, hook.budget_ms, hook.extract_budget_ms, share.level, sync.push_budget_ms, claude_md.refresh, distill.mode, distill.model, distill.base_url, distill.session_tokens, distill.daily_tokens, distill.timeout_ms, redact.rules, redact.allow, redact.exclude)"), "{m}");
        let m = message("[link]\ngrace_minutes = \"soon\"\n");
        assert!(
            m.ends_with(
                ":2: `link.grace_minutes` must be a whole number from 0 to 1440, not \"soon\""
            ),
            "{m}"
        );
        let m = message("[query]\nbackend = \"graph\"\n");
        assert!(
            m.ends_with(
                ":2: `query.backend` must be one of file, session, decision, not \"graph\""
            ),
            "{m}"
        );
        let m = message("[link]\nactive_minutes = 0\n");
        assert!(
            m.contains(":2: `link.active_minutes` must be a whole number from 1 to 10080"),
            "{m}"
        );
        let m = message("query = 3\n");
        assert!(m.contains(":1: `query` must be a table"), "{m}");
        let m = message("[query\nbackend = 1\n");
        assert!(m.contains(":1: not valid TOML"), "{m}");
    }

    fn config_defaults() -> Vec<String> {
        redact::DEFAULT_EXCLUDE
            .iter()
            .map(|g| (*g).to_owned())
            .collect()
    }

    #[test]
    fn redact_lists_add_up_and_are_checked_as_read() {
        let c = load(
            Some(
                "[redact]\nexclude = [\"*.cred\"]\n\
                 [redact.rules]\nacme-key = 'acme_[0-9a-f]{16}'\n",
            ),
            Some("redact.exclude = [\"private/\"]\nredact.allow = [\"EXAMPLE\"]\n"),
        )
        .unwrap();
        let r = c.redact();
        assert_eq!(
            r.rules,
            [("acme-key".to_owned(), "acme_[0-9a-f]{16}".to_owned())]
        );
        assert_eq!(r.allow, ["EXAMPLE"]);
        let defaults = config_defaults();
        assert_eq!(
            r.exclude[..defaults.len()],
            defaults[..],
            "the defaults first"
        );
        assert_eq!(r.exclude[defaults.len()..], ["*.cred", "private/"]);
        assert_eq!(
            c.redactor().redact("k=acme_0123456789abcdef"),
            "k=[REDACTED:acme-key]"
        );
        assert!(c.redactor().excluded("private/plan.md") && c.redactor().excluded("a.cred"));

        let message = |shared: &str| load(Some(shared), None).unwrap_err().to_string();
        let m = message("[redact.rules]\nacme = \"acme_(\"\n");
        assert!(
            m.contains(":2: `redact.rules.acme`: \"acme_(\" is not a valid regex"),
            "{m}"
        );
        assert!(!m.contains('\n'), "one line: {m}");
        let m = message("[redact]\nallow = [\"ok\", \"(unclosed\"]\n");
        assert!(
            m.contains(":2: `redact.allow`: \"(unclosed\" is not a valid regex")
                && !m.contains('\n'),
            "{m}"
        );
        let m = message("[redact]\nallow = [\"(?x) foo # a comment\"]\n");
        assert!(
            m.contains(":2: `redact.allow`: ") && m.contains("whole secret") && !m.contains('\n'),
            "{m}"
        );
        let m = message("[redact]\nallow = \"x\"\n");
        assert!(
            m.contains(":2: `redact.allow` must be a list of strings"),
            "{m}"
        );
        let m = message("[redact]\n\nexclude = [\"ok\", 3]\n");
        assert!(
            m.contains(":3: `redact.exclude` must hold strings, not"),
            "{m}"
        );
        let m = message("[redact]\nexclude = [\"[abc\"]\n");
        assert!(
            m.contains("`redact.exclude`: the glob \"[abc\" has a '['"),
            "{m}"
        );
        let m = message("[redact.rules]\nacme = 3\n");
        assert!(
            m.contains(":2: `redact.rules.acme` must be a string"),
            "{m}"
        );
        let m = message("[redact]\nrulez = []\n");
        assert!(m.contains("unknown key `redact.rulez`"), "{m}");
    }

    #[test]
    fn distill_is_off_until_the_user_turns_it_on() {
        let c = load(None, None).unwrap();
        assert!(!c.distill_on());
        assert_eq!(c.distill_mode(), "off");
        assert_eq!(c.distill_model(), "claude-haiku-4-5");
        assert_eq!(c.distill_base_url(), "https://api.anthropic.com");
        assert_eq!(c.distill_timeout(), std::time::Duration::from_secs(30));

        let shared = "[distill]\nmode = \"api\"\nmodel = \"big\"\nbase_url = \"http://evil\"\n\
                      session_tokens = 1000000\ndaily_tokens = 10\ntimeout_ms = 200\n";
        let c = load(Some(shared), None).unwrap();
        assert!(!c.distill_on());
        assert_eq!(c.distill_model(), "claude-haiku-4-5");
        assert_eq!(c.distill_base_url(), "https://api.anthropic.com");
        assert_eq!(c.distill_session_tokens(), 50_000, "not raised");
        assert_eq!(c.distill_daily_tokens(), 10, "lowered");
        assert_eq!(c.distill_timeout(), std::time::Duration::from_millis(200));
        let refused: Vec<_> = c.refused().iter().map(|r| r.key.as_str()).collect();
        assert_eq!(
            refused,
            [
                "distill.mode",
                "distill.model",
                "distill.base_url",
                "distill.session_tokens"
            ]
        );

        let local = "[distill]\nmode = \"api\"\nmodel = \"claude-haiku-9\"\n\
                     base_url = \"http://127.0.0.1:9\"\nsession_tokens = 1000000\n";
        let c = load(Some(shared), Some(local)).unwrap();
        assert!(c.distill_on());
        assert_eq!(c.distill_mode(), "api");
        assert_eq!(c.distill_model(), "claude-haiku-9");
        assert_eq!(c.distill_base_url(), "http://127.0.0.1:9");
        assert_eq!(c.distill_session_tokens(), 1_000_000);

        let message = |local: &str| load(None, Some(local)).unwrap_err().to_string();
        for bad in ["\"\"", "\"a\\nb\"", "\"a\\u0007\"", "3"] {
            let m = message(&format!("[distill]\nmodel = {bad}\n"));
            assert!(
                m.contains(":2: `distill.model` must be one line of text of at most 200"),
                "{m}"
            );
        }
        let m = message(&format!("[distill]\nmodel = \"{}\"\n", "m".repeat(201)));
        assert!(m.contains("`distill.model` must be one line"), "{m}");
        let m = message("[distill]\nmode = \"local\"\n");
        assert!(
            m.contains("`distill.mode` must be one of off, api, claude"),
            "{m}"
        );
    }

    #[test]
    fn set_local_keeps_comments_and_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(LOCAL_FILE),
            "# my settings\n[link]\ngrace_minutes = 10 # short\n",
        )
        .unwrap();
        set_local(dir.path(), "query.backend", "session").unwrap();
        let text = fs::read_to_string(dir.path().join(LOCAL_FILE)).unwrap();
        assert!(
            text.starts_with("# my settings\n[link]\ngrace_minutes = 10 # short\n"),
            "{text}"
        );
        let c = Config::load(None, dir.path()).unwrap();
        assert_eq!(c.backend(), Backend::Session);
        assert_eq!(c.link_grace_seconds(), 600);
    }
}
