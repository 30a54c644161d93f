//! Diagnostics latency: how long after a `didChange` of a 1,000-line file its diagnostics arrive.
//!
//! Drives the release server binary over stdio with the test suite's scripted client: opens a
//! generated 1,000-line file (kernels with tiling and tiled copies, helpers, host functions with
//! launches), then sends changes, alternating one that breaks a kernel (an unknown name) with one
//! that fixes it, and times each `didChange` → `publishDiagnostics` of that version. The time
//! includes the server's debounce (`cute_lsp::DEBOUNCE`). Also times the front end alone
//! (`cute_lang::ide::analyze`) on the same file. The goal is under 50 ms.
//!
//! `cargo bench -p cute-lsp --bench latency`

#[path = "../tests/support/client.rs"]
mod client;

use client::Client;
use serde_json::json;
use std::time::{Duration, Instant};

const SERVER: &str = env!("CARGO_BIN_EXE_cute-lsp");
const LINES: usize = 1000;
const CHANGES: usize = 60;
const URI: &str = "file:///bench/generated.cute";

/// One unit of the file, 50 lines; `@` becomes the unit's number so every name is unique.
const UNIT: &str = r#"// ---- unit @: a tiled row reduction, an elementwise kernel, their host functions ----
const WARPS_@ = 4;

fn axpy_@(alpha, x, y) {
    return alpha * x + y;
}

kernel rows_@(g: tensor<f32, gmem>, out: tensor<f32, gmem>, const tiler, const tc) {
    let tidx = thread_idx.x;
    let gX = local_tile(g, tiler, (block_idx.x, 0));
    let thr = tc.get_slice(tidx);
    let src = thr.partition_S(gX);
    let regs = make_rmem_tensor_like(src);
    autovec_copy(src, regs);
    let sum = warp_reduction_sum(regs.load().reduce(add, init: 0.0));
    if lane_idx() == 0 {
        out[block_idx.x * WARPS_@ + warp_idx()] = sum;
    }
}

kernel scale_@(a: tensor<f32, gmem, (?):(1)>, b: tensor<f32, gmem, (?):(1)>) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    if i < size(b) {
        b[i] = axpy_@(2.0, a[i], b[i]);
    }
}

host run_rows_@(g: tensor<f32, gmem, (?,512):(512,1), align: 16>, out: tensor<f32, gmem, (?):(1), align: 16>) {
    let atom = make_copy_atom(f32, bits: 128);
    let thr_layout = make_ordered_layout((WARPS_@, 32), order: (1, 0));
    let tc = make_tiled_copy_tv(atom, thr_layout, make_layout((1, 4)));
    let (m, n) = g.shape;
    assert(n % 128 == 0, "rows are whole tiles");
    launch rows_@(g, out, (WARPS_@, 512), tc) grid(m / WARPS_@) block(WARPS_@ * 32);
}

kernel clear_@(t: tensor<f32, gmem, (128,4):(4,1)>) {
    let row = t[thread_idx.x, _];
    let zero = row.load() * 0.0;
    sync_threads();
    t[thread_idx.x, _] = zero;
}

host run_scale_@(a: tensor<f32, gmem, (?):(1), align: 16>, b: tensor<f32, gmem, (?):(1), align: 16>) {
    let n = size(b);
    let tiles = zipped_divide(make_layout((n, 4)), (32, 4));
    print("{}", tiles);
    launch scale_@(a, b) grid(ceil_div(n, 256)) block(256);
}

"#;

fn generate() -> String {
    let units: Vec<String> = (0..LINES / UNIT.lines().count()).map(|u| UNIT.replace('@', &u.to_string())).collect();
    let text = units.concat();
    assert_eq!(text.lines().count(), LINES, "the units make the file");
    text
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name}: min {:.1} ms, median {:.1} ms, p95 {:.1} ms, max {:.1} ms ({} runs)",
        millis(times[0]),
        millis(at(0.5)),
        millis(at(0.95)),
        millis(times[times.len() - 1]),
        times.len()
    );
    at(0.5)
}

fn main() {
    let fixed = generate();
    let broken = fixed.replacen("row.load() * 0.0", "row.load() * zero_value", 1);
    assert_ne!(fixed, broken, "the change must edit the file");

    let mut analysis = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let a = cute_lang::ide::analyze(&fixed);
        analysis.push(start.elapsed());
        assert!(a.parsed());
    }
    println!(
        "file: {} lines, {} bytes; server debounce {} ms",
        fixed.lines().count(),
        fixed.len(),
        cute_lsp::DEBOUNCE.as_millis()
    );
    summary("front end (parse, resolve, elaborate with the recorder)", analysis);

    let mut c = Client::start(SERVER, &[]);
    c.initialize(json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": URI, "languageId": "cute", "version": 1, "text": fixed } }),
    );
    let (_, opened) = c.notification("textDocument/publishDiagnostics");
    let baseline = opened["diagnostics"].as_array().map_or(0, Vec::len);
    let mut latencies = Vec::new();
    for version in 2..2 + CHANGES as i32 {
        let text = if version % 2 == 0 { &broken } else { &fixed };
        let sent = Instant::now();
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": URI, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        let (arrived, published) = c.notification("textDocument/publishDiagnostics");
        assert_eq!(published["version"], version);
        let count = published["diagnostics"].as_array().map_or(0, Vec::len);
        assert_eq!(count, baseline + usize::from(version % 2 == 0), "the broken version has one more error");
        latencies.push(arrived - sent);
        c.transcript.clear();
    }
    let median = summary("didChange -> publishDiagnostics", latencies);
    println!(
        "{}: median {:.1} ms against the 50 ms goal",
        if median < Duration::from_millis(50) { "within goal" } else { "OVER GOAL" },
        millis(median)
    );
    assert!(c.shutdown().success());
}
