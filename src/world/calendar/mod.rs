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
pub mod definition;
pub mod gregorian;
pub mod simple;
pub mod template;

use std::path::Path;

use serde::Deserialize;

pub use custom::Custom;
pub use definition::DefinitionError;
pub use gregorian::Gregorian;
pub use simple::Simple;

/// Where the calendar's files live, relative to the project root.
const CALENDAR_FILE: &str = "world-engine/calendar.toml";

/// Why a calendar could not be loaded, or why it could not read or write a time. Loading
/// errors name the file; script errors name the custom calendar's script.
#[derive(Debug, thiserror::Error)]
pub enum CalendarError {
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// Something wrong in a calendar file (`file`), with what to change.
    #[error("{file}: {source}")]
    InFile {
        file: String,
        #[source]
        source: Box<CalendarError>,
    },
    /// `calendar.toml` is not valid TOML or has an unknown field (the TOML parser's message).
    #[error("{0}")]
    Toml(String),
    /// A calendar definition that does not make sense (the message says what to change).
    #[error("{0}")]
    Definition(String),
    /// A gregorian or simple calendar's format, eras or units do not fit together.
    #[error(transparent)]
    Units(#[from] DefinitionError),
    #[error("unknown calendar kind {0:?} (expected gregorian, simple or custom)")]
    UnknownKind(String),
    /// Text that is not a time in this calendar; `why` says what was expected.
    #[error("cannot read {text:?} as a date: {why}")]
    Unreadable { text: String, why: String },
    #[error("cannot read {0:?}: raw instants are not accepted as calendar text; pass the number itself or a date")]
    RawInstant(String),
    /// A custom calendar's script failed (its JavaScript error, with the line).
    #[error("custom calendar world-engine/{script}: {message}")]
    Script { script: String, message: String },
    /// A custom calendar ran out of time; it stays off until the file changes.
    #[error("custom calendar world-engine/{script}: {what} ran longer than {} ms and was stopped, so the calendar is off until the file changes (look for an endless loop or a promise chain that never ends)", custom::CALL_TIME.as_millis())]
    TooSlow { script: String, what: String },
}

impl CalendarError {
    fn in_file(self, file: &str) -> CalendarError {
        CalendarError::InFile {
            file: file.to_string(),
            source: Box::new(self),
        }
    }
}

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
    pub fn load(root: &Path) -> Result<Calendar, CalendarError> {
        let dir = root.join("world-engine");
        let path = root.join(CALENDAR_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Calendar::from_toml(&text, &dir).map_err(|e| e.in_file(CALENDAR_FILE)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Calendar::default()),
            Err(source) => Err(CalendarError::Read {
                file: CALENDAR_FILE.into(),
                source,
            }),
        }
    }

    /// Parse a calendar file; `dir` resolves a custom calendar's script.
    pub fn from_toml(text: &str, dir: &Path) -> Result<Calendar, CalendarError> {
        let f: CalendarFile =
            toml::from_str(text).map_err(|e| CalendarError::Toml(e.message().to_string()))?;
        let definition = CalendarError::Definition;
        match f.kind.as_str() {
            "gregorian" => {
                if !f.units.is_empty() || f.script.is_some() || f.base_unit.is_some() {
                    return Err(definition(
                        "a gregorian calendar takes only format, era_before and era_after".into(),
                    ));
                }
                Gregorian::new(
                    f.era_before.as_deref().unwrap_or("BC "),
                    f.era_after.as_deref().unwrap_or(""),
                    f.format.as_deref().unwrap_or(gregorian::DEFAULT_FORMAT),
                )
                .map(Calendar::Gregorian)
                .map_err(CalendarError::from)
            }
            "simple" => {
                let format = f
                    .format
                    .as_deref()
                    .ok_or_else(|| definition("a simple calendar needs a format".into()))?;
                if f.units.is_empty() {
                    return Err(definition("a simple calendar needs [[units]]".into()));
                }
                Simple::new(
                    f.era_before.as_deref().unwrap_or("Before "),
                    f.era_after.as_deref().unwrap_or(""),
                    f.base_unit.as_deref().unwrap_or("second"),
                    format,
                    &f.units,
                )
                .map(Calendar::Simple)
                .map_err(CalendarError::from)
            }
            "custom" => {
                let script = f.script.as_deref().ok_or_else(|| {
                    definition("a custom calendar needs script = \"<file>.js\"".into())
                })?;
                if script.contains("..") || Path::new(script).is_absolute() {
                    return Err(definition(format!(
                        "script {script:?} must be a file inside world-engine/"
                    )));
                }
                let path = dir.join(script);
                let source =
                    std::fs::read_to_string(&path).map_err(|source| CalendarError::Read {
                        file: format!("world-engine/{script}"),
                        source,
                    })?;
                Custom::new(script, &source).map(Calendar::Custom)
            }
            other => Err(CalendarError::UnknownKind(other.to_string())),
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
    pub fn format(&self, t: i64) -> Result<String, CalendarError> {
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
    pub fn parse(&self, text: &str) -> Result<i64, CalendarError> {
        if text.trim_start().starts_with("instant:") {
            return Err(CalendarError::RawInstant(text.to_string()));
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
    fn parse(&self, text: &str) -> Result<i64, crate::plot::time::TimeError> {
        use crate::plot::time::TimeError;
        Calendar::parse(self, text).map_err(|e| match e {
            CalendarError::Unreadable { .. } | CalendarError::RawInstant(_) => {
                TimeError::Form(e.to_string())
            }
            other => TimeError::Calendar(other.to_string()),
        })
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
            .to_string()
            .contains("unknown calendar kind"));
        assert!(matches!(
            Calendar::from_toml("kind = \"gregorian\"\ncolour = 1\n", dir.path()),
            Err(CalendarError::Toml(_))
        ));
        assert!(matches!(
            g.parse("instant:5"),
            Err(CalendarError::RawInstant(_))
        ));
        assert!(g
            .parse("instant:5")
            .unwrap_err()
            .to_string()
            .contains("raw instants"));
    }

    #[test]
    fn load_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let we = dir.path().join("world-engine");
        std::fs::create_dir_all(&we).unwrap();
        std::fs::write(we.join("calendar.toml"), "kind = \"simple\"\n").unwrap();
        let e = Calendar::load(dir.path()).unwrap_err();
        assert!(
            matches!(&e, CalendarError::InFile { file, source } if file == "world-engine/calendar.toml" && matches!(**source, CalendarError::Definition(_))),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "world-engine/calendar.toml: a simple calendar needs a format"
        );
        // A custom calendar whose script is missing names the script.
        std::fs::write(
            we.join("calendar.toml"),
            "kind = \"custom\"\nscript = \"gone.js\"\n",
        )
        .unwrap();
        let e = Calendar::load(dir.path()).unwrap_err();
        assert!(
            matches!(&e, CalendarError::InFile { source, .. } if matches!(&**source, CalendarError::Read { file, .. } if file == "world-engine/gone.js")),
            "{e:?}"
        );
        // One whose script does not compile names the script and the line.
        std::fs::write(
            we.join("calendar.toml"),
            "kind = \"custom\"\nscript = \"bad.js\"\n",
        )
        .unwrap();
        std::fs::write(
            we.join("bad.js"),
            "export function format(t) {\n  return (;\n}",
        )
        .unwrap();
        let e = Calendar::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "world-engine/calendar.toml: custom calendar world-engine/bad.js: SyntaxError"
            ) && e.contains("line 2"),
            "{e}"
        );
    }
}
