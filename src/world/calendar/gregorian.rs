//! The proleptic gregorian calendar: instant 0 is 0001-01-01 00:00:00, 86 400 s a day, leap
//! years by the 4/100/400 rule, no year 0 (1 BC precedes AD 1). Conversions are O(1) (days
//! from civil and back, after H. Hinnant) in i128, so every i64 instant formats and parses.

use super::template::{self, Piece, TokenKind, Val};
use super::{CalendarError, DefinitionError, Zoom};

pub const DEFAULT_FORMAT: &str = "{era}{year}-{month:02}-{day:02} {hour:02}:{minute:02}";
const TOKENS: [&str; 8] = [
    "era", "eraName", "year", "month", "day", "hour", "minute", "second",
];

/// Days from 1970-01-01 to 0001-01-01 (proleptic gregorian).
const EPOCH_SHIFT: i128 = -719_162;

#[derive(Clone, Debug)]
pub struct Gregorian {
    pub era_before: String,
    pub era_after: String,
    pub format: String,
    pieces: Vec<Piece>,
}

/// Broken-down time: astronomical year (0 = 1 BC), month 1–12, day, hour, minute, second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i128,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Gregorian {
    pub fn new(
        era_before: &str,
        era_after: &str,
        format: &str,
    ) -> Result<Gregorian, DefinitionError> {
        let mut pieces = template::compile(format, &|n| TOKENS.contains(&n))?;
        if era_before == era_after {
            return Err(DefinitionError::SameGregorianEras);
        }
        let has_era = pieces
            .iter()
            .any(|p| matches!(p, Piece::Tok { name, .. } if name == "era" || name == "eraName"));
        // Without an era token BC years would print like AD years: put the era in front.
        if !has_era {
            pieces.insert(
                0,
                Piece::Tok {
                    name: "era".into(),
                    width: 0,
                },
            );
        }
        for needed in ["year", "month", "day"] {
            if !pieces
                .iter()
                .any(|p| matches!(p, Piece::Tok { name, .. } if name == needed))
            {
                return Err(DefinitionError::MissingToken {
                    format: format.into(),
                    token: needed.into(),
                });
            }
        }
        Ok(Gregorian {
            era_before: era_before.into(),
            era_after: era_after.into(),
            format: format.into(),
            pieces,
        })
    }

    pub fn format(&self, t: i64) -> String {
        let c = civil(t);
        let (era, year) = if c.year >= 1 {
            (&self.era_after, c.year)
        } else {
            (&self.era_before, 1 - c.year)
        };
        template::render(&self.pieces, &|name| match name {
            "era" | "eraName" => Val::Text(era.clone()),
            "year" => Val::Num(year),
            "month" => Val::Num(c.month.into()),
            "day" => Val::Num(c.day.into()),
            "hour" => Val::Num(c.hour.into()),
            "minute" => Val::Num(c.minute.into()),
            _ => Val::Num(c.second.into()),
        })
    }

    /// A text in this calendar's form, for messages: 2020-04-12 18:00 as this format writes it.
    fn example(&self) -> String {
        template::render(&self.pieces, &|name| match name {
            "era" | "eraName" => Val::Text(self.era_after.clone()),
            "year" => Val::Num(2020),
            "month" => Val::Num(4),
            "day" => Val::Num(12),
            "hour" => Val::Num(18),
            _ => Val::Num(0),
        })
    }

    pub fn parse(&self, text: &str) -> Result<i64, CalendarError> {
        // An empty era is allowed to stand for era_after ("2020-01-01" with era_after "AD ").
        let mut eras = vec![self.era_after.clone(), self.era_before.clone()];
        if !self.era_after.is_empty() && !self.era_before.is_empty() {
            eras.push(String::new());
        }
        let kind = |n: &str| match n {
            "era" | "eraName" => TokenKind::Names(eras.clone()),
            _ => TokenKind::Number,
        };
        let v = template::read(
            &self.pieces,
            text,
            &kind,
            &|n| matches!(n, "hour" | "minute" | "second"),
            &self.example(),
        )?;
        let bad = |why: String| CalendarError::Unreadable {
            text: text.to_string(),
            why,
        };
        let before = v.get("era").or(v.get("eraName")).copied().unwrap_or(0) == 1;
        let shown = v["year"];
        if shown == 0 {
            return Err(bad(
                "there is no year 0 in the gregorian calendar (1 BC is followed by AD 1)".into(),
            ));
        }
        let year = if before { 1 - shown } else { shown };
        let month = v["month"];
        if !(1..=12).contains(&month) {
            return Err(bad(format!("month {month} is not between 1 and 12")));
        }
        let dim = days_in_month(year, month as u32) as i128;
        let day = v["day"];
        if !(1..=dim).contains(&day) {
            return Err(bad(format!(
                "day {day} is not between 1 and {dim} for that month"
            )));
        }
        let get = |k: &str| v.get(k).copied().unwrap_or(0);
        let (h, mi, s) = (get("hour"), get("minute"), get("second"));
        if h >= 24 {
            return Err(bad(format!("hour {h} is not between 0 and 23")));
        }
        if mi >= 60 {
            return Err(bad(format!("minute {mi} is not between 0 and 59")));
        }
        if s >= 60 {
            return Err(bad(format!("second {s} is not between 0 and 59")));
        }
        let t = days_from_civil(year, month as u32, day as u32) * 86_400 + h * 3600 + mi * 60 + s;
        i64::try_from(t)
            .map_err(|_| bad("it lies outside the range of instants (±292 billion years)".into()))
    }
}

pub fn is_leap(y: i128) -> bool {
    y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0)
}

pub fn days_in_month(y: i128, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 0001-01-01 of an astronomical date.
pub fn days_from_civil(y: i128, m: u32, d: u32) -> i128 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i128;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i128 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 - EPOCH_SHIFT
}

pub fn civil(t: i64) -> Civil {
    let t = t as i128;
    let days = t.div_euclid(86_400);
    let sod = t.rem_euclid(86_400) as u32;
    let z = days + EPOCH_SHIFT + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    Civil {
        year,
        month,
        day,
        hour: sod / 3600,
        minute: sod / 60 % 60,
        second: sod % 60,
    }
}

fn from_parts(year: i128, month: u32, day: u32) -> i64 {
    clamp(days_from_civil(year, month, day) * 86_400)
}

fn clamp(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// Start of the year/month/day/hour holding `t`.
pub fn floor(t: i64, zoom: Zoom) -> i64 {
    let c = civil(t);
    match zoom {
        Zoom::Year => from_parts(c.year, 1, 1),
        Zoom::Month => from_parts(c.year, c.month, 1),
        Zoom::Day => t - (t.rem_euclid(86_400)),
        Zoom::Hour => t - (t.rem_euclid(3600)),
    }
}

/// `t` moved by `n` years/months/days/hours; month steps keep the day where the month allows.
pub fn step(t: i64, zoom: Zoom, n: i64) -> i64 {
    let n = n as i128;
    match zoom {
        Zoom::Day => clamp(t as i128 + n * 86_400),
        Zoom::Hour => clamp(t as i128 + n * 3600),
        Zoom::Year | Zoom::Month => {
            let c = civil(t);
            let months = if zoom == Zoom::Year { n * 12 } else { n };
            let total = c.year * 12 + (c.month as i128 - 1) + months;
            let (y, m) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
            let d = c.day.min(days_in_month(y, m));
            let sod = (c.hour * 3600 + c.minute * 60 + c.second) as i128;
            clamp(days_from_civil(y, m, d) * 86_400 + sod)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g() -> Gregorian {
        Gregorian::new("BC ", "", DEFAULT_FORMAT).unwrap()
    }

    #[test]
    fn known_dates() {
        let g = g();
        assert_eq!(g.format(0), "1-01-01 00:00");
        assert_eq!(g.parse("2020-01-01").unwrap(), 63_713_433_600);
        assert_eq!(g.format(63_713_433_600), "2020-01-01 00:00");
        assert_eq!(g.format(-86_400), "BC 1-12-31 00:00");
        assert_eq!(
            g.parse("BC 44-03-15 12:00").map(|t| g.format(t)).unwrap(),
            "BC 44-03-15 12:00"
        );
        assert_eq!(
            g.parse("2020-04-12 18:00").map(|t| g.format(t)).unwrap(),
            "2020-04-12 18:00"
        );
        assert_eq!(g.parse("0001-01-01").unwrap(), 0);
        assert!(g
            .parse("2021-02-29")
            .unwrap_err()
            .to_string()
            .contains("day 29"));
        assert!(g.parse("2020-02-29").is_ok());
        assert!(g.parse("1900-02-29").is_err());
        assert!(g
            .parse("0-01-01")
            .unwrap_err()
            .to_string()
            .contains("no year 0"));
        assert!(g
            .parse("2020-13-01")
            .unwrap_err()
            .to_string()
            .contains("month 13"));
        assert!(g.parse("2020-01-01 24:00").is_err());
        assert!(g
            .parse("yesterday")
            .unwrap_err()
            .to_string()
            .contains("write it like \"2020-04-12 18:00\""));
        // No template placeholders reach the author, whatever went wrong.
        for bad in [
            "yesterday",
            "2020-",
            "2020-04-12 18:00 extra",
            "2020-xx-01",
            "BC",
        ] {
            let e = g.parse(bad).unwrap_err().to_string();
            assert!(!e.contains('{') && !e.contains('}'), "{bad}: {e}");
        }
        assert!(g
            .parse("999999999999-01-01")
            .unwrap_err()
            .to_string()
            .contains("range"));
    }

    #[test]
    fn extremes_round_trip() {
        let g = g();
        for t in [i64::MIN, i64::MIN + 59, i64::MAX, i64::MAX - 7, -1, 59, 60] {
            let r = t.rem_euclid(60);
            let m = t.checked_sub(r).unwrap_or_else(|| t + (60 - r));
            assert_eq!(g.parse(&g.format(m)).unwrap(), m, "{t}: {}", g.format(m));
        }
    }

    #[test]
    fn zoom_steps() {
        let t = g().parse("2020-01-31 10:00").unwrap();
        assert_eq!(g().format(step(t, Zoom::Month, 1)), "2020-02-29 10:00");
        assert_eq!(g().format(step(t, Zoom::Year, -2021)), "BC 2-01-31 10:00");
        assert_eq!(g().format(floor(t, Zoom::Month)), "2020-01-01 00:00");
        assert_eq!(g().format(floor(t, Zoom::Year)), "2020-01-01 00:00");
    }
}
