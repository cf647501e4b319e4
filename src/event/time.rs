//! Event timestamps — RFC 3339, as Claude Code writes them (`2026-01-01T12:00:00.123Z`) — as
//! seconds since the Unix epoch, to compare them with commit times.

use jiff::SignedDuration;
use jiff::civil::DateTime;

/// 1970-01-01T00:00:00, in UTC the Unix epoch.
const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);

/// The time `ts` names, in whole seconds since the epoch (a fraction is dropped); `None` if it is
/// not RFC 3339: `YYYY-MM-DDTHH:MM:SS` (`t` or a space for the `T`), a fraction maybe, then `Z`
/// or `±HH:MM`. The fields are read here and the calendar is jiff's: jiff's parser reads RFC
/// 9557, which takes more (`20260101T000000Z`, no seconds, `+0200`, `[UTC]`), fractions of nine
/// digits at most and offsets up to ±25:59 only.
pub fn unix_seconds(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    let num = |at: usize, n: usize| {
        b.get(at..at + n)
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|d| d.iter().fold(0, |n, c| n * 10 + i64::from(c - b'0')))
    };
    let form = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !form {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    // Skip a fraction of a second, then read the offset.
    let mut at = 19;
    if b[at] == b'.' {
        let digits = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        at += 1 + digits;
    }
    let offset = match &b[at..] {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let east = num(at + 1, 2)? * 3600 + num(at + 4, 2)? * 60;
            if *sign == b'-' { -east } else { east }
        }
        _ => return None,
    };
    // A leap second (`23:59:60`) is the second after `:59`, as in POSIX time; jiff has none.
    let leap = i64::from(second == 60);
    let local = DateTime::new(
        year as i16,
        month as i8,
        day as i8,
        hour as i8,
        minute as i8,
        (second - leap) as i8,
        0,
    )
    .ok()?;
    Some(local.duration_since(EPOCH).as_secs() + leap - offset)
}

/// Seconds since the epoch, now (0 on a clock set before it).
pub fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `seconds` since the epoch as RFC 3339 in UTC (`2026-01-01T00:00:04Z`); beyond the years jiff
/// holds (-9999 to 9999), the seconds themselves, as gix shows such a commit date.
pub fn rfc3339(seconds: i64) -> String {
    EPOCH
        .checked_add(SignedDuration::from_secs(seconds))
        .map_or_else(|_| seconds.to_string(), |utc| format!("{utc}Z"))
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
    fn reads_the_edges_of_rfc_3339() {
        // `python3 -c 'import calendar; print(calendar.timegm((2016, 12, 31, 23, 59, 60)))'`
        assert_eq!(unix_seconds("2016-12-31T23:59:60Z"), Some(1_483_228_800));
        assert_eq!(unix_seconds("1969-12-31T23:59:59.5Z"), Some(-1));
        assert_eq!(
            unix_seconds("2026-01-01T00:00:04.1234567890123Z"),
            Some(1_767_225_604)
        );
        assert_eq!(unix_seconds("9999-12-31T23:59:59Z"), Some(253_402_300_799));
        assert_eq!(
            unix_seconds("2026-01-01T00:00:00+26:00"),
            Some(1_767_225_600 - 26 * 3600)
        );
        assert_eq!(unix_seconds("2026-01-01t00:00:04z"), Some(1_767_225_604));
        assert_eq!(unix_seconds("2026-01-01 00:00:04Z"), Some(1_767_225_604));
    }

    #[test]
    fn reads_rfc_3339_only_and_no_day_the_month_does_not_have() {
        for bad in [
            // What jiff's parser would take (RFC 9557).
            "2026-01-01T00:00:00Z[UTC]",
            "20260101T000000Z",
            "2026-01-01T00:00Z",
            "2026-01-01T00:00:00+02",
            "2026-01-01T00:00:00,5Z",
            "2026-01-01T00:00:00++1:00",
            "2026-02-29T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2026-04-31T00:00:00Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad:?}");
        }
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
    fn formats_the_first_and_last_years_and_no_date_beyond() {
        for ts in ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            assert_eq!(rfc3339(unix_seconds(ts).unwrap()), ts);
        }
        assert_eq!(rfc3339(253_402_300_800), "253402300800");
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
