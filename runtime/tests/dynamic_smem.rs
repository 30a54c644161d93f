//! A kernel's dynamic shared memory without a GPU: the manifest's `smem N` kernel line (the bytes
//! every launch must provide, written by cutec when the kernel's shared-memory tensors exceed the
//! 48 KiB static limit), its parsing, and the refusal of a launch that gives less — through
//! `KernelSig::check_dynamic_smem` (what `Kernel::launch`, `launch_checked` and the C ABI call
//! before the driver) and through host plans (`HostPlan::evaluate`, what `HostFn::call` runs).

use cute_abi::manifest::seal;
use cute_runtime::{Arg, DType, HostPlan, LaunchConfig, Manifest, RuntimeError, TensorView};

/// Two 40 KiB f32 shared-memory tensors: 2 × 40960 B (each a multiple of 16) = 81920 B.
/// `big_ok` gives exactly that, `big_more` more, `big_short` the 48 KiB static limit only,
/// `big_none` nothing (a plan from before cutec added the bytes); `small` needs none.
const MANIFEST: &str = "cutec-manifest 1
arch sm_90
kernel big
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
smem 81920
end
kernel small
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
end
host big_ok
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
launches big
launch big
grid (ceildiv $0 128) | 1 | 1
block 128 | 1 | 1
smem 81920
arg tensor 0 | 0 | $0
endlaunch
end
host big_more
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
launches big
launch big
grid 1 | 1 | 1
block 128 | 1 | 1
smem (add 81920 (mul 4 $0))
arg tensor 0 | 0 | $0
endlaunch
end
host big_short
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
launches big
launch big
grid 1 | 1 | 1
block 128 | 1 | 1
smem 49152
arg tensor 0 | 0 | $0
endlaunch
end
host big_none
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
launches big
launch big
grid 1 | 1 | 1
block 128 | 1 | 1
smem 0
arg tensor 0 | 0 | $0
endlaunch
end
host small_call
param x tensor elem=f32 space=gmem align=16 rank=1 shape=? stride=1
launches small
launch small
grid 1 | 1 | 1
block 128 | 1 | 1
smem 0
arg tensor 0 | 0 | $0
endlaunch
end
";

fn manifest() -> Manifest {
    Manifest::parse(&seal(MANIFEST)).expect("the manifest parses")
}

fn x(n: i64) -> Vec<Arg> {
    vec![Arg::tensor(TensorView::contiguous_1d(0x7f00_0000_0000, DType::F32, n).with_bytes(n as u64 * 4))]
}

fn invalid_launch(e: RuntimeError) -> String {
    match e {
        RuntimeError::InvalidLaunch(m) => m,
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

#[test]
fn parses_the_smem_line() {
    let m = manifest();
    assert_eq!(m.kernel("big").unwrap().dynamic_smem_bytes, 81920);
    // No line: the kernel needs no dynamic shared memory.
    assert_eq!(m.kernel("small").unwrap().dynamic_smem_bytes, 0);
    // Every host plan parsed (the launch's own `smem` expression is a different record).
    for h in &m.hosts {
        assert_eq!(h.plan_error, None, "{}", h.name);
    }
    assert_eq!(m.host("big_more").unwrap().launches[0].smem.to_string(), "(add 81920 (mul 4 $0))");
    // Also after the requires, and with the largest u32.
    let m = Manifest::parse(&seal(
        "cutec-manifest 1\nkernel k\nparam x scalar elem=i32\nrequire $0 | 4 | s:78\nsmem 4294967295\nend\n",
    ))
    .unwrap();
    assert_eq!(m.kernels[0].dynamic_smem_bytes, u32::MAX);
    assert_eq!(m.kernels[0].requires.len(), 1);
    // `smem` outside a kernel block (in a host block, outside a launch) means nothing: ignored.
    let m = Manifest::parse(&seal("cutec-manifest 1\nhost h\nparam x scalar elem=i32\nsmem 12\nend\n")).unwrap();
    assert_eq!(m.hosts[0].plan_error, None);
}

#[test]
fn a_malformed_smem_line_fails_the_manifest() {
    // Skipping it would let too-small launches through, so the manifest is refused, like a
    // malformed `param` or kernel `require`.
    for line in ["smem", "smem x", "smem -1", "smem 1.5", "smem 4294967296", "smem 1 2", "smem 0x100"] {
        let text = format!("cutec-manifest 1\nkernel k\nparam x scalar elem=i32\n{line}\nend\n");
        match Manifest::parse(&seal(&text)) {
            Err(RuntimeError::InvalidImage(m)) => {
                assert!(m.contains("line 4") && m.contains("kernel `k`") && m.contains("smem"), "{line}: {m}")
            }
            other => panic!("{line}: expected InvalidImage, got {other:?}"),
        }
    }
    let e = Manifest::parse(&seal("cutec-manifest 1\nkernel k\nsmem 1024\nsmem 2048\nend\n")).unwrap_err();
    assert!(e.to_string().contains("a second `smem` line"), "{e}");
    // A second kernel block starts afresh.
    let m = Manifest::parse(&seal("cutec-manifest 1\nkernel a\nsmem 1024\nend\nkernel b\nsmem 2048\nend\n")).unwrap();
    assert_eq!(m.kernels.iter().map(|k| k.dynamic_smem_bytes).collect::<Vec<_>>(), [1024, 2048]);
}

#[test]
fn a_launch_below_the_kernels_smem_is_refused() {
    let m = manifest();
    let big = m.kernel("big").unwrap();
    for given in [0, 1, 49152, 81919] {
        let msg = invalid_launch(big.check_dynamic_smem(given).unwrap_err());
        assert_eq!(
            msg,
            format!("kernel `big` needs 81920 B of dynamic shared memory (its shared-memory tensors), the launch gives {given} B")
        );
    }
    let e = big.check_dynamic_smem(0).unwrap_err();
    assert!(e.to_string().starts_with("invalid launch"), "{e}");
    // Equal or more is fine (what a launch of another kernel in the same stream could want).
    for given in [81920, 81921, 200 * 1024, u32::MAX] {
        big.check_dynamic_smem(given).unwrap();
    }
    // A kernel without the line accepts anything, 0 included.
    let small = m.kernel("small").unwrap();
    small.check_dynamic_smem(0).unwrap();
    small.check_dynamic_smem(1024).unwrap();
    // The check is independent of the launch-config check, which still applies.
    assert!(LaunchConfig { grid: (1, 1, 1), block: (128, 1, 1), shared_mem_bytes: 81920 }.validate().is_ok());
}

#[test]
fn host_plans_give_the_kernels_smem_and_are_checked() {
    let m = manifest();
    let ok = HostPlan::new(&m, "big_ok").unwrap().evaluate(&x(1024)).unwrap();
    assert_eq!(ok[0].config.shared_mem_bytes, 81920);
    let more = HostPlan::new(&m, "big_more").unwrap().evaluate(&x(1024)).unwrap();
    assert_eq!(more[0].config.shared_mem_bytes, 81920 + 4096);
    let small = HostPlan::new(&m, "small_call").unwrap().evaluate(&x(1024)).unwrap();
    assert_eq!(small[0].config.shared_mem_bytes, 0);
    // A plan giving less (cutec adds the kernel's bytes, so only a stale or hand-written plan
    // does) is refused before anything is launched, naming the host, the launch and the kernel.
    for (host, given) in [("big_short", 49152), ("big_none", 0)] {
        let plan = HostPlan::new(&m, host).unwrap();
        let msg = invalid_launch(plan.evaluate(&x(1024)).unwrap_err());
        assert_eq!(
            msg,
            format!(
                "host `{host}` launch 0 (big): kernel `big` needs 81920 B of dynamic shared memory \
                 (its shared-memory tensors), the launch gives {given} B"
            )
        );
        // `HostFn::check`/`call` evaluate the same way; the scratch form refuses too.
        let mut s = cute_runtime::plan::PlanScratch::default();
        assert!(matches!(plan.evaluate_into(&x(1024), &mut s), Err(RuntimeError::InvalidLaunch(_))));
        // A host that launches kernels needs a device: `run_without_device` says so instead.
        let mut out = Vec::new();
        assert!(matches!(plan.run_without_device(&x(1024), &mut out), Err(RuntimeError::InvalidArgument(_))));
    }
}
