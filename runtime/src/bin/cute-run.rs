//! `cute-run`: the GPU test runner for cutec-compiled cubins.
//!
//! ```text
//! cute-run info
//! cute-run kernels CUBIN
//! cute-run vector-add CUBIN [--n N] [--seed S] [--iters K] [--device D]
//! ```
//!
//! Exit codes: 0 PASS, 1 FAIL (or runtime error), 2 usage error,
//! 77 SKIP (no CUDA driver/GPU on this machine).

use std::process::ExitCode;

use cute_runtime::{
    format_cuda_version, median, ArgList, Device, DeviceBuffer, EventTimer, LaunchConfig, Module,
    Rng, RuntimeError,
};

const USAGE: &str = "\
usage:
  cute-run info
  cute-run kernels CUBIN
  cute-run vector-add CUBIN [--n N] [--seed S] [--iters K] [--device D]

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

fn kernels(cubin: &str) -> Result<Outcome, RuntimeError> {
    let dev = Device::open(0)?;
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
