//! Acts (volumes) of the carrier tree: create and update only (agents cannot archive them;
//! the author can hard-delete one from the TUI, see [`super::delete`]).

use super::ctx::{int, opt_text, required_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::ActInput;
use super::model::ActDto;
use super::track::Table;

impl Plot<'_> {
    pub fn get_act(&mut self, id: i64) -> PlotResult<ActDto> {
        self.find_act(id, "/actId")
    }

    /// Create an act: `name` and `title` are required; the sort order defaults to after the last.
    pub fn create_act(&mut self, input: &ActInput) -> PlotResult<ActDto> {
        let name = required_text(
            "/name",
            input
                .name
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/name", "required to create an act"))?,
        )?;
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create an act"))?,
        )?;
        check_sort_order(input.sort_order)?;
        let story = self.ensure_story()?;
        self.assert_name_free(Table::Act, story, &name, None, "act")?;
        let order = match input.sort_order {
            Some(o) => o,
            None => self.next_order(Table::Act, "sortOrder", "storyId", story)?,
        };
        let id = self.insert(
            Table::Act,
            &[
                ("storyId", int(story)),
                ("sortOrder", int(order)),
                ("name", text(&name)),
                ("title", text(&title)),
                ("summary", text(input.summary.as_deref().unwrap_or(""))),
                ("note", opt_text(input.note.value())),
            ],
        )?;
        self.get_act(id)
    }

    pub fn update_act(&mut self, id: i64, input: &ActInput) -> PlotResult<ActDto> {
        self.ensure_story()?;
        let act = self.find_act(id, "/actId")?;
        check_sort_order(input.sort_order)?;
        let mut sets = Vec::new();
        if let Some(n) = &input.name {
            let n = required_text("/name", n)?;
            if n != act.name {
                self.assert_name_free(Table::Act, act.story_id, &n, Some(id), "act")?;
            }
            sets.push(("name", text(&n)));
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if let Some(s) = &input.summary {
            sets.push(("summary", text(s)));
        }
        if !input.note.is_keep() {
            sets.push(("note", opt_text(input.note.value())));
        }
        if let Some(o) = input.sort_order {
            sets.push(("sortOrder", int(o)));
        }
        self.update(Table::Act, id, "update", &sets)?;
        self.get_act(id)
    }
}

pub(crate) fn check_sort_order(o: Option<i64>) -> PlotResult<()> {
    match o {
        Some(v) if v < 0 => Err(PlotError::invalid("/sortOrder", "must be 0 or more")),
        _ => Ok(()),
    }
}
