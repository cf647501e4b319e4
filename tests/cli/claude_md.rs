//! `claude-md`: the marked section of CLAUDE.md, regenerated from the decision graph of the
//! scenario repository; everything outside the markers kept byte for byte.

use std::fs;

use crate::repo::{TestRepo, stderr};
use crate::scenario;

const BEGIN: &str = "<!-- agent-context:begin -->";
const END: &str = "<!-- agent-context:end -->";

#[test]
fn the_section_is_regenerated_between_the_markers_and_nothing_else_changes() {
    let s = scenario::build();
    let repo = &s.repo;
    let path = repo.root.join("CLAUDE.md");
    let before = "# Project\n\nHand-written notes stay as they are.  \n";
    repo.commit("CLAUDE.md", before, "CLAUDE.md");
    let out = repo.ok(&["claude-md"]);
    assert_eq!(out, format!("updated the section of {}\n", path.display()));
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(before), "{text}");
    assert!(text.ends_with(&format!("{END}\n")), "{text}");
    let section = &text[text.find(BEGIN).unwrap()..];
    // Grouped by component, oldest first within each; what was rejected beside each decision.
    let db = section.find("### src/db/").expect("the pool's component");
    let pool = section
        .find("- Derive the connection pool size from the CPU count")
        .unwrap();
    assert!(db < pool, "{section}");
    assert!(
        section.contains("  - not taken: a fixed size\n"),
        "{section}"
    );
    assert!(
        section.contains("- Rejected: Retrying POST requests was rejected"),
        "{section}"
    );
    assert!(
        section.contains("  - trade-off: Expired entries are dropped when read"),
        "{section}"
    );
    // The decision a later one superseded is not standing.
    assert!(
        !section.contains("Fix the connection pool size at ten"),
        "{section}"
    );

    // Nothing changed: nothing to write.
    let out = repo.ok(&["claude-md"]);
    assert_eq!(out, format!("unchanged: {}\n", path.display()));
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
    // Edits outside the markers survive a regeneration; edits inside do not.
    let edited = text.replace(BEGIN, &format!("{BEGIN}\nhand edit")) + "Trailing words\n";
    fs::write(&path, &edited).unwrap();
    repo.ok(&["claude-md"]);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        text + "Trailing words\n"
    );
    // CLAUDE.md is the only file written in the working tree.
    assert_eq!(repo.git(&["status", "--porcelain"]), "M CLAUDE.md");
    // --print shows the section and writes nothing.
    let printed = repo.ok(&["claude-md", "--print"]);
    assert!(
        printed.starts_with("## Recorded decisions (git agent-context)"),
        "{printed}"
    );
}

#[test]
fn a_repository_can_bring_its_own_template() {
    let s = scenario::build();
    let repo = &s.repo;
    let templates = repo.root.join(".agent-context/templates");
    fs::create_dir_all(&templates).unwrap();
    fs::write(
        templates.join("claude-md.md.j2"),
        "{% for name, ds in components | items %}{{ name }}: {{ ds | length }}\n{% endfor %}",
    )
    .unwrap();
    repo.ok(&["claude-md"]);
    let text = fs::read_to_string(repo.root.join("CLAUDE.md")).unwrap();
    assert!(text.contains("\nsrc/db/: 1\n"), "{text}");
    // A template that does not compile is an error naming it; CLAUDE.md stays as it was.
    fs::write(templates.join("claude-md.md.j2"), "{% for %}").unwrap();
    let out = repo.run(&["claude-md"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: template .agent-context/templates/claude-md.md.j2: "),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(repo.root.join("CLAUDE.md")).unwrap(),
        text
    );
}

#[test]
fn markers_out_of_place_are_refused_and_the_file_is_kept() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "first");
    let path = repo.root.join("CLAUDE.md");
    for broken in [
        format!("{END}\n{BEGIN}\n"),
        format!("{BEGIN}\nno end\n"),
        format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n"),
    ] {
        fs::write(&path, &broken).unwrap();
        let out = repo.run(&["claude-md"]);
        assert_eq!(out.status.code(), Some(2), "{broken:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("CLAUDE.md: "), "{err}");
        assert_eq!(fs::read_to_string(&path).unwrap(), broken);
    }
    // With nothing recorded the section says so; a repository without CLAUDE.md gets one.
    fs::remove_file(&path).unwrap();
    assert_eq!(
        repo.ok(&["claude-md"]),
        format!("created {}\n", path.display())
    );
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(BEGIN), "{text}");
    assert!(text.contains("No decisions are recorded yet."), "{text}");
}

#[test]
fn untrusted_a_claude_md_linked_out_of_the_working_tree_is_neither_read_nor_written() {
    let repo = TestRepo::new();
    let bashrc = repo.home.join(".bashrc");
    let before = "export SECRET_TOKEN=do-not-copy\n";
    fs::write(&bashrc, before).unwrap();
    let path = repo.root.join("CLAUDE.md");
    std::os::unix::fs::symlink(&bashrc, &path).unwrap();
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "CLAUDE.md"]);
    let out = repo.run(&["claude-md"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {} is a link to {}, outside {}: nothing is written through it\n",
            path.display(),
            bashrc.display(),
            repo.root.display()
        )
    );
    assert_eq!(fs::read_to_string(&bashrc).unwrap(), before);
    assert_eq!(
        fs::read_link(&path).unwrap(),
        bashrc,
        "the link is left as it is"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_claude_md_linked_inside_the_working_tree_is_updated_where_it_leads() {
    let repo = TestRepo::new();
    let agents = repo.root.join("AGENTS.md");
    fs::write(&agents, "# Agents\n").unwrap();
    let path = repo.root.join("CLAUDE.md");
    std::os::unix::fs::symlink("AGENTS.md", &path).unwrap();
    let out = repo.ok(&["claude-md"]);
    assert_eq!(out, format!("updated the section of {}\n", path.display()));
    assert_eq!(
        fs::read_link(&path).unwrap(),
        std::path::Path::new("AGENTS.md")
    );
    let text = fs::read_to_string(&agents).unwrap();
    assert!(
        text.starts_with("# Agents\n") && text.contains(BEGIN),
        "{text}"
    );

    // Nor into the git directory, inside the working tree as it is.
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(".git/config", &path).unwrap();
    let config = fs::read(repo.root.join(".git/config")).unwrap();
    let out = repo.run(&["claude-md"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("inside the git directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read(repo.root.join(".git/config")).unwrap(), config);
}
