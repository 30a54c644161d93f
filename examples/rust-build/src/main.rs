//! Runs the vector_add kernel embedded at build time (see build.rs), with a checked launch.
//! Exit codes: 0 PASS, 1 FAIL, 77 SKIP (no CUDA driver/GPU).

use cute_runtime::{Arg, Device, DeviceBuffer, LaunchConfig, Manifest, Module, Result};
use std::process::ExitCode;

mod kernels {
    include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
}

fn run() -> Result<bool> {
    // The manifest is readable from the embedded bytes without a GPU.
    let manifest = Manifest::from_cubin(kernels::VECTOR_ADD)?.expect("cutec embeds a manifest");
    println!("embedded: {}", manifest.kernels[0]);
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, kernels::VECTOR_ADD)?;
    let k = module.kernel("vector_add")?;
    let n = 100_003;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let da = DeviceBuffer::from_host(&stream, &a)?;
    let db = DeviceBuffer::from_host(&stream, &b)?;
    let dc = DeviceBuffer::<f32>::zeros(&stream, n)?;
    k.launch_checked(
        &stream,
        LaunchConfig::linear(n as u64, 256)?,
        &[Arg::tensor(da.view_1d()), Arg::tensor(db.view_1d()), Arg::tensor(dc.view_1d())],
    )?;
    let c = dc.to_host(&stream)?;
    let bad = (0..n).filter(|&i| c[i] != a[i] + b[i]).count();
    println!("vector_add (embedded cubin): n={n} mismatches={bad}");
    Ok(bad == 0)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => {
            println!("PASS");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("FAIL");
            ExitCode::from(1)
        }
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
