//! Host-side cost of a host-function call without a GPU: the checks and plan evaluation of
//! `elementwise_add` (f16, 16x256, one launch) and of `row_sum` (a host `if` picking one of two
//! kernels; `testdata/row_sum.manifest` is `cutec build samples/row_sum.cute --emit=manifest`),
//! evaluated in full (`HostPlan::evaluate_into`) and
//! through the per-signature cache (`CallCache::evaluate`, what `HostFn::call` does), in ns per
//! call, median of 7 rounds. Ignored by default (a timing, not a check); run with
//!
//! ```text
//! cargo test --release -p cute-runtime --test plan_timing -- --ignored --nocapture
//! ```

use cute_abi::manifest::seal;
use cute_runtime::call_cache::CallCache;
use cute_runtime::plan::{HostPlan, PlanScratch};
use cute_runtime::{Arg, DType, Manifest, TensorView};
use std::time::Instant;

const EW: &str = include_str!("../testdata/elementwise_add.manifest");
const ROW_SUM: &str = include_str!("../testdata/row_sum.manifest");

fn per_call_ns(calls: u32, f: &mut dyn FnMut()) -> f64 {
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[3]
}

pub fn time_host(manifest: &Manifest, host: &str, args: &[Arg], calls: u32) -> (f64, f64) {
    let plan = HostPlan::new(manifest, host).expect("plan");
    let mut s = PlanScratch::default();
    plan.evaluate_into(args, &mut s).expect("accepted");
    let full = per_call_ns(calls, &mut || plan.evaluate_into(std::hint::black_box(args), &mut s).expect("accepted"));
    let mut cache = CallCache::new(&plan);
    let cached =
        per_call_ns(calls, &mut || cache.evaluate(&plan, std::hint::black_box(args), &mut s).expect("accepted"));
    (full, cached)
}

#[test]
#[ignore = "a timing; run with --ignored --nocapture"]
fn plan_evaluation_per_call() {
    let m = Manifest::parse(&seal(EW)).expect("manifest");
    let (rows, cols) = (16i64, 256i64);
    let args: Vec<Arg> = (0..3)
        .map(|i| {
            Arg::tensor(
                TensorView::new(0x1_0000_0000 * (i + 1), DType::F16, &[rows, cols], &[cols, 1])
                    .with_bytes((rows * cols * 2) as u64),
            )
        })
        .collect();
    let (full, cached) = time_host(&m, "elementwise_add", &args, 200_000);
    println!("elementwise_add 16x256 f16: full evaluation {full:.0} ns/call, cache hit {cached:.0} ns/call");
}

#[test]
#[ignore = "a timing; run with --ignored --nocapture"]
fn branching_plan_evaluation_per_call() {
    let m = Manifest::parse(&seal(ROW_SUM)).expect("manifest");
    for (rows, cols) in [(64i64, 512i64), (64, 4096)] {
        let args = [
            Arg::tensor(
                TensorView::new(0x1_0000_0000, DType::F32, &[rows, cols], &[cols, 1])
                    .with_bytes((rows * cols * 4) as u64),
            ),
            Arg::tensor(TensorView::new(0x2_0000_0000, DType::F32, &[rows], &[1]).with_bytes((rows * 4) as u64)),
        ];
        let (full, cached) = time_host(&m, "row_sum", &args, 200_000);
        println!("row_sum {rows}x{cols} f32 (if on the row length): full evaluation {full:.0} ns/call, cache hit {cached:.0} ns/call");
    }
}
