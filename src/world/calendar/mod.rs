//! The story calendar, from `world-engine/calendar.toml`: turns instants (i64 seconds from
//! the world's zero) into text and back.
//!
//! ```toml
//! kind = "gregorian"               # gregorian (default) | simple | custom
//! format = "{era}{year}-{month:02}-{day:02} {hour:02}:{minute:02}"   # optional
//! era_before = "BC "               # optional; gregorian defaults "BC " / ""
//! era_after = ""
//! # simple:  base_unit = "second" and [[units]] name/parent/ratio/names/start (see simple.rs)
//! # custom:  script = "calendar.js"  (an ES module exporting format(instant) and parse(text))
//! ```
//! Every calendar parses the date alone (the time of day is then midnight) and reports text
//! it cannot read with the form it expected.

pub mod custom;
pub mod gregorian;
pub mod simple;
pub mod template;

use std::path::Path;

use serde::Deserialize;

pub use custom::Custom;
pub use gregorian::Gregorian;
pub use simple::Simple;

/// Timeline zoom levels the World pane steps by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zoom {
    Year,
    Month,
    Day,
    Hour,
}

#[derive(Debug)]
pub enum Calendar {
    Gregorian(Gregorian),
    Simple(Simple),
    Custom(Custom),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CalendarFile {
    #[serde(default = "default_kind")]
    kind: String,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    era_before: Option<String>,
    #[serde(default)]
    era_after: Option<String>,
    #[serde(default)]
    base_unit: Option<String>,
    #[serde(default)]
    units: Vec<simple::UnitDef>,
    #[serde(default)]
    script: Option<String>,
}

fn default_kind() -> String {
    "gregorian".into()
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar::Gregorian(default_gregorian())
    }
}

fn default_gregorian() -> Gregorian {
    match Gregorian::new("BC ", "", gregorian::DEFAULT_FORMAT) {
        Ok(g) => g,
        Err(e) => unreachable!("the default gregorian format is valid: {e}"),
    }
}

impl Calendar {
    /// Load `world-engine/calendar.toml` under a project root; a missing file means the
    /// default gregorian calendar.
    pub fn load(root: &Path) -> Result<Calendar, String> {
        let dir = root.join("world-engine");
        let path = dir.join("calendar.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => Calendar::from_toml(&text, &dir)
                .map_err(|e| format!("world-engine/calendar.toml: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Calendar::default()),
            Err(e) => Err(format!("cannot read world-engine/calendar.toml: {e}")),
        }
    }

    /// Parse a calendar file; `dir` resolves a custom calendar's script.
    pub fn from_toml(text: &str, dir: &Path) -> Result<Calendar, String> {
        let f: CalendarFile = toml::from_str(text).map_err(|e| e.message().to_string())?;
        match f.kind.as_str() {
            "gregorian" => {
                if !f.units.is_empty() || f.script.is_some() || f.base_unit.is_some() {
                    return Err(
                        "a gregorian calendar takes only format, era_before and era_after".into(),
                    );
                }
                Gregorian::new(
                    f.era_before.as_deref().unwrap_or("BC "),
                    f.era_after.as_deref().unwrap_or(""),
                    f.format.as_deref().unwrap_or(gregorian::DEFAULT_FORMAT),
                )
                .map(Calendar::Gregorian)
            }
            "simple" => {
                let format = f
                    .format
                    .as_deref()
                    .ok_or("a simple calendar needs a format")?;
                if f.units.is_empty() {
                    return Err("a simple calendar needs [[units]]".into());
                }
                Simple::new(
                    f.era_before.as_deref().unwrap_or("Before "),
                    f.era_after.as_deref().unwrap_or(""),
                    f.base_unit.as_deref().unwrap_or("second"),
                    format,
                    &f.units,
                )
                .map(Calendar::Simple)
            }
            "custom" => {
                let script = f
                    .script
                    .as_deref()
                    .ok_or("a custom calendar needs script = \"<file>.js\"")?;
                if script.contains("..") || Path::new(script).is_absolute() {
                    return Err(format!(
                        "script {script:?} must be a file inside world-engine/"
                    ));
                }
                let path = dir.join(script);
                let source = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {script}: {e}"))?;
                Custom::new(script, &source).map(Calendar::Custom)
            }
            other => Err(format!(
                "unknown calendar kind {other:?} (expected gregorian, simple or custom)"
            )),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Calendar::Gregorian(_) => "gregorian",
            Calendar::Simple(_) => "simple",
            Calendar::Custom(_) => "custom",
        }
    }

    /// Text for an instant. Only a custom calendar can fail.
    pub fn format(&self, t: i64) -> Result<String, String> {
        match self {
            Calendar::Gregorian(g) => Ok(g.format(t)),
            Calendar::Simple(s) => Ok(s.format(t)),
            Calendar::Custom(c) => c.format(t),
        }
    }

    /// Text for an instant, or `instant <n>` when a custom calendar fails (for display).
    pub fn format_lossy(&self, t: i64) -> String {
        self.format(t).unwrap_or_else(|_| format!("instant {t}"))
    }

    /// Instant for a text in this calendar. Raw `instant:<n>` input is refused, as NeuroBook's
    /// public inputs do: times are written in the calendar.
    pub fn parse(&self, text: &str) -> Result<i64, String> {
        if text.trim_start().starts_with("instant:") {
            return Err(format!(
                "cannot read {text:?}: raw instants are not accepted as calendar text; pass the number itself or a date"
            ));
        }
        match self {
            Calendar::Gregorian(g) => g.parse(text),
            Calendar::Simple(s) => s.parse(text),
            Calendar::Custom(c) => c.parse(text),
        }
    }

    /// Start of the year/month/day/hour holding `t` (custom calendars: fixed lengths).
    pub fn floor(&self, t: i64, zoom: Zoom) -> i64 {
        match self {
            Calendar::Gregorian(_) => gregorian::floor(t, zoom),
            Calendar::Simple(s) => s.floor(t, zoom),
            Calendar::Custom(_) => t - t.rem_euclid(fixed(zoom)),
        }
    }

    /// `t` moved by `n` zoom units (custom calendars: fixed lengths, a year of 365.2425 days).
    pub fn step(&self, t: i64, zoom: Zoom, n: i64) -> i64 {
        match self {
            Calendar::Gregorian(_) => gregorian::step(t, zoom, n),
            Calendar::Simple(s) => s.step(t, zoom, n),
            Calendar::Custom(_) => t.saturating_add(n.saturating_mul(fixed(zoom))),
        }
    }
}

fn fixed(zoom: Zoom) -> i64 {
    match zoom {
        Zoom::Year => 31_556_952,
        Zoom::Month => 2_629_746,
        Zoom::Day => 86_400,
        Zoom::Hour => 3600,
    }
}

/// Scene world anchors (plot) are written in the project calendar too.
impl crate::plot::time::CalendarCodec for Calendar {
    fn parse(&self, text: &str) -> Result<i64, String> {
        Calendar::parse(self, text)
    }
    fn format(&self, instant: i64) -> String {
        self.format_lossy(instant)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        let g = Calendar::from_toml("kind = \"gregorian\"\n", dir.path()).unwrap();
        assert_eq!(g.format(0).unwrap(), "1-01-01 00:00");
        let s = Calendar::from_toml(
            "kind = \"simple\"\nformat = \"Y{year} D{day}\"\n[[units]]\nname = \"day\"\nparent = \"second\"\nratio = 86400\n[[units]]\nname = \"year\"\nparent = \"day\"\nratio = 400\n",
            dir.path(),
        )
        .unwrap();
        assert_eq!(s.format(86_400 * 401).unwrap(), "Y2 D2");
        assert_eq!(s.parse("Y2 D2").unwrap(), 86_400 * 401);
        assert!(Calendar::from_toml("kind = \"lunar\"\n", dir.path())
            .unwrap_err()
            .contains("unknown calendar kind"));
        assert!(Calendar::from_toml("kind = \"gregorian\"\ncolour = 1\n", dir.path()).is_err());
        assert!(g.parse("instant:5").unwrap_err().contains("raw instants"));
    }
}
