//! Where a build's time goes: the wall-clock time of each pipeline stage, printed by
//! `cutec build --timings`. Kernels are compiled on several threads, so each kernel's row gives its
//! own stages' times on its thread and the stage row above them the time until the last finished.

use std::time::{Duration, Instant};

/// One stage's time; `depth` 1 for a kernel's row under the stage that compiled it.
struct Row {
    depth: usize,
    name: String,
    time: Duration,
    /// The row's parts (a kernel's stages) or a remark (how many threads).
    detail: String,
}

pub struct Timings {
    start: Instant,
    rows: Vec<Row>,
}

/// The stages of one kernel's module, in order, as its thread ran them.
#[derive(Default)]
pub struct KernelTimes(pub Vec<(&'static str, Duration)>);

impl KernelTimes {
    /// Runs `f` and adds its time as stage `name`.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let value = f();
        self.0.push((name, start.elapsed()));
        value
    }

    fn total(&self) -> Duration {
        self.0.iter().map(|(_, d)| *d).sum()
    }
}

impl Default for Timings {
    fn default() -> Self {
        Timings { start: Instant::now(), rows: Vec::new() }
    }
}

impl Timings {
    /// Runs `f` and records its time as stage `name`.
    pub fn time<T>(&mut self, name: &str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let value = f();
        self.rows.push(Row { depth: 0, name: name.to_string(), time: start.elapsed(), detail: String::new() });
        value
    }

    /// Adds a remark to the last stage recorded.
    pub fn note(&mut self, detail: String) {
        if let Some(row) = self.rows.last_mut() {
            row.detail = detail;
        }
    }

    /// Records kernel `name`'s stages under the last stage recorded.
    pub fn kernel(&mut self, name: &str, times: &KernelTimes) {
        let detail =
            times.0.iter().map(|(stage, d)| format!("{stage} {:.3}", d.as_secs_f64())).collect::<Vec<_>>().join(", ");
        self.rows.push(Row { depth: 1, name: name.to_string(), time: times.total(), detail });
    }

    /// The table `--timings` prints: one stage a line with its seconds, then the total since the
    /// compilation started.
    pub fn report(&self) -> String {
        let mut out = String::from("timings (wall-clock seconds):\n");
        let line = |depth: usize, name: &str, time: Duration, detail: &str| {
            let name = format!("{}{name}", "  ".repeat(depth + 1));
            let detail = if detail.is_empty() { String::new() } else { format!("  ({detail})") };
            format!("{name:<32} {:>7.3}{detail}\n", time.as_secs_f64())
        };
        for r in &self.rows {
            out.push_str(&line(r.depth, &r.name, r.time, &r.detail));
        }
        out.push_str(&line(0, "total", self.start.elapsed(), ""));
        out
    }
}
