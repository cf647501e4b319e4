//! `install` and `uninstall`: our hooks merged into Claude Code settings files and the git hooks
//! folder beside what is there, and taken out again leaving it as it was; and the plugin layout
//! (`.claude-plugin/plugin.json`, `hooks/hooks.json`), which must agree with `install`. Git runs
//! the hooks (real commits, amends, `git hook run`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use git_agent_context::deliver::adapter::{self, Entry};
use git_agent_context::deliver::hookup::settings::GUARD;
use git_agent_context::transcript::agent::Agent;
use serde_json::{Value, json};

use crate::repo::{BIN, TestRepo, output_of_copy, stderr};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

fn write_json(path: &Path, value: &Value) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, serde_json::to_string_pretty(value).unwrap() + "\n").unwrap();
}

fn local_settings(repo: &TestRepo) -> PathBuf {
    repo.root.join(".claude/settings.local.json")
}

fn hook_file(repo: &TestRepo, name: &str) -> PathBuf {
    repo.root.join(".git/hooks").join(name)
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Each command handler of a settings (or hooks.json) value: (event, matcher, command,
/// timeout), in file order.
fn handlers(settings: &Value) -> Vec<(String, Option<String>, String, Option<u64>)> {
    let mut all = Vec::new();
    for (event, groups) in settings["hooks"].as_object().unwrap() {
        for group in groups.as_array().unwrap() {
            for handler in group["hooks"].as_array().unwrap() {
                all.push((
                    event.clone(),
                    group["matcher"].as_str().map(str::to_owned),
                    handler["command"].as_str().unwrap().to_owned(),
                    handler["timeout"].as_u64(),
                ));
            }
        }
    }
    all
}

/// The handlers of `settings` whose command starts with `command`, as (event, matcher,
/// timeout), with the command checked to end in `hook <event>`.
fn ours(settings: &Value, command: &str) -> Vec<(String, Option<String>, u64)> {
    handlers(settings)
        .into_iter()
        .filter(|(_, _, c, _)| c.starts_with(command))
        .map(|(event, matcher, c, timeout)| {
            assert_eq!(c, format!("{command} hook {event}"));
            (event, matcher, timeout.unwrap())
        })
        .collect()
}

/// Claude Code's entries of ours.
fn claude_entries() -> &'static [Entry] {
    adapter::of(Agent::ClaudeCode).entries()
}

/// The install table, as [`ours`] gives it.
fn table() -> Vec<(String, Option<String>, u64)> {
    claude_entries()
        .iter()
        .map(|e| (e.event.to_owned(), e.matcher.map(str::to_owned), e.timeout))
        .collect()
}

/// `entries` in the order of the install table (a file's events keep their own order).
fn sorted(mut entries: Vec<(String, Option<String>, u64)>) -> Vec<(String, Option<String>, u64)> {
    let rank = |event: &str| claude_entries().iter().position(|e| e.event == event);
    entries.sort_by_key(|(event, _, _)| rank(event));
    entries
}

/// The binary run with extra environment variables.
fn run_with(repo: &TestRepo, args: &[&str], vars: &[(&str, &Path)]) -> Output {
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(args);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Write an executable hook script.
fn write_hook(path: &Path, script: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, script).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A settings file as people have them: permissions, env, a status line and other tools'
/// hooks on events we use.
fn realistic_settings() -> Value {
    json!({
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "permissions": {
            "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
            "deny": ["Read(./.env)", "Read(./secrets/**)"]
        },
        "env": {"CLAUDE_CODE_ENABLE_TELEMETRY": "0", "BASH_DEFAULT_TIMEOUT_MS": "60000"},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "~/.claude/hooks/check-bash.sh"}
                ]}
            ],
            "Stop": [
                {"hooks": [
                    {"type": "command", "command": "afplay /System/Library/Sounds/Glass.aiff", "timeout": 5}
                ]}
            ],
            "Notification": [
                {"matcher": "", "hooks": [
                    {"type": "command", "command": "notify-send Claude \"$(jq -r .message)\""}
                ]}
            ]
        },
        "model": "opus",
        "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}
    })
}

#[test]
fn install_merges_our_hooks_into_the_local_settings_and_a_second_run_changes_nothing() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    let out = repo.ok(&["install"]);
    assert!(
        out.contains("added Claude Code hooks for 7 events to .claude/settings.local.json"),
        "{out}"
    );
    assert!(
        out.contains("installed the git hook .git/hooks/post-commit"),
        "{out}"
    );
    assert!(
        out.contains("installed the git hook .git/hooks/post-rewrite"),
        "{out}"
    );
    assert!(out.contains("notes follow commits"), "{out}");

    let path = local_settings(&repo);
    let settings = read_json(&path);
    assert_eq!(ours(&settings, BIN), table());
    assert_eq!(handlers(&settings).len(), claude_entries().len());
    let text = fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("{\n  \"hooks\": {\n    \"SessionStart\""),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    for name in ["post-commit", "post-merge", "post-rewrite"] {
        let hook = fs::read_to_string(hook_file(&repo, name)).unwrap();
        // It calls the binary the settings call, else the one on PATH.
        assert!(
            hook.contains(&format!("bin={BIN}\n"))
                && hook.contains("command -v git-agent-context")
                && hook.contains(&format!("\"$bin\" hook {name}")),
            "{hook}"
        );
        assert_eq!(mode(&hook_file(&repo, name)), 0o755);
    }
    // What `init` does; and git does not offer the local file for a commit.
    assert!(repo.root.join(".git/agent-context/pending").is_dir());
    assert_eq!(
        repo.git(&["config", "notes.rewriteRef"]),
        "refs/notes/agent-context"
    );
    repo.git(&["rev-parse", "--verify", "-q", "refs/notes/agent-context"]);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    let files = || -> Vec<Vec<u8>> {
        [
            path.clone(),
            hook_file(&repo, "post-commit"),
            hook_file(&repo, "post-merge"),
            hook_file(&repo, "post-rewrite"),
            repo.root.join(".git/config"),
            repo.root.join(".git/info/exclude"),
        ]
        .iter()
        .map(|p| fs::read(p).unwrap())
        .collect()
    };
    let before = files();
    let again = repo.ok(&["install"]);
    // The tests' binary is in target/debug, no bin folder: the manual is not written beside it
    // (tests/cli/man.rs installs from one).
    assert_eq!(
        again,
        format!(
            "already installed: .claude/settings.local.json, .git/hooks/post-commit, \
             .git/hooks/post-merge, .git/hooks/post-rewrite, the store and the notes config\n\
             note: the manual was not written: {} is not in a bin folder, beside which man would \
             look; `git agent-context man --out <dir>` writes the pages where you choose\n\
             check it: `git agent-context status` shows what is installed where, \
             `git agent-context doctor` what is wrong\n",
            BIN
        )
    );
    let after = files();
    assert!(before == after, "a second install changed a file");

    // And the hooks it installed run: git runs ours on a commit.
    repo.commit("a.txt", "a\n", "second");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());
}

#[test]
fn each_scope_has_its_settings_file() {
    let repo = TestRepo::new();
    let out = repo.ok(&[
        "install",
        "--scope",
        "project",
        "--command",
        "git-agent-context",
    ]);
    assert!(out.contains(".claude/settings.json"), "{out}");
    let project = read_json(&repo.root.join(".claude/settings.json"));
    assert_eq!(ours(&project, "git-agent-context"), table());
    assert!(!local_settings(&repo).exists());
    // The shared file is the user's to commit: not hidden from git.
    assert!(repo.git(&["status", "--porcelain"]).contains(".claude/"));

    let out = repo.ok(&["install", "--scope", "user"]);
    assert!(out.contains("~/.claude/settings.json"), "{out}");
    assert_eq!(
        ours(
            &read_json(&repo.home.join(".claude/settings.json")),
            "git-agent-context"
        ),
        table()
    );

    let config = repo.home.join("config");
    let out = run_with(
        &repo,
        &["install", "--scope", "user"],
        &[("CLAUDE_CONFIG_DIR", &config)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        ours(
            &read_json(&config.join("settings.json")),
            "git-agent-context"
        ),
        table()
    );

    let out = run_with(
        &repo,
        &["uninstall", "--scope", "user"],
        &[("CLAUDE_CONFIG_DIR", &config)],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!config.join("settings.json").exists());
    assert!(repo.home.join(".claude/settings.json").exists());
    assert!(repo.root.join(".claude/settings.json").exists());
}

#[test]
fn install_then_uninstall_gives_back_the_settings_it_found() {
    let repo = TestRepo::new();
    let path = repo.root.join(".claude/settings.json");
    let original = realistic_settings();
    write_json(&path, &original);
    let original_bytes = fs::read(&path).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();

    repo.ok(&["install", "--scope", "project"]);
    let installed = read_json(&path);
    // A shared file names no path of this machine, and its hooks do nothing for a teammate
    // without the binary.
    let guarded = format!("{GUARD} git-agent-context");
    assert_eq!(sorted(ours(&installed, &guarded)), table());
    let command = installed["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let run = |path: &std::ffi::OsStr| {
        Command::new("sh")
            .args(["-c", &command])
            .env("PATH", path)
            .current_dir(&repo.root)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let without = run(&path_without_binary());
    assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
    assert!(without.stdout.is_empty() && without.stderr.is_empty());
    // With it, the hook runs.
    let before = repo.log();
    let with = run(&crate::repo::path_with_binary());
    assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
    assert_ne!(repo.log(), before, "the hook ran and logged");
    // Everything else as it was, in its order; ours after the other tools' hooks.
    let keys: Vec<&String> = installed.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "$schema",
            "permissions",
            "env",
            "hooks",
            "model",
            "statusLine"
        ]
    );
    for key in ["permissions", "env", "model", "statusLine"] {
        assert_eq!(installed[key], original[key]);
    }
    let events: Vec<&String> = installed["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "PreToolUse",
            "Stop",
            "Notification",
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "PreCompact",
            "SessionEnd"
        ]
    );
    assert_eq!(
        installed["hooks"]["PreToolUse"][0],
        original["hooks"]["PreToolUse"][0]
    );
    assert_eq!(installed["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(
        installed["hooks"]["Notification"],
        original["hooks"]["Notification"]
    );
    assert_eq!(mode(&path), 0o600, "the file keeps its permissions");

    let out = repo.ok(&["uninstall", "--scope", "project"]);
    assert!(
        out.contains("removed the Claude Code hooks from .claude/settings.json"),
        "{out}"
    );
    assert!(
        out.contains("kept the notes (refs/notes/agent-context)"),
        "{out}"
    );
    let back = read_json(&path);
    assert_eq!(back, original);
    // Same keys in the same order, and here even the same bytes.
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&original).unwrap()
    );
    assert_eq!(fs::read(&path).unwrap(), original_bytes);
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn ours_beside_a_foreign_handler_is_replaced_in_place_and_taken_out_alone() {
    let repo = TestRepo::new();
    let path = repo.root.join(".claude/settings.json");
    // An older install (another path) left ours in groups shared with another tool's hook:
    // under Stop as we install it, under PreToolUse with a matcher we no longer use.
    let old = "/opt/old/bin/git-agent-context";
    let mut settings = realistic_settings();
    settings["hooks"]["Stop"][0]["hooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "command": format!("{old} hook Stop"), "timeout": 30}));
    settings["hooks"]["PreToolUse"][0]["hooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "command": format!("{old} hook PreToolUse")}));
    // Look-alikes that are not ours.
    settings["hooks"]["SessionEnd"] = json!([{"hooks": [
        {"type": "command", "command": "my-git-agent-context-backup hook SessionEnd"},
        {"type": "command", "command": "other-tool hook SessionEnd"}
    ]}]);
    write_json(&path, &settings);

    repo.ok(&[
        "install",
        "--scope",
        "project",
        "--command",
        "git-agent-context",
    ]);
    let installed = read_json(&path);
    assert_eq!(ours(&installed, old), []);
    assert_eq!(
        sorted(ours(&installed, "git-agent-context")),
        table(),
        "exactly one of ours per event: {installed:#}"
    );
    let stop = &installed["hooks"]["Stop"];
    assert_eq!(
        stop.as_array().unwrap().len(),
        1,
        "updated in its group: {stop:#}"
    );
    assert_eq!(
        stop[0]["hooks"][0],
        settings["hooks"]["Stop"][0]["hooks"][0]
    );
    assert_eq!(
        stop[0]["hooks"][1]["command"],
        "git-agent-context hook Stop"
    );
    let pre = &installed["hooks"]["PreToolUse"];
    assert_eq!(pre[0], realistic_settings()["hooks"]["PreToolUse"][0]);
    assert_eq!(pre[1]["matcher"], "Read|Edit|MultiEdit|Write");
    assert_eq!(
        installed["hooks"]["SessionEnd"][0],
        settings["hooks"]["SessionEnd"][0]
    );

    // Another command replaces ours; it does not add to them.
    repo.ok(&["install", "--scope", "project", "--command", BIN]);
    let again = read_json(&path);
    assert_eq!(ours(&again, "git-agent-context"), []);
    assert_eq!(sorted(ours(&again, BIN)), table());
    assert_eq!(
        handlers(&again).len(),
        handlers(&installed).len(),
        "{again:#}"
    );

    repo.ok(&["uninstall", "--scope", "project"]);
    let mut expected = realistic_settings();
    expected["hooks"]["SessionEnd"] = settings["hooks"]["SessionEnd"].clone();
    assert_eq!(read_json(&path), expected);
    let out = repo.ok(&["uninstall", "--scope", "project"]);
    assert!(out.starts_with("nothing to uninstall"), "{out}");
    assert_eq!(read_json(&path), expected);
}

#[test]
fn settings_that_cannot_be_merged_are_refused_and_nothing_changes() {
    let repo = TestRepo::new();
    let path = local_settings(&repo);
    for (content, says) in [
        ("{\"hooks\": {\"Stop\": [}\n", "is not valid JSON"),
        ("{\"hooks\": []}\n", "`hooks` is not an object"),
        (
            "{\"hooks\": {\"Stop\": {}}}\n",
            "`hooks.Stop` is not an array",
        ),
        ("[1, 2]\n", "the top level is not a JSON object"),
    ] {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        for command in ["install", "uninstall"] {
            // With nothing of ours in it, uninstall has nothing to take out of a bad event.
            if command == "uninstall" && says.contains("Stop") {
                assert!(repo.run(&[command]).status.success());
                assert_eq!(fs::read_to_string(&path).unwrap(), content);
                continue;
            }
            let out = repo.run(&[command]);
            assert_eq!(out.status.code(), Some(2), "{command} {content}");
            let err = stderr(&out);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.starts_with("error: ") && err.contains(says), "{err}");
            assert_eq!(fs::read_to_string(&path).unwrap(), content);
        }
    }
    // Nothing else was installed either.
    assert!(!hook_file(&repo, "post-commit").exists());
    assert!(!repo.root.join(".git/agent-context").exists());

    let out = repo.run(&["install", "--command", "my-wrapper"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not name git-agent-context"));
    let out = repo.run(&["install", "--plugin", "--scope", "user"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Run `args` and check that they were refused in one `error:` line naming `link` and where it
/// leads, with nothing installed.
fn refused_through(repo: &TestRepo, args: &[&str], link: &Path, to: &Path) {
    let out = repo.run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [format!(
            "error: {} is a link to {}, outside {}: nothing is written through it",
            link.display(),
            to.display(),
            match args.contains(&"user") {
                true => repo.home.join(".claude"),
                false => repo.root.clone(),
            }
            .display()
        )],
        "{args:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(!hook_file(repo, "post-commit").exists());
    assert!(!repo.root.join(".git/agent-context").exists());
}

#[test]
fn untrusted_a_settings_file_linked_out_of_the_project_is_not_written_through() {
    let repo = TestRepo::new();
    // The user's own settings, which a committed link in the repository points at.
    let global = repo.home.join(".claude/settings.json");
    write_json(&global, &realistic_settings());
    let before = fs::read(&global).unwrap();
    fs::create_dir_all(repo.root.join(".claude")).unwrap();
    for name in ["settings.local.json", "settings.json"] {
        std::os::unix::fs::symlink(&global, repo.root.join(".claude").join(name)).unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "settings"]);
    for (scope, name) in [
        ("local", "settings.local.json"),
        ("project", "settings.json"),
    ] {
        let link = repo.root.join(".claude").join(name);
        for command in ["install", "uninstall"] {
            refused_through(&repo, &[command, "--scope", scope], &link, &global);
        }
    }
    assert_eq!(fs::read(&global).unwrap(), before);
}

#[test]
fn untrusted_a_claude_folder_linked_out_of_the_project_is_not_written_into() {
    let repo = TestRepo::new();
    let global = repo.home.join(".claude");
    write_json(&global.join("settings.json"), &realistic_settings());
    let before = fs::read(global.join("settings.json")).unwrap();
    let link = repo.root.join(".claude");
    std::os::unix::fs::symlink(&global, &link).unwrap();
    for scope in ["local", "project"] {
        refused_through(&repo, &["install", "--scope", scope], &link, &global);
    }
    assert_eq!(fs::read(global.join("settings.json")).unwrap(), before);
    let names: Vec<_> = fs::read_dir(&global)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["settings.json"],
        "nothing new in the folder linked to"
    );
}

#[test]
fn untrusted_the_user_settings_linked_out_of_claudes_folder_are_not_written_through() {
    let repo = TestRepo::new();
    let elsewhere = repo.home.join("notes.json");
    write_json(&elsewhere, &json!({"keep": "as it is"}));
    let before = fs::read(&elsewhere).unwrap();
    let link = repo.home.join(".claude/settings.json");
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    refused_through(&repo, &["install", "--scope", "user"], &link, &elsewhere);
    assert_eq!(fs::read(&elsewhere).unwrap(), before);
}

#[test]
fn untrusted_a_hooks_folder_linked_out_of_the_working_tree_is_not_written_into() {
    let repo = TestRepo::new();
    // The repository keeps its hooks in a committed folder (as husky does), which is a link.
    let bin = repo.home.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let link = repo.root.join(".githooks");
    std::os::unix::fs::symlink(&bin, &link).unwrap();
    repo.git(&["config", "core.hooksPath", ".githooks"]);
    let out = repo.run(&["install", "--plugin"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {} is a link to {}, outside {}: nothing is written through it\n",
            link.display(),
            bin.display(),
            repo.root.display()
        )
    );
    assert_eq!(fs::read_dir(&bin).unwrap().count(), 0);
    assert!(!repo.root.join(".git/agent-context").exists());
    let out = repo.run(&["uninstall"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // The git directory is not cloned: a link there is the user's own, and followed.
    repo.git(&["config", "--unset", "core.hooksPath"]);
    let shared = repo.home.join("shared-hooks");
    fs::create_dir_all(&shared).unwrap();
    fs::remove_dir_all(repo.root.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(&shared, repo.root.join(".git/hooks")).unwrap();
    repo.ok(&["install", "--plugin"]);
    assert!(shared.join("post-commit").is_file());
    assert_eq!(fs::read_dir(&bin).unwrap().count(), 0);
}

#[test]
fn a_settings_link_that_stays_in_the_project_is_followed() {
    let repo = TestRepo::new();
    let kept = repo.root.join("config/claude-local.json");
    write_json(&kept, &realistic_settings());
    let link = local_settings(&repo);
    fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("../config/claude-local.json", &link).unwrap();
    repo.ok(&["install"]);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(sorted(ours(&read_json(&kept), BIN)), sorted(table()));
    repo.ok(&["uninstall"]);
    assert_eq!(read_json(&kept), realistic_settings());
}

#[test]
fn core_hooks_path_is_where_the_git_hooks_go() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    repo.git(&["config", "core.hooksPath", "tools/hooks"]);
    // From a subfolder: the path is relative to the top of the working tree, as for git.
    fs::create_dir_all(repo.root.join("src")).unwrap();
    let out = repo
        .cmd_in(&repo.root.join("src"))
        .arg("install")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("installed the git hook tools/hooks/post-commit"),
        "{stdout}"
    );
    assert!(repo.root.join("tools/hooks/post-rewrite").exists());
    assert!(!hook_file(&repo, "post-commit").exists());
    repo.commit("a.txt", "a\n", "second");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());

    let out = repo.ok(&["uninstall"]);
    assert!(
        out.contains("removed the git hook tools/hooks/post-commit"),
        "{out}"
    );
    assert!(!repo.root.join("tools/hooks/post-commit").exists());
}

#[test]
fn a_post_commit_hook_already_there_still_runs_and_comes_back_byte_for_byte() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    let trace = repo.home.join("user-hook.log");
    let user_hook = format!(
        "#!/bin/sh\n# the team's hook\necho \"post-commit $#\" >>'{}'\necho 'user hook says hi'\nexit 3\n",
        trace.display()
    );
    write_hook(&hook_file(&repo, "post-commit"), &user_hook);
    fs::set_permissions(
        hook_file(&repo, "post-commit"),
        fs::Permissions::from_mode(0o750),
    )
    .unwrap();

    let out = repo.ok(&["install"]);
    assert!(
        out.contains("the hook that was there is kept as post-commit.pre-agent-context"),
        "{out}"
    );
    let kept = hook_file(&repo, "post-commit.pre-agent-context");
    assert_eq!(fs::read_to_string(&kept).unwrap(), user_hook);

    // git commits: both hooks run, the user's output shows, the commit succeeds.
    fs::write(repo.root.join("a.txt"), "a\n").unwrap();
    repo.git(&["add", "a.txt"]);
    let commit = repo.git_output(&repo.root, &["commit", "-q", "-m", "second"], &[]);
    assert!(commit.status.success());
    assert!(
        stderr(&commit).contains("user hook says hi"),
        "{}",
        stderr(&commit)
    );
    assert_eq!(fs::read_to_string(&trace).unwrap(), "post-commit 0\n");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());
    // The hook's status is the chained hook's (git ignores it after a commit; `git hook run`
    // reports it).
    let run = repo.git_output(&repo.root, &["hook", "run", "post-commit"], &[]);
    assert_eq!(run.status.code(), Some(3));
    assert_eq!(fs::read_to_string(&trace).unwrap().lines().count(), 2);

    // A second install leaves the chain as it is.
    assert!(repo.ok(&["install"]).starts_with("already installed"));
    assert_eq!(fs::read_to_string(&kept).unwrap(), user_hook);

    let out = repo.ok(&["uninstall"]);
    assert!(
        out.contains("put back the git hook .git/hooks/post-commit"),
        "{out}"
    );
    assert!(
        out.contains("removed the git hook .git/hooks/post-rewrite"),
        "{out}"
    );
    assert_eq!(
        fs::read_to_string(hook_file(&repo, "post-commit")).unwrap(),
        user_hook
    );
    assert_eq!(mode(&hook_file(&repo, "post-commit")), 0o750);
    assert!(!kept.exists());
    assert!(!hook_file(&repo, "post-rewrite").exists());
}

#[test]
fn post_rewrite_input_reaches_the_chained_hook_and_ours() {
    let repo = TestRepo::new();
    let first = repo.commit("README.md", "hello\n", "first");
    let seen = repo.home.join("rewritten.txt");
    write_hook(
        &hook_file(&repo, "post-rewrite"),
        &format!("#!/bin/sh\n{{ echo \"$1\"; cat; }} >'{}'\n", seen.display()),
    );
    repo.ok(&["install"]);
    repo.git(&["commit", "-q", "--amend", "-m", "first, amended"]);
    let amended = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(amended, first);
    assert_eq!(
        fs::read_to_string(&seen).unwrap(),
        format!("amend\n{first} {amended}\n")
    );
    assert!(
        repo.log()
            .contains("hook post-rewrite: amend: 1 commits rewritten"),
        "{}",
        repo.log()
    );
}

#[test]
fn a_copy_of_a_shipped_hook_is_updated_and_a_taken_place_stops_the_install() {
    let repo = TestRepo::new();
    repo.install_git_hooks();
    let out = repo.ok(&["install"]);
    assert!(
        out.contains("updated the git hook .git/hooks/post-commit"),
        "{out}"
    );
    assert!(!hook_file(&repo, "post-commit.pre-agent-context").exists());
    repo.ok(&["uninstall"]);
    assert!(!hook_file(&repo, "post-commit").exists());

    // A foreign hook whose keeping place is taken: nothing is changed at all.
    write_hook(&hook_file(&repo, "post-rewrite"), "#!/bin/sh\necho mine\n");
    write_hook(
        &hook_file(&repo, "post-rewrite.pre-agent-context"),
        "#!/bin/sh\necho older\n",
    );
    let out = repo.run(&["install"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("post-rewrite.pre-agent-context exists already"),
        "{err}"
    );
    assert!(!hook_file(&repo, "post-commit").exists());
    assert!(!local_settings(&repo).exists());
    assert_eq!(
        fs::read_to_string(hook_file(&repo, "post-rewrite")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
}

#[test]
fn uninstall_keeps_the_notes_the_store_and_their_config() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    repo.ok(&["install"]);
    let out = repo.ok(&["uninstall"]);
    assert!(
        out.contains(
            "removed the Claude Code hooks from .claude/settings.local.json, and the file"
        ),
        "{out}"
    );
    assert!(!local_settings(&repo).exists());
    assert!(!hook_file(&repo, "post-commit").exists());
    assert!(repo.root.join(".git/agent-context").is_dir());
    repo.git(&["rev-parse", "--verify", "-q", "refs/notes/agent-context"]);
    assert_eq!(
        repo.git(&["config", "notes.rewriteRef"]),
        "refs/notes/agent-context"
    );

    let again = repo.ok(&["uninstall"]);
    assert_eq!(
        again,
        "nothing to uninstall: no hooks of ours in .claude/settings.local.json or .git/hooks\n\
         kept the notes (refs/notes/agent-context), the store (.git/agent-context) and the notes \
         config\n"
    );
}

#[test]
fn with_the_plugin_only_the_git_hooks_and_the_store_are_installed() {
    let repo = TestRepo::new();
    let out = repo.ok(&["install", "--plugin"]);
    assert!(!out.contains("settings"), "{out}");
    assert!(!repo.root.join(".claude").exists());
    assert!(hook_file(&repo, "post-commit").exists());
    assert!(repo.root.join(".git/agent-context").is_dir());
}

/// The plugin's root: the repository's.
fn plugin_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_plugin_declares_the_hooks_install_does() {
    let manifest = read_json(&plugin_root().join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "git-agent-context");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["license"], env!("CARGO_PKG_LICENSE"));
    // The server it ships is the one `install --mcp` registers for a shared scope.
    let repo = TestRepo::new();
    repo.ok(&["install", "--mcp", "--scope", "project"]);
    let registered = read_json(&repo.root.join(".mcp.json"));
    assert_eq!(manifest["mcpServers"], registered["mcpServers"]);

    let plugin = read_json(&plugin_root().join("hooks/hooks.json"));
    assert!(plugin["description"].is_string());
    let declared: Vec<(String, Option<String>, u64)> = handlers(&plugin)
        .into_iter()
        .map(|(event, matcher, command, timeout)| {
            assert_eq!(
                command,
                format!("sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/agent-context-hook\" {event}")
            );
            (event, matcher, timeout.unwrap())
        })
        .collect();
    assert_eq!(declared, table());

    // And what install writes has the same shape.
    let repo = TestRepo::new();
    repo.ok(&["install", "--command", "git-agent-context"]);
    let installed = read_json(&local_settings(&repo));
    let shape = |v: &Value, command: &str| {
        let mut v = v.clone();
        for groups in v["hooks"].as_object_mut().unwrap().values_mut() {
            for group in groups.as_array_mut().unwrap() {
                for handler in group["hooks"].as_array_mut().unwrap() {
                    handler["command"] = json!(
                        handler["command"]
                            .as_str()
                            .unwrap()
                            .replace(command, "<command>")
                    );
                }
            }
        }
        v["hooks"].clone()
    };
    assert_eq!(
        shape(
            &plugin,
            "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/agent-context-hook\""
        ),
        shape(&installed, "git-agent-context hook")
    );
}

/// Run the plugin's command for `event` as Claude Code does (`sh -c`), with `path` as PATH.
fn run_plugin_hook(event: &str, path: &std::ffi::OsStr, input: &[u8]) -> Output {
    let plugin = read_json(&plugin_root().join("hooks/hooks.json"));
    let command = plugin["hooks"][event][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .env_clear()
        .env("PATH", path)
        .env("CLAUDE_PLUGIN_ROOT", plugin_root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread: a hook that did not read its input would block the write.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&input)
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().expect("the hook read all its input");
    out
}

#[test]
fn the_plugin_hook_does_nothing_without_the_binary_and_hands_over_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    // The system's folders, without any that holds a git-agent-context.
    let system: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .filter(|dir| !dir.join("git-agent-context").exists())
        .collect();
    let without = std::env::join_paths(&system).unwrap();
    // A large payload (PostToolUse carries whole files): read, not left in the pipe.
    let payload = format!(
        "{{\"hook_event_name\":\"PostToolUse\",\"tool_response\":\"{}\"}}",
        "x".repeat(300_000)
    );
    let out = run_plugin_hook("PostToolUse", &without, payload.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );

    // With a binary on PATH: it gets the arguments and the input, its output is the hook's.
    let fake = tmp.path().join("git-agent-context");
    write_hook(
        &fake,
        "#!/bin/sh\necho \"args: $*\"\ncat\necho 'to stderr' >&2\n",
    );
    let with = std::env::join_paths(std::iter::once(tmp.path().to_owned()).chain(system)).unwrap();
    let out = run_plugin_hook("SessionStart", &with, b"{\"source\":\"startup\"}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "args: hook SessionStart\n{\"source\":\"startup\"}"
    );
    assert_eq!(stderr(&out), "to stderr\n");

    // The real binary, outside any repository: a quiet exit 0.
    let real = std::env::join_paths(
        std::iter::once(Path::new(BIN).parent().unwrap().to_owned())
            .chain(std::env::split_paths(&without)),
    )
    .unwrap();
    let out = run_plugin_hook(
        "UserPromptSubmit",
        &real,
        format!(
            "{{\"session_id\":\"s\",\"cwd\":{:?},\"prompt\":\"hi\"}}",
            tmp.path().display().to_string()
        )
        .as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// PATH without any folder that holds a git-agent-context.
fn path_without_binary() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap();
    let system = std::env::split_paths(&path).filter(|dir| !dir.join("git-agent-context").exists());
    std::env::join_paths(system).unwrap()
}

#[test]
fn the_git_hooks_find_the_binary_as_the_settings_do_and_say_nothing_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    // A copy of the binary, installed from where it is, and not on PATH.
    let bin = tmp.path().join("git-agent-context");
    fs::copy(BIN, &bin).unwrap();
    let repo = TestRepo::new();
    let out = output_of_copy(
        Command::new(&bin)
            .arg("install")
            .current_dir(&repo.root)
            .env("HOME", &repo.home)
            .env("PATH", path_without_binary())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    // The settings call it by its path, as the git hooks do: nothing needs PATH.
    assert!(!said.contains("PATH"), "{said}");
    let settings = read_json(&local_settings(&repo));
    assert_eq!(ours(&settings, bin.to_str().unwrap()), table());

    let path = path_without_binary();
    let path = path.to_str().unwrap();
    let commit = |file: &str| {
        fs::write(repo.root.join(file), "x\n").unwrap();
        repo.git(&["add", file]);
        repo.git_output(&repo.root, &["commit", "-q", "-m", file], &[("PATH", path)])
    };
    // The hook runs the binary the settings name, though PATH has none.
    let out = commit("a.txt");
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());

    // With that binary gone and none on PATH: a commit as without us, not a word on it.
    fs::remove_file(&bin).unwrap();
    let before = repo.log();
    let out = commit("b.txt");
    assert!(out.status.success());
    assert_eq!(stderr(&out), "", "a commit without the binary");
    assert_eq!(repo.log(), before);
}

#[test]
fn git_hooks_in_the_working_tree_name_no_path_of_this_machine() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.hooksPath", "githooks"]);
    repo.ok(&["install"]);
    let hook = fs::read_to_string(repo.root.join("githooks/post-commit")).unwrap();
    assert!(!hook.contains(BIN) && !hook.contains("\nbin="), "{hook}");
    // They find it on PATH.
    repo.commit("a.txt", "a\n", "second");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());

    // `..` leads out of the working tree: a folder of this machine's, which may name its path.
    let other = TestRepo::new();
    other.git(&["config", "core.hooksPath", "../outside-hooks"]);
    other.ok(&["install"]);
    let outside = other
        .root
        .parent()
        .unwrap()
        .join("outside-hooks/post-commit");
    let hook = fs::read_to_string(&outside).unwrap();
    assert!(hook.contains(&format!("\nbin={BIN}\n")), "{hook}");
}

#[test]
fn a_second_scope_is_warned_of_and_the_git_hooks_stay_while_a_scope_uses_them() {
    let repo = TestRepo::new();
    let first = repo.ok(&["install"]);
    assert!(!first.contains("warning"), "{first}");
    let second = repo.ok(&["install", "--scope", "project"]);
    assert!(
        second.contains(
            "warning: .claude/settings.local.json registers our Claude Code hooks too, and Claude \
             Code runs both; keep one: `git agent-context uninstall --scope local`"
        ),
        "{second}"
    );

    // Taking the project scope out leaves the local one working: its git hooks stay.
    let out = repo.ok(&["uninstall", "--scope", "project"]);
    assert!(
        out.contains(
            "kept the git hooks in .git/hooks: .claude/settings.local.json still registers our \
             Claude Code hooks"
        ),
        "{out}"
    );
    assert!(hook_file(&repo, "post-commit").exists());
    repo.commit("a.txt", "a\n", "second");
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());

    // The last scope out takes them.
    let out = repo.ok(&["uninstall"]);
    assert!(
        out.contains("removed the git hook .git/hooks/post-commit"),
        "{out}"
    );
    assert!(!hook_file(&repo, "post-commit").exists());

    // With the team's file registering ours already, the one to take out is one's own.
    repo.ok(&["install", "--scope", "project"]);
    let own = repo.ok(&["install"]);
    assert!(
        own.contains("keep one: `git agent-context uninstall --scope local`"),
        "{own}"
    );
    repo.ok(&["uninstall", "--scope", "project"]);
    repo.ok(&["uninstall"]);

    // A plugin enabled in the user's settings runs our hooks too.
    write_json(
        &repo.home.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"git-agent-context@tools": true, "other@tools": true}}),
    );
    let out = repo.ok(&["install"]);
    assert!(
        out.contains(
            "warning: the plugin git-agent-context@tools registers our Claude Code hooks too"
        ),
        "{out}"
    );
    let out = repo.ok(&["uninstall"]);
    assert!(
        out.contains("kept the git hooks in .git/hooks: the plugin git-agent-context@tools"),
        "{out}"
    );
    assert!(hook_file(&repo, "post-commit").exists());
}

#[test]
fn uninstall_keeps_the_git_hooks_another_worktree_or_repository_uses() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "first");
    repo.ok(&["install"]);
    let wt = repo.home.parent().unwrap().join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    let in_wt = |args: &[&str]| {
        let out = repo.cmd_in(&wt).args(args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    in_wt(&["install"]);
    let out = in_wt(&["uninstall"]);
    assert!(
        out.contains("kept the git hooks in ") && out.contains(".claude/settings.local.json"),
        "{out}"
    );
    assert!(
        hook_file(&repo, "post-commit").exists(),
        "the main worktree lost its hooks"
    );

    // A hooks folder outside the repository may serve others: left, and said.
    let shared = repo.home.join("global-hooks");
    let other = TestRepo::new();
    other.git(&["config", "core.hooksPath", shared.to_str().unwrap()]);
    other.ok(&["install"]);
    assert!(shared.join("post-commit").exists());
    let out = other.ok(&["uninstall"]);
    assert!(out.contains("a folder outside the repository"), "{out}");
    assert!(shared.join("post-commit").exists());

    // Text a cloned repository brings reaches the terminal without its escapes.
    let evil = TestRepo::new();
    write_json(
        &evil.root.join(".claude/settings.json"),
        &json!({"enabledPlugins": {"git-agent-context@x\u{1b}]0;PWNED\u{7}": true}}),
    );
    for args in [&["install"][..], &["uninstall"][..]] {
        let out = evil.ok(args);
        assert!(
            !out.contains('\u{1b}') && out.contains("git-agent-context@x"),
            "{out:?}"
        );
    }
}
