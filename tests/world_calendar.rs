//! Calendars: `parse(format(t)) == t` for every representable instant at minute resolution
//! (gregorian over all of i64, a simple calendar likewise), custom calendars in JavaScript,
//! and clear errors for text that is not a date.

use nbook::world::Calendar;
use proptest::prelude::*;

fn gregorian() -> Calendar {
    Calendar::from_toml("kind = \"gregorian\"\n", std::path::Path::new(".")).unwrap()
}

const SIMPLE: &str = r#"
kind = "simple"
era_before = "Before the Fall "
era_after = "AF "
format = "{era}{year}, {monthName} {day}, {hour:02}:{minute:02}"
[[units]]
name = "minute"
parent = "second"
ratio = 60
[[units]]
name = "hour"
parent = "minute"
ratio = 60
[[units]]
name = "day"
parent = "hour"
ratio = 24
[[units]]
name = "month"
parent = "day"
ratio = 30
names = ["Frost", "Thaw", "Seed", "Bloom", "Sun", "Hay", "Gold", "Ash", "Mist", "Rain", "Dark", "Ice"]
[[units]]
name = "year"
parent = "month"
ratio = 12
"#;

fn simple() -> Calendar {
    Calendar::from_toml(SIMPLE, std::path::Path::new(".")).unwrap()
}

/// `t` rounded down to a whole minute, staying inside i64.
fn minute(t: i64) -> i64 {
    let r = t.rem_euclid(60);
    t.checked_sub(r).unwrap_or_else(|| t + (60 - r))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn gregorian_round_trips_every_instant(t in any::<i64>()) {
        let c = gregorian();
        let t = minute(t);
        let text = c.format(t).unwrap();
        prop_assert_eq!(c.parse(&text).unwrap(), t, "{}", text);
    }

    #[test]
    fn gregorian_round_trips_near_the_era_change(t in -400_000_000_000i64..400_000_000_000i64) {
        let c = gregorian();
        let t = minute(t);
        prop_assert_eq!(c.parse(&c.format(t).unwrap()).unwrap(), t);
    }

    #[test]
    fn simple_round_trips_every_instant(t in any::<i64>()) {
        let c = simple();
        let t = minute(t);
        let text = c.format(t).unwrap();
        prop_assert_eq!(c.parse(&text).unwrap(), t, "{}", text);
    }

    #[test]
    fn garbage_is_refused_not_misread(s in "\\PC{0,30}") {
        // Whatever the text, parsing either fails with a message or gives an instant that
        // formats back to a date (never a panic).
        for c in [gregorian(), simple()] {
            match c.parse(&s) {
                Ok(t) => prop_assert!(c.format(t).is_ok()),
                Err(e) => prop_assert!(e.to_string().contains("cannot read")),
            }
        }
    }
}

#[test]
fn gregorian_examples_from_the_design() {
    let c = gregorian();
    let t = c.parse("2020-04-12 18:00").unwrap();
    assert_eq!(c.format(t).unwrap(), "2020-04-12 18:00");
    assert_eq!(
        c.parse("BC 44-03-15 12:00")
            .map(|t| c.format(t).unwrap())
            .unwrap(),
        "BC 44-03-15 12:00"
    );
    assert_eq!(
        c.parse("2020-01-01").unwrap(),
        63_713_433_600,
        "instants agree with NeuroBook's (gen_world.py)"
    );
    assert_eq!(c.parse("BC 1-12-31 23:59").unwrap(), -60);
    for bad in [
        "",
        "2020",
        "2020-1",
        "yesterday",
        "2020-02-30",
        "2019-02-29",
        "0-01-01",
        "2020-01-01 25:00",
        "2020-01-01 10:60",
        "instant:5",
        "2020-01-01 10:00 BC",
    ] {
        let e = c.parse(bad).unwrap_err().to_string();
        assert!(e.contains("cannot read"), "{bad:?}: {e}");
    }
}

#[test]
fn simple_examples() {
    let c = simple();
    assert_eq!(c.format(0).unwrap(), "AF 1, Frost 1, 00:00");
    assert_eq!(c.format(-60).unwrap(), "Before the Fall 1, Ice 30, 23:59");
    assert_eq!(c.parse("AF 2, Thaw 3").unwrap(), (360 + 30 + 2) * 86_400);
    assert_eq!(
        c.parse("2, Thaw 3").unwrap(),
        (360 + 30 + 2) * 86_400,
        "the era after may be left out"
    );
    let e = c.parse("AF 2, Smarch 3").unwrap_err().to_string();
    assert!(
        e.contains(r#"expected "Frost", "Thaw""#) && e.contains(r#"or "Ice" for the month's name"#),
        "{e}"
    );
    assert!(
        !e.contains('{') && !e.contains('}'),
        "no template placeholders: {e}"
    );
    assert!(c
        .parse("AF 2, Thaw 31")
        .unwrap_err()
        .to_string()
        .contains("day 31"));
}

#[test]
fn custom_calendar_from_a_project_file() {
    let dir = tempfile::tempdir().unwrap();
    let we = dir.path().join("world-engine");
    std::fs::create_dir_all(&we).unwrap();
    std::fs::write(
        we.join("calendar.toml"),
        "kind = \"custom\"\nscript = \"ages.js\"\n",
    )
    .unwrap();
    std::fs::write(
        we.join("ages.js"),
        r#"// Years of 400 days, counted from the founding.
const DAY = 86400n, YEAR = 400n * 86400n;
export function format(t) {
  const y = t >= 0n ? t / YEAR : -((-t + YEAR - 1n) / YEAR);
  const rest = t - y * YEAR;
  return `Year ${y} day ${rest / DAY} +${rest % DAY}s`;
}
export function parse(text) {
  const m = /^Year (-?\d+) day (\d+)(?: \+(\d+)s)?$/.exec(text.trim());
  if (!m) throw new SyntaxError(`expected "Year N day D", got ${JSON.stringify(text)}`);
  if (BigInt(m[2]) >= 400n) throw new RangeError("a year has 400 days");
  return BigInt(m[1]) * YEAR + BigInt(m[2]) * DAY + BigInt(m[3] ?? 0);
}
"#,
    )
    .unwrap();
    let c = Calendar::load(dir.path()).unwrap();
    assert_eq!(c.kind(), "custom");
    for t in [
        0i64,
        59,
        86_400 * 401 + 7,
        -1,
        -86_400 * 400,
        63_713_433_600,
    ] {
        assert_eq!(c.parse(&c.format(t).unwrap()).unwrap(), t);
    }
    let e = c.parse("Tuesday").unwrap_err().to_string();
    assert!(
        e.contains("cannot read \"Tuesday\"") && e.contains("expected \\\"Year N day D\\\"")
            || e.contains("expected \"Year N day D\""),
        "{e}"
    );
    assert!(e.contains("line 10"), "{e}");
    assert!(c
        .parse("Year 1 day 401")
        .unwrap_err()
        .to_string()
        .contains("400 days"));
    // A broken script is reported when the calendar loads.
    std::fs::write(
        we.join("ages.js"),
        "export function format(t) { return ; ;; )",
    )
    .unwrap();
    let e = Calendar::load(dir.path()).unwrap_err().to_string();
    assert!(
        e.contains("calendar.toml")
            && e.contains("world-engine/ages.js")
            && e.contains("SyntaxError"),
        "{e}"
    );
}

#[test]
fn the_template_calendar_is_gregorian() {
    let dir = tempfile::tempdir().unwrap();
    nbook::workspace::init::init(&dir.path().join("b"), Some("B")).unwrap();
    let c = Calendar::load(&dir.path().join("b")).unwrap();
    assert_eq!(c.kind(), "gregorian");
    assert_eq!(c.format(0).unwrap(), "1-01-01 00:00");
}

#[test]
fn a_looping_custom_calendar_fails_fast_naming_its_file_and_stays_off() {
    let dir = tempfile::tempdir().unwrap();
    let we = dir.path().join("world-engine");
    std::fs::create_dir_all(&we).unwrap();
    std::fs::write(
        we.join("calendar.toml"),
        "kind = \"custom\"\nscript = \"loop.js\"\n",
    )
    .unwrap();
    // Fine for the years after the founding; before it, format loops (once by plain bytecode,
    // once by flooding the job queue).
    std::fs::write(
        we.join("loop.js"),
        r#"function flood() { queueMicrotask(flood); queueMicrotask(flood); }
export function format(t) {
  if (t < -100n) for (;;) {}
  if (t < 0n) flood();
  return `Day ${t / 86400n}`;
}
export function parse(text) { return BigInt(/^Day (-?\d+)$/.exec(text)[1]) * 86400n; }
"#,
    )
    .unwrap();
    for bad in [-1_000i64, -1] {
        let c = Calendar::load(dir.path()).unwrap();
        assert_eq!(c.format(86_400 * 3).unwrap(), "Day 3");
        let t0 = std::time::Instant::now();
        let e = c.format(bad).unwrap_err().to_string();
        assert!(
            e.contains("world-engine/loop.js") && e.contains(&format!("format({bad})")),
            "{e}"
        );
        assert!(e.contains("ran longer than") && e.contains("off"), "{e}");
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t0.elapsed()
        );
        // A timeline drawing a hundred dates does not wait a hundred times.
        let t1 = std::time::Instant::now();
        for t in 0..100 {
            assert_eq!(
                c.format_lossy(t * 86_400),
                format!("instant {}", t * 86_400)
            );
        }
        assert_eq!(c.parse("Day 2").unwrap_err().to_string(), e);
        assert!(
            t1.elapsed() < std::time::Duration::from_millis(200),
            "{:?}",
            t1.elapsed()
        );
    }
}
