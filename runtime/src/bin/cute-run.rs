//! `cute-run`: the GPU test runner for cutec-compiled cubins.
//!
//! ```text
//! cute-run info
//! cute-run kernels CUBIN
//! cute-run manifest CUBIN
//! cute-run vector-add CUBIN [--n N] [--seed S] [--iters K] [--device D]
//! cute-run checked CUBIN [--static SCALE_CUBIN] [--n N]
//! cute-run graph CUBIN [--n N] [--replays R]
//! cute-run plan CUBIN [HOST] [--shape MxN[,M..]] [--scalar NAME=V]
//! cute-run host-add CUBIN [--host NAME]... [--dtype f16|f32] [--m M] [--n N] [--iters K]
//! cute-run host-refuse CUBIN HOST [--m M] [--n N]
//! ```
//!
//! Every sample is checked on the GPU from Python against torch references
//! (`python/tests/test_gpu_samples.py`, run by `scripts/gpu-suite`).
//!
//! Exit codes: 0 PASS, 1 FAIL (or runtime error), 2 usage error,
//! 77 SKIP (no CUDA driver/GPU on this machine).

use std::ops::RangeInclusive;
use std::process::ExitCode;

use cute_runtime::tma::TmaEncode;
use cute_runtime::{
    format_cuda_version, Arg, ArgList, DType, Device, DeviceBuffer, LaunchConfig, Manifest, Module, Rng, RuntimeError,
    Stream, TensorView,
};

const USAGE: &str = "\
usage:
  cute-run info
  cute-run kernels CUBIN            (signatures from the manifest: no GPU needed)
  cute-run manifest CUBIN           (the embedded manifest text: no GPU needed)
  cute-run vector-add CUBIN [--n N] [--seed S] [--iters K] [--device D]
  cute-run checked CUBIN [--static SCALE_CUBIN] [--n N]
                                    (checked launches: results, and every mismatch refused)
  cute-run graph CUBIN [--n N] [--replays R]
                                    (CUDA graph capture of checked launches, replayed)
  cute-run plan CUBIN [HOST] [--shape MxN[xK..][,SHAPE..]] [--scalar NAME=V]
                                    (a host function's launch plan; with --shape, evaluated for
                                     row-major tensors of that shape, or of one shape per tensor
                                     separated by commas: no GPU needed)
  cute-run host-add CUBIN [--host NAME]... [--dtype f16|f32] [--m M] [--n N] [--iters K] [--seed S]
                                            (a generic host: the instance of --dtype, default its first)
                                    (calls elementwise-add host functions on MxN tensors, checks
                                     every element, GB/s vs a device-to-device memcpy)
  cute-run host-refuse CUBIN HOST [--m M] [--n N]
                                    (a call that must be refused: partial tile; output untouched)

The samples' checks are Python tests (python/tests/test_gpu_samples.py).

exit codes: 0 PASS, 1 FAIL, 2 usage error, 77 SKIP (no CUDA driver/GPU)";

const EXIT_FAIL: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_SKIP: u8 = 77;

/// How a subcommand ended, short of a runtime error.
enum Outcome {
    Pass,
    Fail,
}

fn main() -> ExitCode {
    cute_abi::process::die_quietly_on_closed_pipe();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("info") if args.len() == 1 => info(),
        Some("kernels") if args.len() == 2 => kernels(&args[1]),
        Some("manifest") if args.len() == 2 => manifest(&args[1]),
        Some("checked") => match Opts::parse(&args[1..], &["--static", "--n"]) {
            Ok(o) => checked(&o),
            Err(msg) => return usage_error(&msg),
        },
        Some("graph") => match Opts::parse(&args[1..], &["--n", "--replays"]) {
            Ok(o) => graph(&o),
            Err(msg) => return usage_error(&msg),
        },
        Some("plan") => match plan_cmd(&args[1..]) {
            Ok(r) => r,
            Err(msg) => return usage_error(&msg),
        },
        Some("host-add") => match Opts::parse(&args[1..], &["--host", "--dtype", "--m", "--n", "--iters", "--seed"]) {
            Ok(o) => host_add(&o),
            Err(msg) => return usage_error(&msg),
        },
        Some("host-refuse") => match Opts::parse_n(&args[1..], &["--m", "--n"], 2..=2) {
            Ok(o) => host_refuse(&o),
            Err(msg) => return usage_error(&msg),
        },
        Some("vector-add") => match VectorAddOpts::parse(&args[1..]) {
            Ok(opts) => vector_add(&opts),
            Err(msg) => return usage_error(&msg),
        },
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => return usage_error(&format!("unknown or malformed command `{other}`")),
        None => return usage_error("no command given"),
    };
    match result {
        Ok(Outcome::Pass) => ExitCode::SUCCESS,
        Ok(Outcome::Fail) => ExitCode::from(EXIT_FAIL),
        Err(e) if e.is_unavailable() => {
            println!("SKIP: no CUDA driver/GPU: {e}");
            ExitCode::from(EXIT_SKIP)
        }
        Err(e) => {
            println!("FAIL: {e}");
            ExitCode::from(EXIT_FAIL)
        }
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("cute-run: {msg}\n{USAGE}");
    ExitCode::from(EXIT_USAGE)
}

fn info() -> Result<Outcome, RuntimeError> {
    let version = cute_runtime::driver_version()?;
    println!("driver: CUDA {}", format_cuda_version(version));
    let count = Device::count()?;
    println!("devices: {count}");
    for ordinal in 0..count {
        let dev = Device::open(ordinal)?;
        let (major, minor) = dev.compute_capability()?;
        println!(
            "device {ordinal}: {} sm_{major}{minor} (compute capability {major}.{minor}), \
             {} SMs, {:.1} GiB, {} KiB max shared memory per block (opt-in)",
            dev.name()?,
            dev.multiprocessor_count()?,
            dev.total_memory()? as f64 / (1u64 << 30) as f64,
            dev.max_shared_memory_per_block_optin()? / 1024
        );
    }
    Ok(Outcome::Pass)
}

fn manifest(cubin: &str) -> Result<Outcome, RuntimeError> {
    match Manifest::from_cubin_file(cubin)? {
        Some(m) => {
            print!("{}", m.text);
            Ok(Outcome::Pass)
        }
        None => {
            println!("FAIL: {cubin} has no cutec manifest (not built by cutec, or by a cutec before manifests)");
            Ok(Outcome::Fail)
        }
    }
}

fn kernels(cubin: &str) -> Result<Outcome, RuntimeError> {
    // The signatures come from the manifest, on the host; the driver adds
    // register and parameter-size information where a GPU exists.
    let manifest = Manifest::from_file(cubin)?;
    if let Some(m) = &manifest {
        if let Some(arch) = &m.arch {
            println!("arch: {arch}");
        }
        for k in &m.kernels {
            println!("kernel {k}");
            println!("  abi: {}", k.abi());
            if k.dynamic_smem_bytes > 0 {
                println!("  dynamic smem: {} B (every launch must give at least this)", k.dynamic_smem_bytes);
            }
        }
    }
    let dev = match Device::open(0) {
        Ok(d) => d,
        Err(e) if e.is_unavailable() && manifest.is_some() => {
            println!("(no GPU: {e}; driver details skipped)");
            return Ok(Outcome::Pass);
        }
        Err(e) => return Err(e),
    };
    let module = Module::load(&dev, cubin)?;
    for name in module.kernel_names()? {
        let kernel = module.kernel(&name)?;
        let params = match kernel.param_sizes()? {
            Some(sizes) => format!("{sizes:?}"),
            None => "unknown".to_string(),
        };
        println!(
            "{name}: param_bytes={params} regs={} static_smem={} max_threads={}",
            kernel.num_registers()?,
            kernel.static_shared_bytes()?,
            kernel.max_threads_per_block()?
        );
    }
    Ok(Outcome::Pass)
}

struct VectorAddOpts {
    cubin: String,
    n: usize,
    seed: u64,
    iters: usize,
    device: usize,
}

impl VectorAddOpts {
    fn parse(args: &[String]) -> Result<VectorAddOpts, String> {
        let mut opts = VectorAddOpts { cubin: String::new(), n: 1 << 24, seed: 1, iters: 20, device: 0 };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |flag: &str| {
                it.next()
                    .ok_or_else(|| format!("{flag} needs a value"))
                    .and_then(|v| v.parse::<u64>().map_err(|_| format!("{flag}: `{v}` is not a number")))
            };
            match a.as_str() {
                "--n" => opts.n = value("--n")? as usize,
                "--seed" => opts.seed = value("--seed")?,
                "--iters" => opts.iters = value("--iters")? as usize,
                "--device" => opts.device = value("--device")? as usize,
                flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
                path if opts.cubin.is_empty() => opts.cubin = path.to_string(),
                extra => return Err(format!("unexpected argument `{extra}`")),
            }
        }
        if opts.cubin.is_empty() {
            return Err("vector-add needs a CUBIN path".into());
        }
        if opts.n == 0 || opts.n > i32::MAX as usize - GUARD {
            return Err(format!("--n must be in 1..={}", i32::MAX as usize - GUARD));
        }
        if opts.iters == 0 {
            return Err("--iters must be at least 1".into());
        }
        Ok(opts)
    }
}

/// Extra elements after `c` that the kernel must not touch (catches a
/// missing bounds check in the last block).
const GUARD: usize = 1024;
/// Sentinel `c` is filled with before the launch (a quiet NaN with a payload
/// no f32 add produces), so unwritten elements are caught.
const SENTINEL: u32 = 0x7fc0_beef;
const BLOCK: u32 = 256;

fn vector_add(opts: &VectorAddOpts) -> Result<Outcome, RuntimeError> {
    let n = opts.n;
    let dev = Device::open(opts.device)?;
    let (major, minor) = dev.compute_capability()?;
    println!("device: {} (sm_{major}{minor})", dev.name()?);
    let stream = dev.default_stream();
    let module = Module::load(&dev, opts.cubin.as_str())?;
    let kernel = module.kernel("vector_add")?;

    let mut rng = Rng::new(opts.seed);
    let a = rng.vec_f32(n, -1.0, 1.0);
    let b = rng.vec_f32(n, -1.0, 1.0);
    let da = DeviceBuffer::from_host(&stream, &a)?;
    let db = DeviceBuffer::from_host(&stream, &b)?;
    let dc = DeviceBuffer::from_host(&stream, &vec![f32::from_bits(SENTINEL); n + GUARD])?;

    let len = n as i32; // n <= i32::MAX checked when parsing
    let args = ArgList::new()
        .tensor(&da.tensor_arg(&[len], &[]))
        .tensor(&db.tensor_arg(&[len], &[]))
        .tensor(&dc.tensor_arg(&[len], &[]));
    let cfg = LaunchConfig::linear(n as u64, BLOCK)?;

    // First launch: correctness.
    kernel.launch(&stream, cfg, args.as_slice())?;
    stream.synchronize()?;
    let c = dc.to_host(&stream)?;

    let mut mismatches = 0usize;
    let mut first_bad = Vec::new();
    let mut max_abs_err = 0f32;
    for i in 0..n {
        let want = a[i] + b[i];
        let got = c[i];
        if got.to_bits() != want.to_bits() {
            mismatches += 1;
            if first_bad.len() < 8 {
                first_bad.push(format!("c[{i}]={got} (want {want} = {} + {})", a[i], b[i]));
            }
            let err = if got.is_nan() { f32::INFINITY } else { (got - want).abs() };
            max_abs_err = max_abs_err.max(err);
        }
    }
    let clobbered = c[n..].iter().filter(|x| x.to_bits() != SENTINEL).count();
    println!(
        "vector_add: n={n} grid={} block={} mismatches={mismatches} max_abs_err={max_abs_err}",
        cfg.grid.0, cfg.block.0
    );

    // Timing: one warm-up launch, then the median of `iters` event-timed ones.
    kernel.launch(&stream, cfg, args.as_slice())?;
    let ms = stream.median_ms(opts.iters, || kernel.launch(&stream, cfg, args.as_slice()))?;
    let bytes = 3.0 * n as f64 * 4.0;
    let gbps = if ms > 0.0 { bytes / (f64::from(ms) * 1e-3) / 1e9 } else { f64::INFINITY };
    println!(
        "vector_add: time_median_us={:.2} bandwidth_gbps={gbps:.1} (median of {} launches, {:.1} MB moved each)",
        f64::from(ms) * 1e3,
        opts.iters,
        bytes / 1e6
    );

    if mismatches == 0 && clobbered == 0 {
        println!("PASS");
        Ok(Outcome::Pass)
    } else {
        let mut msg = format!("FAIL vector_add: {mismatches} mismatches of {n}");
        if clobbered > 0 {
            msg.push_str(&format!(
                ", {clobbered} of the {GUARD} elements after c[n-1] were written (missing bounds check?)"
            ));
        }
        if !first_bad.is_empty() {
            msg.push_str(&format!("; first: {}", first_bad.join(", ")));
        }
        println!("{msg}");
        Ok(Outcome::Fail)
    }
}

/// Options `CUBIN [POSITIONAL] [--flag VALUE]...` for the checked/graph/host subcommands.
struct Opts {
    cubin: String,
    positional: Vec<String>,
    values: Vec<(String, String)>,
}

impl Opts {
    fn parse(args: &[String], flags: &[&str]) -> Result<Opts, String> {
        Opts::parse_n(args, flags, 1..=1)
    }
    /// `positional` positional arguments, counting the cubin (the first): from its start (those
    /// needed) to its end (those allowed).
    fn parse_n(args: &[String], flags: &[&str], positional: RangeInclusive<usize>) -> Result<Opts, String> {
        let (min_pos, max_pos) = (*positional.start(), *positional.end());
        let mut o = Opts { cubin: String::new(), positional: Vec::new(), values: Vec::new() };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if flags.contains(&a.as_str()) {
                let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
                o.values.push((a.clone(), v.clone()));
            } else if a.starts_with("--") {
                return Err(format!("unknown option {a}"));
            } else if o.cubin.is_empty() {
                o.cubin = a.clone();
            } else if o.positional.len() + 1 < max_pos {
                o.positional.push(a.clone());
            } else {
                return Err(format!("unexpected argument `{a}`"));
            }
        }
        if o.cubin.is_empty() {
            return Err("a CUBIN path is needed".into());
        }
        if o.positional.len() + 1 < min_pos {
            return Err(format!("{min_pos} positional arguments are needed"));
        }
        Ok(o)
    }
    fn all(&self, flag: &str) -> Vec<&str> {
        self.values.iter().filter(|(k, _)| k == flag).map(|(_, v)| v.as_str()).collect()
    }
    fn get(&self, flag: &str) -> Option<&str> {
        self.values.iter().rev().find(|(k, _)| k == flag).map(|(_, v)| v.as_str())
    }
    fn num(&self, flag: &str, default: usize) -> Result<usize, RuntimeError> {
        match self.get(flag) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| RuntimeError::InvalidArgument(format!("{flag}: `{v}` is not a number"))),
        }
    }
}

/// One row of a PASS/FAIL table.
fn row(ok: bool, name: &str, detail: &str) -> bool {
    println!("{} {name:<34} {detail}", if ok { "PASS" } else { "FAIL" });
    ok
}

/// Expects a refusal naming `param` and saying `what`; checks that nothing ran
/// (`c` still holds the sentinel).
fn expect_refused(
    name: &str,
    r: Result<(), RuntimeError>,
    param: &str,
    what: &str,
    stream: &Stream,
    c: &DeviceBuffer<f32>,
) -> Result<bool, RuntimeError> {
    stream.synchronize()?;
    let untouched = c.to_host(stream)?.iter().all(|x| x.to_bits() == SENTINEL);
    Ok(match r {
        Err(RuntimeError::ArgumentMismatch(m)) if m.contains(&format!("`{param}`")) && m.contains(what) => row(
            untouched,
            name,
            &if untouched { format!("refused: {m}") } else { format!("refused but output was written: {m}") },
        ),
        Err(e) => row(false, name, &format!("wrong error: {e}")),
        Ok(()) => row(false, name, "LAUNCHED (should have been refused)"),
    })
}

fn checked(o: &Opts) -> Result<Outcome, RuntimeError> {
    let n = o.num("--n", 1_000_003)?;
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, o.cubin.as_str())?;
    let k = module.kernel("vector_add")?;
    let mut rng = Rng::new(7);
    let a = rng.vec_f32(n, -1.0, 1.0);
    let b = rng.vec_f32(n, -1.0, 1.0);
    let da = DeviceBuffer::from_host(&stream, &a)?;
    let db = DeviceBuffer::from_host(&stream, &b)?;
    let sentinel = vec![f32::from_bits(SENTINEL); n];
    let mut dc = DeviceBuffer::from_host(&stream, &sentinel)?;
    let cfg = LaunchConfig::linear(n as u64, BLOCK)?;
    let mut all = true;

    // A correct checked launch.
    k.launch_checked(&stream, cfg, &[Arg::tensor(da.view_1d()), Arg::tensor(db.view_1d()), Arg::tensor(dc.view_1d())])?;
    let c = dc.to_host(&stream)?;
    let bad = (0..n).filter(|&i| c[i].to_bits() != (a[i] + b[i]).to_bits()).count();
    all &= row(bad == 0, "checked launch vector_add", &format!("n={n} mismatches={bad}"));
    dc.copy_from_host(&stream, &sentinel)?;

    let n64 = n as i64;
    let va = || Arg::tensor(da.view_1d());
    let vb = || Arg::tensor(db.view_1d());
    let vc = |v: TensorView| Arg::tensor(v);
    let cases: Vec<(&str, Vec<Arg>, &str, &str)> = vec![
        ("refuse wrong dtype", vec![va(), vb(), vc(dc.view_1d().with_dtype(DType::I32))], "c", "dtype mismatch"),
        ("refuse wrong rank", vec![va(), vb(), vc(dc.view(&[n64 / 2, 2], &[1, n64 / 2]))], "c", "rank mismatch"),
        ("refuse wrong stride", vec![va(), vb(), vc(dc.view(&[n64 / 2], &[2]))], "c", "stride mismatch"),
        (
            "refuse misaligned pointer",
            vec![va(), vb(), vc(TensorView::contiguous_1d(dc.ptr() + 2, DType::F32, n64 - 1))],
            "c",
            "misaligned pointer",
        ),
        (
            "refuse null pointer",
            vec![va(), vb(), vc(TensorView::contiguous_1d(0, DType::F32, n64))],
            "c",
            "null pointer",
        ),
        ("refuse out of bounds (seed case)", vec![va(), vb(), vc(dc.view(&[n64 + 1], &[1]))], "c", "out of bounds"),
        (
            "refuse i32 overflow",
            vec![va(), vb(), vc(TensorView::contiguous_1d(dc.ptr(), DType::F32, 1 << 31))],
            "c",
            "is not a positive i32 extent",
        ),
        ("refuse scalar for tensor", vec![va(), Arg::i32(3), vc(dc.view_1d())], "b", "expects a tensor"),
    ];
    for (name, args, param, what) in cases {
        let r = k.launch_checked(&stream, cfg, &args);
        all &= expect_refused(name, r, param, what, &stream, &dc)?;
    }
    let r = k.launch_checked(&stream, cfg, &[va(), vb()]);
    all &= row(
        matches!(&r, Err(RuntimeError::ArgumentMismatch(m)) if m.contains("takes 3 parameters")),
        "refuse wrong argument count",
        &format!("{r:?}"),
    );

    // Static layouts: scale(a: (4,8):(8,1) align 16, b: (4,8) column-major), b = 2a.
    if let Some(path) = o.get("--static") {
        let m2 = Module::load(&dev, path)?;
        let s = m2.kernel("scale")?;
        let host: Vec<f32> = (0..32).map(|i| i as f32).collect();
        let sa = DeviceBuffer::from_host(&stream, &host)?;
        let sb = DeviceBuffer::from_host(&stream, &[f32::from_bits(SENTINEL); 32])?;
        let scfg = LaunchConfig { grid: (1, 1, 1), block: (4, 8, 1), shared_mem_bytes: 0 };
        let r = s.launch_checked(
            &stream,
            scfg,
            &[Arg::tensor(sa.view(&[4, 4], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[1, 4]))],
        );
        all &= expect_refused("refuse wrong static extent", r, "a", "static extent mismatch", &stream, &sb)?;
        let r = s.launch_checked(
            &stream,
            scfg,
            &[Arg::tensor(sa.view(&[4, 8], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[4, 1]))],
        );
        all &= expect_refused("refuse wrong static stride", r, "b", "stride mismatch", &stream, &sb)?;
        let r = s.launch_checked(
            &stream,
            scfg,
            &[
                Arg::tensor(TensorView::new(sa.ptr() + 4, DType::F32, &[4, 8], &[8, 1])),
                Arg::tensor(sb.view(&[4, 8], &[1, 4])),
            ],
        );
        all &= expect_refused("refuse align 16 violated", r, "a", "not a multiple of 16 bytes", &stream, &sb)?;
        s.launch_checked(
            &stream,
            scfg,
            &[Arg::tensor(sa.view(&[4, 8], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[1, 4]))],
        )?;
        let got = sb.to_host(&stream)?;
        // b[m,n] (column-major: m + 4n) = 2 * a[m,n] (row-major: 8m + n).
        let bad = (0..4)
            .flat_map(|m| (0..8).map(move |n| (m, n)))
            .filter(|&(m, n)| got[m + 4 * n] != 2.0 * host[8 * m + n])
            .count();
        all &= row(bad == 0, "checked launch scale (static)", &format!("mismatches={bad}"));
    } else {
        println!("SKIP static-layout cases (pass --static SCALE_CUBIN)");
    }
    println!("{}", if all { "PASS" } else { "FAIL" });
    Ok(if all { Outcome::Pass } else { Outcome::Fail })
}

fn graph(o: &Opts) -> Result<Outcome, RuntimeError> {
    let n = o.num("--n", 1 << 20)?;
    let replays = o.num("--replays", 10)?;
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, o.cubin.as_str())?;
    let k = module.kernel("vector_add")?;
    let mut rng = Rng::new(11);
    let a = rng.vec_f32(n, -1.0, 1.0);
    let b = rng.vec_f32(n, -1.0, 1.0);
    let mut da = DeviceBuffer::from_host(&stream, &a)?;
    let db = DeviceBuffer::from_host(&stream, &b)?;
    let dc = DeviceBuffer::<f32>::zeros(&stream, n)?;
    let dd = DeviceBuffer::<f32>::zeros(&stream, n)?;
    let cfg = LaunchConfig::linear(n as u64, BLOCK)?;
    let mut all = true;

    // c = a + b; d = c + b, captured (checked at capture time), not run.
    let g = stream.capture(|s| {
        k.launch_checked(s, cfg, &[Arg::tensor(da.view_1d()), Arg::tensor(db.view_1d()), Arg::tensor(dc.view_1d())])?;
        k.launch_checked(s, cfg, &[Arg::tensor(dc.view_1d()), Arg::tensor(db.view_1d()), Arg::tensor(dd.view_1d())])
    })?;
    stream.synchronize()?;
    let untouched = dd.to_host(&stream)?.iter().all(|&x| x == 0.0);
    all &= row(
        untouched && g.node_count() == 2,
        "capture records, does not run",
        &format!("nodes={} d still zero={untouched}", g.node_count()),
    );
    let check = |a: &[f32], d: &[f32]| (0..n).filter(|&i| d[i].to_bits() != ((a[i] + b[i]) + b[i]).to_bits()).count();
    for _ in 0..replays {
        g.launch(&stream)?;
    }
    let d = dd.to_host(&stream)?;
    let bad = check(&a, &d);
    all &= row(bad == 0, "graph replay", &format!("{replays} replays, n={n}, mismatches={bad}"));
    // Replays read memory afresh: new inputs, same graph.
    let a2 = rng.vec_f32(n, -1.0, 1.0);
    da.copy_from_host(&stream, &a2)?;
    g.launch(&stream)?;
    let bad = check(&a2, &dd.to_host(&stream)?);
    all &= row(bad == 0, "graph replay after new inputs", &format!("mismatches={bad}"));
    // Capturing the legacy default stream is refused with a readable error.
    let r = dev.default_stream().capture(|_| Ok(()));
    all &= row(
        matches!(&r, Err(RuntimeError::InvalidArgument(m)) if m.contains("default")),
        "refuse capture of default stream",
        &format!("{:?}", r.err()),
    );
    // A refused launch inside a capture ends the capture cleanly.
    let r = stream.capture(|s| k.launch_checked(s, cfg, &[Arg::tensor(da.view_1d())]));
    all &= row(
        matches!(&r, Err(RuntimeError::ArgumentMismatch(_))) && !stream.is_capturing()?,
        "mismatch during capture",
        "refused, capture ended",
    );
    println!("{}", if all { "PASS" } else { "FAIL" });
    Ok(if all { Outcome::Pass } else { Outcome::Fail })
}

// ---- host functions ----------------------------------------------------------------------------

fn plan_cmd(args: &[String]) -> Result<Result<Outcome, RuntimeError>, String> {
    // CUBIN [HOST]: without a host, every host function's plan.
    let o = Opts::parse_n(args, &["--shape", "--scalar"], 1..=2)?;
    let host = o.positional.first().cloned();
    // One shape for every tensor parameter (`2048x4096`), or one per tensor parameter in order,
    // separated by commas (`4096x4096,4096` for a matrix and a vector).
    let shape = match o.get("--shape") {
        None => None,
        Some(s) => Some(
            s.split(',')
                .map(|one| {
                    one.split('x')
                        .map(|v| v.trim().parse::<i64>().map_err(|_| format!("--shape: `{v}` is not a number (write e.g. 2048x4096, or 4096x4096,4096: one per tensor)")))
                        .collect::<Result<Vec<i64>, String>>()
                })
                .collect::<Result<Vec<Vec<i64>>, String>>()?,
        ),
    };
    let mut scalars = Vec::new();
    for kv in o.all("--scalar") {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("--scalar: `{kv}` is not NAME=VALUE"))?;
        let v = v.parse::<i64>().map_err(|_| format!("--scalar: `{v}` is not an integer"))?;
        scalars.push((k.to_string(), v));
    }
    if shape.is_some() && host.is_none() {
        return Err("--shape needs a HOST".into());
    }
    Ok(plan_show(&o.cubin, host.as_deref(), shape.as_deref(), &scalars))
}

fn plan_show(
    cubin: &str,
    host: Option<&str>,
    shape: Option<&[Vec<i64>]>,
    scalars: &[(String, i64)],
) -> Result<Outcome, RuntimeError> {
    let Some(m) = Manifest::from_cubin_file(cubin)? else {
        println!("FAIL: {cubin} has no cutec manifest");
        return Ok(Outcome::Fail);
    };
    let hosts: Vec<&cute_runtime::HostSig> = match host {
        // A generic host function: every instance (`add<f16>`, `add<f32>`, ...).
        Some(h) => match m.host(h).map(|s| vec![s]).unwrap_or_else(|| m.host_instances(h)) {
            found if !found.is_empty() => found,
            _ => {
                println!("FAIL: no host function `{h}` in {cubin}; host functions: {}", m.host_names().join(", "));
                return Ok(Outcome::Fail);
            }
        },
        None => m.hosts.iter().collect(),
    };
    if hosts.is_empty() {
        println!("(no host functions in {cubin})");
    }
    for h in hosts {
        println!("{h}");
        let vars = h.var_sources();
        let names: Vec<String> =
            vars.iter().enumerate().map(|(k, src)| format!("${k} = {}", h.var_name(*src))).collect();
        println!("  dynamic values: {}", if names.is_empty() { "(none)".to_string() } else { names.join(", ") });
        if h.loop_count() > 0 {
            let slots: Vec<String> = (vars.len()..vars.len() + h.loop_count()).map(|k| format!("${k}")).collect();
            println!("  loop variables: {}", slots.join(", "));
        }
        if let Some(e) = &h.plan_error {
            println!("  unusable plan: {e}");
        }
        for r in &h.requires {
            println!("  require {} {} ({})", r.expr, need_text(r.need), r.what);
        }
        for a in &h.asserts {
            println!("  assert {a}");
        }
        print_steps(h);
        print_launch_records(&m, h);
        let Some(shape) = shape else { continue };
        if let Outcome::Fail = evaluate_shown(&m, h, shape, scalars)? {
            return Ok(Outcome::Fail);
        }
    }
    Ok(Outcome::Pass)
}

/// A plan's steps: indented by depth where it branches or loops (launches by number), else its prints.
/// A launch condition's need as `cute-run plan` shows it: `multiple of 16`, `at least 101`.
fn need_text(need: cute_abi::manifest::Need) -> String {
    match need {
        cute_abi::manifest::Need::MultipleOf(d) => format!("multiple of {d}"),
        cute_abi::manifest::Need::AtLeast(m) => format!("at least {m}"),
    }
}

fn print_steps(h: &cute_runtime::HostSig) {
    use cute_runtime::HostStep;
    if h.steps.iter().any(|st| matches!(st, HostStep::If { .. } | HostStep::For { .. })) {
        // A plan that branches or loops: its steps, indented by depth (launches by number, below).
        println!("  steps:");
        let mut depth = 2;
        for st in &h.steps {
            if matches!(st, HostStep::Else { .. } | HostStep::EndIf | HostStep::EndFor { .. }) {
                depth -= 1;
            }
            let pad = "  ".repeat(depth);
            match st {
                HostStep::Launch(li) => {
                    println!("{pad}launch {li} ({})", h.launches.get(*li).map_or("?", |l| l.kernel.as_str()))
                }
                HostStep::Print(segs) => println!("{pad}print {segs:?}"),
                HostStep::If { cond, .. } => println!("{pad}if {cond}"),
                HostStep::Else { .. } => println!("{pad}else"),
                HostStep::EndIf => println!("{pad}endif"),
                HostStep::Assert(a) => println!("{pad}assert {a}"),
                HostStep::Require(r) => println!("{pad}require {} {} ({})", r.expr, need_text(r.need), r.what),
                HostStep::For { var, start, end, step, .. } => {
                    println!("{pad}for ${var} in {start}..{end} step {step}")
                }
                HostStep::EndFor { .. } => println!("{pad}endfor"),
                HostStep::Break { .. } => println!("{pad}break"),
                HostStep::Continue { .. } => println!("{pad}continue"),
            }
            if matches!(st, HostStep::If { .. } | HostStep::Else { .. } | HostStep::For { .. }) {
                depth += 1;
            }
        }
    } else {
        for st in &h.steps {
            if let HostStep::Print(segs) = st {
                println!("  print {segs:?}");
            }
        }
    }
}

/// Each launch record of a plan: the kernel, its grid, block, shared memory, stream and arguments.
fn print_launch_records(m: &Manifest, h: &cute_runtime::HostSig) {
    use cute_runtime::plan::PlanArg;
    for (li, l) in h.launches.iter().enumerate() {
        match m.kernel(&l.kernel) {
            Some(k) => println!("  launch {li}: {k}"),
            None => println!("  launch {li}: {} (not in the manifest)", l.kernel),
        }
        println!("    grid  {} | {} | {}", l.grid[0], l.grid[1], l.grid[2]);
        println!("    block {} | {} | {}", l.block[0], l.block[1], l.block[2]);
        match m.kernel(&l.kernel).map_or(0, |k| k.dynamic_smem_bytes) {
            0 => println!("    smem  {}", l.smem),
            need => println!("    smem  {} (the kernel needs at least {need} B)", l.smem),
        }
        if let Some(p) = l.stream {
            println!("    stream {}", h.params.get(p).map_or("?", |p| p.name.as_str()));
        }
        let kparams = m.kernel(&l.kernel).map(|k| k.params.clone()).unwrap_or_default();
        for (ai, a) in l.args.iter().enumerate() {
            let pname = kparams.get(ai).map_or("?", |p| p.name.as_str());
            match a {
                PlanArg::Tensor { host_param, offset, dyn_leaves } => {
                    let hp = h.params.get(*host_param).map_or("?", |p| p.name.as_str());
                    let d: Vec<String> = dyn_leaves.iter().map(ToString::to_string).collect();
                    println!("    arg {pname} = {hp} + {offset} elements; dynamic entries: {}", d.join(" | "));
                }
                PlanArg::Scalar { ty, value } => println!("    arg {pname} = {ty} {value}"),
            }
        }
    }
}

/// Evaluates a host function's plan for row-major tensors of `shape` (fake, aligned pointers;
/// nothing runs) and prints the launches it would make.
fn evaluate_shown(
    m: &Manifest,
    h: &cute_runtime::HostSig,
    shape: &[Vec<i64>],
    scalars: &[(String, i64)],
) -> Result<Outcome, RuntimeError> {
    use cute_runtime::plan::HostPlan;
    // Evaluate for row-major tensors of `shape` (fake, aligned pointers; nothing runs).
    let plan = match HostPlan::new(m, &h.name) {
        Ok(p) => p,
        Err(e) => {
            println!("FAIL: {e}");
            return Ok(Outcome::Fail);
        }
    };
    let tensors = h.params.iter().filter(|p| matches!(p.kind, cute_runtime::ParamKind::Tensor(_))).count();
    if shape.len() != 1 && shape.len() != tensors {
        println!("FAIL: --shape gives {} shapes but `{}` has {tensors} tensor parameters (give one shape, or one per tensor)", shape.len(), h.name);
        return Ok(Outcome::Fail);
    }
    let mut args = Vec::new();
    let mut ti = 0;
    for (i, p) in h.params.iter().enumerate() {
        match &p.kind {
            cute_runtime::ParamKind::Tensor(_) => {
                match cute_runtime::plan::synthetic_view(p, i, &shape[ti.min(shape.len() - 1)]) {
                    Ok(v) => {
                        ti += 1;
                        println!("  call: {} = shape {:?} stride {:?}", p.name, v.shape, v.stride);
                        args.push(Arg::tensor(v));
                    }
                    Err(e) => {
                        println!("FAIL: {e}");
                        return Ok(Outcome::Fail);
                    }
                }
            }
            cute_runtime::ParamKind::Scalar(d) => {
                let Some((_, v)) = scalars.iter().find(|(k, _)| *k == p.name) else {
                    println!("FAIL: scalar parameter `{}` needs --scalar {}=VALUE", p.name, p.name);
                    return Ok(Outcome::Fail);
                };
                println!("  call: {} = {v}", p.name);
                args.push(Arg::Scalar(*d, *v as u64));
            }
            // Nothing is launched: a fake handle per stream parameter.
            cute_runtime::ParamKind::Stream => {
                let fake = 0x5000 + i as u64;
                println!("  call: {} = stream {fake:#x}", p.name);
                args.push(Arg::Stream(fake));
            }
        }
    }
    match plan.evaluate(&args) {
        Ok(launches) => {
            for l in launches {
                let c = l.config;
                let on =
                    l.stream.and_then(|p| h.params.get(p)).map_or(String::new(), |p| format!(" stream {}", p.name));
                println!(
                    "  => launch {}: {} grid ({}, {}, {}) block ({}, {}, {}) smem {}{on}",
                    l.index,
                    l.kernel,
                    c.grid.0,
                    c.grid.1,
                    c.grid.2,
                    c.block.0,
                    c.block.1,
                    c.block.2,
                    c.shared_mem_bytes
                );
                for (kp, hp, off, sh, st) in &l.views {
                    println!("     {kp} = {hp} + {off}: shape {sh:?} stride {st:?}");
                }
                let flat: Vec<String> = l.args.iter().map(|a| format!("{a:?}")).collect();
                println!("     abi: ({})", flat.join(", "));
                // The TMA tensor maps the launch would encode (`tma` lines), as the driver gets them.
                for t in m.kernel(&l.kernel).map(|k| k.tmas.as_slice()).unwrap_or_default() {
                    let k = m.kernel(&l.kernel).expect("the kernel has tma lines");
                    match t.encoding(k, &l.args) {
                        Ok(e) => println!(
                            "     tensor map {}: {} dims {:?} strides {:?} B box {:?} swizzle {}",
                            k.params[t.param].name,
                            e.elem.name(),
                            e.dims,
                            e.strides,
                            e.box_dims,
                            if e.swizzle_bytes == 0 { "none".to_string() } else { format!("{}B", e.swizzle_bytes) }
                        ),
                        Err(e) => println!("     tensor map {}: REFUSED at launch: {e}", k.params[t.param].name),
                    }
                }
            }
        }
        Err(e) => {
            println!("REFUSED: {e}");
            return Ok(Outcome::Fail);
        }
    }
    Ok(Outcome::Pass)
}

/// Element handling for the host-add checks: f16 (as u16 bits) and f32.
trait AddElem: cute_runtime::DeviceElem + Copy + Default + PartialEq + std::fmt::Debug {
    const SENTINEL: Self;
    fn random(r: &mut Rng) -> Self;
    /// The correctly rounded sum (f16: computed in f32, then rounded to f16; the f32 sum of two
    /// f16 values rounded to f16 equals the directly rounded f16 sum, since 24 >= 2*11+2).
    fn add(a: Self, b: Self) -> Self;
    fn bits(self) -> u32;
}
impl AddElem for u16 {
    const SENTINEL: u16 = 0x7e5a; // a NaN no add of finite numbers produces
    fn random(r: &mut Rng) -> u16 {
        cute_runtime::f16::f32_to_f16_bits(r.uniform_f32(-1.0, 1.0))
    }
    fn add(a: u16, b: u16) -> u16 {
        use cute_runtime::f16::{f16_bits_to_f32, f32_to_f16_bits};
        f32_to_f16_bits(f16_bits_to_f32(a) + f16_bits_to_f32(b))
    }
    fn bits(self) -> u32 {
        u32::from(self)
    }
}
impl AddElem for f32 {
    const SENTINEL: f32 = f32::from_bits(SENTINEL);
    fn random(r: &mut Rng) -> f32 {
        r.uniform_f32(-1.0, 1.0)
    }
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

fn host_dtype(module: &Module, name: &str) -> Result<DType, RuntimeError> {
    let h = module.host(name)?;
    match h.signature().params.first().map(|p| &p.kind) {
        Some(cute_runtime::ParamKind::Tensor(t)) => Ok(t.elem),
        _ => Err(RuntimeError::InvalidArgument(format!("host `{name}` does not take a tensor first"))),
    }
}

const ADD_HOSTS: [&str; 3] = ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"];

fn host_add(o: &Opts) -> Result<Outcome, RuntimeError> {
    let m = o.num("--m", 2048)? as i64;
    let n = o.num("--n", 2048)? as i64;
    let iters = o.num("--iters", 20)?.max(1);
    let seed = o.num("--seed", 1)? as u64;
    let dev = Device::open(0)?;
    let (major, minor) = dev.compute_capability()?;
    println!("device: {} (sm_{major}{minor})", dev.name()?);
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, o.cubin.as_str())?;
    let mut names: Vec<String> = o.all("--host").iter().map(|s| s.to_string()).collect();
    if names.is_empty() {
        let have = module.host_names();
        names = ADD_HOSTS.iter().filter(|h| have.iter().any(|x| x == *h)).map(|s| s.to_string()).collect();
    }
    if names.is_empty() {
        println!("FAIL: {} has none of the host functions {}", o.cubin, ADD_HOSTS.join(", "));
        return Ok(Outcome::Fail);
    }
    // A generic host function takes any of its instances' dtypes: the call selects the instance.
    let dtype = match o.get("--dtype") {
        Some(d) => DType::from_name(d)
            .ok_or_else(|| RuntimeError::InvalidArgument(format!("--dtype {d}: not an element type")))?,
        None => host_dtype(&module, &names[0])?,
    };
    match dtype {
        DType::F16 => host_add_typed::<u16>(&stream, &module, &names, m, n, iters, seed, DType::F16),
        DType::F32 => host_add_typed::<f32>(&stream, &module, &names, m, n, iters, seed, DType::F32),
        other => {
            println!("FAIL: host-add handles f16 and f32 tensors, not {other}");
            Ok(Outcome::Fail)
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn host_add_typed<T: AddElem>(
    stream: &Stream,
    module: &Module,
    names: &[String],
    m: i64,
    n: i64,
    iters: usize,
    seed: u64,
    dtype: DType,
) -> Result<Outcome, RuntimeError> {
    let len = usize::try_from(m * n).map_err(|_| RuntimeError::InvalidArgument("M*N too large".into()))?;
    let mut rng = Rng::new(seed);
    let a: Vec<T> = (0..len).map(|_| T::random(&mut rng)).collect();
    let b: Vec<T> = (0..len).map(|_| T::random(&mut rng)).collect();
    let da = DeviceBuffer::from_host(stream, &a)?;
    let db = DeviceBuffer::from_host(stream, &b)?;
    let sentinel = vec![T::SENTINEL; len];
    let mut dc = DeviceBuffer::from_host(stream, &sentinel)?;
    let elem = dtype.size_bytes() as f64;
    let bytes = 3.0 * (m * n) as f64 * elem;
    let view = |buf: &DeviceBuffer<T>| Arg::tensor(buf.view(&[m, n], &[n, 1]).with_dtype(dtype));

    // The reference: a device-to-device copy of the same byte count (reads + writes 2x bytes).
    let memcpy_gbps = memcpy_gbps(stream, &DeviceBuffer::<T>::zeros(stream, 3 * len)?, iters)?;
    println!(
        "memcpy DtoD reference: {:.1} MB copied, {memcpy_gbps:.1} GB/s (2 x bytes / median of {iters})",
        bytes / 1e6
    );

    let mut all = true;
    for name in names {
        let host = module.host(name)?;
        dc.copy_from_host(stream, &sentinel)?;
        host.call(stream, &[view(&da), view(&db), view(&dc)])?;
        let c = dc.to_host(stream)?;
        let mut bad = 0usize;
        let mut first = Vec::new();
        for i in 0..len {
            let want = T::add(a[i], b[i]);
            if c[i].bits() != want.bits() {
                bad += 1;
                if first.len() < 5 {
                    first.push(format!(
                        "[{},{}]=0x{:x} want 0x{:x}",
                        i as i64 / n,
                        i as i64 % n,
                        c[i].bits(),
                        want.bits()
                    ));
                }
            }
        }
        // Timing: a warm-up call, then the median of `iters` event-timed calls.
        host.call(stream, &[view(&da), view(&db), view(&dc)])?;
        let args = [view(&da), view(&db), view(&dc)];
        let ms = f64::from(stream.median_ms(iters, || host.call(stream, &args))?);
        let gbps = bytes / (ms * 1e-3) / 1e9;
        let ratio = gbps / memcpy_gbps;
        let ok = bad == 0;
        all &= ok;
        println!(
            "{} {name} {dtype} {m}x{n}: mismatches={bad} (bit-exact) time_median_us={:.2} bandwidth_gbps={gbps:.1} memcpy_gbps={memcpy_gbps:.1} ratio={ratio:.3}{}",
            if ok { "PASS" } else { "FAIL" },
            ms * 1e3,
            if first.is_empty() { String::new() } else { format!("; first: {}", first.join(", ")) }
        );
        println!("RESULT host={name} dtype={dtype} m={m} n={n} mismatches={bad} us={:.2} gbps={gbps:.1} memcpy_gbps={memcpy_gbps:.1} ratio={ratio:.3}", ms * 1e3);
    }
    println!("{}", if all { "PASS" } else { "FAIL" });
    Ok(if all { Outcome::Pass } else { Outcome::Fail })
}

fn host_refuse(o: &Opts) -> Result<Outcome, RuntimeError> {
    let name = o.positional[0].as_str();
    let m = o.num("--m", 1000)? as i64;
    let n = o.num("--n", 2048)? as i64;
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, o.cubin.as_str())?;
    let host = module.host(name)?;
    let dtype = host_dtype(&module, name)?;
    let len = (m * n) as usize;
    let elem = dtype.size_bytes() as usize;
    // Raw bytes (u8) so that any element type works; views carry the dtype.
    let da = DeviceBuffer::<u8>::zeros(&stream, len * elem)?;
    let db = DeviceBuffer::<u8>::zeros(&stream, len * elem)?;
    let sentinel = vec![0xa5u8; len * elem];
    let dc = DeviceBuffer::from_host(&stream, &sentinel)?;
    let view = |buf: &DeviceBuffer<u8>| {
        Arg::tensor(TensorView::new(buf.ptr(), dtype, &[m, n], &[n, 1]).with_bytes(buf.size_bytes() as u64))
    };
    let r = host.call(&stream, &[view(&da), view(&db), view(&dc)]);
    stream.synchronize()?;
    let untouched = dc.to_host(&stream)?.iter().all(|&x| x == 0xa5);
    match r {
        Err(RuntimeError::ArgumentMismatch(msg)) if msg.contains("is not a multiple of the tile") => {
            println!("REFUSED: {msg}");
            let ok = untouched;
            row(
                ok,
                &format!("refuse partial tile {name} {m}x{n}"),
                if ok { "nothing launched, output untouched" } else { "output was written" },
            );
            println!("{}", if ok { "PASS" } else { "FAIL" });
            Ok(if ok { Outcome::Pass } else { Outcome::Fail })
        }
        Err(e) => {
            println!("FAIL: refused with the wrong error: {e}");
            Ok(Outcome::Fail)
        }
        Ok(()) => {
            println!("FAIL: host `{name}` {m}x{n} was LAUNCHED (a partial tile must be refused)");
            Ok(Outcome::Fail)
        }
    }
}

/// GB/s of a device-to-device copy of `src` (2 x bytes / median time): the bandwidth reference.
fn memcpy_gbps<T: cute_runtime::DeviceElem>(
    stream: &Stream,
    src: &DeviceBuffer<T>,
    iters: usize,
) -> Result<f64, RuntimeError> {
    let mut dst = DeviceBuffer::<T>::zeros(stream, src.len())?;
    dst.copy_from_device(stream, src)?; // warm-up
    let ms = f64::from(stream.median_ms(iters, || dst.copy_from_device(stream, src))?);
    Ok(2.0 * src.size_bytes() as f64 / (ms * 1e-3) / 1e9)
}
