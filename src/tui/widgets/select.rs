//! Moving a selection through a list of `len` rows, the one rule every overlay list uses.

/// One row down or up, staying on the list (an empty list selects row 0).
pub fn step(selected: &mut usize, len: usize, down: bool) {
    if len == 0 {
        *selected = 0;
    } else if down {
        *selected = (*selected + 1).min(len - 1);
    } else {
        *selected = selected.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::step;

    #[test]
    fn stays_on_the_list() {
        let mut s = 0;
        step(&mut s, 2, false);
        assert_eq!(s, 0);
        step(&mut s, 2, true);
        step(&mut s, 2, true);
        assert_eq!(s, 1);
        step(&mut s, 0, true);
        assert_eq!(s, 0);
    }
}
