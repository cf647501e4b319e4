//! A cloned repository is untrusted input (docs/security.md): what it commits cannot read
//! files outside it, hold a hook, or print what the data it was given does not hold.

use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude_hooks::payload;
use crate::repo::{TestRepo, hook_answer, stderr};
use crate::scenario;

/// Run `hook <event>`: it exits 0 whatever happens; its answer and what it said on stderr.
fn hook(repo: &TestRepo, event: &str, payload: &Value) -> (Option<String>, String) {
    let out = repo.run_with_input(
        &repo.root,
        &["hook", event],
        payload.to_string().as_bytes(),
        &[],
    );
    (hook_answer(event, &out), stderr(&out))
}

/// A committed template that is a symbolic link out of the repository, to a file of secrets
/// or to git's own configuration, reaches neither the model, a pull-request comment nor
/// CLAUDE.md: the command says what is wrong, the hook gives nothing.
#[test]
fn templates_are_regular_files_inside_the_repository() {
    let s = scenario::build();
    let repo = &s.repo;
    let secret = repo.home.join("secret.txt");
    fs::write(&secret, "db password hunter2-in-the-secret-file\n").unwrap();
    repo.git(&[
        "config",
        "http.https://github.com/.extraheader",
        "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==",
    ]);
    let templates = repo.root.join(".agent-context/templates");
    fs::create_dir_all(&templates).unwrap();
    symlink(&secret, templates.join("brief.md.j2")).unwrap();
    symlink("../../.git/config", templates.join("review.md.j2")).unwrap();
    symlink("/etc/hostname", templates.join("claude-md.md.j2")).unwrap();

    let start = payload(repo, "SessionStart-startup", &[]);
    let (answer, said) = hook(repo, "SessionStart", &start);
    assert_eq!(answer, None);
    assert!(said.contains("brief.md.j2 is a symbolic link"), "{said}");

    for (args, name) in [
        (
            &["review", "HEAD~3..HEAD", "--format=markdown"][..],
            "review.md.j2",
        ),
        (&["claude-md"][..], "claude-md.md.j2"),
        (&["claude-md", "--print"][..], "claude-md.md.j2"),
    ] {
        let out = repo.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert_eq!(
            err.trim_end(),
            format!(
                "error: template .agent-context/templates/{name}: .agent-context/templates/{name} \
                 is a symbolic link; a repository's templates must be regular files inside it"
            ),
            "{args:?}"
        );
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            !shown.contains("AUTHORIZATION") && !shown.contains("extraheader"),
            "{shown}"
        );
    }
    assert!(!repo.root.join("CLAUDE.md").exists());

    // The folder a link: the same.
    fs::remove_dir_all(repo.root.join(".agent-context")).unwrap();
    let elsewhere = repo.home.join("templates");
    fs::create_dir_all(elsewhere.join("templates")).unwrap();
    fs::copy(&secret, elsewhere.join("templates/claude-md.md.j2")).unwrap();
    symlink(&elsewhere, repo.root.join(".agent-context")).unwrap();
    let out = repo.run(&["claude-md", "--print"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(": .agent-context is a symbolic link;"),
        "{}",
        stderr(&out)
    );
}

/// A repository's own template renders like any other text that leaves the tool: secrets
/// redacted, terminal escapes gone; and with bounded work, so that nested loops cannot hold a
/// session or a command.
#[test]
fn a_template_of_the_repository_is_redacted_sanitised_and_bounded() {
    let s = scenario::build();
    let repo = &s.repo;
    let templates = repo.root.join(".agent-context/templates");
    fs::create_dir_all(&templates).unwrap();
    fs::write(
        templates.join("claude-md.md.j2"),
        "token ghp_R4nd0mT0k3nV4lu3Xy9Wq2Lm8Np5Kj7Hg3Fd\n\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\
         {% for name, ds in components | items %}{{ name }}\n{% endfor %}",
    )
    .unwrap();
    let printed = repo.ok(&["claude-md", "--print"]);
    assert!(printed.contains("src/db/\n"), "{printed}");
    assert!(
        !printed.contains("ghp_R4nd0m") && printed.contains("[REDACTED:"),
        "{printed}"
    );
    assert!(
        !printed.contains('\u{1b}') && !printed.contains("52;c"),
        "{printed:?}"
    );

    let loops = "{% for a in range(100000) %}{% for b in range(100000) %}.{% endfor %}{% endfor %}";
    fs::write(templates.join("claude-md.md.j2"), loops).unwrap();
    fs::write(templates.join("brief.md.j2"), loops).unwrap();
    let started = Instant::now();
    let out = repo.run(&["claude-md"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ran out of fuel"), "{}", stderr(&out));
    let start = payload(repo, "SessionStart-startup", &[]);
    let (answer, said) = hook(repo, "SessionStart", &start);
    assert_eq!(answer, None);
    assert!(said.contains("ran out of fuel"), "{said}");
    // Ten thousand million iterations would take hours; cut short, both end at once.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert!(!repo.root.join("CLAUDE.md").exists());
}
