//! GPU correctness checks of the samples (issue 5): each sample's host functions called through
//! the runtime (`Module::host(name)?.call(...)`) on fresh random inputs, every output element
//! compared with a CPU reference; printf samples run in a child process whose stdout (where the
//! driver writes device `printf` output at synchronization) is captured and compared with the
//! output the sample's comments give.
//!
//! ```text
//! cute-run elementwise-apply CUBIN [--shape MxN]... [--refuse MxN]... [--seed S]
//! cute-run reduce CUBIN [--host NAME] [--shape S]... [--refuse S]... [--bench S]... [--iters K] [--seed S]
//! cute-run predicated-add CUBIN [--shape MxN]... [--bench MxN]... [--iters K] [--seed S]
//! cute-run sample CUBIN [NAME]        (printf samples; NAME detected from the manifest; a
//!                                      predicated_add cubin runs predicated-add's defaults)
//! cute-run copy4 CUBIN                (= sample CUBIN four_ways_copy)
//! ```
//!
//! Every case prints one line `PASS|FAIL|REFUSED|SKIP <case>: <details>`; the last line is `PASS`,
//! `FAIL` or `SKIP: ...`. Exit codes as the rest of cute-run: 0 / 1 / 2 / 77.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cute_runtime::f16::{f16_bits_to_f32, f32_to_f16_bits};
use cute_runtime::{
    Arg, DType, Device, DeviceBuffer, DeviceElem, HostFn, HostPlan, LaunchConfig, Manifest, Module,
    Rng, RuntimeError, Stream, TensorView,
};

use super::{Opts, Outcome};

// ---- shared helpers ----------------------------------------------------------------------------

/// Counts of a run; prints the final verdict.
#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    refused: usize,
    skipped: usize,
}

impl Tally {
    fn pass(&mut self, case: &str, detail: &str) {
        self.pass += 1;
        println!("PASS {case}: {detail}");
    }
    fn fail(&mut self, case: &str, detail: &str) {
        self.fail += 1;
        println!("FAIL {case}: {detail}");
    }
    fn check(&mut self, ok: bool, case: &str, detail: &str) {
        if ok {
            self.pass(case, detail)
        } else {
            self.fail(case, detail)
        }
    }
    fn refused(&mut self, case: &str, detail: &str) {
        self.refused += 1;
        println!("REFUSED {case}: {detail}");
    }
    fn skip(&mut self, case: &str, detail: &str) {
        self.skipped += 1;
        println!("SKIP {case}: {detail}");
    }
    /// The last lines: a count, then `PASS` / `FAIL` / `SKIP: ...` and the outcome.
    fn finish(&self) -> Outcome {
        println!(
            "cases: {} passed, {} failed, {} refused as expected, {} skipped",
            self.pass, self.fail, self.refused, self.skipped
        );
        if self.fail > 0 {
            println!("FAIL");
            Outcome::Fail
        } else if self.skipped > 0 {
            println!("SKIP: no CUDA driver/GPU for {} case(s); the {} offline case(s) passed", self.skipped, self.pass);
            Outcome::Skip
        } else {
            println!("PASS");
            Outcome::Pass
        }
    }
}

/// `--seed S`, else a fresh seed from the clock (printed, so a failure can be reproduced).
fn seed(o: &Opts) -> Result<u64, RuntimeError> {
    if o.get("--seed").is_some() {
        return Ok(o.num("--seed", 1)? as u64);
    }
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    Ok(t ^ u64::from(std::process::id()).rotate_left(32))
}

/// `2048x2048` → [2048, 2048].
fn parse_shape(s: &str) -> Result<Vec<i64>, RuntimeError> {
    s.split('x')
        .map(|v| {
            v.trim().parse::<i64>().ok().filter(|&x| x > 0).ok_or_else(|| {
                RuntimeError::InvalidArgument(format!("shape `{s}`: `{v}` is not a positive number (write e.g. 2048x1024)"))
            })
        })
        .collect()
}

fn shape_name(s: &[i64]) -> String {
    s.iter().map(i64::to_string).collect::<Vec<_>>().join("x")
}

fn shapes(o: &Opts, flag: &str, default: &[&str]) -> Result<Vec<Vec<i64>>, RuntimeError> {
    let given = o.all(flag);
    let list: Vec<&str> = if given.is_empty() { default.to_vec() } else { given };
    list.iter().map(|s| parse_shape(s)).collect()
}

fn len_of(shape: &[i64]) -> Result<usize, RuntimeError> {
    shape
        .iter()
        .try_fold(1i64, |a, &b| a.checked_mul(b))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| RuntimeError::InvalidArgument(format!("shape {} is too large", shape_name(shape))))
}

/// A refusal the runtime reports before launching (argument checks, `require`, partial tiles).
fn is_refusal(e: &RuntimeError) -> bool {
    matches!(e, RuntimeError::ArgumentMismatch(_) | RuntimeError::InvalidLaunch(_))
}

/// What [`pre_call`] decided.
enum Pre {
    /// Accepted: launch it.
    Go,
    /// Refused before anything ran (the message).
    Refused(String),
}

/// [`pre_call`] on the plan alone (no device): fake, aligned pointers with the views' sizes.
fn pre_plan(plan: &HostPlan, args: &[Arg]) -> Result<Pre, RuntimeError> {
    // The runtime checks the host's and the launched kernels' launch conditions itself.
    match plan.evaluate(args) {
        Ok(_) => Ok(Pre::Go),
        Err(e) if is_refusal(&e) => Ok(Pre::Refused(e.to_string())),
        Err(e) => Err(e),
    }
}

/// A fake device address for offline plan evaluation (aligned; distinct per argument).
fn fake_ptr(k: u64) -> u64 {
    0x7f00_0000_0000 + k * 0x10_0000_0000
}

/// Offline part of a check: each shape's call evaluated on the plan (nothing runs). `expect_ok`:
/// the call must be accepted, else refused.
fn plan_case(t: &mut Tally, plan: &HostPlan, case: &str, args: &[Arg], expect_ok: bool) -> Result<(), RuntimeError> {
    let label = format!("{case} (plan, offline)");
    match (pre_plan(plan, args)?, expect_ok) {
        (Pre::Go, true) => t.pass(&label, "accepted"),
        (Pre::Go, false) => t.fail(&label, "expected a refusal (the shape violates a require), but the plan accepts the call"),
        (Pre::Refused(msg), true) => t.fail(&label, &format!("refused, but the shape satisfies the requires: {msg}")),
        (Pre::Refused(msg), false) => t.refused(&label, &msg),
    }
    Ok(())
}

/// Checks a call without launching (`HostFn::check`: arguments and every launch condition).
fn pre_call(host: &HostFn, args: &[Arg]) -> Result<Pre, RuntimeError> {
    match host.check(args) {
        Ok(_) => Ok(Pre::Go),
        Err(e) if is_refusal(&e) => Ok(Pre::Refused(e.to_string())),
        Err(e) => Err(e),
    }
}

fn open_device() -> Result<(Device, Stream), RuntimeError> {
    let dev = Device::open(0)?;
    let (major, minor) = dev.compute_capability()?;
    println!("device: {} (sm_{major}{minor})", dev.name()?);
    let stream = dev.new_stream()?;
    Ok((dev, stream))
}

fn find_host(m: Option<&Manifest>, want: &[&str]) -> Option<String> {
    let m = m?;
    want.iter().find(|w| m.host(w).is_some()).map(|s| s.to_string())
}

// ---- elementwise_apply -------------------------------------------------------------------------

/// f16 bits → a total order in which +0 and -0 are equal (for ulp distances).
fn f16_ord(h: u16) -> i32 {
    let mag = i32::from(h & 0x7fff);
    if h & 0x8000 != 0 {
        -mag
    } else {
        mag
    }
}

fn f16_is_nan(h: u16) -> bool {
    h & 0x7c00 == 0x7c00 && h & 0x03ff != 0
}

const F16_SENTINEL: u16 = 0x7e5a; // a NaN no product of finite values gives

/// `cute-run elementwise-apply CUBIN`: hosts `elementwise_mul` and `elementwise_mul_relu` of
/// samples/elementwise_apply.cute on f16 MxN row-major tensors.
pub(crate) fn elementwise_apply(o: &Opts) -> Result<Outcome, RuntimeError> {
    let cases = shapes(o, "--shape", &["2048x2048", "1008x2304"])?;
    let refuse = shapes(o, "--refuse", &["2048x1000", "1000x2048"])?;
    let seed = seed(o)?;
    let manifest = Manifest::from_file(&o.cubin)?
        .ok_or_else(|| RuntimeError::NoManifest(format!("{} has no cutec manifest", o.cubin)))?;
    let mut t = Tally::default();
    let names = ["elementwise_mul", "elementwise_mul_relu"];
    for name in names {
        let plan = HostPlan::new(&manifest, name)?;
        for (shape, ok) in cases.iter().map(|s| (s, true)).chain(refuse.iter().map(|s| (s, false))) {
            let [m, n] = shape[..] else {
                return Err(RuntimeError::InvalidArgument(format!("shape {}: write MxN", shape_name(shape))));
            };
            let bytes = len_of(shape)? as u64 * 2;
            let v = |k| Arg::tensor(TensorView::new(fake_ptr(k), DType::F16, &[m, n], &[n, 1]).with_bytes(bytes));
            plan_case(&mut t, &plan, &format!("{name} f16 {m}x{n}"), &[v(0), v(1), v(2)], ok)?;
        }
    }
    let stream = match open_device() {
        Ok((_dev, stream)) => stream,
        Err(e) if e.is_unavailable() => {
            t.skip("elementwise_apply (device)", &format!("{} cases: {e}", 2 * (cases.len() + refuse.len())));
            return Ok(t.finish());
        }
        Err(e) => return Err(e),
    };
    let module = Module::load(stream.device(), o.cubin.as_str())?;
    println!("seed: {seed}");
    println!(
        "reference: a*b computed in f32 from the f16 inputs (exact: 11+11 significant bits fit f32's 24) and \
         rounded to f16 (round to nearest even); relu: that value if > 0, else +0. The kernel multiplies \
         in f16; tolerance: 1 ulp of f16 (the count of exact and 1-ulp results is printed)"
    );
    for name in names {
        let host = module.host(name)?;
        let relu = name.ends_with("relu");
        for shape in &cases {
            let [m, n] = shape[..] else {
                return Err(RuntimeError::InvalidArgument(format!("--shape {}: write MxN", shape_name(shape))));
            };
            let case = format!("{name} f16 {m}x{n}");
            let len = len_of(shape)?;
            let mut rng = Rng::new(seed ^ (m as u64) << 20 ^ n as u64);
            let a: Vec<u16> = (0..len).map(|_| f32_to_f16_bits(rng.uniform_f32(-2.0, 2.0))).collect();
            let b: Vec<u16> = (0..len).map(|_| f32_to_f16_bits(rng.uniform_f32(-2.0, 2.0))).collect();
            let da = DeviceBuffer::from_host(&stream, &a)?;
            let db = DeviceBuffer::from_host(&stream, &b)?;
            let dc = DeviceBuffer::from_host(&stream, &vec![F16_SENTINEL; len])?;
            let view = |buf: &DeviceBuffer<u16>| Arg::tensor(buf.view(&[m, n], &[n, 1]).with_dtype(DType::F16));
            let args = [view(&da), view(&db), view(&dc)];
            match pre_call(&host, &args)? {
                Pre::Go => {}
                Pre::Refused(msg) => {
                    t.fail(&case, &format!("refused, but the shape satisfies the requires: {msg}"));
                    continue;
                }
            }
            host.call(&stream, &args)?;
            let c = dc.to_host(&stream)?;
            let (mut exact, mut one_ulp, mut bad) = (0usize, 0usize, 0usize);
            let mut first = Vec::new();
            for i in 0..len {
                let p = f16_bits_to_f32(a[i]) * f16_bits_to_f32(b[i]);
                let mut want = f32_to_f16_bits(p);
                if relu && f16_bits_to_f32(want) <= 0.0 {
                    want = 0;
                }
                let got = c[i];
                let d = if f16_is_nan(got) { i32::MAX } else { (f16_ord(got) - f16_ord(want)).abs() };
                match d {
                    0 => exact += 1,
                    1 => one_ulp += 1,
                    _ => {
                        bad += 1;
                        if first.len() < 5 {
                            first.push(format!(
                                "[{},{}]=0x{got:04x} want 0x{want:04x} ({} * {})",
                                i as i64 / n,
                                i as i64 % n,
                                f16_bits_to_f32(a[i]),
                                f16_bits_to_f32(b[i])
                            ));
                        }
                    }
                }
            }
            let detail = format!(
                "{len} elements: exact={exact} within_1ulp={one_ulp} beyond_1ulp_or_unwritten={bad}{}",
                if first.is_empty() { String::new() } else { format!("; first: {}", first.join(", ")) }
            );
            t.check(bad == 0, &case, &detail);
        }
        for shape in &refuse {
            let [m, n] = shape[..] else {
                return Err(RuntimeError::InvalidArgument(format!("--refuse {}: write MxN", shape_name(shape))));
            };
            expect_refusal_f16(&mut t, &stream, &host, &format!("{name} f16 {m}x{n}"), m, n)?;
        }
    }
    Ok(t.finish())
}

/// A shape the manifest's requires exclude must be refused, with nothing written.
fn expect_refusal_f16(t: &mut Tally, stream: &Stream, host: &HostFn, case: &str, m: i64, n: i64) -> Result<(), RuntimeError> {
    let len = len_of(&[m, n])?;
    let da = DeviceBuffer::<u16>::zeros(stream, len)?;
    let dc = DeviceBuffer::from_host(stream, &vec![F16_SENTINEL; len])?;
    let view = |buf: &DeviceBuffer<u16>| Arg::tensor(buf.view(&[m, n], &[n, 1]).with_dtype(DType::F16));
    let args = [view(&da), view(&da), view(&dc)];
    match pre_call(host, &args)? {
        Pre::Go => t.fail(case, "expected a refusal (the shape violates a require), but the call was accepted; not launched"),
        Pre::Refused(_) => {
            // The real call must refuse too, and launch nothing.
            match host.call(stream, &args) {
                Err(e) if is_refusal(&e) => {
                    stream.synchronize()?;
                    let untouched = dc.to_host(stream)?.iter().all(|&x| x == F16_SENTINEL);
                    if untouched {
                        t.refused(case, &format!("{e} (nothing launched, output untouched)"));
                    } else {
                        t.fail(case, &format!("refused but the output was written: {e}"));
                    }
                }
                Err(e) => return Err(e),
                Ok(()) => t.fail(case, "HostFn::check refused the call but HostFn::call launched it"),
            }
        }
    }
    Ok(())
}

// ---- reductions --------------------------------------------------------------------------------

const REDUCE_HOSTS: [&str; 4] = ["reduce_sum", "reduce_rows", "reduce_compositional", "reduce_nd"];
const F32_SENTINEL: u32 = 0x7fc0_beef;
const GUARD: usize = 1024;

/// One reduce problem: input (outer, reduced, inner) row-major, output (outer, inner).
struct Problem {
    outer: usize,
    red: usize,
    inner: usize,
}

impl Problem {
    fn of(host: &str, shape: &[i64]) -> Result<Problem, RuntimeError> {
        let u = |v: i64| v as usize;
        match (host, shape) {
            ("reduce_nd", [b, r, a]) => Ok(Problem { outer: u(*b), red: u(*r), inner: u(*a) }),
            ("reduce_nd", _) => Err(RuntimeError::InvalidArgument(format!("reduce_nd shapes are Bx256xA, not {}", shape_name(shape)))),
            (_, [m, n]) => Ok(Problem { outer: u(*m), red: u(*n), inner: 1 }),
            _ => Err(RuntimeError::InvalidArgument(format!("{host} shapes are MxN, not {}", shape_name(shape)))),
        }
    }
    fn in_len(&self) -> usize {
        self.outer * self.red * self.inner
    }
    fn out_len(&self) -> usize {
        self.outer * self.inner
    }
    fn args(&self, nd: bool, x: &DeviceBuffer<f32>, out: &DeviceBuffer<f32>) -> [Arg; 2] {
        self.views(nd, (x.ptr(), x.size_bytes() as u64), (out.ptr(), out.size_bytes() as u64))
    }
    /// The (input, output) views for pointers and sizes in bytes.
    fn views(&self, nd: bool, x: (u64, u64), out: (u64, u64)) -> [Arg; 2] {
        let (o, r, i) = (self.outer as i64, self.red as i64, self.inner as i64);
        let v = |(p, b): (u64, u64), sh: &[i64], st: &[i64]| Arg::tensor(TensorView::new(p, DType::F32, sh, st).with_bytes(b));
        if nd {
            [v(x, &[o, r, i], &[r * i, i, 1]), v(out, &[o, i], &[i, 1])]
        } else {
            [v(x, &[o, r], &[r, 1]), v(out, &[o], &[1])]
        }
    }
}

fn reduce_defaults(host: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match host {
        "reduce_sum" => (&["1x1", "7x33", "1000x1000", "1024x4096", "513x8192", "2x131072"], &[]),
        "reduce_nd" => (
            &["1x256x1", "3x256x1", "1x256x5", "5x256x3", "7x256x33", "64x256x64", "2x256x1000"],
            &[],
        ),
        // N fixed at 1024 by the kernels; M must be a multiple of 4 (one warp per row, 4 rows a block).
        _ => (&["4x1024", "1000x1024", "4096x1024"], &["1001x1024", "6x1024"]),
    }
}

/// `cute-run reduce CUBIN`: the row reductions of samples/reduce_sum*.cute (whichever host the cubin
/// has), random f32 in [-1, 1), every output checked against an f64 reference; `--bench` shapes
/// also get GB/s next to a device-to-device memcpy.
pub(crate) fn reduce(o: &Opts) -> Result<Outcome, RuntimeError> {
    let manifest = Manifest::from_file(&o.cubin)?;
    let name = match o.get("--host") {
        Some(h) => h.to_string(),
        None => find_host(manifest.as_ref(), &REDUCE_HOSTS).ok_or_else(|| {
            RuntimeError::InvalidArgument(format!("{} has none of the host functions {}", o.cubin, REDUCE_HOSTS.join(", ")))
        })?,
    };
    let (def_shapes, def_refuse) = reduce_defaults(&name);
    let cases = shapes(o, "--shape", def_shapes)?;
    let refuse = shapes(o, "--refuse", def_refuse)?;
    let bench = shapes(o, "--bench", &[])?;
    let iters = o.num("--iters", 20)?.max(1);
    let seed = seed(o)?;
    let nd = name == "reduce_nd";
    let mut t = Tally::default();
    let m = manifest.ok_or_else(|| RuntimeError::NoManifest(format!("{} has no cutec manifest", o.cubin)))?;
    let plan = HostPlan::new(&m, &name)?;
    let timed_shapes = cases.iter().chain(&bench);
    for (shape, ok) in timed_shapes.map(|s| (s, true)).chain(refuse.iter().map(|s| (s, false))) {
        let p = Problem::of(&name, shape)?;
        let args = p.views(nd, (fake_ptr(0), p.in_len() as u64 * 4), (fake_ptr(1), (p.out_len() + GUARD) as u64 * 4));
        plan_case(&mut t, &plan, &format!("{name} f32 {}", shape_name(shape)), &args, ok)?;
    }
    let stream = match open_device() {
        Ok((_dev, stream)) => stream,
        Err(e) if e.is_unavailable() => {
            t.skip(&format!("{name} (device)"), &format!("{} cases: {e}", cases.len() + bench.len() + refuse.len()));
            return Ok(t.finish());
        }
        Err(e) => return Err(e),
    };
    let module = Module::load(stream.device(), o.cubin.as_str())?;
    let host = module.host(&name)?;
    println!("seed: {seed}");
    println!(
        "reference: row sums in f64 of the f32 inputs (uniform in [-1,1)); tolerance per output: \
         |got - ref| <= (N/32 + 16) * 2^-24 * sum|x| (the worst-case error of an f32 summation tree of depth \
         <= N/32 + 16, N = the reduced extent; these kernels' deepest chains are N/128 + 10 and N/32 + 5)"
    );
    let mut results = Vec::new();
    let all: Vec<(Vec<i64>, bool)> = cases.into_iter().map(|s| (s, false)).chain(bench.into_iter().map(|s| (s, true))).collect();
    for (shape, timed) in &all {
        let p = Problem::of(&name, shape)?;
        let case = format!("{name} f32 {}", shape_name(shape));
        let mut rng = Rng::new(seed ^ (p.in_len() as u64).rotate_left(17));
        let x = rng.vec_f32(p.in_len(), -1.0, 1.0);
        let dx = DeviceBuffer::from_host(&stream, &x)?;
        let dout = DeviceBuffer::from_host(&stream, &vec![f32::from_bits(F32_SENTINEL); p.out_len() + GUARD])?;
        let args = p.args(nd, &dx, &dout);
        match pre_call(&host, &args)? {
            Pre::Go => {}
            Pre::Refused(msg) => {
                t.fail(&case, &format!("refused: {msg}"));
                continue;
            }
        }
        host.call(&stream, &args)?;
        let out = dout.to_host(&stream)?;
        let (bad, detail) = compare_reduce(&p, &x, &out);
        t.check(bad == 0, &case, &detail);
        if *timed {
            let bytes = (p.in_len() * 4) as f64;
            let memcpy = memcpy_gbps(&stream, &dx, iters)?;
            host.call(&stream, &args)?; // warm-up
            let ms = f64::from(stream.median_ms(iters, || host.call(&stream, &args))?);
            let gbps = bytes / (ms * 1e-3) / 1e9;
            println!(
                "{case}: time_median_us={:.2} bandwidth_gbps={gbps:.1} (M*N*4 bytes / median of {iters} calls after a warm-up) \
                 memcpy_gbps={memcpy:.1} ratio={:.3}",
                ms * 1e3,
                gbps / memcpy
            );
            results.push(format!(
                "RESULT reduce host={name} shape={} mismatches={bad} us={:.2} gbps={gbps:.1} memcpy_gbps={memcpy:.1} ratio={:.3}",
                shape_name(shape),
                ms * 1e3,
                gbps / memcpy
            ));
        }
    }
    for shape in &refuse {
        let p = Problem::of(&name, shape)?;
        let case = format!("{name} f32 {}", shape_name(shape));
        let dx = DeviceBuffer::<f32>::zeros(&stream, p.in_len())?;
        let dout = DeviceBuffer::from_host(&stream, &vec![f32::from_bits(F32_SENTINEL); p.out_len() + GUARD])?;
        let args = p.args(nd, &dx, &dout);
        match pre_call(&host, &args)? {
            Pre::Go => t.fail(&case, "expected a refusal (the kernel has no tail handling), but the call was accepted; not launched"),
            Pre::Refused(_) => match host.call(&stream, &args) {
                Err(e) if is_refusal(&e) => {
                    stream.synchronize()?;
                    let untouched = dout.to_host(&stream)?.iter().all(|x| x.to_bits() == F32_SENTINEL);
                    if untouched {
                        t.refused(&case, &format!("{e} (nothing launched, output untouched)"));
                    } else {
                        t.fail(&case, &format!("refused but the output was written: {e}"));
                    }
                }
                Err(e) => return Err(e),
                Ok(()) => t.fail(&case, "HostFn::check refused the call but HostFn::call launched it"),
            },
        }
    }
    for r in &results {
        println!("{r}");
    }
    Ok(t.finish())
}

/// Compares the outputs with the f64 reference; (number bad, detail line).
fn compare_reduce(p: &Problem, x: &[f32], out: &[f32]) -> (usize, String) {
    let depth = (p.red / 32 + 16) as f64;
    let u = f64::powi(2.0, -24);
    let (mut bad, mut max_err, mut max_ratio) = (0usize, 0f64, 0f64);
    let mut first = Vec::new();
    for o in 0..p.outer {
        for i in 0..p.inner {
            let (mut sum, mut abs) = (0f64, 0f64);
            let base = o * p.red * p.inner + i;
            for r in 0..p.red {
                let v = f64::from(x[base + r * p.inner]);
                sum += v;
                abs += v.abs();
            }
            let tol = depth * u * abs;
            let got = f64::from(out[o * p.inner + i]);
            let err = (got - sum).abs();
            let ok = got.is_finite() && err <= tol;
            if got.is_finite() {
                max_err = max_err.max(err);
                if tol > 0.0 {
                    max_ratio = max_ratio.max(err / tol);
                }
            }
            if !ok {
                bad += 1;
                if first.len() < 5 {
                    let at = if p.inner == 1 { format!("[{o}]") } else { format!("[{o},{i}]") };
                    let g = if out[o * p.inner + i].to_bits() == F32_SENTINEL { "unwritten".to_string() } else { format!("{got}") };
                    first.push(format!("{at}={g} want {sum} (tol {tol:.3e})"));
                }
            }
        }
    }
    let n = p.out_len();
    let clobbered = out[n..].iter().filter(|v| v.to_bits() != F32_SENTINEL).count();
    if clobbered > 0 {
        bad += clobbered;
        first.push(format!("{clobbered} of the {GUARD} elements after the output were written (out of bounds)"));
    }
    (
        bad,
        format!(
            "{n} outputs: bad={bad} max_abs_err={max_err:.3e} max_err/tol={max_ratio:.3}{}",
            if first.is_empty() { String::new() } else { format!("; first: {}", first.join(", ")) }
        ),
    )
}

/// GB/s of a device-to-device copy of `src` (2 x bytes / median time): the bandwidth reference.
pub(crate) fn memcpy_gbps<T: DeviceElem>(stream: &Stream, src: &DeviceBuffer<T>, iters: usize) -> Result<f64, RuntimeError> {
    let mut dst = DeviceBuffer::<T>::zeros(stream, src.len())?;
    dst.copy_from_device(stream, src)?; // warm-up
    let ms = f64::from(stream.median_ms(iters, || dst.copy_from_device(stream, src))?);
    Ok(2.0 * src.size_bytes() as f64 / (ms * 1e-3) / 1e9)
}

// ---- predicated_add ----------------------------------------------------------------------------

/// Shapes of `cute-run predicated-add` without `--shape`: tails in both modes, a single element,
/// exactly one tile (4x32), and M, N not multiples of the tile.
const PREDICATED_SHAPES: [&str; 6] = ["1x1", "3x5", "1000x1000", "1023x33", "4x32", "4096x4097"];

/// `cute-run predicated-add CUBIN`: host `predicated_add` of samples/predicated_add.cute, C = A + B
/// for f32 MxN row-major tensors of ANY shape (the kernel predicates with an identity tensor, so
/// no shape is refused). Offline, every shape's call is evaluated on the plan (accepted; grid
/// ceil(M/4) x ceil(N/32), block 32x4). On the device, every element is compared bit-exactly with
/// the f32 sum, and C sits between two guard regions of `GUARD` sentinels that must stay untouched.
/// `--bench` shapes also get GB/s (3*M*N*4 bytes / median time) next to a device-to-device memcpy
/// of the same bytes, printed as `RESULT host=...` lines like `host-add`'s.
pub(crate) fn predicated_add(o: &Opts) -> Result<Outcome, RuntimeError> {
    const NAME: &str = "predicated_add";
    let cases = shapes(o, "--shape", &PREDICATED_SHAPES)?;
    let bench = shapes(o, "--bench", &[])?;
    let iters = o.num("--iters", 20)?.max(1);
    let seed = seed(o)?;
    let manifest = Manifest::from_file(&o.cubin)?
        .ok_or_else(|| RuntimeError::NoManifest(format!("{} has no cutec manifest", o.cubin)))?;
    let plan = HostPlan::new(&manifest, NAME)?;
    let mn = |shape: &[i64]| match shape {
        [m, n] => Ok((*m, *n)),
        _ => Err(RuntimeError::InvalidArgument(format!("shape {}: write MxN", shape_name(shape)))),
    };
    let mut t = Tally::default();
    for shape in cases.iter().chain(&bench) {
        let (m, n) = mn(shape)?;
        let bytes = len_of(shape)? as u64 * 4;
        let v = |k| Arg::tensor(TensorView::new(fake_ptr(k), DType::F32, &[m, n], &[n, 1]).with_bytes(bytes));
        let label = format!("{NAME} f32 {m}x{n} (plan, offline)");
        match plan.evaluate(&[v(0), v(1), v(2)]) {
            Ok(launches) => {
                let want_grid = (((m + 3) / 4) as u32, ((n + 31) / 32) as u32, 1);
                let got: Vec<String> =
                    launches.iter().map(|l| format!("{} grid {:?} block {:?}", l.kernel, l.config.grid, l.config.block)).collect();
                let ok = launches.len() == 1 && launches[0].config.grid == want_grid && launches[0].config.block == (32, 4, 1);
                t.check(
                    ok,
                    &label,
                    &if ok {
                        format!("accepted: {} (4x32 tiles cover the tensor)", got.join("; "))
                    } else {
                        format!("want one launch with grid {want_grid:?} block (32, 4, 1), got {}", got.join("; "))
                    },
                );
            }
            Err(e) if is_refusal(&e) => t.fail(&label, &format!("refused, but the kernel predicates every shape: {e}")),
            Err(e) => return Err(e),
        }
    }
    let stream = match open_device() {
        Ok((_dev, stream)) => stream,
        Err(e) if e.is_unavailable() => {
            t.skip(&format!("{NAME} (device)"), &format!("{} cases: {e}", cases.len() + bench.len()));
            return Ok(t.finish());
        }
        Err(e) => return Err(e),
    };
    let module = Module::load(stream.device(), o.cubin.as_str())?;
    let host = module.host(NAME)?;
    println!("seed: {seed}");
    println!(
        "reference: c = a + b in f32 on the CPU (one IEEE add: bit-exact), a and b uniform in [-1,1); C lies in \
         a buffer with {GUARD} sentinel elements before and {GUARD} after it, which must stay untouched"
    );
    let sentinel = f32::from_bits(F32_SENTINEL);
    let all: Vec<(Vec<i64>, bool)> = cases.into_iter().map(|s| (s, false)).chain(bench.into_iter().map(|s| (s, true))).collect();
    let mut results = Vec::new();
    for (shape, timed) in &all {
        let (m, n) = mn(shape)?;
        let case = format!("{NAME} f32 {m}x{n}");
        let len = len_of(shape)?;
        let mut rng = Rng::new(seed ^ (len as u64).rotate_left(17) ^ m as u64);
        let a = rng.vec_f32(len, -1.0, 1.0);
        let b = rng.vec_f32(len, -1.0, 1.0);
        let da = DeviceBuffer::from_host(&stream, &a)?;
        let db = DeviceBuffer::from_host(&stream, &b)?;
        let dc = DeviceBuffer::from_host(&stream, &vec![sentinel; GUARD + len + GUARD])?;
        // C starts GUARD elements into its buffer; the view's memory is exactly the tensor.
        let cview = TensorView::new(dc.ptr() + (GUARD * 4) as u64, DType::F32, &[m, n], &[n, 1]).with_bytes(len as u64 * 4);
        let args = [Arg::tensor(da.view(&[m, n], &[n, 1])), Arg::tensor(db.view(&[m, n], &[n, 1])), Arg::tensor(cview)];
        match pre_call(&host, &args)? {
            Pre::Go => {}
            Pre::Refused(msg) => {
                t.fail(&case, &format!("refused, but the kernel predicates every shape: {msg}"));
                continue;
            }
        }
        host.call(&stream, &args)?;
        let out = dc.to_host(&stream)?;
        let (front, rest) = out.split_at(GUARD);
        let (c, back) = rest.split_at(len);
        let (mut bad, mut unwritten) = (0usize, 0usize);
        let mut first = Vec::new();
        for i in 0..len {
            let want = a[i] + b[i];
            if c[i].to_bits() != want.to_bits() {
                bad += 1;
                if c[i].to_bits() == F32_SENTINEL {
                    unwritten += 1;
                }
                if first.len() < 5 {
                    first.push(format!("[{},{}]=0x{:08x} want 0x{:08x}", i as i64 / n, i as i64 % n, c[i].to_bits(), want.to_bits()));
                }
            }
        }
        let before = front.iter().filter(|x| x.to_bits() != F32_SENTINEL).count();
        let after = back.iter().filter(|x| x.to_bits() != F32_SENTINEL).count();
        if before + after > 0 {
            first.push(format!("guard written: {before} of {GUARD} before C, {after} of {GUARD} after C (out of bounds)"));
        }
        let ok = bad == 0 && before + after == 0;
        let detail = format!(
            "{len} elements: mismatches={bad} (bit-exact; unwritten={unwritten}) guard_written={} of {}{}",
            before + after,
            2 * GUARD,
            if first.is_empty() { String::new() } else { format!("; first: {}", first.join(", ")) }
        );
        t.check(ok, &case, &detail);
        if *timed {
            let bytes = 3.0 * len as f64 * 4.0;
            // The reference: a device-to-device copy of the same byte count (as host-add).
            let memcpy = {
                let src = DeviceBuffer::<f32>::zeros(&stream, 3 * len)?;
                memcpy_gbps(&stream, &src, iters)?
            };
            host.call(&stream, &args)?; // warm-up
            let ms = f64::from(stream.median_ms(iters, || host.call(&stream, &args))?);
            let gbps = bytes / (ms * 1e-3) / 1e9;
            let ratio = gbps / memcpy;
            println!(
                "{case}: time_median_us={:.2} bandwidth_gbps={gbps:.1} (3*M*N*4 bytes / median of {iters} calls after a warm-up) \
                 memcpy_gbps={memcpy:.1} ratio={ratio:.3}",
                ms * 1e3
            );
            results.push(format!(
                "RESULT host={NAME} dtype=f32 m={m} n={n} mismatches={bad} us={:.2} gbps={gbps:.1} memcpy_gbps={memcpy:.1} ratio={ratio:.3}",
                ms * 1e3
            ));
        }
    }
    for r in &results {
        println!("{r}");
    }
    Ok(t.finish())
}

// ---- printf samples ----------------------------------------------------------------------------

/// What a case's output (its stdout) must be.
enum Check {
    /// Exactly these lines, nothing else.
    Exact(&'static [&'static str]),
    /// These lines, in this order (other lines may come between).
    Lines(&'static [&'static str]),
    /// This line exactly this many times.
    Count(&'static str, usize),
    /// The `print_tensor` value lines (`[v, v, ...]`), in order, each value within 1e-5 (+1e-6
    /// relative); `sorted`: compare each line's values as a multiset.
    Tensors(Vec<Vec<f64>>, bool),
    /// These lines (built at run time), in this order, each exactly once (other lines may come
    /// between).
    LinesOnce(Vec<String>),
    /// The first `print_tensor`'s output line by line: the numbers of each line from its `[` to
    /// the line that closes it (CuTe's nested form: which values share a printed row).
    TensorRows(Vec<Vec<f64>>),
}

/// One case of a printf sample.
struct Case {
    /// The host function or kernel run.
    id: &'static str,
    /// i32 scalar arguments of a host function.
    scalars: &'static [i32],
    /// The host launches nothing: it also runs without a device (HostPlan::run_without_device).
    offline: bool,
    checks: Vec<Check>,
}

fn case(id: &'static str, scalars: &'static [i32], offline: bool, checks: Vec<Check>) -> Case {
    Case { id, scalars, offline, checks }
}

const SAMPLES: [&str; 8] =
    ["four_ways_copy", "hello_world", "cuda_graph", "printing", "layout_algebra", "numeric_types", "tensor_ssa", "tensors"];

/// samples/tensors.cute, example 1: x = arange(24) as (4,3,2):(6,2,1), so x(i,j,k) = 6i + 2j + k.
/// CuTe prints the last mode outermost, then the rows of mode 0, each holding mode 1:
/// `[[[ 0, 2, 4 ], [ 6, 8, 10 ], [ 12, 14, 16 ], [ 18, 20, 22 ]], [[ 1, 3, 5 ], ...]]]`.
fn tensors_example1_rows() -> Vec<Vec<f64>> {
    (0..2).flat_map(|k| (0..4).map(move |i| (0..3).map(|j| f64::from(6 * i + 2 * j + k)).collect())).collect()
}

/// samples/tensors.cute, example 2 (verbose): one line `\t(i,j)= value` per coordinate of
/// x = arange(12) as (4,3):(3,1), in row order; value = 3i + j.
fn tensors_example2_lines() -> Vec<String> {
    let mut v = vec!["Verbose output:".to_string()];
    v.extend((0..4).flat_map(|i| (0..3).map(move |j| format!("\t({i},{j})= {}.000000", 3 * i + j))));
    v
}

fn cases_of(sample: &str) -> Option<Vec<Case>> {
    use Check::*;
    let iota8 = || Tensors(vec![(8..16).map(f64::from).collect()], false);
    let same = |v: f64, n: usize| vec![v; n];
    Some(match sample {
        "four_ways_copy" => (1..=4)
            .map(|k| case(["cute_copy_1", "cute_copy_2", "cute_copy_3", "cute_copy_4"][k - 1], &[], false, vec![iota8()]))
            .collect(),
        "hello_world" => vec![case(
            "hello_world",
            &[],
            false,
            vec![Exact(&["hello world", "Hello world"])],
        )],
        "cuda_graph" => vec![case(
            "hello_world",
            &[],
            false,
            vec![Lines(&["graph: captured 2 calls of host hello_world; replaying once", "Hello world", "Hello world"]), Count("Hello world", 2)],
        )],
        "printing" => vec![
            case("print_example", &[8], true, vec![Exact(&[">?? 8", ">?? 2", ">?? (8,2):(1,8)"])]),
            case("format_string_example", &[8], true, vec![Exact(&[])]),
            case("print_in_kernel", &[], false, vec![Exact(&["block 0 of 1: x = (4,8):(8,1), x[1,2] = 10.000000"])]),
        ],
        "layout_algebra" => vec![
            case("coalesce_example", &[6], true, vec![Exact(&[">?? Original: (2,(1,6)):(1,(6,2))", ">?? Coalesced: 12:1"])]),
            case("bymode_coalesce_example", &[], true, vec![Exact(&[])]),
            case("composition_example", &[8], true, vec![Exact(&[">?? Layout A: (6,2):(8,2)", ">?? Composition R: ((2,2),3):((24,2),8)"])]),
            case("composition_static", &[], true, vec![Exact(&[])]),
            case(
                "bymode_composition_example",
                &[12, 4, 8, 59, 13, 1],
                true,
                vec![Exact(&[">?? Layout A: (12,(4,8)):(59,(13,1))", ">?? By-mode Composition Result: (3,(4,2)):(59,(13,1))"])],
            ),
            case("logical_divide_1d_example", &[], true, vec![Exact(&[])]),
            case("logical_divide_2d_example", &[], true, vec![Exact(&[])]),
            case("product_examples", &[], true, vec![Exact(&[])]),
            case("tv_layout_example", &[], true, vec![Exact(&[])]),
        ],
        "numeric_types" => vec![
            case("run_bar", &[], false, vec![Exact(&["a(dynamic) = 3.140000", "b(dynamic) = 5"])]),
            case(
                "run_type_conversion",
                &[],
                false,
                vec![Exact(&[
                    "Int32(42) => Float32(42.000000)",
                    "Float32(3.140000) => Int32(3)",
                    "Int32(127) => Int8(127)",
                    "Int32(300) => Int8(44) (truncated due to range limitation)",
                ])],
            ),
            case(
                "run_operator_demo",
                &[],
                false,
                vec![Exact(&[
                    "a: Int32(10), b: Int32(3)",
                    "x: Float32(5.500000)",
                    "a + b = 13",
                    "x * 2 = 11.000000",
                    "a + x = 15.500000 (Int32 + Float32 promotes to Float32)",
                    "a / b = 3",
                    "x / 2.0 = 2.750000",
                    "a > b = 1",
                    "a & b = 2",
                    "-a = -10",
                    "~a = -11",
                    "-7 / 2 = -4, -7 % 2 = 1",
                    "7 / -2 = -3, 7 % -2 = 1",
                ])],
            ),
        ],
        "tensor_ssa" => vec![
            case("run_load_and_store", &[], false, vec![Tensors(vec![same(2.0, 12)], false)]),
            case(
                "apply_slice",
                &[],
                false,
                vec![Tensors(vec![vec![3.0, 4.0, 5.0, 9.0, 10.0, 11.0, 15.0, 16.0, 17.0, 21.0, 22.0, 23.0]], true)],
            ),
            case(
                "binary_op_1",
                &[],
                false,
                vec![Tensors(vec![same(3.0, 3), same(-1.0, 3), same(2.0, 3), same(0.5, 3), same(0.0, 3), same(1.0, 3)], false)],
            ),
            case("run_binary_op_2", &[], false, vec![Tensors(vec![same(3.0, 3), same(-1.0, 3), same(2.0, 3), same(0.5, 3)], false)]),
            case("binary_op_3", &[], false, vec![Exact(&[])]),
            case("binary_op_4", &[], false, vec![Exact(&[])]),
            case("unary_op_1", &[], false, vec![Tensors(vec![same(2.0, 3), same(4f64.sin(), 3), same(16.0, 3)], false)]),
            case("reduction_op", &[], false, vec![Lines(&["21.000000"]), Tensors(vec![vec![6.0, 15.0], vec![6.0, 8.0, 10.0]], false)]),
        ],
        // x = arange(24) / arange(12) (child_case); see the helpers above for the expected forms.
        "tensors" => vec![
            case(
                "tensor_print_example1",
                &[],
                false,
                vec![
                    Lines(&["Basic output:"]),
                    Count("Basic output:", 1),
                    // The values as a multiset first (a wrong order alone is then reported as such).
                    Tensors(vec![(0..24).map(f64::from).collect()], true),
                    Tensors(vec![tensors_example1_rows().concat()], false),
                    TensorRows(tensors_example1_rows()),
                ],
            ),
            case("tensor_print_example2", &[], false, vec![LinesOnce(tensors_example2_lines()), Count("Verbose output:", 1)]),
            case(
                "tensor_print_example3",
                &[],
                false,
                vec![
                    Count("Slice output:", 2),
                    // x[(_, 0)] = column 0, then x[(1, _)] = row 1, in launch order.
                    Tensors(vec![vec![0.0, 3.0, 6.0, 9.0], vec![3.0, 4.0, 5.0]], false),
                ],
            ),
        ],
        _ => return None,
    })
}

/// The sample a cubin was built from, from the names in its manifest.
fn detect_sample(m: &Manifest) -> Option<&'static str> {
    let host = |h: &str| m.host(h).is_some();
    let kernel = |k: &str| m.kernel(k).is_some();
    if host("cute_copy_1") {
        Some("four_ways_copy")
    } else if kernel("hello_kernel") {
        Some("hello_world")
    } else if kernel("hello_world_kernel") {
        Some("cuda_graph")
    } else if host("print_example") {
        Some("printing")
    } else if host("coalesce_example") {
        Some("layout_algebra")
    } else if host("run_bar") {
        Some("numeric_types")
    } else if kernel("apply_slice") {
        Some("tensor_ssa")
    } else if host("tensor_print_example1") {
        Some("tensors")
    } else if host("predicated_add") {
        Some("predicated_add")
    } else {
        None
    }
}

/// The values of each `print_tensor` in `out`, in printed order: after each line starting with
/// `tensor` (the type and layout), the numbers inside the next bracketed block (`[...]`, nested or
/// not, over one or several lines). Works for the flat form (`[v, v, ...]`) and CuTe's nested one.
fn tensor_values(out: &str) -> Result<Vec<Vec<f64>>, String> {
    let mut all = Vec::new();
    let mut offset = 0;
    for line in out.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        if !line.trim_start().starts_with("tensor") {
            continue;
        }
        let Some(open) = out[start..].find('[') else { return Err(format!("print_tensor without values: {:?}", line.trim_end())) };
        let mut depth = 0usize;
        let mut body = String::new();
        let mut closed = false;
        for ch in out[start + open..].chars() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        closed = true;
                        break;
                    }
                }
                c => body.push(c),
            }
            if ch == '[' || ch == ']' {
                body.push(' ');
            }
        }
        if !closed {
            return Err(format!("unclosed print_tensor values after {:?}", line.trim_end()));
        }
        let vals = numbers(&body).map_err(|e| format!("{e} (print_tensor after {:?})", line.trim_end()))?;
        all.push(vals);
    }
    Ok(all)
}

/// The numbers in `s` (separated by anything that cannot be part of one: brackets, commas, spaces).
fn numbers(s: &str) -> Result<Vec<f64>, String> {
    s.split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E' | 'i' | 'n' | 'f' | 'a')))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<f64>().map_err(|_| format!("`{t}` is not a number")))
        .collect()
}

/// The first `print_tensor` in `out`, line by line: the numbers of each line from the first `[`
/// after its `tensor` header line to the line that closes that bracket.
fn tensor_rows(out: &str) -> Result<Vec<Vec<f64>>, String> {
    let mut lines = out.lines().skip_while(|l| !l.trim_start().starts_with("tensor"));
    let header = lines.next().ok_or("no print_tensor output")?;
    // The values start at the header's `[` if it has one (nothing before it counts).
    let first = header.find('[').map(|p| &header[p..]);
    let (mut depth, mut opened, mut rows) = (0i64, false, Vec::new());
    for l in first.into_iter().chain(lines) {
        if !opened && !l.contains('[') {
            continue;
        }
        opened = true;
        depth += l.matches('[').count() as i64 - l.matches(']').count() as i64;
        rows.push(numbers(l).map_err(|e| format!("{e} in print_tensor line {l:?}"))?);
        if depth <= 0 {
            return Ok(rows);
        }
    }
    Err(format!("print_tensor after {:?}: no closed [...] block", header.trim_end()))
}

/// The problems of `out` against `checks` (empty: it passes).
fn check_output(out: &str, checks: &[Check]) -> Vec<String> {
    let lines: Vec<&str> = out.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut problems = Vec::new();
    for c in checks {
        match c {
            Check::Exact(want) => {
                if lines.as_slice() != *want {
                    problems.push(format!("expected exactly {want:?}, got {lines:?}"));
                }
            }
            Check::Lines(want) => {
                let mut it = lines.iter();
                for w in *want {
                    if !it.any(|l| l == w) {
                        problems.push(format!("missing line {w:?} (in order) in {lines:?}"));
                        break;
                    }
                }
            }
            Check::Count(w, n) => {
                let got = lines.iter().filter(|l| *l == w).count();
                if got != *n {
                    problems.push(format!("line {w:?} printed {got} times, expected {n}"));
                }
            }
            Check::LinesOnce(want) => {
                let mut it = lines.iter();
                for w in want {
                    if !it.any(|l| l == w) {
                        problems.push(format!("missing line {w:?} (in order) in {lines:?}"));
                        break;
                    }
                }
                for w in want {
                    let n = lines.iter().filter(|l| **l == w.as_str()).count();
                    if n != 1 {
                        problems.push(format!("line {w:?} printed {n} times, expected once"));
                    }
                }
            }
            Check::TensorRows(want) => match tensor_rows(out) {
                Err(e) => problems.push(e),
                Ok(got) => {
                    let same = got.len() == want.len()
                        && got.iter().zip(want).all(|(g, w)| g.len() == w.len() && g.iter().zip(w).all(|(a, b)| (a - b).abs() <= 1e-5 + 1e-6 * b.abs()));
                    if !same {
                        problems.push(format!("print_tensor rows: got {got:?}, want {want:?}"));
                    }
                }
            },
            Check::Tensors(want, sorted) => {
                let got = match tensor_values(out) {
                    Ok(g) => g,
                    Err(e) => {
                        problems.push(e);
                        continue;
                    }
                };
                if got.len() != want.len() {
                    problems.push(format!("expected {} print_tensor outputs, got {}: {got:?}", want.len(), got.len()));
                    continue;
                }
                for (k, (g, w)) in got.iter().zip(want).enumerate() {
                    let (mut g, mut w) = (g.clone(), w.clone());
                    if *sorted {
                        g.sort_by(f64::total_cmp);
                        w.sort_by(f64::total_cmp);
                    }
                    let ok = g.len() == w.len() && g.iter().zip(&w).all(|(a, b)| (a - b).abs() <= 1e-5 + 1e-6 * b.abs());
                    if !ok {
                        problems.push(format!("print_tensor line {k}: got {g:?}, want {w:?}{}", if *sorted { " (as a multiset)" } else { "" }));
                    }
                }
            }
        }
    }
    problems
}

fn summarize(out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    match lines.len() {
        0 => "no output".to_string(),
        1 => format!("printed {:?}", lines[0]),
        n => format!("printed {n} lines as expected"),
    }
}

/// `cute-run sample CUBIN [NAME]` / `cute-run copy4 CUBIN`.
pub(crate) fn sample(o: &Opts, forced: Option<&str>) -> Result<Outcome, RuntimeError> {
    let manifest = Manifest::from_file(&o.cubin)?
        .ok_or_else(|| RuntimeError::NoManifest(format!("{} has no cutec manifest", o.cubin)))?;
    let name = match forced.or(o.positional.first().map(String::as_str)) {
        Some(n) => n.to_string(),
        None => detect_sample(&manifest)
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("cannot tell which sample {} is; name it: {}", o.cubin, SAMPLES.join(", "))))?
            .to_string(),
    };
    if name == "predicated_add" {
        // A compute sample, not a printf one: its own check, with its default shapes.
        return predicated_add(o);
    }
    let cases = cases_of(&name)
        .ok_or_else(|| RuntimeError::InvalidArgument(format!("unknown sample `{name}`; samples: {}", SAMPLES.join(", "))))?;
    let gpu = match Device::count() {
        Ok(n) => n > 0,
        Err(e) if e.is_unavailable() => false,
        Err(e) => return Err(e),
    };
    println!("sample: {name} ({}; {})", o.cubin, if gpu { "GPU found" } else { "no CUDA driver/GPU: offline cases only" });
    let mut t = Tally::default();
    for c in &cases {
        // Offline: hosts that launch nothing run without a device (the plan's prints).
        if c.offline {
            let label = format!("{name}/{} (offline)", c.id);
            let plan = cute_runtime::plan::HostPlan::new(&manifest, c.id)?;
            let args: Vec<Arg> = c.scalars.iter().map(|&v| Arg::i32(v)).collect();
            let mut buf = Vec::new();
            match plan.run_without_device(&args, &mut buf) {
                Ok(()) => {
                    let out = String::from_utf8_lossy(&buf).into_owned();
                    print!("{out}");
                    let problems = check_output(&out, &c.checks);
                    t.check(problems.is_empty(), &label, &if problems.is_empty() { summarize(&out) } else { problems.join("; ") });
                }
                Err(e) => t.fail(&label, &e.to_string()),
            }
        }
        let label = format!("{name}/{}", c.id);
        if !gpu {
            if !c.offline {
                t.skip(&label, "no CUDA driver/GPU");
            }
            continue;
        }
        // On the device, in a child process: its stdout holds the host prints and the device
        // printf output (written by the driver when the context synchronizes).
        let (code, out, err) = run_child(&name, c.id, &o.cubin)?;
        print!("{out}");
        for l in err.lines() {
            println!("  (stderr) {l}");
        }
        if let Ok(ts) = tensor_values(&out) {
            // One line per print_tensor, independent of its print format (for grep checks).
            for (k, v) in ts.iter().enumerate() {
                let vals: Vec<String> = v.iter().map(|x| format!("{x:.6}")).collect();
                println!("tensor-values {label} #{k}: {}", vals.join(" "));
            }
        }
        let label = format!("{label} (device)");
        match code {
            Some(0) => {
                let problems = check_output(&out, &c.checks);
                t.check(problems.is_empty(), &label, &if problems.is_empty() { summarize(&out) } else { problems.join("; ") });
            }
            Some(77) => t.skip(&label, "the child found no CUDA driver/GPU"),
            Some(c) => t.fail(&label, &format!("the child exited with {c}")),
            None => t.fail(&label, "the child was killed (timeout or signal)"),
        }
    }
    Ok(t.finish())
}

const CHILD_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `cute-run __case SAMPLE ID CUBIN`; (exit code, stdout, stderr).
fn run_child(sample: &str, id: &str, cubin: &str) -> Result<(Option<i32>, String, String), RuntimeError> {
    let exe = std::env::current_exe().map_err(|e| RuntimeError::InvalidArgument(format!("cannot find cute-run itself: {e}")))?;
    let mut child = Command::new(exe)
        .args(["__case", sample, id, cubin])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RuntimeError::InvalidArgument(format!("cannot start a child cute-run: {e}")))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out_t = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err_t = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if start.elapsed() > CHILD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(RuntimeError::InvalidArgument(format!("waiting for the child cute-run: {e}"))),
        }
    };
    let out = out_t.join().unwrap_or_default();
    let err = err_t.join().unwrap_or_default();
    Ok((status.and_then(|s| s.code()), out, err))
}

/// `cute-run __case SAMPLE ID CUBIN` (internal): runs one case on the device, synchronizes, exits.
/// Read-back checks print `PASS|FAIL readback ...` lines and make the exit code 1 on a mismatch.
pub(crate) fn child_case(sample: &str, id: &str, cubin: &str) -> Result<Outcome, RuntimeError> {
    let cases = cases_of(sample).ok_or_else(|| RuntimeError::InvalidArgument(format!("unknown sample `{sample}`")))?;
    let c = cases.iter().find(|c| c.id == id).ok_or_else(|| RuntimeError::InvalidArgument(format!("sample `{sample}` has no case `{id}`")))?;
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, cubin)?;
    let one = LaunchConfig { grid: (1, 1, 1), block: (1, 1, 1), shared_mem_bytes: 0 };
    let mut ok = true;
    // Inputs that must outlive the launches (until the synchronization below).
    let mut keep: Vec<DeviceBuffer<f32>> = Vec::new();
    match (sample, id) {
        ("four_ways_copy", _) => {
            // mA[i,j] = i*128 + j: thread 1 holds row 0, columns 8..15.
            let a: Vec<f32> = (0..8 * 128).map(|v| v as f32).collect();
            let da = DeviceBuffer::from_host(&stream, &a)?;
            module.host(id)?.call(&stream, &[Arg::tensor(da.view(&[8, 128], &[128, 1]))])?;
        }
        ("cuda_graph", _) => {
            let host = module.host(id)?;
            let graph = stream.capture(|s| {
                host.call(s, &[])?;
                host.call(s, &[])
            })?;
            stream.synchronize()?;
            dev.synchronize()?;
            println!("graph: captured 2 calls of host {id}; replaying once");
            graph.launch(&stream)?;
        }
        ("printing", "print_in_kernel") => {
            let mut x = vec![0f32; 32];
            x[8 + 2] = 10.0; // x[1,2] of (4,8):(8,1)
            let dx = DeviceBuffer::from_host(&stream, &x)?;
            let cfg = LaunchConfig { grid: (1, 1, 1), block: (32, 1, 1), shared_mem_bytes: 0 };
            module.kernel(id)?.launch_checked(&stream, cfg, &[Arg::tensor(dx.view(&[4, 8], &[8, 1]))])?;
        }
        ("tensor_ssa", _) => ok = tensor_ssa_case(&module, &stream, id, one)?,
        ("tensors", _) => {
            // x = arange(24) as (4,3,2):(6,2,1) for example 1, arange(12) as (4,3):(3,1) otherwise.
            let (shape, stride): (&[i64], &[i64]) =
                if id == "tensor_print_example1" { (&[4, 3, 2], &[6, 2, 1]) } else { (&[4, 3], &[3, 1]) };
            let n: i64 = shape.iter().product();
            let x: Vec<f32> = (0..n).map(|v| v as f32).collect();
            let dx = DeviceBuffer::from_host(&stream, &x)?;
            module.host(id)?.call(&stream, &[Arg::tensor(dx.view(shape, stride))])?;
            keep.push(dx);
        }
        _ => {
            let args: Vec<Arg> = c.scalars.iter().map(|&v| Arg::i32(v)).collect();
            module.host(id)?.call(&stream, &args)?;
        }
    }
    stream.synchronize()?;
    dev.synchronize()?;
    drop(keep);
    Ok(if ok { Outcome::Pass } else { Outcome::Fail })
}

fn readback<T: PartialEq + std::fmt::Debug>(id: &str, got: &[T], want: &[T]) -> bool {
    let ok = got == want;
    // On stderr, so that stdout holds only what the sample prints.
    eprintln!("{} readback {id}: got {got:?}{}", if ok { "PASS" } else { "FAIL" }, if ok { String::new() } else { format!(", want {want:?}") });
    ok
}

fn tensor_ssa_case(module: &Module, stream: &Stream, id: &str, one: LaunchConfig) -> Result<bool, RuntimeError> {
    let f32s = |v: &[f32]| DeviceBuffer::from_host(stream, v);
    let nan = f32::from_bits(F32_SENTINEL);
    let t = |b: &DeviceBuffer<f32>, shape: &[i64], stride: &[i64]| Arg::tensor(b.view(shape, stride));
    let v3 = |b: &DeviceBuffer<f32>| t(b, &[3], &[1]);
    Ok(match id {
        "run_load_and_store" => {
            let (res, a, b) = (f32s(&[nan; 12])?, f32s(&[1.0; 12])?, f32s(&[1.0; 12])?);
            let s = [4, 1];
            module.host(id)?.call(stream, &[t(&res, &[3, 4], &s), t(&a, &[3, 4], &s), t(&b, &[3, 4], &s)])?;
            readback(id, &res.to_host(stream)?, &[2.0; 12])
        }
        "apply_slice" => {
            let src: Vec<f32> = (0..24).map(|v| v as f32).collect();
            let (src, dst) = (f32s(&src)?, f32s(&[nan; 12])?);
            module.kernel(id)?.launch_checked(stream, one, &[t(&src, &[4, 2, 3], &[6, 3, 1]), t(&dst, &[4, 3], &[3, 1])])?;
            readback(id, &dst.to_host(stream)?, &[3.0, 4.0, 5.0, 9.0, 10.0, 11.0, 15.0, 16.0, 17.0, 21.0, 22.0, 23.0])
        }
        "binary_op_1" => {
            let (res, a, b) = (f32s(&[nan; 3])?, f32s(&[1.0; 3])?, f32s(&[2.0; 3])?);
            module.kernel(id)?.launch_checked(stream, one, &[v3(&res), v3(&a), v3(&b)])?;
            readback(id, &res.to_host(stream)?, &[1.0; 3]) // the last store: a % b
        }
        "run_binary_op_2" => {
            let (res, a) = (f32s(&[nan; 3])?, f32s(&[1.0; 3])?);
            module.host(id)?.call(stream, &[v3(&res), v3(&a)])?;
            readback(id, &res.to_host(stream)?, &[0.5; 3]) // the last store: a / 2.0
        }
        "binary_op_3" => {
            let res = DeviceBuffer::from_host(stream, &[0xaau8; 3])?;
            let (a, b) = (f32s(&[1.0, 2.0, 3.0])?, f32s(&[2.0, 1.0, 4.0])?);
            let r = Arg::tensor(res.view(&[3], &[1]).with_dtype(DType::Bool));
            module.kernel(id)?.launch_checked(stream, one, &[r, v3(&a), v3(&b)])?;
            readback(id, &res.to_host(stream)?, &[0u8, 1, 0])
        }
        "binary_op_4" => {
            let res = DeviceBuffer::from_host(stream, &[-1i32; 3])?;
            let a = DeviceBuffer::from_host(stream, &[1i32, 2, 3])?;
            let b = DeviceBuffer::from_host(stream, &[2i32, 2, 4])?;
            let v = |x: &DeviceBuffer<i32>| Arg::tensor(x.view(&[3], &[1]));
            module.kernel(id)?.launch_checked(stream, one, &[v(&res), v(&a), v(&b)])?;
            readback(id, &res.to_host(stream)?, &[3i32, 0, 7])
        }
        "unary_op_1" => {
            let (res, a) = (f32s(&[nan; 3])?, f32s(&[4.0; 3])?);
            module.kernel(id)?.launch_checked(stream, one, &[v3(&res), v3(&a)])?;
            readback(id, &res.to_host(stream)?, &[16.0; 3]) // the last store: exp2(4)
        }
        "reduction_op" => {
            let a = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?;
            module.kernel(id)?.launch_checked(stream, one, &[t(&a, &[2, 3], &[3, 1])])?;
            true
        }
        other => return Err(RuntimeError::InvalidArgument(format!("tensor_ssa has no case `{other}`"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_checks() {
        let c = [Check::Tensors(vec![(8..16).map(f64::from).collect()], false)];
        let good = "tensor<ptr<f32, rmem, align<16>> o 8:1>\n[8.000000, 9.000000, 10.000000, 11.000000, 12.000000, 13.000000, 14.000000, 15.000000]\n";
        assert!(check_output(good, &c).is_empty());
        assert!(!check_output(&good.replace("9.000000", "9.500000"), &c).is_empty());
        assert!(!check_output("", &c).is_empty());
        // CuTe's nested form, flat and over several lines.
        let nested = "tensor(f32, rmem, align<16>) o 8:1, data=\n       [ 8.000000,  9.000000,  10.000000,  11.000000,  12.000000,  13.000000,  14.000000,  15.000000, ]\n";
        assert!(check_output(nested, &c).is_empty(), "{:?}", check_output(nested, &c));
        let mut rows = String::from("tensor(f32, rmem, align<16>) o (8,1,1):(1,8,8), data=\n       [[");
        for v in 8..16 {
            rows.push_str(&format!("{}[ {v}.000000, ]", if v == 8 { "" } else { ",\n         " }));
        }
        rows.push_str("]]\n");
        assert!(check_output(&rows, &c).is_empty(), "{rows}");
        let two = "21.000000\ntensor(f32, rmem, align<16>) o 2:1, data=\n       [ 6.000000,  15.000000, ]\ntensor(f32, rmem, align<16>) o 3:1, data=\n       [ -6.000000,  8.5e1,  10.000000, ]\n";
        assert_eq!(tensor_values(two).ok(), Some(vec![vec![6.0, 15.0], vec![-6.0, 85.0, 10.0]]));
        let e = [Check::Exact(&["hello world", "Hello world"])];
        assert!(check_output("hello world\nHello world\n", &e).is_empty());
        assert!(!check_output("Hello world\nhello world\n", &e).is_empty());
        assert!(check_output("", &[Check::Exact(&[])]).is_empty());
        assert!(check_output("x\nHello world\ny\nHello world\n", &[Check::Count("Hello world", 2)]).is_empty());
        assert!(!check_output("Hello world\n", &[Check::Count("Hello world", 2)]).is_empty());
        let s = [Check::Tensors(vec![vec![1.0, 2.0, 3.0]], true)];
        assert!(check_output("tensor<x>\n[3.000000, 1.000000, 2.000000]\n", &s).is_empty());
    }

    /// What the kernels of samples/tensors.cute print (their format strings, from
    /// `cutec build samples/tensors.cute --emit=ptx`, with CuTe's value order) passes the checks;
    /// wrong orders, rows and values do not.
    #[test]
    fn tensors_checks() {
        let cases = cases_of("tensors").unwrap();
        let checks = |id: &str| &cases.iter().find(|c| c.id == id).unwrap().checks;
        let f = |v: f64| format!("{v:.6}");
        // Example 1: (4,3,2):(6,2,1) over arange(24).
        let rows = tensors_example1_rows();
        let mut ex1 = String::from("Basic output:\ntensor(f32, gmem, align<4>) o (4,3,2):(6,2,1), data=\n");
        for (r, row) in rows.iter().enumerate() {
            let open = match r { 0 => "       [[[ ", 4 => "        [[ ", _ => "         [ " };
            let close = match r { 3 => " ]],", 7 => " ]]]", _ => " ]," };
            let vals: Vec<String> = row.iter().map(|&v| f(v)).collect();
            ex1.push_str(&format!("{open}{},{close}\n", vals.join(",  ")));
        }
        assert!(ex1.contains("[[[ 0.000000,  2.000000,  4.000000, ],\n         [ 6.000000,"), "{ex1}");
        assert!(check_output(&ex1, checks("tensor_print_example1")).is_empty(), "{:?}", check_output(&ex1, checks("tensor_print_example1")));
        // Row-major order (0, 1, 2 in the first row) has the right multiset but not CuTe's order:
        // the order and row checks fail, the multiset check passes.
        let mut k = 0;
        let mut swapped = String::new();
        for line in ex1.lines() {
            if line.contains(".000000") {
                let n = line.matches(".000000").count();
                let vals: Vec<String> = (k..k + n).map(|v| f(v as f64)).collect();
                k += n;
                let prefix: String = line.chars().take_while(|c| *c == ' ' || *c == '[').collect();
                let suffix: String = line.chars().rev().take_while(|c| *c == ' ' || *c == ']' || *c == ',').collect::<Vec<_>>().into_iter().rev().collect();
                swapped.push_str(&format!("{prefix}{}{suffix}\n", vals.join(",  ")));
            } else {
                swapped.push_str(line);
                swapped.push('\n');
            }
        }
        let p = check_output(&swapped, checks("tensor_print_example1"));
        assert!(p.len() == 2 && p.iter().all(|e| !e.contains("multiset")), "{swapped}\n{p:?}");
        // The right order on different lines (one row of 6) is caught by the row check alone.
        let joined = ex1.replacen(" ],\n         [ 6.000000", "  6.000000", 1);
        let p = check_output(&joined, checks("tensor_print_example1"));
        assert!(p.len() == 1 && p[0].starts_with("print_tensor rows"), "{p:?}");
        // Example 2, verbose: `\t(i,j)= v` lines.
        let mut ex2 = String::from("Verbose output:\ntensor(f32, gmem, align<4>) o (4,3):(3,1), data= (\n");
        for i in 0..4 {
            for j in 0..3 {
                ex2.push_str(&format!("\t({i},{j})= {}\n", f(f64::from(3 * i + j))));
            }
        }
        ex2.push_str(")\n");
        assert!(check_output(&ex2, checks("tensor_print_example2")).is_empty(), "{:?}", check_output(&ex2, checks("tensor_print_example2")));
        assert!(!check_output(&ex2.replace("\t(1,2)= 5.000000", "\t(1,2)= 6.000000"), checks("tensor_print_example2")).is_empty());
        assert!(!check_output(&ex2.replace("\t(3,2)= 11.000000\n", ""), checks("tensor_print_example2")).is_empty());
        let twice = format!("{ex2}\t(0,0)= 0.000000\n");
        assert!(!check_output(&twice, checks("tensor_print_example2")).is_empty());
        // Example 3: column 0, then row 1, each through a register fragment.
        let slice = |vals: &[f64]| {
            let v: Vec<String> = vals.iter().map(|&x| f(x)).collect();
            format!("Slice output:\ntensor(f32, rmem, align<16>) o ({}):(1), data=\n       [ {}, ]\n", vals.len(), v.join(",  "))
        };
        let ex3 = slice(&[0.0, 3.0, 6.0, 9.0]) + &slice(&[3.0, 4.0, 5.0]);
        assert!(check_output(&ex3, checks("tensor_print_example3")).is_empty(), "{:?}", check_output(&ex3, checks("tensor_print_example3")));
        let wrong = slice(&[0.0, 1.0, 2.0, 3.0]) + &slice(&[3.0, 4.0, 5.0]);
        assert!(!check_output(&wrong, checks("tensor_print_example3")).is_empty());
        assert!(!check_output(&slice(&[0.0, 3.0, 6.0, 9.0]), checks("tensor_print_example3")).is_empty());
    }

    #[test]
    fn tensor_rows_forms() {
        assert_eq!(tensor_rows("x\ntensor o 3:1, data=\n  [ 1.0,  2.0, ]\nafter [9]\n"), Ok(vec![vec![1.0, 2.0]]));
        assert_eq!(tensor_rows("tensor<f32> o 2:1 [1.5, -2e1]\n"), Ok(vec![vec![1.5, -20.0]]));
        assert_eq!(tensor_rows("tensor o (2,2):(1,2)\n[[ 1, 2 ],\n [ 3, 4 ]]\n[5]\n"), Ok(vec![vec![1.0, 2.0], vec![3.0, 4.0]]));
        assert!(tensor_rows("tensor o 2:1\n[ 1, 2,\n").is_err());
        assert!(tensor_rows("no tensor here\n").is_err());
    }

    #[test]
    fn f16_ulps() {
        assert_eq!(f16_ord(0x8000), f16_ord(0x0000));
        assert_eq!(f16_ord(0x3c01) - f16_ord(0x3c00), 1);
        assert_eq!(f16_ord(0x0001) - f16_ord(0x8001), 2);
        assert!(f16_is_nan(F16_SENTINEL));
    }

    #[test]
    fn every_sample_has_cases() {
        for s in SAMPLES {
            assert!(cases_of(s).is_some_and(|c| !c.is_empty()), "{s}");
        }
    }
}
