//! What the targets share.

/// Runs `f` on a thread with the 64 MiB stack `cutec` runs on (cutec/src/main.rs), so the depth
/// limits are fuzzed as the driver meets them; a panic in `f` is re-raised here, a finding.
pub fn on_cutec_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(s, f);
        match worker.expect("cannot start the fuzz thread").join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
