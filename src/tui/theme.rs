//! Colour themes: `themes/{dark,light,high-contrast}.toml` embedded, a user theme of the same
//! name in `<config>/themes/` overriding fields, chosen by the config's `theme` (default dark).
//! Styles are tables such as `selection = { fg = "blue", bold = true }` with ANSI colour names.
//! With `NO_COLOR` set every colour is dropped and only modifiers remain.

use std::collections::BTreeMap;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const EMBEDDED: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleDe {
    fg: Option<String>,
    bg: Option<String>,
    bold: Option<bool>,
    dim: Option<bool>,
    italic: Option<bool>,
    underline: Option<bool>,
    reversed: Option<bool>,
}

macro_rules! theme_fields {
    ($($field:ident,)*) => {
        /// Resolved styles used by the views.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Theme {
            pub name: String,
            $(pub $field: Style,)*
        }

        impl Theme {
            fn set(&mut self, key: &str, style: Style) -> bool {
                match key {
                    $(stringify!($field) => { self.$field = style; true })*
                    _ => false,
                }
            }

            fn strip_colours(&mut self) {
                $(self.$field = no_colour(self.$field);)*
            }
        }
    };
}

theme_fields! {
    text, dim, border, border_focused, title, title_focused, selection, selection_unfocused,
    heading, heading2, frontmatter, code, quote, list_bullet,
    diff_add, diff_del, diff_add_word, diff_del_word, diff_hunk, diff_header, gutter,
    changed, folder, hidden,
    status_bar, status_info, status_ok, status_error, key_hint, badge,
    mode_normal, mode_discuss, mode_plan,
    user, assistant, tool, tool_ok, tool_err, tool_wait, meta,
    overlay_border, input_error, matched,
}

fn no_colour(s: Style) -> Style {
    Style {
        fg: None,
        bg: None,
        underline_color: None,
        ..s
    }
}

fn parse_colour(name: &str) -> Result<Color, String> {
    name.parse::<Color>().map_err(|_| {
        format!("unknown colour '{name}' (use an ANSI name such as blue, light_red, or #rrggbb)")
    })
}

fn to_style(de: &StyleDe) -> Result<Style, String> {
    let mut s = Style::default();
    if let Some(fg) = &de.fg {
        s = s.fg(parse_colour(fg)?);
    }
    if let Some(bg) = &de.bg {
        s = s.bg(parse_colour(bg)?);
    }
    for (flag, m) in [
        (de.bold, Modifier::BOLD),
        (de.dim, Modifier::DIM),
        (de.italic, Modifier::ITALIC),
        (de.underline, Modifier::UNDERLINED),
        (de.reversed, Modifier::REVERSED),
    ] {
        if flag == Some(true) {
            s = s.add_modifier(m);
        }
    }
    Ok(s)
}

impl Theme {
    /// Apply a theme file's tables on top of `self`. Errors name the field.
    pub fn apply(&mut self, text: &str, file: &str) -> Result<(), String> {
        let table: BTreeMap<String, toml::Value> =
            toml::from_str(text).map_err(|e| format!("{file}: {}", e.message()))?;
        for (key, value) in table {
            if key == "name" {
                continue;
            }
            let de: StyleDe = value
                .try_into()
                .map_err(|e: toml::de::Error| format!("{file}: {key}: {}", e.message()))?;
            let style = to_style(&de).map_err(|e| format!("{file}: {key}: {e}"))?;
            if !self.set(&key, style) {
                return Err(format!("{file}: unknown style '{key}'"));
            }
        }
        Ok(())
    }

    /// An embedded theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, text) = EMBEDDED.iter().find(|(n, _)| *n == name)?;
        let mut theme = Theme {
            name: name.to_string(),
            ..Theme::default()
        };
        theme.apply(text, name).ok()?;
        Some(theme)
    }

    /// The theme for `name` (default dark), with a user file from `config_dir/themes/` on top,
    /// colours stripped when `no_colour`. Problems come back as a message; a usable theme
    /// is always returned.
    pub fn load(
        name: Option<&str>,
        config_dir: Option<&Path>,
        no_colour: bool,
    ) -> (Theme, Option<String>) {
        let wanted = name.unwrap_or("dark");
        let mut note = None;
        let mut theme = match Theme::builtin(wanted) {
            Some(t) => t,
            None => Theme::builtin("dark").unwrap_or_default(),
        };
        let user = config_dir.map(|d| d.join("themes").join(format!("{wanted}.toml")));
        match user.as_deref().map(std::fs::read_to_string) {
            Some(Ok(text)) => {
                theme.name = wanted.to_string();
                if let Err(e) = theme.apply(
                    &text,
                    &user
                        .as_deref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                ) {
                    note = Some(format!("theme: {e}"));
                }
            }
            _ if theme.name != wanted => {
                note = Some(format!(
                    "unknown theme '{wanted}' (built in: dark, light, high-contrast); using dark"
                ));
            }
            _ => {}
        }
        if no_colour {
            theme.strip_colours();
            // Keep the selection visible without colour.
            theme.selection = theme.selection.add_modifier(Modifier::REVERSED);
        }
        (theme, note)
    }

    /// Is `NO_COLOR` set (to anything non-empty)?
    pub fn no_colour_env() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_and_sets_every_field() {
        for (name, text) in EMBEDDED {
            let mut t = Theme::default();
            t.apply(text, name).unwrap();
            assert_ne!(t.selection, Style::default(), "{name}");
        }
    }

    #[test]
    fn no_colour_keeps_modifiers_only() {
        let (t, note) = Theme::load(Some("dark"), None, true);
        assert!(note.is_none());
        assert_eq!(t.diff_add.fg, None);
        assert!(t.selection.add_modifier.contains(Modifier::REVERSED));
        let (t, note) = Theme::load(Some("nope"), None, false);
        assert!(note.unwrap().contains("nope"));
        assert_eq!(t.name, "dark");
    }
}
