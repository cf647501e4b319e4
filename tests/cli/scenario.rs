//! A repository with a history of reasoning to retrieve from: six sessions over 21 commits of
//! a small service, touching overlapping files, with decisions, rejections, trade-offs, a
//! superseded decision and reasoning whose lines are gone from HEAD. The notes are written by
//! git itself (`git notes add`, in the documented format) and the graph and index by
//! `rebuild`.

use std::collections::HashMap;

use git_agent_context::event::{Kind, event_id};
use serde_json::{Value, json};

use crate::repo::TestRepo;

pub struct Scenario {
    pub repo: TestRepo,
    /// Event ids by label (`cache.ttl`, …).
    pub ids: HashMap<&'static str, String>,
    /// Commit ids by label (`c1`, `h1`, …).
    pub commits: HashMap<&'static str, String>,
}

/// One recorded event: label, kind, summary, alternatives.
type Said = (
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
);

struct Step {
    label: &'static str,
    session: Option<(&'static str, &'static str)>,
    date: &'static str,
    path: &'static str,
    content: &'static str,
    prompt: &'static str,
    events: &'static [Said],
}

const STEPS: &[Step] = &[
    Step {
        label: "c1",
        session: Some(("s1-cache", "Add a response cache to the HTTP client")),
        date: "2026-01-05T10:00:00Z",
        path: "src/cache.rs",
        content: "use std::collections::HashMap;\nuse std::time::{Duration, Instant};\n\npub struct ResponseCache {\n    entries: HashMap<String, (Instant, Vec<u8>)>,\n    ttl: Duration,\n}\n\nimpl ResponseCache {\n    pub fn get(&mut self, key: &str) -> Option<&[u8]> {\n        let fresh = self.entries.get(key).is_some_and(|(at, _)| at.elapsed() < self.ttl);\n        if !fresh {\n            self.entries.remove(key);\n        }\n        self.entries.get(key).map(|(_, body)| body.as_slice())\n    }\n}\n",
        prompt: "Add a response cache to the HTTP client",
        events: &[
            (
                "cache.ttl",
                "decision",
                "Use a TTL map for the response cache instead of an LRU, because responses expire by time",
                &["an LRU cache"],
            ),
            (
                "cache.lru",
                "rejection",
                "An LRU cache won't work: responses must expire five minutes after they were fetched however often they are read",
                &[],
            ),
            (
                "cache.sweep",
                "tradeoff",
                "Expired entries are dropped when read rather than by a background sweeper thread: a little latency on reads, no thread to manage",
                &[],
            ),
        ],
    },
    Step {
        label: "c2",
        session: Some(("s1-cache", "Add a response cache to the HTTP client")),
        date: "2026-01-05T11:00:00Z",
        path: "src/cache.rs",
        content: "use std::collections::HashMap;\nuse std::time::{Duration, Instant};\n\npub struct ResponseCache {\n    entries: HashMap<String, (Instant, Vec<u8>)>,\n    ttl: Duration,\n}\n\nimpl ResponseCache {\n    pub fn get(&mut self, key: &str) -> Option<&[u8]> {\n        let fresh = self.entries.get(key).is_some_and(|(at, _)| at.elapsed() < self.ttl);\n        if !fresh {\n            self.entries.remove(key);\n        }\n        self.entries.get(key).map(|(_, body)| body.as_slice())\n    }\n\n    pub fn insert(&mut self, key: String, body: Vec<u8>) {\n        self.entries.insert(key, (Instant::now(), body));\n    }\n}\n",
        prompt: "Also let callers insert responses",
        events: &[(
            "cache.explore",
            "exploration",
            "Read how the HTTP client stores response bodies before adding insert",
            &[],
        )],
    },
    Step {
        label: "c3",
        session: Some(("s2-retry", "Retry failed HTTP requests")),
        date: "2026-02-03T09:00:00Z",
        path: "src/http/retry.rs",
        content: "use std::time::Duration;\n\npub fn backoff(attempt: u32) -> Duration {\n    let base = Duration::from_millis(100) * 2u32.pow(attempt);\n    base + jitter(base / 2)\n}\n\nfn jitter(most: Duration) -> Duration {\n    most.mul_f64(rand::random::<f64>())\n}\n",
        prompt: "Retry failed HTTP requests",
        events: &[(
            "retry.backoff",
            "decision",
            "Retry with exponential backoff from 100 ms plus random jitter, so that clients do not retry in lockstep",
            &["a fixed delay between retries"],
        )],
    },
    Step {
        label: "c4",
        session: Some(("s2-retry", "Retry failed HTTP requests")),
        date: "2026-02-03T10:00:00Z",
        path: "src/http/client.rs",
        content: "use crate::http::retry;\n\npub struct Client {\n    inner: reqwest::blocking::Client,\n}\n\nimpl Client {\n    pub fn get(&self, url: &str) -> reqwest::Result<Vec<u8>> {\n        let mut attempt = 0;\n        loop {\n            match self.inner.get(url).send() {\n                Ok(r) => return Ok(r.bytes()?.to_vec()),\n                Err(e) if attempt < retry::MAX_ATTEMPTS => std::thread::sleep(retry::backoff(attempt)),\n                Err(e) => return Err(e),\n            }\n            attempt += 1;\n        }\n    }\n}\n",
        prompt: "Use the retries in the client",
        events: &[(
            "retry.post",
            "rejection",
            "Retrying POST requests was rejected: they are not idempotent and a retry could charge a customer twice",
            &["retrying every method"],
        )],
    },
    Step {
        label: "c5",
        session: Some(("s2-retry", "Retry failed HTTP requests")),
        date: "2026-02-03T11:00:00Z",
        path: "src/http/retry.rs",
        content: "use std::time::Duration;\n\n/// Three attempts keep the worst case under two seconds.\npub const MAX_ATTEMPTS: u32 = 3;\n\npub fn backoff(attempt: u32) -> Duration {\n    let base = Duration::from_millis(100) * 2u32.pow(attempt);\n    base + jitter(base / 2)\n}\n\nfn jitter(most: Duration) -> Duration {\n    most.mul_f64(rand::random::<f64>())\n}\n",
        prompt: "How many attempts?",
        events: &[(
            "retry.attempts",
            "tradeoff",
            "At most three attempts: worst-case latency stays under two seconds, at the cost of failing during longer outages",
            &[],
        )],
    },
    Step {
        label: "h1",
        session: None,
        date: "2026-02-10T09:00:00Z",
        path: "README.md",
        content: "# service\n\nA small HTTP service.\n",
        prompt: "",
        events: &[],
    },
    Step {
        label: "c6",
        session: Some(("s3-config", "Load the configuration from a file")),
        date: "2026-03-02T09:00:00Z",
        path: "src/config.rs",
        content: "use serde::Deserialize;\n\n#[derive(Deserialize)]\npub struct Config {\n    pub database_url: String,\n    pub listen: String,\n}\n\npub fn load(path: &str) -> anyhow::Result<Config> {\n    let text = std::fs::read_to_string(path)?;\n    let mut config: Config = toml::from_str(&text)?;\n    if let Ok(url) = std::env::var(\"APP_DATABASE_URL\") {\n        config.database_url = url;\n    }\n    Ok(config)\n}\n",
        prompt: "Load the configuration from a file",
        events: &[
            (
                "config.toml",
                "decision",
                "Read the configuration from a TOML file, with APP_ environment variables overriding it",
                &["YAML"],
            ),
            (
                "config.yaml",
                "rejection",
                "YAML was rejected: indentation mistakes in files edited by operators broke deploys before",
                &[],
            ),
        ],
    },
    Step {
        label: "c7",
        session: Some(("s3-config", "Load the configuration from a file")),
        date: "2026-03-02T10:00:00Z",
        path: "src/db/pool.rs",
        content: "use std::sync::Mutex;\n\npub struct Pool {\n    idle: Mutex<Vec<Connection>>,\n}\n\nimpl Pool {\n    pub fn new(url: &str) -> Pool {\n        let idle = (0..10).map(|_| Connection::open(url)).collect();\n        Pool { idle: Mutex::new(idle) }\n    }\n}\n",
        prompt: "Open the database connections",
        events: &[(
            "pool.fixed",
            "decision",
            "Fix the connection pool size at ten connections for now",
            &[],
        )],
    },
    Step {
        label: "c8",
        session: Some(("s3-config", "Load the configuration from a file")),
        date: "2026-03-02T11:00:00Z",
        path: "src/config.rs",
        content: "use serde::Deserialize;\n\n#[derive(Deserialize)]\npub struct Config {\n    pub database_url: String,\n    pub listen: String,\n    pub timeout: String,\n}\n\npub fn load(path: &str) -> anyhow::Result<Config> {\n    let text = std::fs::read_to_string(path)?;\n    let mut config: Config = toml::from_str(&text)?;\n    if let Ok(url) = std::env::var(\"APP_DATABASE_URL\") {\n        config.database_url = url;\n    }\n    Ok(config)\n}\n\npub fn parse_duration(text: &str) -> Option<std::time::Duration> {\n    let (number, unit) = text.split_at(text.len() - 1);\n    let n: u64 = number.parse().ok()?;\n    Some(std::time::Duration::from_secs(match unit { \"s\" => n, \"m\" => n * 60, _ => return None }))\n}\n",
        prompt: "Add a request timeout setting",
        events: &[(
            "config.duration",
            "decision",
            "Durations in the configuration are strings such as 30s or 5m, read by a small parser rather than a crate",
            &["the humantime crate"],
        )],
    },
    Step {
        label: "c9",
        session: Some(("s4-auth", "Keep the API token fresh")),
        date: "2026-04-06T09:00:00Z",
        path: "src/auth/token.rs",
        content: "use std::time::{Duration, Instant};\n\npub struct Token {\n    value: String,\n    expires: Instant,\n}\n\nconst MARGIN: Duration = Duration::from_secs(60);\n\npub fn spawn_refresher(token: std::sync::Arc<std::sync::RwLock<Token>>) {\n    std::thread::spawn(move || loop {\n        let wait = token.read().unwrap().expires.saturating_duration_since(Instant::now() + MARGIN);\n        std::thread::sleep(wait);\n        *token.write().unwrap() = fetch_token();\n    });\n}\n",
        prompt: "Keep the API token fresh",
        events: &[
            (
                "auth.refresh",
                "decision",
                "Refresh the access token sixty seconds before it expires, from a background refresher thread",
                &["refreshing lazily on the first failing request"],
            ),
            (
                "auth.explore",
                "exploration",
                "Looked at how the HTTP client reacts to 401 responses",
                &[],
            ),
        ],
    },
    Step {
        label: "c10",
        session: Some(("s4-auth", "Keep the API token fresh")),
        date: "2026-04-06T10:00:00Z",
        path: "src/log.rs",
        content: "pub fn event(level: &str, message: &str) {\n    let line = serde_json::json!({\"level\": level, \"message\": message});\n    println!(\"{line}\");\n}\n",
        prompt: "Log token refreshes",
        events: &[(
            "log.json",
            "decision",
            "Write each log record as one JSON object per line for the log shipper",
            &[],
        )],
    },
    Step {
        label: "c11",
        session: Some(("s4-auth", "Keep the API token fresh")),
        date: "2026-04-06T11:00:00Z",
        path: "src/auth/token.rs",
        content: "use std::time::{Duration, Instant};\n\npub struct Token {\n    value: String,\n    expires: Instant,\n}\n\nconst MARGIN: Duration = Duration::from_secs(60);\n\npub fn spawn_refresher(token: std::sync::Arc<std::sync::RwLock<Token>>) {\n    std::thread::spawn(move || loop {\n        let wait = token.read().unwrap().expires.saturating_duration_since(Instant::now() + MARGIN);\n        std::thread::sleep(wait);\n        *token.write().unwrap() = fetch_token();\n    });\n}\n\npub fn on_unauthorized(token: &std::sync::RwLock<Token>) {\n    *token.write().unwrap() = fetch_token();\n}\n",
        prompt: "Requests still fail with 401 sometimes",
        events: &[(
            "auth.401",
            "bugfix",
            "When a request gets 401, force a token refresh and retry that request once",
            &[],
        )],
    },
    Step {
        label: "h2",
        session: None,
        date: "2026-04-20T09:00:00Z",
        path: "src/http/client.rs",
        content: "use crate::http::retry;\n\npub struct Client {\n    inner: reqwest::blocking::Client,\n}\n\nimpl Client {\n    pub fn get(&self, url: &str) -> reqwest::Result<Vec<u8>> {\n        let mut attempt = 0;\n        loop {\n            match self.inner.get(url).timeout(std::time::Duration::from_secs(5)).send() {\n                Ok(r) => return Ok(r.bytes()?.to_vec()),\n                Err(e) if attempt < retry::MAX_ATTEMPTS => std::thread::sleep(retry::backoff(attempt)),\n                Err(e) => return Err(e),\n            }\n            attempt += 1;\n        }\n    }\n}\n",
        prompt: "",
        events: &[],
    },
    Step {
        label: "c12",
        session: Some(("s5-pool", "The database pool runs out under load")),
        date: "2026-05-04T09:00:00Z",
        path: "src/db/pool.rs",
        content: "use std::sync::Mutex;\n\npub struct Pool {\n    idle: Mutex<Vec<Connection>>,\n}\n\nimpl Pool {\n    pub fn new(url: &str) -> Pool {\n        let per_core = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());\n        let size = per_core.min(100);\n        let idle = (0..size).map(|_| Connection::open(url)).collect();\n        Pool { idle: Mutex::new(idle) }\n    }\n}\n",
        prompt: "The database pool runs out under load",
        events: &[
            (
                "pool.cpu",
                "decision",
                "Derive the connection pool size from the CPU count, two connections per core, instead of ten fixed connections",
                &["a fixed size"],
            ),
            (
                "pool.unbounded",
                "rejection",
                "An unbounded pool was rejected: the database server accepts at most 100 connections",
                &[],
            ),
        ],
    },
    Step {
        label: "c13",
        session: Some(("s5-pool", "The database pool runs out under load")),
        date: "2026-05-04T10:00:00Z",
        path: "src/cache.rs",
        content: "use std::collections::HashMap;\nuse std::time::{Duration, Instant};\n\nconst MAX_ENTRIES: usize = 10_000;\n\npub struct ResponseCache {\n    entries: HashMap<String, (Instant, Vec<u8>)>,\n    ttl: Duration,\n}\n\nimpl ResponseCache {\n    pub fn get(&mut self, key: &str) -> Option<&[u8]> {\n        let fresh = self.entries.get(key).is_some_and(|(at, _)| at.elapsed() < self.ttl);\n        if !fresh {\n            self.entries.remove(key);\n        }\n        self.entries.get(key).map(|(_, body)| body.as_slice())\n    }\n\n    pub fn insert(&mut self, key: String, body: Vec<u8>) {\n        if self.entries.len() >= MAX_ENTRIES {\n            self.evict_oldest();\n        }\n        self.entries.insert(key, (Instant::now(), body));\n    }\n}\n",
        prompt: "Memory grows without bound under load",
        events: &[(
            "cache.cap",
            "decision",
            "Cap the response cache at 10,000 entries on top of the TTL, evicting the oldest entry when full",
            &[],
        )],
    },
    Step {
        label: "c14",
        session: Some(("s5-pool", "The database pool runs out under load")),
        date: "2026-05-04T11:00:00Z",
        path: "src/db/pool.rs",
        content: "use std::sync::Mutex;\n\npub struct Pool {\n    idle: Mutex<Vec<Connection>>,\n}\n\nimpl Pool {\n    pub fn new(url: &str) -> Pool {\n        let per_core = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());\n        let size = per_core.min(100);\n        let idle = (0..size).map(|_| Connection::open(url)).collect();\n        Pool { idle: Mutex::new(idle) }\n    }\n\n    pub fn take(&self) -> Option<Connection> {\n        let conn = self.idle.lock().unwrap().pop()?;\n        conn.execute(\"SELECT 1\").ok().map(|_| conn)\n    }\n}\n",
        prompt: "Dead connections are handed out after a database restart",
        events: &[(
            "pool.health",
            "feature",
            "Check each connection with SELECT 1 before handing it out, so dead connections are dropped",
            &[],
        )],
    },
    Step {
        label: "h3",
        session: None,
        date: "2026-05-10T09:00:00Z",
        path: "CHANGELOG.md",
        content: "# Changes\n\n- pool sized per core\n",
        prompt: "",
        events: &[],
    },
    Step {
        label: "c15",
        session: Some(("s6-logs", "Our logs are hard to search")),
        date: "2026-06-01T09:00:00Z",
        path: "src/log.rs",
        content: "pub fn event(level: Level, message: &str, fields: &[(&str, &str)]) {\n    let mut line = format!(\"level={level} msg={message:?}\");\n    for (k, v) in fields {\n        line.push_str(&format!(\" {k}={v:?}\"));\n    }\n    eprintln!(\"{line}\");\n}\n",
        prompt: "Our logs are hard to search",
        events: &[(
            "log.logfmt",
            "decision",
            "Switch the logs to logfmt key=value lines: JSON records were hard to grep by eye",
            &["JSON lines"],
        )],
    },
    Step {
        label: "c16",
        session: Some(("s6-logs", "Our logs are hard to search")),
        date: "2026-06-01T10:00:00Z",
        path: "src/log.rs",
        content: "pub fn event(level: Level, message: &str, fields: &[(&str, &str)]) {\n    if level < Level::from_env(\"LOG_LEVEL\") {\n        return;\n    }\n    let mut line = format!(\"level={level} msg={message:?}\");\n    for (k, v) in fields {\n        line.push_str(&format!(\" {k}={v:?}\"));\n    }\n    eprintln!(\"{line}\");\n}\n",
        prompt: "Let operators turn debug logging off",
        events: &[(
            "log.level",
            "feature",
            "Drop log lines below the level named by the LOG_LEVEL variable",
            &[],
        )],
    },
    Step {
        label: "h4",
        session: None,
        date: "2026-06-05T09:00:00Z",
        path: "src/http/retry.rs",
        content: "use std::time::Duration;\n\n/// Three attempts keep the worst case under two seconds.\npub const MAX_ATTEMPTS: u32 = 3;\n\n/// The wait before attempt `attempt` (from 0).\npub fn backoff(attempt: u32) -> Duration {\n    let base = Duration::from_millis(100) * 2u32.pow(attempt);\n    base + jitter(base / 2)\n}\n\nfn jitter(most: Duration) -> Duration {\n    most.mul_f64(rand::random::<f64>())\n}\n",
        prompt: "",
        events: &[],
    },
    Step {
        label: "h5",
        session: None,
        date: "2026-06-06T09:00:00Z",
        path: "CHANGELOG.md",
        content: "# Changes\n\n- pool sized per core\n- logfmt logs\n",
        prompt: "",
        events: &[],
    },
];

/// An event of `kind` drawn from `source` in `session`.
/// One event of `session` as a note holds it.
pub fn event(
    (session, source, kind): (&str, &str, &str),
    summary: &str,
    timestamp: &str,
    prompt: &str,
    files: &[&str],
    alternatives: &[&str],
) -> Value {
    let k: Kind = serde_json::from_value(json!(kind)).unwrap();
    let mut e = json!({
        "kind": kind,
        "summary": summary,
        "id": event_id(session, source, k),
        "schema_version": 1,
        "session_id": session,
        "timestamp": timestamp,
        "origin": if kind == "session" { "prompt" } else { "text" },
        "source": source,
        "files_affected": files,
    });
    if kind != "session" {
        e["rationale"] = json!(summary);
        e["prompt_context"] = json!(prompt);
    } else {
        e["prompt_context"] = json!(summary);
    }
    if !alternatives.is_empty() {
        e["alternatives"] = json!(alternatives);
    }
    e
}

/// Give `commit` the note `text` (JSON Lines), with git.
pub fn add_note(repo: &TestRepo, commit: &str, text: &str) {
    repo.git_with_input(
        &[
            "notes",
            "--ref=agent-context",
            "add",
            "-f",
            "-F",
            "-",
            commit,
        ],
        format!("{text}\n").as_bytes(),
    );
}

/// Build the scenario: commits, their notes (written by git), then `rebuild`.
pub fn build() -> Scenario {
    let repo = TestRepo::new();
    let mut ids = HashMap::new();
    let mut commits = HashMap::new();
    let mut session_files: HashMap<&str, Vec<&str>> = HashMap::new();
    for step in STEPS {
        let commit = repo.commit_at(step.path, step.content, step.label, step.date);
        commits.insert(step.label, commit.clone());
        let Some((session, request)) = step.session else {
            continue;
        };
        let files = session_files.entry(session).or_default();
        if !files.contains(&step.path) {
            files.push(step.path);
        }
        // Events a minute before their commit (made on the hour).
        let hour: u32 = step.date[11..13].parse().unwrap();
        let at = format!("{}T{:02}:59:00Z", &step.date[..10], hour - 1);
        let mut lines = vec![event(
            (session, "session", "session"),
            request,
            &at,
            request,
            files,
            &[],
        )];
        for (label, kind, summary, alternatives) in step.events {
            let e = event(
                (session, &format!("msg_{label}"), kind),
                summary,
                &at,
                step.prompt,
                &[step.path],
                alternatives,
            );
            ids.insert(*label, e["id"].as_str().unwrap().to_owned());
            lines.push(e);
        }
        let mut note: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        note.sort();
        add_note(&repo, &commit, &note.join("\n"));
    }
    repo.ok(&["rebuild"]);
    Scenario { repo, ids, commits }
}
