//! Host functions that branch at run time (`if COND` ... `else` ... `endif` in a `host` block),
//! without a GPU: conditions parsed, printed and evaluated; each call carries out the branch its
//! values select, with only that branch's launches and checks (`assert`, `require`, partial
//! tiles); the per-signature cache agrees with full evaluation; malformed branches make the plan
//! unusable, never a panic or a loop.

use cute_abi::manifest::seal;
use cute_runtime::call_cache::CallCache;
use cute_runtime::plan::{CmpOp, Cond, EvalError, HostPlan, PlanScratch};
use cute_runtime::{Arg, DType, HostStep, Manifest, PlannedLaunch, RuntimeError, TensorView};

/// Kernels `k(x: (?):(1) f32, n: i32)` and `q(x: (?):(1) f32)`, host `h(a: (?):(1) f32, n: i32)`
/// ($0 = a.shape[0], $1 = n) with the plan written by the test.
fn module(plan: &str) -> Manifest {
    let text = format!(
        "cutec-manifest 2\narch sm_90\nkernel k\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param n scalar elem=i32\nend\nkernel q\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nend\n\
         host h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam n scalar elem=i32\n{plan}end\n"
    );
    Manifest::parse(&seal(&text)).unwrap()
}

/// `launch k` over all of `a` with `n` passed on, grid `GRID`.
fn launch_k(grid: &str) -> String {
    format!("launches k\nlaunch k\ngrid {grid} | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | $1\nendlaunch\n")
}

/// `launch q` over the first `a.shape[0] / 4 * 4` elements... as a tile count: a view of
/// `(ceildiv $0 4)` elements (exact only when 4 divides the extent).
fn launch_q() -> String {
    "launches q\nlaunch q\ngrid (ceildiv $0 4) | 1 | 1\nblock 4 | 1 | 1\nsmem 0\narg tensor 0 | 0 | (ceildiv $0 4)\nendlaunch\n".to_string()
}

fn args(len: i64, n: i32) -> Vec<Arg> {
    vec![Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, len).with_bytes(len as u64 * 4)), Arg::i32(n)]
}

fn call(m: &Manifest, len: i64, n: i32) -> cute_runtime::Result<Vec<PlannedLaunch>> {
    HostPlan::new(m, "h")?.evaluate(&args(len, n))
}

fn kernels(l: &[PlannedLaunch]) -> Vec<(usize, &str)> {
    l.iter().map(|l| (l.index, l.kernel.as_str())).collect()
}

fn refused(e: RuntimeError) -> String {
    match e {
        RuntimeError::ArgumentMismatch(m) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn hex(t: &str) -> String {
    format!("s:{}", t.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

#[test]
fn conditions_parse_print_and_evaluate() {
    let vars = [7, -7, 2, 0, i64::MAX];
    let cases = [
        ("(lt $0 8)", true),
        ("(le $0 7)", true),
        ("(gt $1 -7)", false),
        ("(ge $1 -7)", true),
        ("(eq (mod $1 $2) 1)", true),
        ("(ne $3 0)", false),
        ("(and (lt $0 8) (gt $2 1))", true),
        ("(and (lt $0 8) (gt $2 2))", false),
        ("(or (lt $0 0) (eq $2 2))", true),
        ("(or (lt $0 0) (eq $2 3) (eq $3 1))", false),
        ("(not (lt $0 8))", false),
        ("(and (not (or (eq $3 1) (gt $1 0))) (le (max $0 $2 -1) 7))", true),
    ];
    for (text, want) in cases {
        let c = Cond::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.to_string(), text);
        assert_eq!(c.eval(&vars), Ok(want), "{text}");
    }
    assert_eq!(
        Cond::parse(" ( lt  $0   8 ) ").unwrap(),
        Cond::Cmp(CmpOp::Lt, cute_runtime::Expr::Var(0), cute_runtime::Expr::Const(8))
    );
    assert_eq!(Cond::parse("(and (lt $0 1) (lt $7 1))").unwrap().max_var(), Some(7));
    // `and` stops at the first false operand and `or` at the first true one: what follows is not
    // evaluated (here it would divide by zero).
    assert_eq!(Cond::parse("(and (lt $0 0) (eq (div 1 $3) 1))").unwrap().eval(&vars), Ok(false));
    assert_eq!(Cond::parse("(or (gt $0 0) (eq (div 1 $3) 1))").unwrap().eval(&vars), Ok(true));
    assert!(matches!(Cond::parse("(lt (div 1 $3) 1)").unwrap().eval(&vars), Err(EvalError::DivByZero(_))));
    assert!(matches!(Cond::parse("(lt (add $4 1) 1)").unwrap().eval(&vars), Err(EvalError::Overflow(_))));
    assert!(matches!(Cond::parse("(lt $9 1)").unwrap().eval(&vars), Err(EvalError::UnboundVar(9))));
    for (text, want) in [
        ("", "expected a condition, found the end"),
        ("$0", "expected a condition `(OP ...)`, found `$`"),
        ("(lt $0)", "`lt` takes 2 operands, got 1"),
        ("(lt $0 1 2)", "`lt` takes 2 operands, got 3"),
        ("(lt $0 (pow 1 2))", "unknown operator `pow`"),
        ("(pow $0 1)", "unknown condition `pow`"),
        ("(and)", "`and` needs at least one operand"),
        ("(not (lt $0 1) (lt $0 2))", "`not` takes 1 operand, got 2"),
        ("(and (lt $0 1)", "is not closed"),
        ("(lt $0 1))", "unexpected `)` after the condition"),
        ("(and $0)", "expected a condition `(OP ...)`, found `$`"),
        ("()", "`(` without an operator"),
    ] {
        let e = Cond::parse(text).unwrap_err();
        assert!(e.contains(want), "{text}: {e}\n  wanted: {want}");
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}(lt $0 1){}", "(not ".repeat(100_000), ")".repeat(100_000));
    assert!(Cond::parse(&deep).unwrap_err().contains("nested deeper than"));
}

#[test]
fn each_call_carries_out_the_branch_it_selects() {
    // if n < 100 { k grid 1 } else if n < 1000 { k grid 2 } else { q }
    let plan = format!(
        "if (lt $1 100)\n{}else\nif (lt $1 1000)\n{}else\n{}endif\nendif\n",
        launch_k("1"),
        launch_k("2"),
        launch_q()
    );
    let m = module(&plan);
    let h = m.host("h").unwrap();
    assert_eq!(h.plan_error, None);
    assert_eq!(h.launches.len(), 3);
    assert_eq!(h.launches_kernels, ["k", "k", "q"]);
    assert!(matches!(&h.steps[0], HostStep::If { else_at: 3, .. }), "{:?}", h.steps);
    assert!(matches!(&h.steps[2], HostStep::Else { end_at: 8 }), "{:?}", h.steps);
    assert!(matches!(&h.steps[3], HostStep::If { else_at: 6, .. }), "{:?}", h.steps);
    assert!(matches!(&h.steps[5], HostStep::Else { end_at: 7 }), "{:?}", h.steps);
    assert!(matches!(&h.steps[8], HostStep::EndIf), "{:?}", h.steps);
    let l = call(&m, 64, 5).unwrap();
    assert_eq!(kernels(&l), [(0, "k")]);
    assert_eq!(l[0].config.grid, (1, 1, 1));
    let l = call(&m, 64, 500).unwrap();
    assert_eq!(kernels(&l), [(1, "k")]);
    assert_eq!(l[0].config.grid, (2, 1, 1));
    let l = call(&m, 64, 5000).unwrap();
    assert_eq!(kernels(&l), [(2, "q")]);
    assert_eq!(l[0].config.grid, (16, 1, 1));
    // Launches before and after a branch run in order; an `if` without `else` may launch nothing.
    let m = module(&format!("{}if (gt $1 0)\n{}endif\n{}", launch_k("1"), launch_q(), launch_k("3")));
    assert_eq!(kernels(&call(&m, 64, 1).unwrap()), [(0, "k"), (1, "q"), (2, "k")]);
    assert_eq!(kernels(&call(&m, 64, 0).unwrap()), [(0, "k"), (2, "k")]);
    let m = module(&format!("if (gt $1 0)\n{}endif\n", launch_k("1")));
    assert!(call(&m, 64, 0).unwrap().is_empty());
}

#[test]
fn only_the_taken_branch_is_checked() {
    // The then-branch tiles `a` by 4 (a `require` and an inexact `ceildiv` otherwise) and asserts;
    // the else-branch launches `k`, which takes any length.
    let plan = format!(
        "assert $0 > 1 | {}\nif (ge $1 0)\nrequire $0 | 4 | {}\nassert $1 < 10 | {} | {} | {}\n{}else\n{}endif\n",
        hex("a needs two elements"),
        hex("a run-time extent tiled by 4"),
        hex("n below 10"),
        hex("n"),
        hex("10"),
        launch_q(),
        launch_k("1")
    );
    let m = module(&plan);
    let h = m.host("h").unwrap();
    assert_eq!((h.asserts.len(), h.requires.len()), (1, 0), "the branch's checks are steps of the branch");
    assert!(
        matches!(&h.steps[1], HostStep::Require(r) if r.need == cute_abi::manifest::Need::MultipleOf(4)),
        "{:?}",
        h.steps
    );
    assert!(matches!(&h.steps[2], HostStep::Assert(a) if a.message == "n below 10"), "{:?}", h.steps);
    // Taken and met.
    assert_eq!(kernels(&call(&m, 64, 3).unwrap()), [(0, "q")]);
    // Taken and broken: the branch's require, then its assert, refuse the call.
    let e = refused(call(&m, 65, 3).unwrap_err());
    assert_eq!(e, "host `h`: a extent 65 (mode 0) is not a multiple of the tile 4 (a run-time extent tiled by 4); this kernel has no tail handling");
    assert_eq!(refused(call(&m, 64, 12).unwrap_err()), "host `h`: assert failed: n below 10 (n = 12)");
    // Not taken: neither the branch's require and assert nor its launch's partial tile refuse it.
    assert_eq!(kernels(&call(&m, 65, -1).unwrap()), [(1, "k")]);
    // The host's own checks apply to every call, whichever branch it takes.
    assert_eq!(refused(call(&m, 1, -1).unwrap_err()), "host `h`: assert failed: a needs two elements (a.shape[0] = 1)");
    // Without the branch's require, the launch's own partial-tile check refuses a taken branch only.
    let m = module(&format!("if (ge $1 0)\n{}else\n{}endif\n", launch_q(), launch_k("1")));
    assert!(refused(call(&m, 65, 3).unwrap_err()).contains("a extent 65 (mode 0) is not a multiple of the tile 4"));
    assert_eq!(kernels(&call(&m, 65, -3).unwrap()), [(1, "k")]);
    // A condition that cannot be evaluated refuses the call.
    let m = module(&format!("if (lt (div $0 $1) 4)\n{}endif\n", launch_k("1")));
    assert_eq!(
        refused(call(&m, 64, 0).unwrap_err()),
        "host `h`: if (lt (div $0 $1) 4): division by zero evaluating (div $0 $1)"
    );
}

#[test]
fn prints_follow_the_branch_taken() {
    // A host that launches nothing: `run_without_device` prints what the taken branches print.
    let plan = format!(
        "print {}\nif (lt $1 10)\nprint {} | e:$1 | {}\nelse\nif (eq (mod $1 2) 0)\nprint {}\nelse\nprint {}\nendif\nendif\nprint {}\n",
        hex("start\n"),
        hex("small "),
        hex("\n"),
        hex("large even\n"),
        hex("large odd\n"),
        hex("end\n")
    );
    let text = format!(
        "cutec-manifest 2\nhost h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam n scalar elem=i32\n{plan}end\n"
    );
    let m = Manifest::parse(&seal(&text)).unwrap();
    let plan = HostPlan::new(&m, "h").unwrap();
    for (n, want) in [(3, "start\nsmall 3\nend\n"), (12, "start\nlarge even\nend\n"), (13, "start\nlarge odd\nend\n")] {
        let mut out = Vec::new();
        plan.run_without_device(&args(8, n), &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), want, "n = {n}");
    }
    // The scratch records where each print falls among the launches.
    let m = module(&format!(
        "print {}\nif (gt $1 0)\n{}print {}\nendif\n{}",
        hex("a"),
        launch_k("1"),
        hex("b"),
        launch_k("2")
    ));
    let plan = HostPlan::new(&m, "h").unwrap();
    let mut s = PlanScratch::default();
    plan.evaluate_into(&args(8, 1), &mut s).unwrap();
    assert_eq!(s.launches.iter().map(|l| l.0).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(s.prints, [(0, 0), (1, 3)]);
    plan.evaluate_into(&args(8, 0), &mut s).unwrap();
    assert_eq!(s.launches.iter().map(|l| l.0).collect::<Vec<_>>(), [1]);
    assert_eq!(s.prints, [(0, 0)]);
}

#[test]
fn the_call_cache_agrees_with_full_evaluation() {
    let plan = format!("if (lt $0 100)\n{}else\n{}endif\n", launch_k("1"), launch_q());
    let m = module(&plan);
    let plan = HostPlan::new(&m, "h").unwrap();
    let mut cache = CallCache::new(&plan);
    let (mut cached, mut full) = (PlanScratch::default(), PlanScratch::default());
    // Shapes on both sides of the condition, repeated (hits) and refused (never kept).
    for (len, n) in [(64, 1), (400, 1), (64, 1), (400, 2), (401, 1), (400, 1), (64, 7)] {
        let a = args(len, n);
        let c = cache.evaluate(&plan, &a, &mut cached);
        let f = plan.evaluate_into(&a, &mut full);
        assert_eq!(c.is_ok(), f.is_ok(), "({len}, {n})");
        if c.is_ok() {
            assert_eq!(
                (&cached.vars, &cached.flat, &cached.launches, &cached.prints),
                (&full.vars, &full.flat, &full.launches, &full.prints),
                "({len}, {n})"
            );
        }
    }
    assert_eq!(cache.len(), 4);
}

#[test]
fn malformed_branches_make_the_plan_unusable() {
    let k = launch_k("1");
    for (plan, want) in [
        (format!("if (lt $1 1)\n{k}"), "1 `if` not closed with `endif`"),
        (format!("{k}else\n"), "`else` without `if`"),
        (format!("{k}endif\n"), "`endif` without `if`"),
        (format!("if (lt $1 1)\n{k}else\nelse\nendif\n"), "a second `else` for one `if`"),
        (format!("if (foo $1 1)\n{k}endif\n"), "`if`: unknown condition `foo`"),
        (format!("if $1\n{k}endif\n"), "`if`: expected a condition"),
        (format!("if (lt $1 1)\n{k}endif now\n"), "`endif` takes nothing, found `now`"),
        (format!("if (lt $9 1)\n{k}endif\n"), "$9 but the host has 2 dynamic values"),
        (format!("if (lt $1 1)\nassert $8 == 1\n{k}endif\n"), "assert: $8 but the host has 2 dynamic values"),
        (format!("if (lt $1 1)\nrequire $8 | 2\n{k}endif\n"), "require: $8 but the host has 2 dynamic values"),
        (format!("if (lt $1 1)\nassert $1 =< 1\n{k}endif\n"), "expected a comparison"),
        ("launches k\nlaunch k\nif (lt $1 1)\nendlaunch\nendif\n".to_string(), "is not closed with `endlaunch`"),
    ] {
        let m = module(&plan);
        assert_eq!(m.kernels.len(), 2, "the rest of the manifest still loads");
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(want), "{plan}\n{e}\n  wanted: {want}");
    }
    // A plan made by hand with a backward jump is refused, not run forever.
    let mut m = module(&format!("if (lt $1 1)\n{k}else\n{k}endif\n"));
    let HostStep::Else { end_at } = &mut m.hosts[0].steps[2] else { panic!("{:?}", m.hosts[0].steps) };
    *end_at = 0;
    let e = HostPlan::new(&m, "h").unwrap_err().to_string();
    assert!(e.contains("step 2: `else` continues at step 0, not after it"), "{e}");
    let HostStep::Else { end_at } = &mut m.hosts[0].steps[2] else { unreachable!() };
    *end_at = 99;
    assert!(HostPlan::new(&m, "h").unwrap_err().to_string().contains("continues at step 99"));
    m.hosts[0].steps[0] = HostStep::If { cond: Cond::parse("(lt $1 1)").unwrap(), else_at: 0 };
    assert!(HostPlan::new(&m, "h").unwrap_err().to_string().contains("step 0: `if` continues at step 0"));
}

#[test]
fn newer_manifests_are_refused_and_version_2_reads() {
    let m = module(&launch_k("1"));
    assert_eq!(m.version, 2);
    let e = Manifest::parse(&seal("cutec-manifest 11\n")).unwrap_err().to_string();
    assert!(e.contains("manifest version 11 is newer than this runtime understands (10)"), "{e}");
}
