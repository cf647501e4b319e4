//! Event timestamps — RFC 3339, as Claude Code writes them (`2026-01-01T12:00:00.123Z`) — as
//! seconds since the Unix epoch, to compare them with commit times.

/// The time `ts` names, in whole seconds since the epoch; `None` if it is not RFC 3339.
pub fn unix_seconds(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = ts.get(range)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    // Skip a fraction of a second, then read the offset.
    let mut rest = &ts[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = rest.get(1..)?;
            if hm.len() != 5 || hm.as_bytes()[2] != b':' {
                return None;
            }
            let h: i64 = hm[..2].parse().ok()?;
            let m: i64 = hm[3..].parse().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// Seconds since the epoch, now (0 on a clock set before it).
pub fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `seconds` since the epoch as RFC 3339 in UTC (`2026-01-01T00:00:04Z`).
pub fn rfc3339(seconds: i64) -> String {
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The date of a day count since 1970-01-01 (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the well-known era-based formula).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_claude_code_writes_and_what_date_prints() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        // `date -u -d 2026-01-01T00:00:04Z +%s`
        assert_eq!(unix_seconds("2026-01-01T00:00:04Z"), Some(1_767_225_604));
        assert_eq!(
            unix_seconds("2026-01-01T00:00:04.917Z"),
            Some(1_767_225_604)
        );
        assert_eq!(
            unix_seconds("2026-01-01T02:00:04+02:00"),
            Some(1_767_225_604)
        );
        // A leap day, and a date before the epoch.
        assert_eq!(unix_seconds("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        assert_eq!(unix_seconds("1969-12-31T23:59:59Z"), Some(-1));
    }

    #[test]
    fn formats_what_it_reads() {
        for ts in [
            "1970-01-01T00:00:00Z",
            "2026-01-01T00:00:04Z",
            "2024-02-29T23:59:59Z",
            "2000-03-01T12:30:00Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(rfc3339(unix_seconds(ts).unwrap()), ts);
        }
    }

    #[test]
    fn rejects_what_is_not_a_timestamp() {
        for bad in [
            "",
            "yesterday",
            "2026-01-01",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+0200",
            "2026-01-0xT00:00:00Z",
            "2026-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad:?}");
        }
    }
}
