//! Codex CLI's trust of our hooks (docs/agents.md, "Codex CLI"). Codex runs a user's or a
//! project's hook only once it is trusted: its configuration (`config.toml` in `$CODEX_HOME`)
//! holds, per hook, `[hooks.state."<hooks file>:<event>:<group>:<handler>"]` with the
//! `trusted_hash` of the hook as it was trusted, and a hook whose hash differs is not run. What
//! its `/hooks` screen writes when a person trusts a hook, `install` writes for the hooks it
//! put in the user's `hooks.json`, at their request; `uninstall` takes it out.
//!
//! The hash, as Codex CLI 0.169.0 computes it (and as its test here shows it running):
//! `sha256:` and the hex SHA-256 of the canonical JSON (keys sorted, no spaces) of
//! `{"event_name": <event in snake_case>, "hooks": [<handler>], "matcher": <if any>}`, the
//! handler with its defaults filled in: `{"async": false, "command", "timeout", "type"}`.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use sha2::Digest;

use super::settings::{Placed, Settings};
use super::{Error, Result, io_error, mode_of};
use crate::store::write_atomic_with_mode;

/// Trust our handlers in `file` (Codex's user `hooks.json`, as it is to be written) in the
/// configuration at `config`, and take out the trust of ours no longer there; whether the
/// configuration changed.
pub fn trust(config: &Path, file: &Settings) -> Result<bool> {
    let wanted: Vec<(String, String)> = (file.ours_placed().iter())
        .map(|placed| (key(file.path(), placed), hash(placed)))
        .collect();
    edit(config, |state| {
        let mut changed = forget_ours(state, file, |key| wanted.iter().any(|(k, _)| k == key));
        for (key, hash) in &wanted {
            let entry = state
                .entry(key)
                .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
            let Some(table) = entry.as_table_mut() else {
                continue;
            };
            if table.get("trusted_hash").and_then(|h| h.as_str()) != Some(hash.as_str()) {
                table.insert("trusted_hash", toml_edit::value(hash.as_str()));
                changed = true;
            }
        }
        changed
    })
}

/// Whether the configuration at `config` trusts each of our handlers in `file` as it stands.
pub fn trusted(config: &Path, file: &Settings) -> bool {
    let Ok(text) = fs::read_to_string(config) else {
        return false;
    };
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return false;
    };
    let state = doc
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.as_table_like());
    let Some(state) = state else {
        return false;
    };
    file.ours_placed().iter().all(|placed| {
        state
            .get(&key(file.path(), placed))
            .and_then(|entry| entry.get("trusted_hash"))
            .and_then(|h| h.as_str())
            == Some(hash(placed).as_str())
    })
}

/// Take the trust of our handlers in `file` (as it stands, before they are taken out) out of
/// the configuration at `config`; whether it changed.
pub fn untrust(config: &Path, file: &Settings) -> Result<bool> {
    if !config.is_file() {
        return Ok(false);
    }
    edit(config, |state| forget_ours(state, file, |_| false))
}

/// Take out the entries of `state` for the file of `file` whose hash is one of our handlers'
/// (wherever it was), but those `kept`, so that none is left for a place a handler of ours
/// left; whether any was.
fn forget_ours(state: &mut toml_edit::Table, file: &Settings, kept: impl Fn(&str) -> bool) -> bool {
    let prefix = format!("{}:", file.path().display());
    let ours: Vec<String> = file.ours_placed().iter().map(hash).collect();
    let stale: Vec<String> = (state.iter())
        .filter(|(key, item)| {
            key.starts_with(&prefix)
                && !kept(key)
                && item
                    .get("trusted_hash")
                    .and_then(|h| h.as_str())
                    .is_some_and(|h| ours.iter().any(|o| o == h))
        })
        .map(|(key, _)| key.to_owned())
        .collect();
    for key in &stale {
        state.remove(key);
    }
    !stale.is_empty()
}

/// Run `change` on the `[hooks.state]` table of the configuration at `config` (made if need
/// be), and write the configuration back if it says it changed something; whether it did.
fn edit(config: &Path, change: impl FnOnce(&mut toml_edit::Table) -> bool) -> Result<bool> {
    let text = match fs::read_to_string(config) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_error("cannot read", config)(e)),
    };
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| Error::Shape {
                path: config.to_owned(),
                what: format!("not TOML: {}", e.message()),
            })?;
    let shape = |what: &str| Error::Shape {
        path: config.to_owned(),
        what: what.to_owned(),
    };
    let hooks = implicit_table(doc.as_table_mut(), "hooks")
        .ok_or_else(|| shape("`hooks` is not a table"))?;
    let state =
        implicit_table(hooks, "state").ok_or_else(|| shape("`hooks.state` is not a table"))?;
    if !change(state) {
        return Ok(false);
    }
    if state.is_empty() {
        hooks.remove("state");
    }
    if hooks.is_empty() {
        doc.as_table_mut().remove("hooks");
    }
    write_atomic_with_mode(config, doc.to_string().as_bytes(), mode_of(config))?;
    Ok(true)
}

/// The table `key` of `table`, made (implicit, so that only its own tables are written) if
/// missing; `None` if it is something else.
fn implicit_table<'a>(
    table: &'a mut toml_edit::Table,
    key: &str,
) -> Option<&'a mut toml_edit::Table> {
    let item = table.entry(key).or_insert_with(|| {
        let mut made = toml_edit::Table::new();
        made.set_implicit(true);
        toml_edit::Item::Table(made)
    });
    item.as_table_mut()
}

/// Where Codex keeps the state of the handler at `placed` in the file at `path`.
fn key(path: &Path, placed: &Placed<'_>) -> String {
    format!(
        "{}:{}:{}:{}",
        path.display(),
        snake_case(placed.event),
        placed.group,
        placed.index
    )
}

/// The hash Codex trusts the handler at `placed` by.
fn hash(placed: &Placed<'_>) -> String {
    let handler = placed.handler;
    // Keys in sorted order: serde_json keeps the order they are put in.
    let normalized = json!({
        "async": handler.get("async").and_then(Value::as_bool).unwrap_or(false),
        "command": handler.get("command").cloned().unwrap_or(Value::Null),
        "timeout": handler.get("timeout").and_then(Value::as_u64).unwrap_or(600),
        "type": "command",
    });
    let mut identity = json!({
        "event_name": snake_case(placed.event),
        "hooks": [normalized],
    });
    if let Some(matcher) = placed.matcher {
        identity["matcher"] = matcher.into();
    }
    let digest = sha2::Sha256::digest(identity.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// `PreToolUse` → `pre_tool_use`.
fn snake_case(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_a_hook_as_codex_0_169_0_did() {
        // Trusted by Codex CLI 0.169.0 with this hash, and run (the research run "run4").
        let handler = json!({"type": "command", "command": "/work/scratch/research/e2e/hook2.sh SessionStart /work/scratch/research/e2e/run4/hooklog trusted"});
        let placed = Placed {
            event: "SessionStart",
            matcher: None,
            group: 0,
            index: 0,
            handler: &handler,
        };
        assert_eq!(
            hash(&placed),
            "sha256:b8a015cac1a2ec0668582c079a8c34a792f70758f68da2fc4bd84d934fedd08a"
        );
        assert_eq!(
            key(Path::new("/h/hooks.json"), &placed),
            "/h/hooks.json:session_start:0:0"
        );
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }
}
