//! Calling the host functions of `samples/elementwise_add.cute` from Rust.
//!
//! ```text
//! cutec build samples/elementwise_add.cute -o elementwise_add.cubin
//! cargo run -p cute-runtime --example host_add -- elementwise_add.cubin [M N]
//! ```
//!
//! For each host function: C = A + B on M×N row-major f16 tensors (default 1024×2048) through
//! `HostFn::call`, every element compared bit-exactly with the CPU's f16 sum (computed in f32,
//! rounded to nearest-even f16, which equals the correctly rounded f16 sum). Then a partial tile
//! (M = 1000) must be refused. Exit 0 PASS, 1 FAIL, 77 no GPU.

use std::process::ExitCode;

use cute_runtime::f16::{f16_bits_to_f32, f32_to_f16_bits};
use cute_runtime::{Arg, DType, Device, DeviceBuffer, Module, Result, Rng, RuntimeError};

fn run(cubin: &str, m: i64, n: i64) -> Result<bool> {
    let dev = Device::open(0)?;
    let stream = dev.new_stream()?;
    let module = Module::load(&dev, cubin)?;
    let len = (m * n) as usize;
    let mut rng = Rng::new(3);
    let a: Vec<u16> = (0..len).map(|_| f32_to_f16_bits(rng.uniform_f32(-1.0, 1.0))).collect();
    let b: Vec<u16> = (0..len).map(|_| f32_to_f16_bits(rng.uniform_f32(-1.0, 1.0))).collect();
    let want: Vec<u16> =
        a.iter().zip(&b).map(|(&x, &y)| f32_to_f16_bits(f16_bits_to_f32(x) + f16_bits_to_f32(y))).collect();
    let (da, db) = (DeviceBuffer::from_host(&stream, &a)?, DeviceBuffer::from_host(&stream, &b)?);
    let mut dc = DeviceBuffer::<u16>::zeros(&stream, len)?;
    // An f16 view: the buffer holds u16 bits, the view says what they are.
    let view = |buf: &DeviceBuffer<u16>, rows: i64| Arg::tensor(buf.view(&[rows, n], &[n, 1]).with_dtype(DType::F16));
    let mut ok = true;
    for name in ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"] {
        let host = module.host(name)?; // looks its kernels up once
        dc.copy_from_host(&stream, &vec![0xa5a5; len])?;
        host.call(&stream, &[view(&da, m), view(&db, m), view(&dc, m)])?;
        let c = dc.to_host(&stream)?; // synchronizes
        let bad = c.iter().zip(&want).filter(|(x, y)| x != y).count();
        println!("{} {name}: {m}x{n} f16, mismatches={bad} (bit-exact)", if bad == 0 { "PASS" } else { "FAIL" });
        ok &= bad == 0;
    }
    if m >= 1000 {
        let host = module.host("elementwise_add")?;
        match host.call(&stream, &[view(&da, 1000), view(&db, 1000), view(&dc, 1000)]) {
            Err(RuntimeError::ArgumentMismatch(msg)) if msg.contains("is not a multiple of the tile") => {
                println!("PASS refused partial tile: {msg}")
            }
            other => {
                println!("FAIL partial tile (M=1000) not refused: {other:?}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cubin), dims) = (args.first(), &args[args.len().min(1)..]) else {
        eprintln!("usage: host_add ELEMENTWISE_ADD.cubin [M N]");
        return ExitCode::from(2);
    };
    let (m, n) = match dims {
        [m, n] => match (m.parse(), n.parse()) {
            (Ok(m), Ok(n)) if m > 0 && n > 0 => (m, n),
            _ => {
                eprintln!("M and N must be positive integers");
                return ExitCode::from(2);
            }
        },
        [] => (1024, 2048),
        _ => {
            eprintln!("usage: host_add ELEMENTWISE_ADD.cubin [M N]");
            return ExitCode::from(2);
        }
    };
    match run(cubin, m, n) {
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
