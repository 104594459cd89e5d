//! Time as the plot tables store it: row timestamps (NeuroBook's Prisma form
//! `2026-01-02T03:04:05.678+00:00`) and story instants for scene world anchors (i64 seconds
//! from 0001-01-01 00:00, proleptic gregorian, as in NeuroBook's world engine).
//!
//! Calendar text is converted through [`CalendarCodec`]; [`Gregorian`] implements the default
//! gregorian format `{era}{year}-{month:02}-{day:02} {hour:02}:{minute:02}` (era `"BC "` before
//! year 1, no year 0; the date alone means midnight). A project with another calendar passes its
//! own codec to [`crate::plot::Plot::with_calendar`].

use std::sync::Arc;

use time::macros::format_description;
use time::OffsetDateTime;

/// Current time in the form Prisma writes DateTime columns.
pub fn now_iso() -> String {
    let fmt = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    );
    OffsetDateTime::now_utc().format(&fmt).unwrap_or_default()
}

/// A legacy integer timestamp (epoch milliseconds) in the same text form.
pub fn iso_from_millis(ms: i64) -> String {
    let fmt = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    );
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| ms.to_string())
}

/// The form the default calendar reads, quoted when text does not have it.
const HINT: &str = "expected YYYY-MM-DD HH:MM (or the date alone; prefix BC for years before 1)";

/// Story-time text that is not an instant in the author's calendar; the message says what is
/// wrong and, for text of the wrong form, which form is expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// The text does not have the calendar's form.
    #[error("{0}")]
    Form(String),
    /// The text has the form but names no such moment (year 0, 31 April, hour 24).
    #[error("{0}")]
    NoSuchDate(String),
    /// The project's own calendar refused the text (its message).
    #[error("{0}")]
    Calendar(String),
    /// A part of the date (`what`: year, month...) that is not a number.
    #[error("{what} '{part}' is not a number; {HINT}")]
    NotANumber { what: &'static str, part: String },
    #[error("{what} '{part}' is out of range; {HINT}")]
    OutOfRange { what: &'static str, part: String },
}

/// Converts between calendar text and instants for the author's calendar.
pub trait CalendarCodec: Send + Sync {
    /// Parse calendar text into an instant; the error says what is wrong, for the agent.
    fn parse(&self, text: &str) -> Result<i64, TimeError>;
    fn format(&self, instant: i64) -> String;
}

pub fn default_calendar() -> Arc<dyn CalendarCodec> {
    Arc::new(Gregorian)
}

/// The default gregorian calendar (proleptic, 4/100/400 leap rule, no year 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gregorian;

const SECS_PER_DAY: i64 = 86_400;
/// Largest year accepted, so every instant fits an i64 with room to spare.
const MAX_YEAR: i64 = 100_000_000;

/// Days from 1970-01-01 to the given astronomical date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(astro_year: i64) -> bool {
    astro_year % 4 == 0 && (astro_year % 100 != 0 || astro_year % 400 == 0)
}

fn days_in_month(astro_year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(astro_year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn epoch_days() -> i64 {
    days_from_civil(1, 1, 1)
}

fn number(part: &str, what: &'static str, max_len: usize) -> Result<i64, TimeError> {
    let part_owned = || part.to_string();
    if part.is_empty() || part.len() > max_len || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TimeError::NotANumber {
            what,
            part: part_owned(),
        });
    }
    part.parse::<i64>().map_err(|_| TimeError::OutOfRange {
        what,
        part: part_owned(),
    })
}

impl Gregorian {
    /// Instant of a calendar date and time given as era year (`bc` true = before year 1).
    pub fn instant(
        bc: bool,
        year: i64,
        month: i64,
        day: i64,
        hour: i64,
        minute: i64,
    ) -> Result<i64, TimeError> {
        let no_such = TimeError::NoSuchDate;
        if year == 0 {
            return Err(no_such(
                "there is no year 0 (the year before 1 is BC 1)".into(),
            ));
        }
        if !(1..=MAX_YEAR).contains(&year) {
            return Err(no_such(format!("year {year} is out of range")));
        }
        let astro = if bc { 1 - year } else { year };
        if !(1..=12).contains(&month) {
            return Err(no_such(format!("month {month} is not between 1 and 12")));
        }
        let last = days_in_month(astro, month);
        if day < 1 || day > last {
            return Err(no_such(format!(
                "day {day} is not in the month (it has {last} days)"
            )));
        }
        if !(0..24).contains(&hour) {
            return Err(no_such(format!("hour {hour} is not between 0 and 23")));
        }
        if !(0..60).contains(&minute) {
            return Err(no_such(format!("minute {minute} is not between 0 and 59")));
        }
        let days = days_from_civil(astro, month, day) - epoch_days();
        Ok(days * SECS_PER_DAY + hour * 3600 + minute * 60)
    }
}

impl CalendarCodec for Gregorian {
    fn parse(&self, text: &str) -> Result<i64, TimeError> {
        let t = text.trim();
        let (bc, rest) = match t.strip_prefix("BC") {
            Some(r) if r.starts_with(' ') => (true, r.trim_start()),
            _ => (false, t),
        };
        let mut parts = rest.split_whitespace();
        let date = parts
            .next()
            .ok_or_else(|| TimeError::Form(format!("'{text}' is empty; {HINT}")))?;
        let clock = parts.next();
        if parts.next().is_some() {
            return Err(TimeError::Form(format!("'{text}' has extra text; {HINT}")));
        }
        let d: Vec<&str> = date.split('-').collect();
        let [y, m, day] = d.as_slice() else {
            return Err(TimeError::Form(format!("'{text}' is not a date; {HINT}")));
        };
        let year = number(y, "year", 9)?;
        let month = number(m, "month", 2)?;
        let day = number(day, "day", 2)?;
        let (hour, minute) = match clock {
            None => (0, 0),
            Some(c) => {
                let Some((h, mi)) = c.split_once(':') else {
                    return Err(TimeError::Form(format!(
                        "'{c}' is not a time of day; {HINT}"
                    )));
                };
                (number(h, "hour", 2)?, number(mi, "minute", 2)?)
            }
        };
        Gregorian::instant(bc, year, month, day, hour, minute)
    }

    fn format(&self, instant: i64) -> String {
        let days = instant.div_euclid(SECS_PER_DAY) + epoch_days();
        let secs = instant.rem_euclid(SECS_PER_DAY);
        let (y, m, d) = civil_from_days(days);
        let (era, year) = if y >= 1 { ("", y) } else { ("BC ", 1 - y) };
        format!(
            "{era}{year}-{m:02}-{d:02} {:02}:{:02}",
            secs / 3600,
            secs % 3600 / 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_year_one_and_round_trips() {
        let g = Gregorian;
        assert_eq!(g.parse("1-01-01 00:00"), Ok(0));
        assert_eq!(g.format(0), "1-01-01 00:00");
        for text in [
            "2020-04-12 18:00",
            "BC 44-03-15 12:00",
            "BC 1-12-31 23:59",
            "1911-03-02 06:30",
        ] {
            let i = g.parse(text).unwrap();
            assert_eq!(g.format(i), text);
        }
        assert_eq!(g.parse("BC 1-12-31 23:59"), Ok(-60));
        // Unix epoch as an instant (see the project-format notes: unix + 62135596800).
        assert_eq!(g.parse("1970-01-01"), Ok(62_135_596_800));
    }

    #[test]
    fn rejects_bad_dates() {
        let g = Gregorian;
        for bad in [
            "0-01-01",
            "BC 0-01-01",
            "2021-02-29",
            "2020-13-01",
            "2020-01-01 24:00",
            "2020-01-01 10:60",
            "instant:5",
            "",
            "yesterday",
            "2020-01-01 10:00 x",
        ] {
            assert!(g.parse(bad).is_err(), "{bad}");
        }
        assert!(g.parse("2020-02-29").is_ok());
        // Text of the wrong form and dates that do not exist are told apart.
        assert!(
            matches!(g.parse("yesterday"), Err(TimeError::Form(m)) if m.contains("expected YYYY-MM-DD"))
        );
        assert!(
            matches!(g.parse("2021-02-29"), Err(TimeError::NoSuchDate(m)) if m.contains("28 days"))
        );
        assert!(
            g.parse("BC 1-02-29").is_ok(),
            "BC 1 is astronomical year 0, a leap year"
        );
    }

    #[test]
    fn timestamps_have_the_prisma_form() {
        let t = now_iso();
        assert_eq!(t.len(), "2026-01-02T03:04:05.678+00:00".len(), "{t}");
        assert!(t.ends_with("+00:00") && t.as_bytes()[10] == b'T');
        assert_eq!(iso_from_millis(0), "1970-01-01T00:00:00.000+00:00");
    }
}
