//! Behaviour with and without a GPU. On a machine without libcuda every API
//! must return a readable `Err` (never panic); on a GPU machine the same
//! tests exercise a real device instead.

use std::process::Command;

use cute_runtime::{driver_available, ArgList, Device, DeviceBuffer, KernelArg, LaunchConfig, Module, RuntimeError};

#[test]
fn device_open_is_an_error_not_a_panic_without_a_driver() {
    match Device::open(0) {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty());
            assert!(e.is_unavailable(), "unexpected error kind: {e:?}");
            if !driver_available() {
                assert!(matches!(e, RuntimeError::NoDriver(_)), "{e:?}");
                assert!(msg.starts_with("no CUDA driver (libcuda.so) found: "), "{msg}");
            }
        }
        Ok(dev) => device_smoke(&dev),
    }
}

/// Only reached on a machine with a GPU.
fn device_smoke(dev: &Device) {
    let stream = dev.default_stream();
    assert!(!dev.name().expect("name").is_empty());
    let (major, _) = dev.compute_capability().expect("cc");
    assert!(major >= 3);

    let f: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 7.0).collect();
    let buf = DeviceBuffer::from_host(&stream, &f).expect("upload f32");
    assert_eq!(buf.len(), 1000);
    assert_ne!(buf.ptr(), 0);
    assert_eq!(buf.to_host(&stream).expect("download f32"), f);

    let i: Vec<i32> = (-500..500).collect();
    let mut ibuf = DeviceBuffer::<i32>::zeros(&stream, i.len()).expect("alloc i32");
    assert_eq!(ibuf.to_host(&stream).expect("zeros"), vec![0; 1000]);
    ibuf.copy_from_host(&stream, &i).expect("copy i32");
    assert_eq!(ibuf.to_host(&stream).expect("download i32"), i);
    assert!(ibuf.copy_from_host(&stream, &i[..10]).is_err(), "length mismatch must be an Err");

    let h: Vec<u16> = (0..1000).map(|x| cute_runtime::f16::f32_to_f16_bits(x as f32)).collect();
    let hbuf = DeviceBuffer::from_host(&stream, &h).expect("upload f16");
    assert_eq!(hbuf.to_host(&stream).expect("download f16"), h);

    let empty = DeviceBuffer::<f32>::zeros(&stream, 0).expect("empty buffer");
    assert!(empty.to_host(&stream).expect("empty download").is_empty());

    // Garbage is rejected before reaching the driver; a missing file is an Io error.
    let e = Module::load(dev, &b"definitely not a cubin"[..]).unwrap_err();
    assert!(matches!(e, RuntimeError::InvalidImage(_)), "{e:?}");
    let e = Module::load(dev, "/nonexistent/k.cubin").unwrap_err();
    assert!(matches!(e, RuntimeError::Io { .. }), "{e:?}");

    // A hand-written PTX module through the driver JIT: lookup, ABI checks, launch.
    let module = Module::load(dev, FILL_PTX.as_bytes()).expect("load PTX");
    let e = module.kernel("nope").unwrap_err();
    assert!(e.to_string().contains("`nope`"), "{e}");
    let kernel = module.kernel("fill").expect("fill");
    let out = DeviceBuffer::<i32>::zeros(&stream, 300).expect("alloc");
    let cfg = LaunchConfig::linear(300, 128).expect("cfg");
    // Wrong argument count is caught before launching (drivers with cuFuncGetParamInfo).
    if kernel.param_sizes().expect("param sizes").is_some() {
        assert_eq!(kernel.param_sizes().unwrap(), Some(vec![8, 4, 4]));
        let e = kernel.launch(&stream, cfg, &[out.arg()]).unwrap_err();
        assert!(matches!(e, RuntimeError::ArgumentMismatch(_)), "{e:?}");
    }
    let bad = LaunchConfig { grid: (1, 1, 1), block: (2048, 1, 1), shared_mem_bytes: 0 };
    assert!(matches!(kernel.launch(&stream, bad, &[]), Err(RuntimeError::InvalidLaunch(_))));
    let args = ArgList::new().tensor(&out.tensor_arg(&[300], &[])).arg(KernelArg::I32(42));
    kernel.launch(&stream, cfg, args.as_slice()).expect("launch");
    stream.synchronize().expect("sync");
    let got = out.to_host(&stream).expect("download");
    let want: Vec<i32> = (0..300).map(|i| 42 + i).collect();
    assert_eq!(got, want);
}

/// `fill(out: tensor<i32, gmem, (?):(1)>, base: i32)`: out[i] = base + i.
const FILL_PTX: &str = r#"
.version 7.0
.target sm_52
.address_size 64

.visible .entry fill(
    .param .u64 .ptr .global .align 4 out_ptr,
    .param .u32 out_shape0,
    .param .u32 base
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [out_ptr];
    ld.param.u32 %r1, [out_shape0];
    ld.param.u32 %r2, [base];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r6, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r6, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r6, 4;
    add.s64 %rd2, %rd2, %rd3;
    add.s32 %r7, %r2, %r6;
    st.global.u32 [%rd2], %r7;
DONE:
    ret;
}
"#;

#[test]
fn out_of_range_ordinal_is_an_error() {
    let e = Device::open(100_000).unwrap_err();
    assert!(e.is_unavailable(), "{e:?}");
}

#[test]
fn driver_queries_never_panic() {
    let count = Device::count();
    let version = cute_runtime::driver_version();
    if !driver_available() {
        assert!(matches!(count, Err(RuntimeError::NoDriver(_))));
        assert!(matches!(version, Err(RuntimeError::NoDriver(_))));
    } else {
        assert!(version.is_ok());
    }
}

fn run_cli(args: &[&str]) -> (i32, String) {
    // CUTE_RUN_BIN lets a test binary carried to the GPU machine find the runner beside it.
    let bin = std::env::var("CUTE_RUN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_cute-run").to_string());
    let out = Command::new(bin).args(args).output().expect("spawn cute-run");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn cli_exit_codes() {
    let (code, text) = run_cli(&[]);
    assert_eq!(code, 2, "{text}");
    let (code, text) = run_cli(&["vector-add"]);
    assert_eq!(code, 2, "{text}");
    let (code, text) = run_cli(&["vector-add", "k.cubin", "--bogus"]);
    assert_eq!(code, 2, "{text}");
    let (code, text) = run_cli(&["--help"]);
    assert_eq!(code, 0, "{text}");

    let gpu = Device::open(0).is_ok();
    let (code, text) = run_cli(&["info"]);
    if gpu {
        assert_eq!(code, 0, "{text}");
        assert!(text.contains("sm_"), "{text}");
    } else {
        assert_eq!(code, 77, "{text}");
        assert!(text.starts_with("SKIP: no CUDA driver/GPU: "), "{text}");
    }
    let (code, text) = run_cli(&["vector-add", "/nonexistent/vector_add.cubin", "--n", "1000"]);
    if gpu {
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("FAIL"), "{text}");
    } else {
        assert_eq!(code, 77, "{text}");
        assert!(text.contains("SKIP"), "{text}");
    }
}

#[test]
fn plan_and_manifest_read_a_cubin_without_a_gpu() {
    let cubin = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/vector_add.sm_90.elf");
    // HOST is optional: without it, every host function's plan (this cubin has none).
    let (code, text) = run_cli(&["plan", cubin]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(text, format!("(no host functions in {cubin})\n"));
    let (code, text) = run_cli(&["plan", cubin, "nope"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.starts_with("FAIL: no host function `nope`"), "{text}");
    for bad in [&["plan", cubin, "h", "extra"][..], &["plan", cubin, "--shape", "8"], &["plan"]] {
        let (code, text) = run_cli(bad);
        assert_eq!(code, 2, "{bad:?}: {text}");
    }
    // A file that is not a cubin is said to be one, not a cubin without a manifest.
    let ptx = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/vector_add.ptx");
    for cmd in ["plan", "manifest"] {
        let (code, text) = run_cli(&[cmd, ptx]);
        assert_eq!(code, 1, "{text}");
        assert!(text.starts_with(&format!("FAIL: invalid kernel image: {ptx} is not a cubin")), "{text}");
    }
}
