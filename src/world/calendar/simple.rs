//! The `simple` calendar: a chain of fixed-size units built up from the second, e.g. minute
//! = 60 seconds, hour = 60 minutes, day = 24 hours, month = 30 days, year = 12 months.
//!
//! Choices where NeuroBook's notes are silent (commented here so they can be revisited):
//! - `parent` names the smaller unit a unit is made of, as in NeuroBook's example chain;
//!   `ratio` is how many parents make one unit. The chain must start at `base_unit` (seconds).
//! - `names` on a unit names its values inside the next larger unit (month names: 12 of them
//!   when a year has 12 months), giving the `{monthName}` token.
//! - Values are shown from `start` (default 1 for units named year, month or day, 0 otherwise).
//! - Negative instants use `era_before`, counted backwards without a year 0, like the
//!   gregorian calendar: the top unit just before instant 0 is shown as `era_before` + start.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::template::{self, Piece, TokenKind, Val};
use super::{CalendarError, DefinitionError, Zoom};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnitDef {
    pub name: String,
    pub parent: String,
    pub ratio: u64,
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub start: Option<i64>,
}

#[derive(Clone, Debug)]
struct Unit {
    name: String,
    /// Seconds in one unit.
    size: i128,
    start: i128,
    names: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Simple {
    pub era_before: String,
    pub era_after: String,
    pub format: String,
    base: String,
    /// Smallest first; index 0 is the base unit (one second).
    units: Vec<Unit>,
    pieces: Vec<Piece>,
}

impl Simple {
    pub fn new(
        era_before: &str,
        era_after: &str,
        base_unit: &str,
        format: &str,
        defs: &[UnitDef],
    ) -> Result<Simple, DefinitionError> {
        if era_before == era_after {
            return Err(DefinitionError::SameEras);
        }
        let mut by_parent: BTreeMap<&str, &UnitDef> = BTreeMap::new();
        for d in defs {
            if d.ratio < 2 {
                return Err(DefinitionError::RatioTooSmall(d.name.clone()));
            }
            if by_parent.insert(d.parent.as_str(), d).is_some() {
                return Err(DefinitionError::SharedParent(d.parent.clone()));
            }
        }
        let base_start = if is_counted_from_one(base_unit) { 1 } else { 0 };
        let mut units = vec![Unit {
            name: base_unit.to_string(),
            size: 1,
            start: base_start,
            names: Vec::new(),
        }];
        let mut current = base_unit.to_string();
        while let Some(d) = by_parent.remove(current.as_str()) {
            let size = units[units.len() - 1].size * d.ratio as i128;
            if size > 10i128.pow(30) {
                return Err(DefinitionError::TooLarge(d.name.clone()));
            }
            let start = d
                .start
                .map(i128::from)
                .unwrap_or(if is_counted_from_one(&d.name) { 1 } else { 0 });
            units.push(Unit {
                name: d.name.clone(),
                size,
                start,
                names: Vec::new(),
            });
            current = d.name.clone();
        }
        if let Some((_, d)) = by_parent.into_iter().next() {
            return Err(DefinitionError::OffChain {
                unit: d.name.clone(),
                base: base_unit.into(),
            });
        }
        // Names of unit i count its values inside unit i + 1.
        for d in defs {
            if d.names.is_empty() {
                continue;
            }
            let i = units.iter().position(|u| u.name == d.name).unwrap_or(0);
            let Some(next) = units.get(i + 1) else {
                return Err(DefinitionError::NamedLargest(d.name.clone()));
            };
            let per = next.size / units[i].size;
            if d.names.len() as i128 != per {
                return Err(DefinitionError::NameCount {
                    unit: d.name.clone(),
                    names: d.names.len(),
                    per,
                    next: next.name.clone(),
                });
            }
            units[i].names = d.names.clone();
        }
        let known = |n: &str| {
            n == "era"
                || n == "eraName"
                || units
                    .iter()
                    .any(|u| u.name == n || (!u.names.is_empty() && n == format!("{}Name", u.name)))
        };
        let mut pieces = template::compile(format, &known)?;
        if !pieces
            .iter()
            .any(|p| matches!(p, Piece::Tok { name, .. } if name == "era" || name == "eraName"))
        {
            pieces.insert(
                0,
                Piece::Tok {
                    name: "era".into(),
                    width: 0,
                },
            );
        }
        let top = &units[units.len() - 1].name;
        if !pieces
            .iter()
            .any(|p| matches!(p, Piece::Tok { name, .. } if name == top))
        {
            return Err(DefinitionError::MissingLargest {
                format: format.into(),
                unit: top.clone(),
            });
        }
        Ok(Simple {
            era_before: era_before.into(),
            era_after: era_after.into(),
            format: format.into(),
            base: base_unit.into(),
            units,
            pieces,
        })
    }

    fn top(&self) -> &Unit {
        &self.units[self.units.len() - 1]
    }

    pub fn format(&self, t: i64) -> String {
        let top = self.top();
        let n = (t as i128).div_euclid(top.size);
        let mut r = (t as i128).rem_euclid(top.size);
        let mut values: BTreeMap<&str, i128> = BTreeMap::new();
        for u in self.units[..self.units.len() - 1].iter().rev() {
            values.insert(&u.name, r / u.size);
            r %= u.size;
        }
        let (era, shown) = if n >= 0 {
            (&self.era_after, n + top.start)
        } else {
            (&self.era_before, -n - 1 + top.start)
        };
        template::render(&self.pieces, &|name| {
            if name == "era" || name == "eraName" {
                return Val::Text(era.clone());
            }
            if name == top.name {
                return Val::Num(shown);
            }
            if let Some(u) = self.units.iter().find(|u| u.name == name) {
                return Val::Num(values.get(u.name.as_str()).copied().unwrap_or(0) + u.start);
            }
            let unit = name.strip_suffix("Name").unwrap_or(name);
            let u = self.units.iter().find(|u| u.name == unit);
            let idx = values.get(unit).copied().unwrap_or(0) as usize;
            Val::Text(
                u.and_then(|u| u.names.get(idx))
                    .cloned()
                    .unwrap_or_default(),
            )
        })
    }

    pub fn parse(&self, text: &str) -> Result<i64, CalendarError> {
        let mut eras = vec![self.era_after.clone(), self.era_before.clone()];
        if !self.era_after.is_empty() && !self.era_before.is_empty() {
            eras.push(String::new());
        }
        let kind = |n: &str| {
            if n == "era" || n == "eraName" {
                return TokenKind::Names(eras.clone());
            }
            match n
                .strip_suffix("Name")
                .and_then(|u| self.units.iter().find(|x| x.name == u))
            {
                Some(u) if !self.units.iter().any(|x| x.name == n) => {
                    TokenKind::Names(u.names.clone())
                }
                _ => TokenKind::Number,
            }
        };
        let day = self
            .units
            .iter()
            .find(|u| u.name == "day")
            .map(|u| u.size)
            .unwrap_or(2);
        let optional = |n: &str| {
            let unit = n.strip_suffix("Name").unwrap_or(n);
            self.units.iter().any(|u| u.name == unit && u.size < day)
        };
        let v = template::read(&self.pieces, text, &kind, &optional, &self.format(0))?;
        let bad = |why: String| CalendarError::Unreadable {
            text: text.to_string(),
            why,
        };
        let top = self.top();
        let before = v.get("era").or(v.get("eraName")).copied().unwrap_or(0) == 1;
        let shown = v[&top.name];
        if shown < top.start {
            return Err(bad(format!(
                "{} {shown} is before the first {} ({})",
                top.name, top.name, top.start
            )));
        }
        let n = if before {
            -(shown - top.start) - 1
        } else {
            shown - top.start
        };
        let mut t = n * top.size;
        for (i, u) in self.units[..self.units.len() - 1].iter().enumerate() {
            let per = self.units[i + 1].size / u.size;
            let value = match (v.get(&u.name), v.get(&format!("{}Name", u.name))) {
                (Some(x), Some(y)) if x - u.start != *y => {
                    return Err(bad(format!("{} {x} does not match its name", u.name)));
                }
                (Some(x), _) => x - u.start,
                (None, Some(y)) => *y,
                (None, None) => 0,
            };
            if !(0..per).contains(&value) {
                let (lo, hi) = (u.start, u.start + per - 1);
                return Err(bad(format!(
                    "{} {} is not between {lo} and {hi}",
                    u.name,
                    value + u.start
                )));
            }
            t += value * u.size;
        }
        i64::try_from(t).map_err(|_| bad("it lies outside the range of instants".into()))
    }

    fn zoom_size(&self, zoom: Zoom) -> i128 {
        let (name, fallback) = match zoom {
            Zoom::Year => ("year", self.top().size),
            Zoom::Month => ("month", self.units[self.units.len().saturating_sub(2)].size),
            Zoom::Day => ("day", 86_400),
            Zoom::Hour => ("hour", 3600),
        };
        self.units
            .iter()
            .find(|u| u.name == name)
            .map(|u| u.size)
            .unwrap_or(fallback)
    }

    pub fn floor(&self, t: i64, zoom: Zoom) -> i64 {
        (t as i128 - (t as i128).rem_euclid(self.zoom_size(zoom))) as i64
    }

    pub fn step(&self, t: i64, zoom: Zoom, n: i64) -> i64 {
        (t as i128 + n as i128 * self.zoom_size(zoom)).clamp(i64::MIN as i128, i64::MAX as i128)
            as i64
    }

    pub fn base_unit(&self) -> &str {
        &self.base
    }
}

fn is_counted_from_one(name: &str) -> bool {
    matches!(name, "year" | "month" | "day")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn sample() -> Simple {
        let defs: Vec<UnitDef> = toml::from_str::<BTreeMap<String, Vec<UnitDef>>>(
            r#"units = [
              { name = "minute", parent = "second", ratio = 60 },
              { name = "hour", parent = "minute", ratio = 60 },
              { name = "day", parent = "hour", ratio = 24 },
              { name = "month", parent = "day", ratio = 30, names = ["Frost","Thaw","Seed","Bloom","Sun","Hay","Gold","Ash","Mist","Rain","Dark","Ice"] },
              { name = "year", parent = "month", ratio = 12 },
            ]"#,
        )
        .unwrap()
        .remove("units")
        .unwrap();
        Simple::new(
            "Before ",
            "",
            "second",
            "{era}{year}-{month:02}-{day:02} {hour:02}:{minute:02}",
            &defs,
        )
        .unwrap()
    }

    #[test]
    fn formats_and_parses() {
        let c = sample();
        assert_eq!(c.format(0), "1-01-01 00:00");
        assert_eq!(c.format(-60), "Before 1-12-30 23:59");
        assert_eq!(c.parse("Before 1-12-30 23:59").unwrap(), -60);
        assert_eq!(c.parse("3-02-01").unwrap(), (2 * 360 + 30) * 86_400);
        assert!(c
            .parse("3-13-01")
            .unwrap_err()
            .to_string()
            .contains("month 13"));
        assert!(c
            .parse("3-01-31")
            .unwrap_err()
            .to_string()
            .contains("day 31"));
        assert!(c.parse("0-01-01").is_err());
        // The author reads a sentence and an example in this calendar, not its template.
        let e = c.parse("yesterday").unwrap_err().to_string();
        assert!(!e.contains('{') && !e.contains('}'), "{e}");
        assert!(e.contains("a number for the year"), "{e}");
        assert!(e.contains("write it like \"1-01-01 00:00\""), "{e}");
        let named = Simple::new("BE ", "", "second", "{day} {monthName} {year}", &{
            let mut d = sample_defs();
            d.truncate(5);
            d
        })
        .unwrap();
        assert_eq!(named.format(31 * 86_400), "2 Thaw 1");
        assert_eq!(named.parse("2 Thaw 1").unwrap(), 31 * 86_400);
    }

    fn sample_defs() -> Vec<UnitDef> {
        let c = sample();
        c.units[1..]
            .iter()
            .enumerate()
            .map(|(i, u)| UnitDef {
                name: u.name.clone(),
                parent: c.units[i].name.clone(),
                ratio: (u.size / c.units[i].size) as u64,
                names: u.names.clone(),
                start: None,
            })
            .collect()
    }

    #[test]
    fn rejects_broken_chains() {
        let d = |name: &str, parent: &str| UnitDef {
            name: name.into(),
            parent: parent.into(),
            ratio: 60,
            names: vec![],
            start: None,
        };
        assert!(Simple::new(
            "B",
            "",
            "second",
            "{hour}",
            &[d("minute", "second"), d("hour", "minute"), d("x", "moon")]
        )
        .unwrap_err()
        .to_string()
        .contains("not on the chain"));
        assert!(Simple::new(
            "B",
            "",
            "second",
            "{minute}",
            &[d("minute", "second"), d("hour", "minute")]
        )
        .unwrap_err()
        .to_string()
        .contains("largest unit"));
        // The unit at fault is a field: the loader's message and a caller both name it.
        assert_eq!(
            Simple::new(
                "B",
                "",
                "second",
                "{hour}",
                &[d("minute", "second"), d("hour", "minute"), d("x", "moon")]
            )
            .unwrap_err(),
            DefinitionError::OffChain {
                unit: "x".into(),
                base: "second".into()
            }
        );
    }
}
