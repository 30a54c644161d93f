//! What the project's command-line tools (`cutec`, `cute-run`) do alike as processes.

/// Output into a closed pipe (`| head`) ends the process quietly, as it ends a C tool: Rust starts
/// with SIGPIPE ignored, which turns every later write to the pipe into an error, and a `println!`
/// or `eprintln!` into a panic (an abort when the panic message cannot be written either). Call it
/// first in `main`, before any thread starts.
pub fn die_quietly_on_closed_pipe() {
    #[cfg(unix)]
    default_sigpipe();
}

#[cfg(unix)]
fn default_sigpipe() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: sets one signal's disposition to the default at startup, before any thread exists.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}
