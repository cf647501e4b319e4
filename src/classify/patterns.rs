//! What the classifier's and the redactor's pattern sets share.

/// `pattern` with every counted repetition made open: `{n,m}`, `{n,}` and `{n}` become `+`
/// (`*` when n is 0). What a pattern matches only grows, so the set of loosened rules finds
/// every text a rule would; and it builds several times faster (`{36,255}` is 255 copies of
/// a class), which every process that uses them pays once.
pub(crate) fn loosened(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let counted = after
            .find('}')
            .map(|close| &after[..close])
            .filter(|inner| {
                !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit() || c == ',')
            });
        match counted {
            Some(inner) => {
                let at_least_one = inner
                    .split(',')
                    .next()
                    .is_some_and(|n| n.parse::<u32>().unwrap_or(0) > 0);
                out.push(if at_least_one { '+' } else { '*' });
                rest = &after[inner.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loosening_opens_counted_repetitions_only() {
        assert_eq!(loosened(r"a[0-9]{16}\b"), r"a[0-9]+\b");
        assert_eq!(loosened(r"x{0,20}?y{36,255}z{8,}"), r"x*?y+z+");
        assert_eq!(loosened(r"\{not{a,count}"), r"\{not{a,count}");
    }
}
