//! Progress bars for the long commands (`replay`, `simulate`, `analyze
//! --batch`): drawn on standard error, and only when it is a terminal, so
//! that output piped or redirected never carries them.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar counting `len` units of `what` (`None`: an unknown number, shown
/// as a count); hidden unless standard error is a terminal.
pub fn bar(len: Option<u64>, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let template = match len {
        Some(_) => "{msg} [{bar:30}] {human_pos}/{human_len} ({eta} left)",
        None => "{msg} {spinner} {human_pos} ({elapsed})",
    };
    // The templates are constants: a bad one is a bug the tests catch.
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    // Drawn at once, so that even a short run shows it was there.
    bar.tick();
    bar
}

/// A bar for bytes read of a file of `len` bytes (or from a stream).
pub fn bytes(len: Option<u64>, what: &str) -> ProgressBar {
    let bar = bar(len, what);
    if len.is_some()
        && let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({eta} left)")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_a_terminal_the_bar_is_hidden() {
        // Test runners capture standard error: it is no terminal there.
        if !std::io::stderr().is_terminal() {
            assert!(bar(Some(10), "events").is_hidden());
            assert!(bytes(None, "positions").is_hidden());
        }
    }
}
