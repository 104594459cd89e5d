//! The real terminal: raw mode, alternate screen, mouse capture and bracketed paste on entry;
//! restored on normal exit, on error (a drop guard) and on panic (a hook that restores first,
//! then runs the previous hook). Restoring is idempotent. [`leave`] and [`resume`] hand the
//! terminal to another program for a while (the author's editor, the shell after Ctrl+Z).
//! Focus reports are asked for too, so a notification knows when the terminal is unfocused.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Put the terminal back as it was. Safe to call more than once and from a panic hook.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    // Raw mode off first so that whatever follows (a panic message) prints normally.
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableFocusChange,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
}

/// Give the terminal to another program: the normal screen, cooked mode, the cursor shown.
/// [`resume`] takes it back; a panic meanwhile restores nothing twice.
pub fn leave() {
    restore();
}

/// Take the terminal back after [`leave`]: raw mode and the full-screen UI again (the caller
/// redraws everything, the other program having drawn over it).
pub fn resume() -> io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide
    )
}

/// Restores the terminal when dropped (early returns, `?` errors).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// Enter the full-screen UI. Keep the guard alive for as long as the UI runs.
pub fn enter() -> io::Result<(Term, Guard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste,
        EnableFocusChange,
        cursor::Hide
    )?;
    let term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    Ok((term, guard))
}
