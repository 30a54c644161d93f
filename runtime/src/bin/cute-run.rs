//! `cute-run`: the GPU test runner for cutec-compiled cubins.
//!
//! ```text
//! cute-run info
//! cute-run kernels CUBIN
//! cute-run manifest CUBIN
//! cute-run vector-add CUBIN [--n N] [--seed S] [--iters K] [--device D]
//! cute-run checked CUBIN [--static SCALE_CUBIN] [--n N]
//! cute-run graph CUBIN [--n N] [--replays R]
//! ```
//!
//! Exit codes: 0 PASS, 1 FAIL (or runtime error), 2 usage error,
//! 77 SKIP (no CUDA driver/GPU on this machine).

use std::process::ExitCode;

use cute_runtime::{
    format_cuda_version, median, Arg, ArgList, DType, Device, DeviceBuffer, EventTimer,
    LaunchConfig, Manifest, Module, Rng, RuntimeError, Stream, TensorView,
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
    match Manifest::from_file(cubin)? {
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
        let mut opts =
            VectorAddOpts { cubin: String::new(), n: 1 << 24, seed: 1, iters: 20, device: 0 };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |flag: &str| {
                it.next().ok_or_else(|| format!("{flag} needs a value")).and_then(|v| {
                    v.parse::<u64>().map_err(|_| format!("{flag}: `{v}` is not a number"))
                })
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
    let timer = EventTimer::new(&stream)?;
    let mut samples = Vec::with_capacity(opts.iters);
    for _ in 0..opts.iters {
        timer.start(&stream)?;
        kernel.launch(&stream, cfg, args.as_slice())?;
        timer.stop(&stream)?;
        samples.push(timer.elapsed_ms()?);
    }
    stream.synchronize()?;
    let ms = median(&samples)?;
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

/// Options `CUBIN [--flag VALUE]...` for the checked/graph subcommands.
struct Opts {
    cubin: String,
    values: Vec<(String, String)>,
}

impl Opts {
    fn parse(args: &[String], flags: &[&str]) -> Result<Opts, String> {
        let mut o = Opts { cubin: String::new(), values: Vec::new() };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if flags.contains(&a.as_str()) {
                let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
                o.values.push((a.clone(), v.clone()));
            } else if a.starts_with("--") {
                return Err(format!("unknown option {a}"));
            } else if o.cubin.is_empty() {
                o.cubin = a.clone();
            } else {
                return Err(format!("unexpected argument `{a}`"));
            }
        }
        if o.cubin.is_empty() {
            return Err("a CUBIN path is needed".into());
        }
        Ok(o)
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
        Err(RuntimeError::ArgumentMismatch(m)) if m.contains(&format!("`{param}`")) && m.contains(what) => {
            row(untouched, name, &if untouched { format!("refused: {m}") } else { format!("refused but output was written: {m}") })
        }
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
        ("refuse misaligned pointer", vec![va(), vb(), vc(TensorView::contiguous_1d(dc.ptr() + 2, DType::F32, n64 - 1))], "c", "misaligned pointer"),
        ("refuse null pointer", vec![va(), vb(), vc(TensorView::contiguous_1d(0, DType::F32, n64))], "c", "null pointer"),
        ("refuse out of bounds (seed case)", vec![va(), vb(), vc(dc.view(&[n64 + 1], &[1]))], "c", "out of bounds"),
        ("refuse i32 overflow", vec![va(), vb(), vc(TensorView::contiguous_1d(dc.ptr(), DType::F32, 1 << 31))], "c", "does not fit"),
        ("refuse scalar for tensor", vec![va(), Arg::i32(3), vc(dc.view_1d())], "b", "expects a tensor"),
    ];
    for (name, args, param, what) in cases {
        let r = k.launch_checked(&stream, cfg, &args);
        all &= expect_refused(name, r, param, what, &stream, &dc)?;
    }
    let r = k.launch_checked(&stream, cfg, &[va(), vb()]);
    all &= row(matches!(&r, Err(RuntimeError::ArgumentMismatch(m)) if m.contains("takes 3 parameters")), "refuse wrong argument count", &format!("{r:?}"));

    // Static layouts: scale(a: (4,8):(8,1) align 16, b: (4,8) column-major), b = 2a.
    if let Some(path) = o.get("--static") {
        let m2 = Module::load(&dev, path)?;
        let s = m2.kernel("scale")?;
        let host: Vec<f32> = (0..32).map(|i| i as f32).collect();
        let sa = DeviceBuffer::from_host(&stream, &host)?;
        let sb = DeviceBuffer::from_host(&stream, &vec![f32::from_bits(SENTINEL); 32])?;
        let scfg = LaunchConfig { grid: (1, 1, 1), block: (4, 8, 1), shared_mem_bytes: 0 };
        let r = s.launch_checked(&stream, scfg, &[Arg::tensor(sa.view(&[4, 4], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[1, 4]))]);
        all &= expect_refused("refuse wrong static extent", r, "a", "static extent mismatch", &stream, &sb)?;
        let r = s.launch_checked(&stream, scfg, &[Arg::tensor(sa.view(&[4, 8], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[4, 1]))]);
        all &= expect_refused("refuse wrong static stride", r, "b", "stride mismatch", &stream, &sb)?;
        let r = s.launch_checked(&stream, scfg, &[Arg::tensor(TensorView::new(sa.ptr() + 4, DType::F32, &[4, 8], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[1, 4]))]);
        all &= expect_refused("refuse align 16 violated", r, "a", "not a multiple of 16 bytes", &stream, &sb)?;
        s.launch_checked(&stream, scfg, &[Arg::tensor(sa.view(&[4, 8], &[8, 1])), Arg::tensor(sb.view(&[4, 8], &[1, 4]))])?;
        let got = sb.to_host(&stream)?;
        // b[m,n] (column-major: m + 4n) = 2 * a[m,n] (row-major: 8m + n).
        let bad = (0..4).flat_map(|m| (0..8).map(move |n| (m, n))).filter(|&(m, n)| got[m + 4 * n] != 2.0 * host[8 * m + n]).count();
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
    all &= row(untouched && g.node_count() == 2, "capture records, does not run", &format!("nodes={} d still zero={untouched}", g.node_count()));
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
    all &= row(matches!(&r, Err(RuntimeError::InvalidArgument(m)) if m.contains("default")), "refuse capture of default stream", &format!("{:?}", r.err()));
    // A refused launch inside a capture ends the capture cleanly.
    let r = stream.capture(|s| k.launch_checked(s, cfg, &[Arg::tensor(da.view_1d())]));
    all &= row(matches!(&r, Err(RuntimeError::ArgumentMismatch(_))) && !stream.is_capturing()?, "mismatch during capture", "refused, capture ended");
    println!("{}", if all { "PASS" } else { "FAIL" });
    Ok(if all { Outcome::Pass } else { Outcome::Fail })
}
