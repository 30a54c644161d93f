//! `cute-bench-launch CUBIN [--launches N] [--rounds R] [--host EW_CUBIN]`: host time per launch
//! of a tiny kernel (vector_add over 256 elements, one block) over N
//! back-to-back launches (default 10,000), for the unchecked launch, the
//! checked launch, and CUDA graph replays (a graph of 1 kernel, and a graph
//! of 100 kernels, per replay and per kernel). Each figure is the median over
//! R rounds (default 5) of (host wall time of the N calls) / N; the GPU is
//! synchronized after each round, outside the timed region.
//!
//! `--host EW_CUBIN` (a cubin of samples/elementwise_add.cute) adds host-function calls: the
//! `elementwise_add` host function on 16x256 f16 tensors (one tile, one block of 128 threads) per
//! `HostFn::call` (argument checks + plan evaluation + launch), and the check/evaluation alone.
//!
//! Exit codes: 0 done (prints `goal <= 3 us per launch: MET|NOT MET`),
//! 1 error, 2 usage, 77 no GPU.

use std::process::ExitCode;
use std::time::Instant;

use cute_runtime::{check_args, Arg, Device, DeviceBuffer, LaunchConfig, Module, Result};

const TINY_N: usize = 256;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cubin = None;
    let mut host_cubin: Option<String> = None;
    let mut launches = 10_000usize;
    let mut rounds = 5usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |flag: &str| {
            it.next()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&v| v > 0)
                .ok_or(format!("{flag} needs a positive number"))
        };
        let r = match a.as_str() {
            "--launches" => num("--launches").map(|v| launches = v),
            "--rounds" => num("--rounds").map(|v| rounds = v),
            "--host" => it.next().map(|v| host_cubin = Some(v.clone())).ok_or("--host needs a cubin".to_string()),
            "-h" | "--help" => Err(String::new()),
            p if !p.starts_with("--") && cubin.is_none() => {
                cubin = Some(p.to_string());
                Ok(())
            }
            other => Err(format!("unexpected argument `{other}`")),
        };
        if let Err(msg) = r {
            eprintln!("{msg}\nusage: cute-bench-launch CUBIN [--launches N] [--rounds R] [--host EW_CUBIN]");
            return ExitCode::from(2);
        }
    }
    let Some(cubin) = cubin else {
        eprintln!("usage: cute-bench-launch CUBIN [--launches N] [--rounds R]");
        return ExitCode::from(2);
    };
    match run(&cubin, launches, rounds, host_cubin.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_unavailable() => {
            println!("SKIP: no CUDA driver/GPU: {e}");
            ExitCode::from(77)
        }
        Err(e) => {
            println!("FAIL: {e}");
            ExitCode::from(1)
        }
    }
}

/// Median over `rounds` of the host µs per call of `calls` invocations of `f`.
fn measure(
    rounds: usize,
    calls: usize,
    sync: &dyn Fn() -> Result<()>,
    f: &mut dyn FnMut() -> Result<()>,
) -> Result<f64> {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        sync()?;
        let t = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / calls as f64);
        sync()?;
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

fn run(cubin: &str, launches: usize, rounds: usize, host_cubin: Option<&str>) -> Result<()> {
    let dev = Device::open(0)?;
    let (major, minor) = dev.compute_capability()?;
    println!(
        "device: {} (sm_{major}{minor}), driver CUDA {}",
        dev.name()?,
        cute_runtime::format_cuda_version(dev.driver_version()?)
    );
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, cubin)?;
    let k = module.kernel("vector_add")?;
    let a = DeviceBuffer::from_host(&stream, &vec![1.0f32; TINY_N])?;
    let b = DeviceBuffer::from_host(&stream, &vec![2.0f32; TINY_N])?;
    let c = DeviceBuffer::<f32>::zeros(&stream, TINY_N)?;
    let cfg = LaunchConfig::linear(TINY_N as u64, TINY_N as u32)?;
    let checked = [Arg::tensor(a.view_1d()), Arg::tensor(b.view_1d()), Arg::tensor(c.view_1d())];
    let sig =
        k.signature().ok_or_else(|| cute_runtime::RuntimeError::NoManifest(format!("{cubin} has no manifest")))?;
    let flat = check_args(sig, &checked)?;
    let sync = || stream.synchronize();

    // Warm-up (module load, first-launch costs), and a correctness check.
    for _ in 0..100 {
        k.launch_checked(&stream, cfg, &checked)?;
    }
    if c.to_host(&stream)?.iter().any(|&x| x != 3.0) {
        return Err(cute_runtime::RuntimeError::InvalidArgument("tiny vector_add computed wrong results".into()));
    }

    println!("tiny kernel: vector_add n={TINY_N}, grid {:?} block {:?}; {launches} back-to-back calls, median of {rounds} rounds", cfg.grid, cfg.block);
    let direct = std::env::var("CUTEC_LAUNCH").is_ok_and(|v| v == "direct");
    println!(
        "launch path: {}",
        if direct {
            "cuLaunchKernel (CUTEC_LAUNCH=direct)"
        } else {
            "a one-node graph per (kernel, stream); CUTEC_LAUNCH=direct for cuLaunchKernel"
        }
    );
    let unchecked = measure(rounds, launches, &sync, &mut || k.launch(&stream, cfg, &flat))?;
    println!("launch (unchecked):         {unchecked:8.3} us/launch (host)");
    let checked_us = measure(rounds, launches, &sync, &mut || k.launch_checked(&stream, cfg, &checked))?;
    println!("launch_checked:             {checked_us:8.3} us/launch (host)");
    let check_only = measure(rounds, launches, &sync, &mut || check_args(sig, &checked).map(|_| ()))?;
    println!("check only (no launch):     {check_only:8.3} us/call");

    let g1 = stream.capture(|s| k.launch_checked(s, cfg, &checked))?;
    g1.upload(&stream)?;
    let replay1 = measure(rounds, launches, &sync, &mut || g1.launch(&stream))?;
    println!("graph replay (1 kernel):    {replay1:8.3} us/replay (host)");
    let g100 = stream.capture(|s| (0..100).try_for_each(|_| k.launch_checked(s, cfg, &checked)))?;
    g100.upload(&stream)?;
    let calls = (launches / 100).max(10);
    let replay100 = measure(rounds, calls, &sync, &mut || g100.launch(&stream))?;
    println!("graph replay (100 kernels): {replay100:8.3} us/replay, {:.3} us/kernel (host)", replay100 / 100.0);

    // Wall time including GPU execution, for reference: 10k launches then sync.
    let t = Instant::now();
    for _ in 0..launches {
        k.launch_checked(&stream, cfg, &checked)?;
    }
    stream.synchronize()?;
    let wall = t.elapsed().as_secs_f64() * 1e6 / launches as f64;
    println!("launch_checked incl. sync:  {wall:8.3} us/launch (wall, GPU-bound when kernels outlast launches)");
    if c.to_host(&stream)?.iter().any(|&x| x != 3.0) {
        return Err(cute_runtime::RuntimeError::InvalidArgument("results wrong after the benchmark".into()));
    }
    let met = checked_us <= 3.0;
    println!("goal <= 3 us per launch (checked): {}", if met { "MET" } else { "NOT MET" });

    let mut host_fields = String::new();
    if let Some(path) = host_cubin {
        let (call_us, eval_us) = bench_host(&dev, &stream, path, launches, rounds, &sync)?;
        println!("host call elementwise_add:  {call_us:8.3} us/call (host; checks + plan + 1 launch)");
        println!("host check+plan only:       {eval_us:8.3} us/call");
        println!("goal <= 3 us per launch (host call): {}", if call_us <= 3.0 { "MET" } else { "NOT MET" });
        host_fields = format!(" host_call_us={call_us:.3} host_eval_us={eval_us:.3}");
    }
    println!(
        "RESULT unchecked_us={unchecked:.3} checked_us={checked_us:.3} graph1_us={replay1:.3} graph100_per_kernel_us={:.3}{host_fields}",
        replay100 / 100.0
    );
    Ok(())
}

/// Host-function call overhead: `elementwise_add` on one 16x256 f16 tile.
fn bench_host(
    dev: &Device,
    stream: &cute_runtime::Stream,
    path: &str,
    launches: usize,
    rounds: usize,
    sync: &dyn Fn() -> Result<()>,
) -> Result<(f64, f64)> {
    let module = Module::load(dev, path)?;
    let host = module.host("elementwise_add")?;
    let (m, n) = (16i64, 256i64);
    let one = cute_runtime::f16::f32_to_f16_bits(1.0);
    let two = cute_runtime::f16::f32_to_f16_bits(2.0);
    let a = DeviceBuffer::from_host(stream, &vec![one; (m * n) as usize])?;
    let b = DeviceBuffer::from_host(stream, &vec![two; (m * n) as usize])?;
    let c = DeviceBuffer::<u16>::zeros(stream, (m * n) as usize)?;
    let v = |buf: &DeviceBuffer<u16>| Arg::tensor(buf.view(&[m, n], &[n, 1]).with_dtype(cute_runtime::DType::F16));
    let args = [v(&a), v(&b), v(&c)];
    for _ in 0..100 {
        host.call(stream, &args)?;
    }
    let three = cute_runtime::f16::f32_to_f16_bits(3.0);
    if c.to_host(stream)?.iter().any(|&x| x != three) {
        return Err(cute_runtime::RuntimeError::InvalidArgument("host elementwise_add computed wrong results".into()));
    }
    let call_us = measure(rounds, launches, sync, &mut || host.call(stream, &args))?;
    let mut scratch = cute_runtime::plan::PlanScratch::default();
    let eval_us = measure(rounds, launches, sync, &mut || host.plan().evaluate_into(&args, &mut scratch))?;
    Ok((call_us, eval_us))
}
