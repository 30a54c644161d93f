//! Host functions without a GPU: parsing launch plans from the manifest, evaluating them, and every
//! refusal (partial tiles, bounds, argument checks, out-of-range grids, malformed plans).
//! `testdata/elementwise_add.manifest` is `cutec build samples/elementwise_add.cute --emit=manifest`.

use cute_abi::manifest::seal;
use cute_runtime::plan::{EvalError, Expr, HostPlan, PlanArg};
use cute_runtime::{Arg, DType, KernelArg, Manifest, RuntimeError, TensorView};

const EW: &str = include_str!("../testdata/elementwise_add.manifest");

fn ew() -> Manifest {
    Manifest::parse(&seal(EW)).expect("the elementwise_add manifest parses")
}

/// Three row-major M×N f16 views at distinct aligned addresses, with their sizes.
fn views(m: i64, n: i64) -> Vec<Arg> {
    (0..3)
        .map(|i| {
            Arg::tensor(
                TensorView::new(0x1_0000_0000 * (i + 1), DType::F16, &[m, n], &[n, 1]).with_bytes((m * n * 2) as u64),
            )
        })
        .collect()
}

fn mismatch(e: RuntimeError) -> String {
    match e {
        RuntimeError::ArgumentMismatch(m) => m,
        other => panic!("expected ArgumentMismatch, got {other:?}"),
    }
}

#[test]
fn parses_the_three_host_functions() {
    let m = ew();
    let names: Vec<&str> = m.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["naive_elementwise_add", "vectorized_elementwise_add", "elementwise_add"]);
    for h in &m.hosts {
        assert_eq!(h.plan_error, None, "{}", h.name);
        assert_eq!(h.params.len(), 3);
        assert_eq!(h.launches.len(), 1);
        assert_eq!(h.launches_kernels, vec![h.launches[0].kernel.clone()]);
        assert_eq!(h.var_sources().len(), 9);
    }
    let h = m.host("elementwise_add").unwrap();
    let l = &h.launches[0];
    assert_eq!(l.kernel, "elementwise_add_kernel");
    assert_eq!(l.grid[0].to_string(), "(mul (ceildiv $6 16) (ceildiv $7 256))");
    assert_eq!(l.block[0], Expr::Const(128));
    let PlanArg::Tensor { host_param, offset, dyn_leaves } = &l.args[2] else { panic!() };
    assert_eq!((*host_param, offset), (2, &Expr::Const(0)));
    let shown: Vec<String> = dyn_leaves.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["(ceildiv $6 16)", "(ceildiv $7 256)", "$8", "(mul 16 $8)"]);
    // The plan prints back in the manifest's syntax.
    let text = l.to_string();
    assert!(EW.contains(&text), "{text}");
    assert_eq!(h.var_name(h.var_sources()[2]), "mA.stride[0]");
}

#[test]
fn expressions_parse_print_and_evaluate() {
    let vars = [7, -7, 2, 0, i64::MAX];
    let cases = [
        ("42", 42),
        ("$0", 7),
        ("(mul 2 $0 $2)", 28),
        ("(add $0 $1 1)", 1),
        ("(div $0 $2)", 3),
        ("(div $1 $2)", -4), // floor
        ("(mod $1 $2)", 1),  // Euclidean
        ("(mod $0 -2)", 1),
        ("(ceildiv $0 $2)", 4),
        ("(ceildiv $1 $2)", -3),
        ("(min $0 $1 3)", -7),
        ("(ceildiv (mul $0 16) 8)", 14),
    ];
    for (text, want) in cases {
        let e = Expr::parse(text).unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(e.to_string(), text);
        assert_eq!(e.eval(&vars), Ok(want), "{text}");
    }
    assert!(matches!(Expr::parse("(mul $4 2)").unwrap().eval(&vars), Err(EvalError::Overflow(_))));
    assert!(matches!(Expr::parse("(add $4 1)").unwrap().eval(&vars), Err(EvalError::Overflow(_))));
    assert!(matches!(Expr::parse("(div 1 $3)").unwrap().eval(&vars), Err(EvalError::DivByZero(_))));
    assert!(matches!(Expr::parse("(mod 1 $3)").unwrap().eval(&vars), Err(EvalError::DivByZero(_))));
    assert!(matches!(Expr::parse("(ceildiv 1 0)").unwrap().eval(&vars), Err(EvalError::DivByZero(_))));
    assert!(matches!(Expr::parse("(div -9223372036854775808 -1)").unwrap().eval(&vars), Err(EvalError::Overflow(_))));
    assert_eq!(Expr::parse("$9").unwrap().eval(&vars), Err(EvalError::UnboundVar(9)));
    for bad in [
        "",
        "(",
        "(mul",
        "(pow 2 3)",
        "(div 1)",
        "(div 1 2 3)",
        "(mul)",
        "$",
        "$x",
        "1 2",
        "()",
        "(mul 1) x",
        "99999999999999999999",
    ] {
        assert!(Expr::parse(bad).is_err(), "{bad:?} should not parse");
    }
    let deep = format!("{}1{}", "(add 1 ".repeat(100), ")".repeat(100));
    assert!(Expr::parse(&deep).unwrap_err().contains("deeper"));
}

#[test]
fn evaluates_every_host_function() {
    let m = ew();
    let (rows, cols) = (2048i64, 4096i64);
    let args = views(rows, cols);
    let p = |name| HostPlan::new(&m, name).unwrap().evaluate(&args).unwrap();

    let l = &p("elementwise_add")[0];
    assert_eq!(l.kernel, "elementwise_add_kernel");
    assert_eq!(l.config.grid, ((2048 / 16 * 4096 / 256) as u32, 1, 1));
    assert_eq!(l.config.block, (128, 1, 1));
    // gA: ptr, shape (128, 16), strides (4096, 16*4096).
    assert_eq!(
        &l.args[..5],
        &[
            KernelArg::Ptr(0x1_0000_0000),
            KernelArg::I32(128),
            KernelArg::I32(16),
            KernelArg::I32(4096),
            KernelArg::I32(65536)
        ]
    );
    assert_eq!(l.args.len(), 15);
    assert_eq!(l.views[0].3, vec![16, 256, 128, 16]);
    assert_eq!(l.views[0].4, vec![4096, 1, 65536, 256]);

    let l = &p("naive_elementwise_add")[0];
    assert_eq!(l.config.grid.0 as i64, rows * cols / 256);
    assert_eq!(
        &l.args[..4],
        &[KernelArg::Ptr(0x1_0000_0000), KernelArg::I32(2048), KernelArg::I32(4096), KernelArg::I32(4096)]
    );

    let l = &p("vectorized_elementwise_add")[0];
    assert_eq!(l.config.grid.0 as i64, rows * cols / 8 / 256);
    assert_eq!(
        &l.args[..4],
        &[KernelArg::Ptr(0x1_0000_0000), KernelArg::I32(2048), KernelArg::I32(512), KernelArg::I32(4096)]
    );
    // ((1,8),(M,N/8)):((0,1),(ld,8)) reaches exactly the last element of mA.
    assert_eq!(l.views[0].3, vec![1, 8, 2048, 512]);
    assert_eq!(l.views[0].4, vec![0, 1, 4096, 8]);
}

#[test]
fn partial_tiles_are_refused() {
    let m = ew();
    let e = mismatch(HostPlan::new(&m, "elementwise_add").unwrap().evaluate(&views(1000, 2048)).unwrap_err());
    assert!(
        e.contains("host `elementwise_add`: mA extent 1000 (mode 0) is not a multiple of the tile 16; this kernel has no tail handling"),
        "{e}"
    );
    let e = mismatch(HostPlan::new(&m, "elementwise_add").unwrap().evaluate(&views(2048, 1000)).unwrap_err());
    assert!(e.contains("mA extent 1000 (mode 1) is not a multiple of the tile 256"), "{e}");
    // The vectorized plan divides N by 8 (floor in current cutec, ceildiv in older ones): either
    // way a partial tile is refused.
    let e = mismatch(HostPlan::new(&m, "vectorized_elementwise_add").unwrap().evaluate(&views(64, 1001)).unwrap_err());
    assert!(
        e.contains("mA extent 1001 (mode 1) is not a multiple of the tile 8; this kernel has no tail handling"),
        "{e}"
    );
    // The naive plan's grid is (M*N)/256: a remainder would not be computed.
    let e = mismatch(HostPlan::new(&m, "naive_elementwise_add").unwrap().evaluate(&views(10, 100)).unwrap_err());
    assert!(e.contains("grid dimension 0 of launch 0 (naive_elementwise_add_kernel): (mul $0 $1) = 1000 (for the grid) is not a multiple of the tile 256"), "{e}");
    // Only mC differs: the message names it.
    let mut args = views(2048, 2048);
    args[2] = Arg::tensor(TensorView::new(0x9_0000_0000, DType::F16, &[2040, 2048], &[2048, 1]));
    let e = mismatch(HostPlan::new(&m, "elementwise_add").unwrap().evaluate(&args).unwrap_err());
    assert!(e.contains("mC extent 2040 (mode 0) is not a multiple of the tile 16"), "{e}");
    // The naive launch has no tiles: M = 1000 is fine there (M*N is a multiple of 256).
    assert!(HostPlan::new(&m, "naive_elementwise_add").unwrap().evaluate(&views(1000, 2048)).is_ok());
}

#[test]
fn host_arguments_are_checked_like_kernel_launches() {
    let m = ew();
    let plan = HostPlan::new(&m, "elementwise_add").unwrap();
    let good = views(256, 256);
    let with = |i: usize, v: TensorView| {
        let mut a = good.clone();
        a[i] = Arg::tensor(v);
        a
    };
    let cases: Vec<(Vec<Arg>, &str)> = vec![
        (good[..2].to_vec(), "host `elementwise_add` takes 3 parameters (mA, mB, mC) but 2 arguments were given"),
        (
            with(1, TensorView::new(0x2_0000_0000, DType::F32, &[256, 256], &[256, 1])),
            "parameter `mB` (argument 1): dtype mismatch: the host expects f16 elements but the view has f32",
        ),
        (
            with(0, TensorView::new(0x2_0000_0000, DType::F16, &[256, 256], &[1, 256])),
            "parameter `mA` (argument 0): stride mismatch: stride entry 1 is 1 in the host",
        ),
        (
            with(2, TensorView::new(0x2_0000_0008, DType::F16, &[256, 256], &[256, 1])),
            "parameter `mC` (argument 2): misaligned pointer",
        ),
        (with(2, TensorView::new(0, DType::F16, &[256, 256], &[256, 1])), "parameter `mC` (argument 2): null pointer"),
        (with(0, TensorView::new(0x2_0000_0000, DType::F16, &[256], &[1])), "rank mismatch"),
        (with(0, TensorView::new(0x2_0000_0000, DType::F16, &[1 << 31, 16], &[16, 1])), "is not a positive i32 extent"),
        (with(0, TensorView::new(0x2_0000_0000, DType::F16, &[256, 256], &[256, 1]).with_bytes(1000)), "out of bounds"),
    ];
    for (args, want) in cases {
        let e = mismatch(plan.evaluate(&args).unwrap_err());
        assert!(e.contains(want), "{e}\n  wanted: {want}");
    }
    let mut args = good.clone();
    args[0] = Arg::i32(5);
    assert!(mismatch(plan.evaluate(&args).unwrap_err()).contains("expects a tensor"));
}

/// A small module to exercise the plan checks: kernel `k(x: (?):(1) f32, n: i32)`, host
/// `h(a: (?):(1) f32, n: i32)` with the launch written by the test.
fn custom(launch: &str) -> Manifest {
    Manifest::parse(&seal(&custom_text(launch))).unwrap()
}

fn custom_text(launch: &str) -> String {
    format!(
        "cutec-manifest 1\narch sm_90\nkernel k\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param n scalar elem=i32\nend\nhost h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param n scalar elem=i32\nlaunches k\n{launch}end\n"
    )
}

fn call(m: &Manifest, len: i64, n: i32) -> cute_runtime::Result<Vec<cute_runtime::PlannedLaunch>> {
    HostPlan::new(m, "h")?.evaluate(&[Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, len)), Arg::i32(n)])
}

/// The kernel's `cluster X Y Z` line: a plan's run-time grid must be whole clusters in every
/// dimension, refused before anything is launched with the grid and the cluster in the message.
#[test]
fn grids_must_be_whole_clusters() {
    let launch = "launch k\ngrid (div $0 32) | $1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | $1\nendlaunch\n";
    let m = Manifest::parse(&seal(
        &custom_text(launch)
            .replace("param n scalar elem=i32\nend\nhost", "param n scalar elem=i32\ncluster 2 2 1\nend\nhost"),
    ))
    .unwrap();
    assert_eq!(m.kernels[0].cluster, [2, 2, 1]);
    let l = call(&m, 128, 6).unwrap();
    assert_eq!((l[0].config.grid.0, l[0].config.grid.1), (4, 6));
    for (len, n, grid) in [(96, 2, "(3, 2, 1)"), (128, 3, "(4, 3, 1)")] {
        match call(&m, len, n).unwrap_err() {
            RuntimeError::InvalidLaunch(e) => {
                assert!(e.contains(&format!("kernel `k` runs in thread-block clusters of (2, 2, 1) blocks, but the grid {grid} is not a multiple")), "{e}");
                assert!(e.starts_with("host `h` launch 0 (k)"), "{e}");
            }
            other => panic!("expected InvalidLaunch, got {other:?}"),
        }
    }
    // Without the line: clusters of one block, any grid.
    assert_eq!(custom(launch).kernels[0].cluster, [1, 1, 1]);
    assert!(call(&custom(launch), 96, 3).is_ok());
    // A malformed or repeated line fails the manifest: skipping it would launch partial clusters.
    for (line, want) in [
        ("cluster 2 1", "bad `cluster` line"),
        ("cluster 2 0 1", "bad `cluster` line"),
        ("cluster 2 1 1\ncluster 2 1 1", "a second `cluster` line"),
    ] {
        let text = custom_text(launch)
            .replace("param n scalar elem=i32\nend\nhost", &format!("param n scalar elem=i32\n{line}\nend\nhost"));
        let e = Manifest::parse(&seal(&text)).unwrap_err().to_string();
        assert!(e.contains(want), "{line}: {e}");
    }
}

#[test]
fn views_must_stay_inside_their_host_tensor() {
    // x = a[n .. n + $0/2): inside when n <= len/2.
    let m = custom("launch k\ngrid 1 | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | $1 | (div $0 2)\narg scalar i32 | $1\nendlaunch\n");
    let l = call(&m, 100, 50).unwrap();
    assert_eq!(l[0].args, vec![KernelArg::Ptr(0x1000 + 200), KernelArg::I32(50), KernelArg::I32(50)]);
    let e = mismatch(call(&m, 100, 51).unwrap_err());
    assert!(e.contains("the view reaches element 100 but `a` (shape [100], stride [1]) ends at element 99"), "{e}");
    let e = mismatch(call(&m, 100, -1).unwrap_err());
    assert!(e.contains("negative offset"), "{e}");
}

#[test]
fn grids_and_scalars_are_range_checked() {
    let m = custom("launch k\ngrid (mul $0 $1) | 1 | 1\nblock $1 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | (mul $0 $1)\nendlaunch\n");
    assert_eq!(call(&m, 100, 4).unwrap()[0].config.grid, (400, 1, 1));
    let e = call(&m, 100, 0).unwrap_err();
    assert!(
        matches!(&e, RuntimeError::InvalidLaunch(msg) if msg.contains("host `h` launch 0 (k)") && msg.contains("non-zero")),
        "{e}"
    );
    let e = call(&m, 100, 2048).unwrap_err();
    assert!(matches!(&e, RuntimeError::InvalidLaunch(msg) if msg.contains("block (2048, 1, 1) exceeds")), "{e}");
    let e = call(&m, 100, -4).unwrap_err();
    assert!(
        matches!(&e, RuntimeError::InvalidLaunch(msg) if msg.contains("grid dimension 0 = (mul $0 $1) = -400 is out of range")),
        "{e}"
    );
    let e = call(&m, 1 << 30, 4).unwrap_err();
    assert!(
        matches!(&e, RuntimeError::InvalidLaunch(msg) if msg.contains("grid dimension 0 = (mul $0 $1) = 4294967296 is out of range")),
        "{e}"
    );
    let m2 = custom("launch k\ngrid 1 | 1 | 1\nblock 1 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | (mul $0 $1)\nendlaunch\n");
    let e = mismatch(call(&m2, 1 << 30, 4).unwrap_err());
    assert!(e.contains("argument `n` = (mul $0 $1) = 4294967296 does not fit i32"), "{e}");
    // Overflow inside an expression is an error too, not a wrap-around.
    let m = custom("launch k\ngrid (mul $0 $0 $0 $0 $0) | 1 | 1\nblock 1 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | 0\nendlaunch\n");
    let e = mismatch(call(&m, 1 << 20, 1).unwrap_err());
    assert!(e.contains("integer overflow evaluating (mul $0 $0 $0 $0 $0)"), "{e}");
    let m = custom("launch k\ngrid (min $0 (div 7 $1)) | 1 | 1\nblock 1 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | 0\nendlaunch\n");
    assert!(mismatch(call(&m, 10, 0).unwrap_err()).contains("division by zero"));
}

#[test]
fn malformed_plans_load_but_cannot_be_called() {
    let cases = [
        (
            "launch k\ngrid (pow 2 3) | 1 | 1\narg tensor 0 | 0 | $0\narg scalar i32 | 0\nendlaunch\n",
            "unknown operator `pow`",
        ),
        ("launch k\ngrid 1 | 1\narg tensor 0 | 0 | $0\narg scalar i32 | 0\nendlaunch\n", "`grid` needs 3 expressions"),
        ("launch k\narg tensor 0 | 0 | $0\narg scalar i32 | 0\n", "not closed with `endlaunch`"),
        ("launch q\narg tensor 0 | 0 | $0\nendlaunch\n", "no kernel `q`"),
        ("launch k\narg tensor 0 | 0 | $0\nendlaunch\n", "takes 2 parameters but the plan passes 1"),
        (
            "launch k\narg tensor 0 | 0 | $0 | $0\narg scalar i32 | 0\nendlaunch\n",
            "1 dynamic entries but the plan gives 2",
        ),
        ("launch k\narg tensor 1 | 0 | $0\narg scalar i32 | 0\nendlaunch\n", "host parameter `n` is not a tensor"),
        ("launch k\narg tensor 0 | 0 | $7\narg scalar i32 | 0\nendlaunch\n", "$7 but the host has 2 dynamic values"),
        (
            "launch k\narg scalar i32 | 0\narg tensor 0 | 0 | $0\nendlaunch\n",
            "the kernel takes a tensor but the plan passes a scalar",
        ),
        ("launch k\narg tensor 0 | 0 | $0\narg matrix 3\nendlaunch\n", "unknown argument kind `matrix`"),
        ("launches k\n", "has no launch plan"),
    ];
    for (launch, want) in cases {
        let m = custom(launch);
        assert_eq!(m.kernels.len(), 1, "the rest of the manifest still loads");
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(want), "{launch}\n{e}\n  wanted: {want}");
    }
    // Unknown records inside a launch block are ignored (forward compatibility). (A cluster shape
    // is no launch record: it is compiled into the kernel, so it is the kernel block's `cluster`
    // line, tested in `grids_must_be_whole_clusters`.)
    let m = custom("launch k\npriority 3\narg tensor 0 | 0 | $0\narg scalar i32 | $1\nendlaunch\n");
    assert_eq!(m.hosts[0].plan_error, None);
    assert_eq!(call(&m, 10, 3).unwrap()[0].args[2], KernelArg::I32(3));
    let e = HostPlan::new(&m, "nope").unwrap_err().to_string();
    assert!(e.contains("no host function `nope`") && e.contains("host functions: h"), "{e}");
}

#[test]
fn declared_divisibility_is_enforced() {
    // What cutec writes once manifests carry divisibility: `(?,?{div=8}):(?{div=8},1)`.
    let text = EW.replace("shape=(?,?) stride=(?,1)", "shape=(?,?{div=8}) stride=(?{div=8},1)");
    let m = Manifest::parse(&seal(&text)).unwrap();
    let h = m.host("vectorized_elementwise_add").unwrap();
    assert!(h.to_string().contains("tensor<f16, gmem, (?,?{div=8}):(?{div=8},1), align: 16>"), "{h}");
    let plan = HostPlan::new(&m, "vectorized_elementwise_add").unwrap();
    assert!(plan.evaluate(&views(64, 2048)).is_ok());
    // N = 1001: refused by the declared divisibility before any plan evaluation.
    let e = mismatch(plan.evaluate(&views(64, 1001)).unwrap_err());
    assert!(
        e.contains("parameter `mA` (argument 0): divisibility: shape entry 1 = 1001 must be a multiple of 8"),
        "{e}"
    );
    // A padded row stride that breaks 16-byte rows: refused (the kernels use 16-byte vector loads).
    let args: Vec<Arg> = (0..3)
        .map(|i| Arg::tensor(TensorView::new(0x1_0000_0000 * (i + 1), DType::F16, &[64, 2048], &[2052, 1])))
        .collect();
    let e = mismatch(plan.evaluate(&args).unwrap_err());
    assert!(e.contains("divisibility: stride entry 0 = 2052 must be a multiple of 8"), "{e}");
}

#[test]
fn require_lines_and_prints() {
    // What current cutec writes: `require $0 | 16 | s:HEX` launch conditions, `print` steps.
    let req = |k: usize, d: i64, what: &str| {
        let hex: String = what.bytes().map(|b| format!("{b:02x}")).collect();
        format!("require ${k} | {d} | s:{hex}\n")
    };
    let mut text = EW.to_string();
    let at = text.find("launches elementwise_add_kernel").unwrap();
    text.insert_str(at, &format!("{}print s:4d3d | e:$0 | s:0a\n", req(0, 16, "a run-time extent tiled by 16")));
    let m = Manifest::parse(&seal(&text)).unwrap();
    let h = m.host("elementwise_add").unwrap();
    assert_eq!(h.plan_error, None);
    assert_eq!(h.requires.len(), 1);
    assert_eq!(h.steps.len(), 2);
    let plan = HostPlan::new(&m, "elementwise_add").unwrap();
    let e = mismatch(plan.evaluate(&views(1000, 2048)).unwrap_err());
    assert_eq!(
        e,
        "host `elementwise_add`: mA extent 1000 (mode 0) is not a multiple of the tile 16 (a run-time extent tiled by 16); this kernel has no tail handling"
    );
    let cute_runtime::HostStep::Print(segs) = &h.steps[0] else { panic!("{:?}", h.steps) };
    assert_eq!(cute_runtime::plan::format_print(segs, &[2048]).unwrap(), "M=2048\n");

    // A kernel's require is checked by checked launches (its $k are its dynamic ABI values).
    let kt = format!(
        "cutec-manifest 1\nkernel k\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n{}end\n",
        req(0, 128, "a run-time extent tiled by 128")
    );
    let km = Manifest::parse(&seal(&kt)).unwrap();
    let sig = km.kernel("k").unwrap();
    assert!(cute_runtime::check_args(sig, &[Arg::tensor(TensorView::contiguous_1d(0x100, DType::F32, 256))]).is_ok());
    let e = mismatch(
        cute_runtime::check_args(sig, &[Arg::tensor(TensorView::contiguous_1d(0x100, DType::F32, 200))]).unwrap_err(),
    );
    assert!(
        e.contains(
            "kernel `k`: x extent 200 (mode 0) is not a multiple of the tile 128 (a run-time extent tiled by 128)"
        ),
        "{e}"
    );
    // A malformed kernel require fails the manifest (skipping it would be unsafe).
    assert!(Manifest::parse(&seal("cutec-manifest 1\nkernel k\nrequire $0 | 0\nend\n")).is_err());
}

/// `require $0 | >=101` (version 8: `a[100]` on a tensor of a run-time extent): checked launches
/// and host calls refuse an extent below 101, naming the kernel, the parameter, its mode and the
/// minimum, and accept 101.
#[test]
fn static_coordinate_minimums_are_enforced() {
    let what = hex("the static index 100 in the shape ?");
    let kernel = format!("param n scalar elem=i32\nrequire $0 | >=101 | {what}\nend\nhost");
    let launch =
        "launch k\ngrid 1 | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | $1\nendlaunch\n";
    let text = custom_text(launch)
        .replace("cutec-manifest 1", "cutec-manifest 8")
        .replace("param n scalar elem=i32\nend\nhost", &kernel);
    let m = Manifest::parse(&seal(&text)).unwrap();
    assert_eq!(m.kernels[0].requires[0].need, cute_abi::manifest::Need::AtLeast(101));
    let want = "kernel `k`: x extent 100 (mode 0) is below 101, the smallest extent its static coordinate allows (the static index 100 in the shape ?); the kernel would access memory outside the tensor";
    // A checked launch of the kernel.
    let sig = m.kernel("k").unwrap();
    let x = |n: i64| [Arg::tensor(TensorView::contiguous_1d(0x100, DType::F32, n)), Arg::i32(1)];
    let e = mismatch(cute_runtime::check_args(sig, &x(100)).unwrap_err());
    assert!(e.contains(want), "{e}");
    assert!(cute_runtime::check_args(sig, &x(101)).is_ok());
    // A host function launching it.
    let e = mismatch(call(&m, 100, 1).unwrap_err());
    assert!(e.starts_with("host `h`: launch 0 (k): ") && e.contains(&want["kernel `k`: ".len()..]), "{e}");
    assert!(call(&m, 101, 1).is_ok());
    // A minimum that is not a positive integer fails the manifest (skipping it would be unsafe).
    for bad in [">=0", ">=-3", ">=x", ">="] {
        let e = Manifest::parse(&seal(&text.replace(">=101", bad))).unwrap_err().to_string();
        assert!(e.contains(&format!("`require`: bad minimum `{bad}`")), "{e}");
    }
}

/// `s:HEX` of a text, as cutec writes it.
fn hex(t: &str) -> String {
    format!("s:{}", t.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

#[test]
fn assert_lines_refuse_calls_that_break_them() {
    // What cutec writes for `assert(size(a) == 2 * n, "a must hold 2n elements")` and
    // `assert(n >= 1)` in `h(a, n)`: $0 = a.shape[0], $1 = n.
    let launch =
        "launch k\ngrid 1 | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | $1\nendlaunch\n";
    let asserts = format!(
        "assert $0 == (mul 2 $1) | {} | {} | {}\nassert $1 >= 1 | {} | {} | {}\n",
        hex("a must hold 2n elements"),
        hex("size(a)"),
        hex("2 * n"),
        hex("n >= 1"),
        hex("n"),
        hex("1")
    );
    let m = custom(&format!("{asserts}{launch}"));
    let h = m.host("h").unwrap();
    assert_eq!(h.plan_error, None);
    assert_eq!(h.asserts.len(), 2);
    let a = &h.asserts[0];
    assert_eq!(
        (a.lhs.to_string(), a.op, a.rhs.to_string()),
        ("$0".to_string(), cute_runtime::plan::CmpOp::Eq, "(mul 2 $1)".to_string())
    );
    assert_eq!(
        (a.message.as_str(), a.lhs_text.as_str(), a.rhs_text.as_str()),
        ("a must hold 2n elements", "size(a)", "2 * n")
    );
    assert_eq!(a.to_string(), "$0 == (mul 2 $1) (a must hold 2n elements)");
    // Holds: the call goes through.
    assert_eq!(call(&m, 100, 50).unwrap().len(), 1);
    // Broken: refused before anything is launched, with the message and both sides' values.
    let e = mismatch(call(&m, 100, 40).unwrap_err());
    assert_eq!(e, "host `h`: assert failed: a must hold 2n elements (size(a) = 100, 2 * n = 80)");
    // A literal side is not repeated; the first assert that fails is reported.
    let e = mismatch(call(&m, 0x7fff_fffe, 0).unwrap_err());
    assert_eq!(e, "host `h`: assert failed: a must hold 2n elements (size(a) = 2147483646, 2 * n = 0)");
    let m1 = custom(&format!("assert $1 >= 1 | {} | {} | {}\n{launch}", hex("n >= 1"), hex("n"), hex("1")));
    assert_eq!(mismatch(call(&m1, 10, 0).unwrap_err()), "host `h`: assert failed: n >= 1 (n = 0)");
    // Every operator; without texts, a side is named after the parameter it is (or its expression).
    for (op, ok, refused) in [("==", 4, 5), ("!=", 5, 4), ("<", 3, 4), ("<=", 4, 5), (">", 5, 4), (">=", 4, 3)] {
        let m = custom(&format!("assert $1 {op} 4\n{launch}"));
        assert!(call(&m, 10, ok).is_ok(), "{op} {ok}");
        assert_eq!(
            mismatch(call(&m, 10, refused).unwrap_err()),
            format!("host `h`: assert failed: n {op} 4 (n = {refused})")
        );
    }
    // An assert that cannot be evaluated refuses the call too.
    let m = custom(&format!("assert (div $0 $1) == 1 | {}\n{launch}", hex("ratio")));
    assert!(mismatch(call(&m, 10, 0).unwrap_err()).contains("assert `ratio`: division by zero"));
    // Asserts are checked by `run_without_device` as well (a host that launches nothing).
    let text = format!(
        "cutec-manifest 1\nhost h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam n scalar elem=i32\nassert $1 > 0 | {}\nend\n",
        hex("n must be positive")
    );
    let m = Manifest::parse(&seal(&text)).unwrap();
    let plan = HostPlan::new(&m, "h").unwrap();
    let mut out = Vec::new();
    let args = [Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, 8)), Arg::i32(0)];
    let e = mismatch(plan.run_without_device(&args, &mut out).unwrap_err());
    assert_eq!(e, "host `h`: assert failed: n must be positive (n = 0)");
    let m = custom(&format!("assert (add $0 $1) < 8\n{launch}"));
    assert_eq!(mismatch(call(&m, 10, 0).unwrap_err()), "host `h`: assert failed: (add $0 $1) < 8 ((add $0 $1) = 10)");
}

#[test]
fn malformed_assert_lines() {
    let launch = "launch k\narg tensor 0 | 0 | $0\narg scalar i32 | 0\nendlaunch\n";
    for (line, want) in [
        ("assert $0 =< 1", "expected a comparison"),
        ("assert $0 1", "expected a comparison"),
        ("assert $0 ==", "expected an expression"),
        ("assert ? == ? | s:00", "unexpected `?`"),
        ("assert $0 == 1 2", "unexpected `2` after the condition"),
        ("assert $0 == 1 | x:41", "expected `s:HEX`"),
        ("assert $9 == 1", "assert: $9 but the host has 2 dynamic values"),
    ] {
        let m = custom(&format!("{line}\n{launch}"));
        assert_eq!(m.kernels.len(), 1, "the rest of the manifest still loads");
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(want), "{line}\n{e}\n  wanted: {want}");
    }
    // Kernels have no assert lines: one in a kernel block fails the manifest rather than being skipped.
    assert!(Manifest::parse(&seal("cutec-manifest 1\nkernel k\nassert 1 == 1\nend\n")).is_err());
}

/// Kernel `k(x: (?):(1) f32, a: f32, b: f16, c: f64, u: u32, q: bool, w: i64)` and host
/// `h(t: (?):(1) f32, a: f32, b: f16, c: f64, n: i32, q: bool, w: i64)`, the launch written by
/// the test.
fn scalars(args: &str) -> Manifest {
    scalars_grid("1", args)
}

fn scalars_grid(grid: &str, args: &str) -> Manifest {
    let text = format!(
        "cutec-manifest 1\narch sm_90\nkernel k\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param a scalar elem=f32\nparam b scalar elem=f16\nparam c scalar elem=f64\nparam u scalar elem=u32\n\
         param q scalar elem=bool\nparam w scalar elem=i64\nend\n\
         host h\nparam t tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam a scalar elem=f32\n\
         param b scalar elem=f16\nparam c scalar elem=f64\nparam n scalar elem=i32\nparam q scalar elem=bool\n\
         param w scalar elem=i64\nlaunches k\nlaunch k\ngrid {grid} | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\n{args}endlaunch\nend\n"
    );
    Manifest::parse(&seal(&text)).unwrap()
}

fn scalar_call(m: &Manifest, a: f32, n: i32, w: i64) -> cute_runtime::Result<Vec<KernelArg>> {
    let args = [
        Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, 64)),
        Arg::f32(a),
        Arg::f16_bits(0x3c00), // 1.0
        Arg::f64(-2.5),
        Arg::i32(n),
        Arg::bool(true),
        Arg::i64(w),
    ];
    HostPlan::new(m, "h")?.evaluate(&args).map(|l| l[0].args.clone())
}

#[test]
fn float_and_other_scalars_pass_through_plans() {
    // $0 = t.shape[0], $1 = a, $2 = b, $3 = c, $4 = n, $5 = q, $6 = w.
    let m = scalars("arg scalar f32 | $1\narg scalar f16 | $2\narg scalar f64 | $3\narg scalar u32 | (mul $4 2)\narg scalar bool | $5\narg scalar i64 | $6\n");
    assert_eq!(m.hosts[0].plan_error, None);
    let args = scalar_call(&m, 0.75, 21, -(1 << 40)).unwrap();
    assert_eq!(
        args,
        vec![
            KernelArg::Ptr(0x1000),
            KernelArg::I32(64),
            KernelArg::F32(0.75),
            KernelArg::F16Bits(0x3c00),
            KernelArg::F64(-2.5),
            KernelArg::U32(42),
            KernelArg::U8(1),
            KernelArg::I64(-(1 << 40))
        ]
    );
    // Float constants are their bit patterns: 2.0f32, 1.5 as f16, 0.5 as f64.
    let m = scalars(&format!("arg scalar f32 | {}\narg scalar f16 | 15872\narg scalar f64 | {}\narg scalar u32 | 7\narg scalar bool | 0\narg scalar i64 | 0\n", 2.0f32.to_bits(), 0.5f64.to_bits()));
    let args = scalar_call(&m, 0.75, 1, 0).unwrap();
    assert_eq!(&args[2..5], &[KernelArg::F32(2.0), KernelArg::F16Bits(15872), KernelArg::F64(0.5)]);
    // An unsigned argument computed from a negative i32 does not fit.
    let m = scalars("arg scalar f32 | $1\narg scalar f16 | $2\narg scalar f64 | $3\narg scalar u32 | $4\narg scalar bool | $5\narg scalar i64 | $6\n");
    let e = mismatch(scalar_call(&m, 1.0, -3, 0).unwrap_err());
    assert!(e.contains("argument `u` = $4 = -3 does not fit u32"), "{e}");
    // The host's scalars are checked like a kernel's: a f64 given for `a: f32` is refused.
    let mut args = vec![Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, 64)), Arg::f64(1.0)];
    args.extend([Arg::f16_bits(0), Arg::f64(0.0), Arg::i32(0), Arg::bool(false), Arg::i64(0)]);
    let e = mismatch(HostPlan::new(&m, "h").unwrap().evaluate(&args).unwrap_err());
    assert!(e.contains("expects a f32 scalar but got a f64 scalar"), "{e}");
}

#[test]
fn plans_do_no_float_arithmetic() {
    let rest =
        "arg scalar f16 | $2\narg scalar f64 | $3\narg scalar u32 | 0\narg scalar bool | $5\narg scalar i64 | $6\n";
    let cases = [
        // Arithmetic in a float argument, a float's bits in integer arithmetic, a float argument
        // taken from a parameter of another type.
        (format!("arg scalar f32 | (mul $1 2)\n{rest}"), "a plan computes only with integers"),
        (
            format!("arg scalar f32 | $1\n{}", rest.replace("u32 | 0", "u32 | (add $1 1)")),
            "computes with a float parameter",
        ),
        (format!("arg scalar f32 | $4\n{rest}"), "a f32 argument must be a f32 host parameter, not $4"),
        (format!("arg scalar f32 | $2\n{rest}"), "a f32 argument must be a f32 host parameter, not $2"),
    ];
    for (args, want) in cases {
        let m = scalars(&args);
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(want), "{args}\n{e}\n  wanted: {want}");
    }
    // A float parameter in a grid expression is refused too; the same plan with an integer grid
    // is accepted.
    let ok = scalars(&format!("arg scalar f32 | $1\n{rest}"));
    assert_eq!(ok.hosts[0].plan_error, None);
    let m = scalars_grid("$3", &format!("arg scalar f32 | $1\n{rest}"));
    let e = HostPlan::new(&m, "h").unwrap_err().to_string();
    assert!(e.contains("launch 0 (k): `$3` computes with a float parameter"), "{e}");
}
