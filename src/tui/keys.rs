//! Key notation used by `keymap.toml`, the help overlay and tests: `j`, `J`, `?`, `<Enter>`,
//! `<Esc>`, `<Tab>`, `<S-Tab>`, `<C-p>`, `<A-x>`, `<F5>`… Parsing turns a notation into a
//! normalised [`Key`]; [`Key::from_event`] normalises crossterm events the same way so the two
//! compare equal (Shift on a printable character is folded into the character, Shift+Tab is
//! `BackTab`).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};

/// A normalised key: code plus the Ctrl/Alt/Shift modifiers that matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub fn new(code: KeyCode, mods: KeyModifiers) -> Key {
        normalise(code, mods)
    }

    pub fn from_event(ev: &KeyEvent) -> Key {
        normalise(ev.code, ev.modifiers)
    }

    /// A press event for this key (tests and the palette use it).
    pub fn to_event(self) -> KeyEvent {
        KeyEvent {
            code: self.code,
            modifiers: self.mods,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        }
    }

    /// Parse one key in keymap notation.
    pub fn parse(s: &str) -> Result<Key, String> {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (None, _) => return Err("empty key".into()),
            (Some(c), None) => return Ok(Key::new(KeyCode::Char(c), KeyModifiers::NONE)),
            _ => {}
        }
        let inner = s
            .strip_prefix('<')
            .and_then(|r| r.strip_suffix('>'))
            .ok_or_else(|| {
                format!("unknown key '{s}': write one character or <Name> (e.g. <Enter>, <C-p>)")
            })?;
        let mut mods = KeyModifiers::NONE;
        let mut rest = inner;
        loop {
            let lower = rest.get(..2).map(str::to_ascii_lowercase);
            match lower.as_deref() {
                Some("c-") if rest.len() > 2 => mods |= KeyModifiers::CONTROL,
                Some("a-") | Some("m-") if rest.len() > 2 => mods |= KeyModifiers::ALT,
                Some("s-") if rest.len() > 2 => mods |= KeyModifiers::SHIFT,
                _ => break,
            }
            rest = &rest[2..];
        }
        let code = named_code(rest).ok_or_else(|| format!("unknown key '{s}'"))?;
        Ok(Key::new(code, mods))
    }

    /// Display in keymap notation (inverse of [`Key::parse`] for normalised keys).
    pub fn notation(&self) -> String {
        let mut prefix = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            prefix.push_str("C-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            prefix.push_str("A-");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            prefix.push_str("S-");
        }
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            // A plain character is written as itself (help shows `<`, not `<Lt>`); only
            // inside brackets does `<` need its name.
            KeyCode::Char(c) if prefix.is_empty() => return c.to_string(),
            KeyCode::Char('<') => "Lt".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::BackTab => return "<S-Tab>".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => code_name(other).unwrap_or("?").to_string(),
        };
        format!("<{prefix}{name}>")
    }
}

fn normalise(code: KeyCode, mods: KeyModifiers) -> Key {
    let mut mods = mods & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
    let code = match code {
        KeyCode::BackTab => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        KeyCode::Char(c) => {
            if mods.contains(KeyModifiers::SHIFT) {
                mods.remove(KeyModifiers::SHIFT);
                // Terminals send Shift+a as 'A' (+SHIFT); fold both spellings into 'A'.
                KeyCode::Char(c.to_uppercase().next().unwrap_or(c))
            } else if mods.contains(KeyModifiers::CONTROL) {
                // Ctrl+letters are case-insensitive in terminals.
                KeyCode::Char(c.to_ascii_lowercase())
            } else {
                KeyCode::Char(c)
            }
        }
        other => other,
    };
    Key { code, mods }
}

const NAMES: &[(&str, KeyCode)] = &[
    ("Enter", KeyCode::Enter),
    ("Esc", KeyCode::Esc),
    ("Tab", KeyCode::Tab),
    ("BackTab", KeyCode::BackTab),
    ("Backspace", KeyCode::Backspace),
    ("Delete", KeyCode::Delete),
    ("Insert", KeyCode::Insert),
    ("Up", KeyCode::Up),
    ("Down", KeyCode::Down),
    ("Left", KeyCode::Left),
    ("Right", KeyCode::Right),
    ("Home", KeyCode::Home),
    ("End", KeyCode::End),
    ("PageUp", KeyCode::PageUp),
    ("PageDown", KeyCode::PageDown),
    ("PgUp", KeyCode::PageUp),
    ("PgDn", KeyCode::PageDown),
    ("Space", KeyCode::Char(' ')),
    ("Lt", KeyCode::Char('<')),
    ("Gt", KeyCode::Char('>')),
];

fn named_code(name: &str) -> Option<KeyCode> {
    if let Some((_, code)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        return Some(*code);
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(KeyCode::Char(c));
    }
    if let Some(n) = name
        .strip_prefix(['F', 'f'])
        .and_then(|n| n.parse::<u8>().ok())
    {
        if (1..=24).contains(&n) {
            return Some(KeyCode::F(n));
        }
    }
    None
}

fn code_name(code: KeyCode) -> Option<&'static str> {
    NAMES.iter().find(|(_, c)| *c == code).map(|(n, _)| *n)
}

/// Parse a space-separated key sequence (`"n h i <Enter>"`) into press events (for tests).
pub fn parse_sequence(s: &str) -> Result<Vec<KeyEvent>, String> {
    s.split_whitespace()
        .map(|k| Key::parse(k).map(Key::to_event))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "j", "J", "?", ":", "<", ">", "<C-Lt>", "<Enter>", "<Esc>", "<S-Tab>", "<C-p>",
            "<A-x>", "<F5>", "<PageUp>",
        ] {
            let k = Key::parse(s).unwrap();
            assert_eq!(Key::parse(&k.notation()).unwrap(), k, "{s}");
        }
    }

    #[test]
    fn plain_angle_brackets_read_as_themselves() {
        assert_eq!(Key::parse("<Lt>").unwrap().notation(), "<");
        assert_eq!(Key::parse("<Gt>").unwrap().notation(), ">");
        assert_eq!(Key::parse("<C-Lt>").unwrap().notation(), "<C-Lt>");
    }

    #[test]
    fn events_normalise_like_notation() {
        let shift_a = KeyEvent::new(KeyCode::Char('A'), KeyModifiers::SHIFT);
        assert_eq!(Key::from_event(&shift_a), Key::parse("A").unwrap());
        let backtab = KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(Key::from_event(&backtab), Key::parse("<S-Tab>").unwrap());
        let ctrl_p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL);
        assert_eq!(Key::from_event(&ctrl_p), Key::parse("<C-p>").unwrap());
        assert!(Key::parse("<Nope>").is_err());
        assert!(Key::parse("jj").is_err());
    }
}
