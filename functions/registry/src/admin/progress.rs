//! Progress bars for long admin work, on stderr (indicatif draws nothing when stderr is not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `len` steps labelled `message`.
pub fn bar(len: usize, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(u64::try_from(len).unwrap_or(u64::MAX));
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}
