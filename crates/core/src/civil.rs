//! Civil (UTC) date-time <-> milliseconds since the Unix epoch, without a date library.
//!
//! Layout epochs are written by people (`epoch=2024-01-01`), and error messages name end dates
//! (`lasts until 2093-09-06`), so the core needs both directions. The day arithmetic is Howard
//! Hinnant's `days_from_civil` / `civil_from_days`, exact for the proleptic Gregorian calendar.

const MS_PER_DAY: i64 = 86_400_000;

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// A text that is not a date or a time pg_idgen reads; its text says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateError(pub String);

impl std::fmt::Display for DateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses `YYYY-MM-DD`, optionally followed by `[T ]HH:MM[:SS[.fff]]` and a zone (`Z`, `+HH:MM`,
/// `-HH`, ...); a time without a zone is UTC. A bare integer is milliseconds since 1970-01-01 UTC,
/// as in the configuration files of Snowflake libraries (`twepoch = 1288834974657`).
pub fn parse_utc_ms(text: &str) -> Result<i64, DateError> {
    parse_utc_text(text).map_err(DateError)
}

fn parse_utc_text(text: &str) -> Result<i64, String> {
    let s = text.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<i64>()
            .map_err(|_| format!("epoch \"{s}\" is out of range"));
    }
    let bad = || {
        format!(
            "\"{s}\" is not a date: write YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM], \
             or milliseconds since 1970-01-01 UTC"
        )
    };
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Result<i64, String> {
        let part = b.get(from..from + len).ok_or_else(bad)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        std::str::from_utf8(part)
            .map_err(|_| bad())?
            .parse::<i64>()
            .map_err(|_| bad())
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)? as u32, num(8, 2)? as u32);
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return Err(format!("\"{s}\" is not a valid calendar date"));
    }
    let mut ms = days_from_civil(y, mo, d) * MS_PER_DAY;
    let mut i = 10;
    if i < b.len() && (b[i] == b'T' || b[i] == b't' || b[i] == b' ') {
        let (h, mi) = (num(i + 1, 2)?, num(i + 4, 2)?);
        if b.get(i + 3) != Some(&b':') || h > 23 || mi > 59 {
            return Err(bad());
        }
        ms += (h * 60 + mi) * 60_000;
        i += 6;
        if b.get(i) == Some(&b':') {
            let sec = num(i + 1, 2)?;
            if sec > 59 {
                return Err(bad());
            }
            ms += sec * 1000;
            i += 3;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let frac = &s[start..i];
                if frac.is_empty() {
                    return Err(bad());
                }
                // Keep milliseconds; finer digits cannot matter to any layout unit.
                let mut digits: String = frac.chars().take(3).collect();
                while digits.len() < 3 {
                    digits.push('0');
                }
                ms += digits.parse::<i64>().map_err(|_| bad())?;
            }
        }
    }
    let zone = s[i..].trim_start();
    match zone {
        "" | "Z" | "z" | "UTC" | "+00" | "+00:00" => {}
        _ => {
            let zb = zone.as_bytes();
            let sign = match zb[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(bad()),
            };
            let zh = std::str::from_utf8(&zb[1..zb.len().min(3)])
                .ok()
                .and_then(|v| v.parse::<i64>().ok())
                .ok_or_else(bad)?;
            let zm = match zb.len() {
                3 => 0,
                6 if zb[3] == b':' => zone[4..6].parse::<i64>().map_err(|_| bad())?,
                5 => zone[3..5].parse::<i64>().map_err(|_| bad())?,
                _ => return Err(bad()),
            };
            if zh > 15 || zm > 59 {
                return Err(bad());
            }
            ms -= sign * (zh * 60 + zm) * 60_000;
        }
    }
    Ok(ms)
}

/// `2024-01-01 00:00:00.000 UTC` style, for messages and views.
pub fn format_utc_ms(ms: i64) -> String {
    let days = ms.div_euclid(MS_PER_DAY);
    let rem = ms.rem_euclid(MS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, f) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{f:03} UTC")
}

/// The calendar date alone, for "lasts until 2093-09-06".
pub fn format_utc_date(ms: i64) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(MS_PER_DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(parse_utc_ms("1970-01-01").unwrap(), 0);
        // Twitter's epoch: 2010-11-04 01:42:54.657 UTC.
        assert_eq!(
            parse_utc_ms("2010-11-04T01:42:54.657Z").unwrap(),
            1_288_834_974_657
        );
        assert_eq!(parse_utc_ms("1288834974657").unwrap(), 1_288_834_974_657);
        // Westid's epoch is given in +08:00 by its authors.
        assert_eq!(
            parse_utc_ms("2017-03-24T17:04:43.706+08:00").unwrap(),
            1_490_346_283_706
        );
        assert_eq!(parse_utc_ms("2000-02-29 12:00").unwrap(), 951_825_600_000);
    }

    #[test]
    fn round_trip_days() {
        for days in (-800_000i64..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(
            format_utc_ms(1_288_834_974_657),
            "2010-11-04 01:42:54.657 UTC"
        );
        assert_eq!(format_utc_date(-1), "1969-12-31");
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "2024-1-1",
            "2024-13-01",
            "2023-02-29",
            "2024-01-01T25:00",
            "2024-01-01Tx",
            "2024-01-01 00:00 +99:00",
            "yesterday",
        ] {
            assert!(parse_utc_ms(bad).is_err(), "{bad} should be rejected");
        }
    }
}
