//! Telling the author a call waits when they are not looking: the terminal bell and a desktop
//! notification sent through the terminal (OSC 9, or OSC 777 `notify;title;body`), as
//! `[notify]` in config.toml says. `update` decides when (a call starts waiting while the
//! Approvals pane is not focused or the terminal is not; once per call) and returns an
//! [`Effect::Notify`](crate::tui::action::Effect::Notify); the run loop writes the bytes
//! ([`Notification::bytes`]), so rendering stays a pure function of the state.

pub use crate::config::{Desktop, NotifyConfig};

/// One notification: what to write, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    pub title: String,
    pub body: String,
    pub bell: bool,
    pub desktop: Desktop,
}

/// The longest body sent (terminals cut or refuse long ones).
const MAX_TEXT: usize = 200;

/// Text safe inside an OSC string: no control characters (an ESC or BEL would end it early
/// and the rest would be typed into the terminal), and for OSC 777 no `;` (its separator).
fn clean(text: &str, semicolons: bool) -> String {
    let mut out: String = text
        .chars()
        .map(|c| {
            if c.is_control() || crate::text::is_unsafe_char(c) {
                ' '
            } else if c == ';' && !semicolons {
                ','
            } else {
                c
            }
        })
        .take(MAX_TEXT)
        .collect();
    if text.chars().count() > MAX_TEXT {
        out.pop();
        out.push('…');
    }
    out
}

/// A sequence for the terminal outside tmux: tmux passes it on only inside its DCS
/// passthrough (`allow-passthrough on`), with every ESC doubled.
pub(crate) fn through_tmux(seq: &str) -> String {
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

impl Notification {
    /// The bytes for the terminal: the bell (BEL) and/or the OSC sequence. `tmux`: nbook runs
    /// inside tmux (`$TMUX` is set), so the OSC is wrapped for passthrough; the bell is not
    /// (tmux forwards bells itself).
    pub fn bytes(&self, tmux: bool) -> String {
        let mut out = String::new();
        let osc = match self.desktop {
            Desktop::Osc9 => Some(format!(
                "\x1b]9;{}: {}\x07",
                clean(&self.title, true),
                clean(&self.body, true)
            )),
            Desktop::Osc777 => Some(format!(
                "\x1b]777;notify;{};{}\x07",
                clean(&self.title, false),
                clean(&self.body, false)
            )),
            Desktop::Off => None,
        };
        if let Some(osc) = osc {
            out.push_str(&if tmux { through_tmux(&osc) } else { osc });
        }
        if self.bell {
            out.push('\x07');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(desktop: Desktop, bell: bool) -> Notification {
        Notification {
            title: "nbook: approval needed".into(),
            body: "session 3 asks to write manuscript/001.md".into(),
            bell,
            desktop,
        }
    }

    #[test]
    fn osc9_osc777_and_the_bell_are_the_documented_bytes() {
        assert_eq!(
            n(Desktop::Osc9, true).bytes(false),
            "\x1b]9;nbook: approval needed: session 3 asks to write manuscript/001.md\x07\x07"
        );
        assert_eq!(
            n(Desktop::Osc777, false).bytes(false),
            "\x1b]777;notify;nbook: approval needed;session 3 asks to write manuscript/001.md\x07"
        );
        assert_eq!(n(Desktop::Off, true).bytes(false), "\x07");
        assert_eq!(n(Desktop::Off, false).bytes(false), "");
    }

    #[test]
    fn inside_tmux_the_osc_is_wrapped_and_the_bell_is_not() {
        assert_eq!(
            n(Desktop::Osc9, true).bytes(true),
            "\x1bPtmux;\x1b\x1b]9;nbook: approval needed: session 3 asks to write manuscript/001.md\x07\x1b\\\x07"
        );
    }

    #[test]
    fn control_characters_and_separators_cannot_break_out() {
        let evil = Notification {
            title: "a;b".into(),
            body: "x\x1b]0;pwned\x07y\u{202e}z;w".into(),
            bell: false,
            desktop: Desktop::Osc777,
        };
        let b = evil.bytes(false);
        assert_eq!(b, "\x1b]777;notify;a,b;x ]0,pwned y z,w\x07");
        assert_eq!(b.matches('\x1b').count(), 1);
        assert_eq!(b.matches('\x07').count(), 1);
        let long = Notification {
            body: "é".repeat(500),
            ..n(Desktop::Osc9, false)
        };
        let b = long.bytes(false);
        assert!(b.chars().count() < 260, "{}", b.chars().count());
        assert!(b.ends_with("…\x07"));
    }

    #[test]
    fn the_config_section_reads_and_refuses_unknown_values() {
        let c: NotifyConfig = toml::from_str("bell = false\ndesktop = \"osc777\"").unwrap();
        assert_eq!(
            c,
            NotifyConfig {
                bell: false,
                desktop: Desktop::Osc777
            }
        );
        assert_eq!(
            toml::from_str::<NotifyConfig>("").unwrap(),
            NotifyConfig::default()
        );
        assert!(toml::from_str::<NotifyConfig>("desktop = \"osc99\"").is_err());
        assert!(NotifyConfig {
            bell: false,
            desktop: Desktop::Off
        }
        .is_off());
    }
}
