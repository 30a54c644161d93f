//! Host functions that loop at run time (`for $K | START | END | STEP` ... `endfor`, `break`,
//! `continue` in a `host` block), without a GPU: one launch per trip with the loop variable bound,
//! nested loops, jumps; a step that is not positive and calls past the trip or launch limits
//! refused; the per-signature cache and the offline print path agree with full evaluation;
//! malformed or corrupt loop records make the plan unusable, never a panic or an endless loop.

use cute_abi::manifest::seal;
use cute_runtime::call_cache::CallCache;
use cute_runtime::plan::{HostPlan, PlanScratch, MAX_LAUNCHES, MAX_LOOP_TRIPS};
use cute_runtime::{Arg, DType, HostStep, KernelArg, Manifest, PlannedLaunch, RuntimeError, TensorView};

/// Kernels `k(x: (?):(1) f32, v: i32)` and `q(x: (?):(1) f32)`, host `h(a: (?):(1) f32, n: i32)`
/// ($0 = a.shape[0], $1 = n; loop variables from $2) with the plan written by the test.
fn module(plan: &str) -> Manifest {
    let text = format!(
        "cutec-manifest 6\narch sm_90\nkernel k\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
         param v scalar elem=i32\nend\nkernel q\nparam x tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nend\n\
         host h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam n scalar elem=i32\n{plan}end\n"
    );
    Manifest::parse(&seal(&text)).unwrap()
}

/// `launch k` over all of `a`, grid `GRID`, passing `V`.
fn launch_k(grid: &str, v: &str) -> String {
    format!("launches k\nlaunch k\ngrid {grid} | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg scalar i32 | {v}\nendlaunch\n")
}

/// `launch q` of a view of `LEN` elements at element `OFFSET` of `a`.
fn launch_q(offset: &str, len: &str) -> String {
    format!(
        "launches q\nlaunch q\ngrid 1 | 1 | 1\nblock 32 | 1 | 1\nsmem 0\narg tensor 0 | {offset} | {len}\nendlaunch\n"
    )
}

fn args(len: i64, n: i32) -> Vec<Arg> {
    vec![Arg::tensor(TensorView::contiguous_1d(0x1000, DType::F32, len).with_bytes(len as u64 * 4)), Arg::i32(n)]
}

fn call(m: &Manifest, len: i64, n: i32) -> cute_runtime::Result<Vec<PlannedLaunch>> {
    HostPlan::new(m, "h")?.evaluate(&args(len, n))
}

fn refused(e: RuntimeError) -> String {
    match e {
        RuntimeError::ArgumentMismatch(m) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The value `k` passes as `v` and its grid, per launch.
fn k_values(l: &[PlannedLaunch]) -> Vec<(i64, u32)> {
    l.iter()
        .map(|l| match l.args.last() {
            Some(KernelArg::I32(v)) => (i64::from(*v), l.config.grid.0),
            other => panic!("launch {} passes {other:?} last", l.kernel),
        })
        .collect()
}

fn hex(t: &str) -> String {
    format!("s:{}", t.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

#[test]
fn one_launch_per_trip_with_the_loop_variable_bound() {
    // for r in 0..len step n: launch k(a, r) grid(r + 1).
    let m = module(&format!("for $2 | 0 | $0 | $1\n{}endfor\n", launch_k("(add $2 1)", "$2")));
    let h = m.host("h").unwrap();
    assert_eq!(h.plan_error, None);
    assert!(
        matches!(
            &h.steps[..],
            [HostStep::For { var: 2, end_at: 3, .. }, HostStep::Launch(0), HostStep::EndFor { for_at: 0 }]
        ),
        "{:?}",
        h.steps
    );
    for (len, n) in [(10, 3), (9, 3), (1, 1), (7, 100), (12, 1), (0x7fff_ffff, 0x4000_0000)] {
        let want: Vec<(i64, u32)> = (0..len).step_by(n as usize).map(|r| (r, (r + 1) as u32)).collect();
        assert_eq!(k_values(&call(&m, len, n).unwrap()), want, "len {len} step {n}");
    }
    // No trip: nothing launched, nothing refused (an empty range, a start past the end).
    let m = module(&format!("for $2 | $1 | $0 | 1\n{}endfor\n", launch_k("1", "$2")));
    assert!(call(&m, 5, 5).unwrap().is_empty());
    assert!(call(&m, 5, 9).unwrap().is_empty());
    assert_eq!(k_values(&call(&m, 5, 3).unwrap()), [(3, 1), (4, 1)]);
    // A view at the loop variable's offset: each launch reports its own trip's view.
    let m = module(&format!("for $2 | 0 | $0 | $1\n{}endfor\n", launch_q("$2", "(min $1 (add $0 (mul -1 $2)))")));
    let views: Vec<(i64, Vec<i64>)> =
        call(&m, 10, 4).unwrap().iter().map(|l| (l.views[0].2, l.views[0].3.clone())).collect();
    assert_eq!(views, [(0, vec![4]), (4, vec![4]), (8, vec![2])]);
}

#[test]
fn nested_loops_break_and_continue() {
    // for i in 0..len { if i >= n { break } for j in i..len { if j == i + 1 { continue }
    // launch k(a, 100 i + j); if j >= 4 { break } } }
    let plan = format!(
        "for $2 | 0 | $0 | 1\nif (ge $2 $1)\nbreak\nendif\nfor $3 | $2 | $0 | 1\nif (eq $3 (add $2 1))\ncontinue\nendif\n{}if (ge $3 4)\nbreak\nendif\nendfor\nendfor\n",
        launch_k("1", "(add (mul 100 $2) $3)")
    );
    let m = module(&plan);
    assert_eq!(m.host("h").unwrap().plan_error, None);
    let reference = |len: i64, n: i64| {
        let mut out = Vec::new();
        for i in 0..len {
            if i >= n {
                break;
            }
            for j in i..len {
                if j == i + 1 {
                    continue;
                }
                out.push((100 * i + j, 1));
                if j >= 4 {
                    break;
                }
            }
        }
        out
    };
    for (len, n) in [(6, 6), (6, 2), (3, 10), (1, 1), (8, 0), (12, 5)] {
        assert_eq!(k_values(&call(&m, len, n as i32).unwrap()), reference(len, n), "len {len}, n {n}");
    }
    // Loop variables of sibling loops, and a bound over an enclosing loop's variable.
    let plan = format!(
        "for $2 | 0 | 2 | 1\n{}endfor\nfor $3 | 0 | $1 | 1\nfor $4 | 0 | $3 | 1\n{}endfor\nendfor\n",
        launch_k("1", "$2"),
        launch_k("(add $4 1)", "(mul $3 $4)")
    );
    let m = module(&plan);
    let want: Vec<(i64, u32)> =
        (0..2).map(|i| (i, 1)).chain((0..4).flat_map(|a| (0..a).map(move |b| (a * b, (b + 1) as u32)))).collect();
    assert_eq!(k_values(&call(&m, 8, 4).unwrap()), want);
}

#[test]
fn a_step_that_is_not_positive_is_refused() {
    let m = module(&format!("for $2 | 0 | $0 | $1\n{}endfor\n", launch_k("1", "$2")));
    for n in [0, -1, i32::MIN] {
        let e = refused(call(&m, 10, n).unwrap_err());
        assert_eq!(
            e,
            format!(
                "host `h`: the step of a loop must be positive, but n = {n} (loop $2 from 0 to 10: it would never end)"
            )
        );
    }
    // Even when the range is empty: the step is checked first, as a rule of the call.
    assert!(refused(call(&m, 1, 0).unwrap_err()).contains("must be positive"));
    // A step computed from the values, and bounds that cannot be evaluated.
    let m = module(&format!("for $2 | 0 | $0 | (add $1 -4)\n{}endfor\n", launch_k("1", "$2")));
    assert!(refused(call(&m, 10, 4).unwrap_err()).contains("but (add $1 -4) = 0"));
    let m = module(&format!("for $2 | 0 | (div $0 $1) | 1\n{}endfor\n", launch_k("1", "$2")));
    assert_eq!(
        refused(call(&m, 10, 0).unwrap_err()),
        "host `h`: for $2 | 0 | (div $0 $1) | 1: division by zero evaluating (div $0 $1)"
    );
}

#[test]
fn calls_past_the_trip_and_launch_limits_are_refused() {
    assert_eq!((MAX_LOOP_TRIPS, MAX_LAUNCHES), (1 << 20, 1 << 20));
    // One loop of 2^20 + 1 trips: refused when it starts, before any trip.
    let m = module(&format!("for $2 | 0 | $0 | $1\n{}endfor\n", launch_k("1", "$2")));
    let e = refused(call(&m, (1 << 20) + 1, 1).unwrap_err());
    assert!(
        e.contains("the call would make more than 1048576 loop trips (for $2 from 0 to 1048577 step 1 makes 1048577)"),
        "{e}"
    );
    // A loop of nothing but trips is bounded too (it would not launch, but would never end).
    let m = module("for $2 | 0 | $0 | 1\nendfor\n");
    assert!(call(&m, 1 << 20, 0).unwrap().is_empty());
    assert!(refused(call(&m, i64::from(i32::MAX), 0).unwrap_err()).contains("more than 1048576 loop trips"));
    // Nested: 1024 trips of a loop of 1025 trips: the trips of every entry count.
    let m = module("for $2 | 0 | 1024 | 1\nfor $3 | 0 | $0 | 1\nendfor\nendfor\n");
    assert!(call(&m, 1023, 0).is_ok());
    assert!(refused(call(&m, 1025, 0).unwrap_err())
        .contains("more than 1048576 loop trips (for $3 from 0 to 1025 step 1 makes 1025)"));
    // Two launches per trip: 2^19 + 1 trips make more launches than a call may.
    let m = module(&format!("for $2 | 0 | $0 | 1\n{}{}endfor\n", launch_k("1", "$2"), launch_k("1", "$2")));
    assert_eq!(call(&m, 1 << 19, 0).unwrap().len(), 1 << 20);
    let e = refused(call(&m, (1 << 19) + 1, 0).unwrap_err());
    assert!(e.contains("the call would make more than 1048576 launches"), "{e}");
}

#[test]
fn prints_in_loops_and_the_cache() {
    // A host that launches nothing prints each trip's values.
    let plan =
        format!("for $2 | 1 | $0 | $1\nprint {} | e:$2 | {}\nendfor\nprint {}\n", hex("i="), hex("\n"), hex("done\n"));
    let text = format!("cutec-manifest 6\nhost h\nparam a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\nparam n scalar elem=i32\n{plan}end\n");
    let plan = HostPlan::new(&Manifest::parse(&seal(&text)).unwrap(), "h").unwrap();
    let mut out = Vec::new();
    plan.run_without_device(&args(8, 3), &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "i=1\ni=4\ni=7\ndone\n");
    // Prints among launches: where each falls, and its text with that trip's value.
    let m = module(&format!("for $2 | 0 | $0 | 1\nprint {} | e:$2\n{}endfor\n", hex("t"), launch_k("1", "$2")));
    let plan = HostPlan::new(&m, "h").unwrap();
    let mut s = PlanScratch::default();
    plan.evaluate_into(&args(3, 0), &mut s).unwrap();
    assert_eq!(s.print_texts().collect::<Vec<_>>(), [(0, "t0"), (1, "t1"), (2, "t2")]);
    // The cache gives what full evaluation gives, loops and prints included.
    let mut cache = CallCache::new(&plan);
    let (mut cached, mut full) = (PlanScratch::default(), PlanScratch::default());
    for (len, n) in [(3, 0), (5, 0), (3, 0), (5, 1), (5, 0)] {
        cache.evaluate(&plan, &args(len, n), &mut cached).unwrap();
        plan.evaluate_into(&args(len, n), &mut full).unwrap();
        assert_eq!(
            (&cached.vars, &cached.flat, &cached.launches),
            (&full.vars, &full.flat, &full.launches),
            "({len}, {n})"
        );
        assert_eq!(cached.print_texts().collect::<Vec<_>>(), full.print_texts().collect::<Vec<_>>());
    }
    assert_eq!(cache.len(), 3);
}

#[test]
fn malformed_loops_make_the_plan_unusable() {
    let k = launch_k("1", "$2");
    for (plan, want) in [
        (format!("for $2 | 0 | $0\n{k}endfor\n"), "expected `for $K | START | END | STEP`"),
        (format!("for 2 | 0 | $0 | 1\n{k}endfor\n"), "the loop variable must be `$K`, found `2`"),
        (format!("for $2 | 0 | (foo $0) | 1\n{k}endfor\n"), "`for`: end: unknown operator `foo`"),
        (format!("for $2 | 0 | $0 | \n{k}endfor\n"), "`for`: step: expected an expression"),
        (format!("for $3 | 0 | $0 | 1\n{k}endfor\n"), "`for $3`: expected `$2`"),
        (format!("for $2 | 0 | $0 | 1\n{k}endfor\nfor $2 | 0 | $0 | 1\n{k}endfor\n"), "`for $2`: expected `$3`"),
        (format!("for $2 | 0 | $0 | 1\n{k}"), "1 `for` not closed with `endfor`"),
        (format!("{k}endfor\n"), "`endfor` without `for`"),
        (
            format!("for $2 | 0 | $0 | 1\nif (lt $1 1)\n{k}endfor\nendif\n"),
            "`endfor` closes an `if` (expected `endif`)",
        ),
        (
            format!("if (lt $1 1)\nfor $2 | 0 | $0 | 1\n{k}endif\nendfor\n"),
            "`endif` closes a `for` (expected `endfor`)",
        ),
        (format!("for $2 | 0 | $0 | 1\n{k}endfor now\n"), "`endfor` takes nothing, found `now`"),
        (format!("{k}break\n"), "`break` outside a `for`"),
        (format!("if (lt $1 1)\ncontinue\nendif\n{k}"), "`continue` outside a `for`"),
        (format!("for $2 | 0 | $0 | 1\nbreak 2\n{k}endfor\n"), "`break` takes nothing"),
        (format!("for $2 | 0 | $0 | 1\nendfor\n{k}"), "uses the loop variable $2 outside its loop"),
        (format!("for $2 | 0 | $2 | 1\n{k}endfor\n"), "for $2: `$2` uses the loop variable $2 outside its loop"),
        (
            format!("for $2 | 0 | $0 | 1\nendfor\nif (lt $2 1)\nendif\n{k}"),
            "if (lt $2 1): uses the loop variable $2 outside its loop",
        ),
        (format!("for $2 | 0 | $0 | 1\n{}endfor\n", launch_k("1", "$3")), "$3 but the host has 2 dynamic values"),
        (format!("for $2 | 0 | $0 | 1\nassert $5 == 1\n{k}endfor\n"), "assert: $5 but the host has 2 dynamic values"),
        (
            "for $2 | 0 | $0 | 1\nlaunches k\nlaunch k\nendfor\nendlaunch\n".to_string(),
            "is not closed with `endlaunch`",
        ),
    ] {
        let m = module(&plan);
        assert_eq!(m.kernels.len(), 2, "the rest of the manifest still loads");
        let e = HostPlan::new(&m, "h").unwrap_err().to_string();
        assert!(e.contains(want), "{plan}\n{e}\n  wanted: {want}");
    }
}

#[test]
fn corrupt_loop_steps_are_refused_not_run() {
    let plan = format!("for $2 | 0 | $0 | 1\nif (lt $2 $1)\ncontinue\nendif\n{}break\nendfor\n", launch_k("1", "$2"));
    let good = module(&plan);
    assert_eq!(k_values(&call(&good, 5, 2).unwrap()), [(2, 1)]);
    let steps = good.hosts[0].steps.clone();
    assert!(
        matches!(
            &steps[..],
            [
                HostStep::For { end_at: 7, .. },
                HostStep::If { else_at: 3, .. },
                HostStep::Continue { endfor_at: 6 },
                HostStep::EndIf,
                HostStep::Launch(0),
                HostStep::Break { end_at: 7 },
                HostStep::EndFor { for_at: 0 }
            ]
        ),
        "{steps:?}"
    );
    // Each jump target and loop slot changed by hand, to every value around it: the plan is refused
    // when it is made (it would jump into or out of a loop, or back), never run.
    let mutations: Vec<(usize, HostStep)> = (0..10)
        .flat_map(|t| {
            [
                (
                    0,
                    match &steps[0] {
                        HostStep::For { start, end, step, .. } => HostStep::For {
                            var: 2,
                            start: start.clone(),
                            end: end.clone(),
                            step: step.clone(),
                            end_at: t,
                        },
                        _ => unreachable!(),
                    },
                ),
                (
                    0,
                    match &steps[0] {
                        HostStep::For { start, end, step, end_at, .. } => HostStep::For {
                            var: t,
                            start: start.clone(),
                            end: end.clone(),
                            step: step.clone(),
                            end_at: *end_at,
                        },
                        _ => unreachable!(),
                    },
                ),
                (2, HostStep::Continue { endfor_at: t }),
                (5, HostStep::Break { end_at: t }),
                (6, HostStep::EndFor { for_at: t }),
            ]
        })
        .filter(|(i, st)| *st != steps[*i])
        .collect();
    assert_eq!(mutations.len(), 45);
    for (i, st) in mutations {
        let mut m = good.clone();
        m.hosts[0].steps[i] = st.clone();
        let e = HostPlan::new(&m, "h").map(|_| ()).unwrap_err();
        assert!(matches!(e, RuntimeError::InvalidImage(_)), "{st:?}: {e:?}");
    }
    // Records in any order, or missing: each plan either loads and runs to its end, or is refused
    // when it is made; never a panic, never an endless walk.
    let lines: Vec<&str> = plan.lines().collect();
    let mut variants: Vec<Vec<&str>> = Vec::new();
    for i in 0..lines.len() {
        let mut v = lines.clone();
        v.remove(i);
        variants.push(v);
        for j in 0..lines.len() {
            let mut v = lines.clone();
            v.swap(i, j);
            variants.push(v);
        }
    }
    let mut ran = 0;
    for v in variants {
        let text = v.join("\n") + "\n";
        let m = module(&text);
        if let Ok(p) = HostPlan::new(&m, "h") {
            for (len, n) in [(5, 2), (0x7fff_ffff, 1), (3, -1)] {
                let _ = p.evaluate(&args(len, n));
            }
            ran += 1;
        }
    }
    assert!(ran > 0, "some reorderings are valid plans (swapping a line with itself)");
}
