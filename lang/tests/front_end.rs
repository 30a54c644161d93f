//! Front-end tests: samples check clean, and each error renders as the user will see it.

use cute_lang::imports::DiskLoader;
use cute_lang::kir::{self, Inst};
use cute_lang::{diag::render, front_end, front_end_files, Budget};

fn errors(src: &str) -> String {
    match front_end(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(ds) => render("test.cute", src, &ds),
    }
}

#[test]
fn samples_check() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cute") {
            let mut sources = DiskLoader::root(&path).unwrap();
            if let Err(ds) = front_end_files(&mut sources, &mut DiskLoader::default(), Budget::default()) {
                panic!("{}", sources.render(&ds));
            }
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn syntax_error_is_rendered_with_location() {
    insta::assert_snapshot!(errors(
        "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x\n    a[i] = 1.0;\n}\n"
    ));
}

#[test]
fn unknown_name_suggests() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_id.x;\n}\n"));
}

#[test]
fn type_mismatch() {
    insta::assert_snapshot!(errors(
        "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x;\n    a[i] = i;\n}\n"
    ));
}

#[test]
fn coordinate_rank_mismatch() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a[1, 2, 3] = 0.0;\n}\n"));
}

#[test]
fn unterminated_comment() {
    insta::assert_snapshot!(errors("kernel k() {\n /* never closed\n}\n"));
}

#[test]
fn huge_integer() {
    insta::assert_snapshot!(errors(
        "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    a[99999999999999999999] = 0.0;\n}\n"
    ));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!("kernel k() {{ let x = {}1{}; }}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(errors(&src).contains("brackets nest too deeply"));
}

#[test]
fn binary_garbage_is_an_error() {
    let src = String::from_utf8_lossy(&[0x00, 0xff, 0x13, 0x37, b'{', 0x80]).into_owned();
    assert!(errors(&src).contains("error"));
}

/// `assert`: static conditions are decided at compile time; comparisons of run-time values in a
/// host function become the host's `asserts` (one per `&&` operand), checked by the runtime.
#[test]
fn host_asserts_become_plan_conditions() {
    let src = "const TILE = 32;\n\
               host h(a: tensor<f32, gmem, (?,?):(?,1)>, b: tensor<f32, gmem, (?,?):(?,1)>, n: i32) {\n\
               \x20   assert(TILE % 8 == 0, \"static\");\n\
               \x20   assert(a.shape[1] == b.shape[1], \"A and B must have the same K\");\n\
               \x20   assert(a.shape[0] <= n && size(a) > 0 && n == n);\n\
               }\n";
    let (_, module) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let asserts = &module.hosts[0].asserts;
    let shown: Vec<(String, &str, String, &str, &str)> = asserts
        .iter()
        .map(|a| {
            (
                a.message.clone(),
                a.op.symbol(),
                a.lhs_text.clone(),
                a.rhs_text.as_str(),
                if a.lhs.is_static() { "static" } else { "dynamic" },
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("A and B must have the same K".to_string(), "==", "a.shape[1]".to_string(), "b.shape[1]", "dynamic"),
            ("a.shape[0] <= n".to_string(), "<=", "a.shape[0]".to_string(), "n", "dynamic"),
            ("size(a) > 0".to_string(), ">", "size(a)".to_string(), "0", "dynamic"),
        ]
    );
    // In a kernel, a static assert is checked per instance (and emits nothing); a run-time one is
    // one `Assert` holding the instructions of its condition, its run-time clauses joined by `&&`.
    let (_, m) =
        front_end("kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    assert(size(a) == 8, \"eight\");\n}\n").unwrap();
    assert!(!m.kernels[0].body.iter().any(|i| matches!(i, Inst::Assert { .. })));
    let src = "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    assert(size(a) > 0 && 8 > 4 && a[0] < 1.0);\n    assert(!(a[1] == 0.0));\n}\n";
    let (_, m) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let asserts: Vec<_> = m.kernels[0]
        .body
        .iter()
        .filter_map(|i| match i {
            Inst::Assert { cond, message, .. } => Some((cond, message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(asserts.len(), 2);
    let (cond, message) = asserts[0];
    assert_eq!(message, "size(a) > 0 && 8 > 4 && a[0] < 1.0");
    assert!(matches!(cond.insts.last(), Some(Inst::Binary { op: kir::BinaryOp::And, .. })), "{:?}", cond.insts);
    assert!(cond.insts.iter().any(|i| matches!(i, Inst::Load { .. })), "the condition's load is the assert's");
    assert_eq!(asserts[1].1, "!(a[1] == 0.0)");
    // A static comparison that fails is still a compile-time error, whatever else the assert checks.
    let e = errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    assert(size(a) > 0 && 3 > 4, \"four\");\n}\n");
    assert!(e.contains("assert failed: four"), "{e}");
}

/// A host `if` on run-time values: both branches elaborated into their own plan branches, each
/// with the launches, `assert`s and partial-tile `require`s made inside it; `else if` nests; a
/// condition decided at compile time elaborates only the branch taken; `max` of run-time values
/// stays one expression.
#[test]
fn host_if_on_run_time_values_becomes_plan_branches() {
    use cute_lang::kir::{HostCond, HostStep};
    let src = "kernel k(a: tensor<f32, gmem>) {\n    a[thread_idx.x] = 0.0;\n}\n\
               host h(a: tensor<f32, gmem, (?,?):(?,1)>, n: i32) {\n\
               \x20   let (m, k) = a.shape;\n\
               \x20   let small = k <= 1024;\n\
               \x20   if small && !(m == 1) {\n\
               \x20       launch k(a) grid(m) block(32);\n\
               \x20   } else if k % 16 == 0 || n > max(m, 8) {\n\
               \x20       assert(m < n, \"m below n\");\n\
               \x20       let t = zipped_divide(a, (1, 16));\n\
               \x20       launch k(t) grid(size(t, mode: 1)) block(16);\n\
               \x20   }\n\
               \x20   if m == m {\n\
               \x20       launch k(a) grid(1) block(1);\n\
               \x20   } else {\n\
               \x20       let nope = zipped_divide(a, (1, 3));\n\
               \x20   }\n\
               }\n";
    let (_, module) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let h = &module.hosts[0];
    assert!(h.requires.is_empty() && h.asserts.is_empty(), "{:?} {:?}", h.requires, h.asserts);
    let [HostStep::If { cond, then, els, .. }, HostStep::Launch(last)] = &h.steps[..] else { panic!("{:#?}", h.steps) };
    assert_eq!(last.grid[0].as_static(), Some(1));
    let HostCond::And(a, b) = cond else { panic!("{cond:?}") };
    assert!(matches!(&**a, HostCond::Cmp { op: cute_lang::kir::CmpOp::Le, .. }), "{a:?}");
    assert!(
        matches!(&**b, HostCond::Not(c) if matches!(&**c, HostCond::Cmp { op: cute_lang::kir::CmpOp::Eq, .. })),
        "{b:?}"
    );
    assert!(then.requires.is_empty() && then.asserts.is_empty());
    assert!(matches!(&then.steps[..], [HostStep::Launch(_)]));
    assert!(els.requires.is_empty() && els.asserts.is_empty());
    let [HostStep::If { cond: inner, then: t2, els: e2, .. }] = &els.steps[..] else { panic!("{:#?}", els.steps) };
    let HostCond::Or(_, right) = inner else { panic!("{inner:?}") };
    let HostCond::Cmp { rhs, .. } = &**right else { panic!("{right:?}") };
    assert!(matches!(rhs, cute_layout::Int::D(_)), "max(m, 8) stays a run-time expression: {rhs:?}");
    assert_eq!(t2.asserts.len(), 1);
    assert_eq!(t2.asserts[0].message, "m below n");
    assert_eq!(t2.requires.len(), 1, "the (1, 16) tile's condition belongs to its branch");
    assert_eq!(t2.requires[0].need, cute_abi::manifest::Need::MultipleOf(16));
    assert!(e2.is_empty());
}

/// A host `for` with run-time bounds or step: one plan loop (not unrolled) whose variable is a
/// run-time integer the launches, tiles and conditions use; the body's checks belong to it;
/// `break`/`continue` under a host `if` in it are plan steps; a loop nested in it is a loop of its
/// own; static bounds still unroll.
#[test]
fn host_for_with_run_time_bounds_becomes_a_plan_loop() {
    use cute_lang::kir::{HostCond, HostStep};
    let src = "kernel k(a: tensor<f32, gmem>, r: i32) {\n    a[r, thread_idx.x] = 0.0;\n}\n\
               host h(a: tensor<f32, gmem, (?,?):(?,1)>, chunk: i32) {\n\
               \x20   let (m, n) = a.shape;\n\
               \x20   for r in 0..m step chunk {\n\
               \x20       if r > 64 {\n\
               \x20           break;\n\
               \x20       }\n\
               \x20       if r == 8 {\n\
               \x20           continue;\n\
               \x20       }\n\
               \x20       let t = zipped_divide(a, (1, 16));\n\
               \x20       launch k(t, min(chunk, m - r)) grid(r + 1) block(16);\n\
               \x20       for c in r..n {\n\
               \x20           launch k(a, c) grid(1) block(1);\n\
               \x20       }\n\
               \x20   }\n\
               \x20   for s in 0..2 {\n\
               \x20       launch k(a, s) grid(1) block(1);\n\
               \x20   }\n\
               }\n";
    let (_, module) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let h = &module.hosts[0];
    assert!(h.requires.is_empty(), "the tile's condition belongs to the loop: {:?}", h.requires);
    let [HostStep::For { var, start, step, body, .. }, HostStep::Launch(s0), HostStep::Launch(s1)] = &h.steps[..]
    else {
        panic!("{:#?}", h.steps)
    };
    assert_eq!(start.as_static(), Some(0));
    assert!(!step.is_static(), "{step:?}");
    assert_eq!((s0.grid[0].as_static(), s1.grid[0].as_static()), (Some(1), Some(1)), "static bounds unroll");
    assert_eq!(body.requires.len(), 1);
    assert_eq!(body.requires[0].need, cute_abi::manifest::Need::MultipleOf(16));
    let [HostStep::If { cond: c1, then: t1, .. }, HostStep::If { then: t2, .. }, HostStep::Launch(l), HostStep::For { start: inner_start, body: inner, .. }] =
        &body.steps[..]
    else {
        panic!("{:#?}", body.steps)
    };
    assert!(matches!(&t1.steps[..], [HostStep::Break]), "{t1:?}");
    assert!(matches!(&t2.steps[..], [HostStep::Continue]), "{t2:?}");
    let HostCond::Cmp { lhs, .. } = c1 else { panic!("{c1:?}") };
    assert_eq!(lhs, &cute_layout::Int::var(*var, 1), "the condition tests the loop variable");
    assert_eq!(l.grid[0], cute_layout::Int::var(*var, 1).add(&cute_layout::Int::ONE).unwrap());
    assert_eq!(inner_start, &cute_layout::Int::var(*var, 1), "the inner loop starts at the outer variable");
    assert!(matches!(&inner.steps[..], [HostStep::Launch(_)]));
}

/// A generic kernel is instantiated per element type at its launches; a generic host function once
/// per listed type, named `NAME<T>`, with the parameters each type argument types.
#[test]
fn where_of_two_literals_takes_f32_or_i32() {
    // Two float literals (or a float and an integer one) are f32, two integer ones i32, as
    // Triton's `tl.where(c, 1.0, 0.0)`: no type to infer them from is not an error.
    let src = "kernel k(x: tensor<f32, gmem, (?):(1)>, y: tensor<i32, gmem, (?):(1)>, a: i32) {\n    x[0] = where(a < 0, 1.0, 0.0);\n    x[1] = where(a < 1, 2.5, 0);\n    y[0] = where(a < 2, 1, 0);\n}\n";
    front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
}

#[test]
fn element_type_generics_instantiate() {
    let src = r#"
kernel scale<T>(x: tensor<T, gmem>, y: tensor<T, gmem>, a: T) {
    let i = thread_idx.x;
    let r = make_rmem_tensor(4, T);
    r[0] = x[i] * a;
    y[i] = r[0] + 1.0.to(T);
}

host run<T: f16 | f32, U: f32 | bf16>(x: tensor<T, gmem, (?{div=16 / sizeof(T)}):(1), align: 16>,
                                     y: tensor<T, gmem, (?{div=T.width / 2}):(1), align: 16>,
                                     z: tensor<U, gmem, (?):(1)>, a: T) {
    assert(16 / sizeof(T) * T.width == 128);
    assert(sizeof(x) == sizeof(T) && x.element_type.width == T.width);
    launch scale(x, y, a) grid(1) block(32);
    launch scale(z, z, 2.0) grid(1) block(32);
}
"#;
    let (_, m) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let hosts: Vec<&str> = m.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(hosts, ["run<f16,f32>", "run<f16,bf16>", "run<f32,f32>", "run<f32,bf16>"]);
    let inst = m.hosts[1].instance.as_ref().unwrap();
    assert_eq!(inst.generic, "run");
    let args: Vec<(&str, &str, Vec<usize>)> =
        inst.type_args.iter().map(|t| (t.name.as_str(), t.ty.name(), t.params.clone())).collect();
    assert_eq!(args, [("T", "f16", vec![0, 1]), ("U", "bf16", vec![2])]);
    // `?{div=16 / sizeof(T)}` and `?{div=T.width / 2}` per instance.
    let layout = |h: usize, p: usize| match &m.hosts[h].params[p].kind {
        cute_lang::kir::ParamKind::Tensor { ty, .. } => ty.layout.to_string(),
        _ => panic!(),
    };
    assert_eq!((layout(0, 0), layout(0, 1)), ("?{div=8}:1".to_string(), "?{div=8}:1".to_string()));
    assert_eq!((layout(2, 0), layout(2, 1)), ("?{div=4}:1".to_string(), "?{div=16}:1".to_string()));
    // One kernel instance per element type and layout: f16 and f32 (x, `?{div=N}`), f32 and bf16
    // (z, `?`): the f32 launch of `z` is another layout than the f32 `x`.
    let mut elems: Vec<String> = m
        .kernels
        .iter()
        .map(|k| match &k.params[2].kind {
            cute_lang::kir::ParamKind::Scalar(s) => s.name().to_string(),
            _ => panic!(),
        })
        .collect();
    elems.sort();
    assert_eq!(elems, ["bf16", "f16", "f32", "f32"]);
}

/// `?{div=EXPR}` with a `const` works in any parameter type, generic or not.
#[test]
fn div_expressions_in_parameter_types() {
    let src = "const VEC = 16 / 4;\n\nkernel k(a: tensor<f32, gmem, (?{div=VEC * 2}):(1)>) {\n    a[0] = 1.0;\n}\n\n\
               host h(a: tensor<f32, gmem, (?{div=VEC}):(1)>) {\n}\n";
    let (_, m) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let layout = |p: &cute_lang::kir::Param| match &p.kind {
        cute_lang::kir::ParamKind::Tensor { ty, .. } => ty.layout.to_string(),
        _ => panic!(),
    };
    assert_eq!(layout(&m.kernels[0].params[0]), "?{div=8}:1");
    assert_eq!(layout(&m.hosts[0].params[0]), "?{div=4}:1");
}
