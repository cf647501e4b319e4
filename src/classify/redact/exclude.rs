//! Paths whose content is never captured: `.gitignore`-style globs as one regex.

/// Why an exclude glob cannot be used, in one line.
pub fn check_glob(glob: &str) -> Result<(), String> {
    glob_regex(glob).map(drop)
}

/// A glob as a regex over `/`-separated paths, read as `.gitignore` reads it: `*` and `?` stay
/// within a path component, `**` crosses them, `[...]` is a class (`[!...]` its complement); a
/// glob without a `/` (but a trailing one) matches at any depth, one with a `/` from the top of
/// the working tree; and whatever a glob matches, it matches everything below too.
pub(super) fn glob_regex(glob: &str) -> Result<String, String> {
    let trimmed = glob.strip_suffix('/').unwrap_or(glob);
    if trimmed.is_empty() {
        return Err(format!("the glob {glob:?} matches nothing"));
    }
    let anchored = trimmed.contains('/');
    let body = trimmed.strip_prefix('/').unwrap_or(trimmed);
    let mut out = String::from(if anchored { "^" } else { "^(?:.*/)?" });
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let whole =
                    (i == 0 || chars[i - 1] == '/') && matches!(chars.get(i + 2), None | Some('/'));
                if whole && chars.get(i + 2) == Some(&'/') {
                    out.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    out.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                let close = (i + 2..chars.len())
                    .find(|&j| chars[j] == ']')
                    .ok_or_else(|| format!("the glob {glob:?} has a '[' without its ']'"))?;
                out.push('[');
                let mut inner = &chars[i + 1..close];
                if let Some(('!' | '^', rest)) = inner.split_first() {
                    out.push('^');
                    inner = rest;
                }
                for c in inner {
                    if matches!(c, '\\' | '[' | ']' | '^' | '&' | '~') {
                        out.push('\\');
                    }
                    out.push(*c);
                }
                out.push(']');
                i = close + 1;
                continue;
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out.push_str("(?:/.*)?$");
    Ok(out)
}

/// The globs of paths never to capture, as one regex, case-insensitive (on macOS and Windows
/// `.ENV` is `.env`).
#[derive(Debug, Clone)]
pub(super) struct Exclude(regex::Regex);

impl Exclude {
    pub(super) fn new(globs: &[String]) -> Result<Exclude, String> {
        let regexes = globs
            .iter()
            .map(|g| glob_regex(g))
            .collect::<Result<Vec<_>, _>>()?;
        let joined = format!("(?i){}", regexes.join("|"));
        regex::Regex::new(&joined)
            .map(Exclude)
            .map_err(|e| e.to_string())
    }

    /// Whether `path` (relative to the top of the working tree) is excluded.
    pub(super) fn matches(&self, path: &str) -> bool {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.0.is_match(path)
    }
}
