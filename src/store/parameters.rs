//! `git -c key=value`, which git passes to the commands and hooks it runs in
//! `GIT_CONFIG_PARAMETERS`, and gix does not read: parsed here, as git's
//! `parse_config_env_list` reads it.

/// The last value `GIT_CONFIG_PARAMETERS` gives `key`, matching section and name without
/// regard to case. A key given without a value (`git -c color.ui`) is skipped, as gix skips
/// one in a config file; a malformed variable is ignored as a whole.
pub fn last(params: &str, key: &str) -> Option<String> {
    all(params, key).into_iter().flatten().next_back()
}

/// Every value `GIT_CONFIG_PARAMETERS` gives `key`, in order, `None` for a key given without
/// a value: what a key git reads as a list (`safe.directory`) needs. A malformed variable
/// gives nothing.
pub fn all(params: &str, key: &str) -> Vec<Option<String>> {
    parse_parameters(params)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| same_key(name, key))
        .map(|(_, value)| value)
        .collect()
}

/// The `key`, `value` pairs of `GIT_CONFIG_PARAMETERS`, as git's `parse_config_env_list` reads
/// them: space-separated items, each `'key=value'` (older git) or `'key'='value'` (git 2.31
/// and later, which also writes `'key'=` for a key without a value).
fn parse_parameters(params: &str) -> Option<Vec<(String, Option<String>)>> {
    let mut entries = Vec::new();
    let mut rest = params.trim_start_matches(|c: char| c.is_ascii_whitespace());
    while !rest.is_empty() {
        let (item, after) = sq_dequote_step(rest)?;
        let ends_item = |s: &str| s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace());
        let after = if ends_item(after) {
            entries.push(match item.split_once('=') {
                Some((key, value)) => (key.trim().to_owned(), Some(value.to_owned())),
                None => (item.trim().to_owned(), None),
            });
            after
        } else {
            let after = after.strip_prefix('=')?;
            if after.starts_with('\'') {
                let (value, after) = sq_dequote_step(after)?;
                if !ends_item(after) {
                    return None;
                }
                entries.push((item, Some(value)));
                after
            } else if ends_item(after) {
                entries.push((item, None));
                after
            } else {
                return None;
            }
        };
        rest = after.trim_start_matches(|c: char| c.is_ascii_whitespace());
    }
    Some(entries)
}

/// One single-quoted word at the start of `s`, and what follows it. git quotes `'` and `!` by
/// leaving the quotes for a backslashed character: `it's` is written `'it'\''s'`.
fn sq_dequote_step(s: &str) -> Option<(String, &str)> {
    let mut rest = s.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        let escaped = rest
            .strip_prefix("\\'\'")
            .map(|r| ('\'', r))
            .or_else(|| rest.strip_prefix("\\!'").map(|r| ('!', r)));
        match escaped {
            Some((c, after)) => {
                word.push(c);
                rest = after;
            }
            None => return Some((word, rest)),
        }
    }
}

/// Whether two config keys name the same variable: section and name are case-insensitive, a
/// subsection (`remote.Origin.url`) is not.
fn same_key(a: &str, b: &str) -> bool {
    match (split_key(a), split_key(b)) {
        (Some((section_a, sub_a, name_a)), Some((section_b, sub_b, name_b))) => {
            section_a.eq_ignore_ascii_case(section_b)
                && sub_a == sub_b
                && name_a.eq_ignore_ascii_case(name_b)
        }
        _ => false,
    }
}

fn split_key(key: &str) -> Option<(&str, Option<&str>, &str)> {
    let (section, rest) = key.split_once('.')?;
    Some(match rest.rsplit_once('.') {
        Some((subsection, name)) => (section, Some(subsection), name),
        None => (section, None, rest),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;
    use std::process;

    use super::*;

    #[test]
    fn config_parameters_old_form() {
        let params = "'color.ui=never' 'core.pager=less -S'";
        assert_eq!(last(params, "color.ui").as_deref(), Some("never"));
        assert_eq!(last(params, "core.pager").as_deref(), Some("less -S"));
        assert_eq!(last(params, "core.editor"), None);
        // The value keeps any further `=`.
        assert_eq!(
            last("'core.pager=LESS=S less'", "core.pager").as_deref(),
            Some("LESS=S less")
        );
    }

    #[test]
    fn config_parameters_new_form_and_escapes() {
        let params =
            r"'alias.env'=''\!'printenv' 'color.ui'='never' 'x.y'='it'\''s a '\!'t' 'core.bare'=";
        assert_eq!(last(params, "color.ui").as_deref(), Some("never"));
        assert_eq!(last(params, "x.y").as_deref(), Some("it's a !t"));
        assert_eq!(last(params, "alias.env").as_deref(), Some("!printenv"));
        assert_eq!(last(params, "core.bare"), None);
    }

    #[test]
    fn config_parameters_last_wins_and_keys_ignore_case() {
        let params = "'color.ui=always' 'COLOR.UI'='never' 'Color.Ui'";
        assert_eq!(last(params, "color.ui").as_deref(), Some("never"));
        assert_eq!(last(params, "Color.UI").as_deref(), Some("never"));
        // A subsection keeps its case.
        let params = "'remote.Origin.url=a'";
        assert_eq!(last(params, "REMOTE.Origin.URL").as_deref(), Some("a"));
        assert_eq!(last(params, "remote.origin.url"), None);
    }

    #[test]
    fn malformed_config_parameters_are_ignored() {
        for params in [
            "color.ui=never",
            "'color.ui=never",
            "'color.ui'='never'x",
            "'color.ui'=never",
            "'color.ui'x",
        ] {
            assert_eq!(last(params, "color.ui"), None, "{params}");
        }
        assert_eq!(last("", "color.ui"), None);
    }

    /// Run git in `dir` without the user's or the system's configuration.
    pub(crate) fn git(dir: &Path, args: &[&str]) -> process::Output {
        let output = process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        output
    }

    #[test]
    fn config_parameters_as_git_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let output = git(
            dir.path(),
            &[
                "-c",
                "alias.params=!printenv GIT_CONFIG_PARAMETERS",
                "-c",
                "color.ui=always",
                "-c",
                "Color.UI=never",
                "-c",
                "core.pager=less -S 'it'\\''s' \"!x\"",
                "params",
            ],
        );
        let params = String::from_utf8(output.stdout).unwrap();
        let params = params.trim_end_matches('\n');
        assert_eq!(last(params, "color.ui").as_deref(), Some("never"));
        assert_eq!(
            last(params, "core.pager").as_deref(),
            Some("less -S 'it'\\''s' \"!x\"")
        );
    }
}
