//! The canonical printer's contract: parse → print → parse gives the same AST modulo spans, and
//! printing is idempotent. Checked on every `.cute` file in the repository, on hand-written programs
//! that use every production of the grammar, on every pairing of operators, and on random ASTs.

use cute_lang::ast::*;
use cute_lang::pretty::{print_expr, print_file, strip_expr_spans, strip_spans};
use cute_lang::{parse, Span};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// Parses, prints, re-parses and prints again; panics with the printed text on any difference.
fn assert_round_trip(name: &str, src: &str) -> String {
    let first = parse(src).unwrap_or_else(|d| panic!("{name} does not parse: {}", d.message));
    let printed = print_file(&first);
    let second =
        parse(&printed).unwrap_or_else(|d| panic!("{name}: the printed form does not parse: {}\n{printed}", d.message));
    assert_eq!(strip_spans(&second), strip_spans(&first), "{name}: the printed form means something else:\n{printed}");
    assert_eq!(print_file(&second), printed, "{name}: printing is not idempotent");
    printed
}

fn cute_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            cute_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "cute") {
            out.push(path);
        }
    }
}

#[test]
fn repository_sources_round_trip() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    cute_files(&root.join("samples"), &mut files);
    cute_files(&root.join("tests/lit"), &mut files);
    files.sort();
    let mut checked = 0;
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        // The error tests are meant not to parse; everything else must.
        if parse(&src).is_err() && path.components().any(|c| c.as_os_str() == "errors") {
            continue;
        }
        assert_round_trip(&path.display().to_string(), &src);
        checked += 1;
    }
    assert!(checked >= 2, "found only {checked} .cute files to check");
}

/// One program that uses every production: items, parameters, types, patterns, statements,
/// operators, postfix forms, literals and comments.
const EVERY_PRODUCTION: &str = r#"
/* A block comment /* with a nested one */ still inside */
// A line comment.
const TILE = 0x80;
const SCALE: f32 = 1.5e3;
const SMALL: f64 = 2.5E-3;
const TINY = 1e-7;
const BIG = 1_000_000;
const GREETING = "tab\there \"quoted\" back\\slash nul\0 newline\n done";
const LAYOUT_FREE: tensor<f32, gmem> = 0;

fn helper(x: i32, f: fn(i32, f32) -> bool, g: fn() -> i32) -> i32 {
    return x;
}

kernel all(const n: i32,
           a: tensor<f32, gmem, (?):(1)>,
           b: tensor<f16, gmem, (4,(2,?)):(1,(4,?)), align: 16>,
           c: tensor<f32, smem, ((2,2),8)>,
           d: tensor<bf16, gmem>,
           e: tensor<i8, rmem, ()>,
           h: tensor<u8, gmem, (5,)>,
           g: tensor<f32, gmem, (?{div=8},?):(1,?{div=16})>,
           untyped) {
    let i = block_idx.x * block_dim.x + thread_idx.x;
    let j: i32 = -i;
    let (p, _, (q, r)) = divide(a, tiler: (2, 4));
    let (single) = x;
    let mut acc = 0;
    let (mut lo, hi) = (0, 1);
    acc += i;
    acc -= 1;
    acc *= 2;
    acc /= 3;
    let _ = 0;
    let t = (1, 2);
    let one = (1,);
    let k = !(i < n) && i >= 0 || i != 3 && i == j;
    let bits = i & 1 | i ^ 2 & 3 << 4 >> 1;
    let m = 10 % 3 / 2 - 1 - (2 - 3) - -4;
    let s = a.shape().size(mode: 0)[0].len;
    let u = c[_, 1][(0, 1), _];
    let v = call();
    let w = f(a, b, mode: 2,);
    let z = true;
    let y = false;
    a[i] = a[i] + 1.0;
    c[(i, 0), 1] = 2.0;
    sync();
    (1, 2);
    if i < n {
        a[i] = 0.0;
    }
    if i < n {
        a[i] = 1.0;
    } else {
        a[i] = 2.0;
    }
    if i < 1 {
    } else if i < 2 {
        a[i] = 3.0;
    } else if i < 3 {
    } else {
        return;
    }
    for r in 0..n {
        for s in i..n + 1 step 2 {
            a[r] = s;
        }
    }
    for k in (0)..8 {}
    return;
}

host run(a: tensor<f32, gmem, (?):(1)>, n: i32) {
    launch all(n, a, b: a) grid((n + 255) / 256, 1, 1) block(256, 1, 1) smem(0) stream(s);
    launch empty();
    return n * 2;
}

kernel empty() {}
"#;

#[test]
fn every_production_round_trips() {
    let printed = assert_round_trip("every production", EVERY_PRODUCTION);
    // The printer drops comments, canonicalizes literals and keeps only the needed parentheses.
    assert!(!printed.contains("/*") && !printed.contains("//"));
    assert!(printed.contains("const TILE = 128;"));
    assert!(printed.contains("const SCALE: f32 = 1500.0;"));
    assert!(printed.contains("for k in 0..8 {}"));
    assert!(printed.contains("let k = !(i < n) && i >= 0 || i != 3 && i == j;"));
    assert!(printed.contains("let m = 10 % 3 / 2 - 1 - (2 - 3) - -4;"));
}

#[test]
fn canonical_form() {
    let src = "kernel  k( a :tensor<f32,gmem,(4, 8) : (8, 1),align:16> ,const n:i32){let i=thread_idx.x;if i<n{a[i,0]=((1.0));}else if i==n{return;}else{a[0,0]=-(2.0+x);}\nfor j in 0..n step 2{foo(j,mode:1);}}\nconst C=(1+2)*3;";
    let expected = "\
kernel k(a: tensor<f32, gmem, (4,8):(8,1), align: 16>, const n: i32) {
    let i = thread_idx.x;
    if i < n {
        a[i, 0] = 1.0;
    } else if i == n {
        return;
    } else {
        a[0, 0] = -(2.0 + x);
    }
    for j in 0..n step 2 {
        foo(j, mode: 1);
    }
}

const C = (1 + 2) * 3;
";
    assert_eq!(assert_round_trip("canonical", src), expected);
    assert_eq!(assert_round_trip("canonical again", expected), expected);
}

#[test]
fn small_programs_round_trip() {
    let programs = [
        "",
        "// only a comment\n",
        "kernel k() {}",
        "fn f() -> fn(fn(i32) -> i32) -> i32 { return g; }",
        "host h() { launch k() grid(1) block(1); }",
        "kernel k() { let x = (((1))); }",
        "kernel k() { let x = a.b.c.d(e).f[1][2, 3].g(); }",
        "kernel k() { let x = (a + b).c; let y = (-a).b; let z = -a.b; let w = (1.0).x; let v = 1.x; }",
        "kernel k() { let x = - - -a; let y = !!b; let z = -!c; let w = !-d; }",
        "kernel k() { x = a - (b - c) - d; y = a / (b * c); z = (a, (b, c), (d,)); }",
        "kernel k() { let s = \"\"; let t = \"ünïcødé → ✓\"; let u = \"\\\\\"; }",
        "kernel k() { if a { if b { if c {} else {} } } }",
        "kernel k() { for i in f(0)..g(1) step h(2) { } for i in -1..-2 {} }",
        "const A = 9223372036854775807;",
        "const F = 1.7976931348623157e308 + 5e-324 + 0.1 + 123456789.125;",
        "kernel k(t: tensor<f32, gmem, ?:?>, u: tensor<f32, gmem, 4>, v: tensor<f32, gmem, (?,?):(?,?)>) {}",
        "kernel k() { let (a, (b, _), ()) = t; }",
        "kernel k() { f(); g(x: 1, y: 2); h(x: (1, 2)); a.m(n: 3); }",
    ];
    for p in programs {
        assert_round_trip(p, p);
    }
}

// ---- Every pairing of operators, built as ASTs and printed -------------------------------------

const BINARY: [BinOp; 18] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::And,
    BinOp::Or,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
];

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: Span::default() }
}

fn name(n: &str) -> Expr {
    e(ExprKind::Name(n.to_string()))
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    e(ExprKind::Binary(op, Box::new(a), Box::new(b)))
}

fn un(op: UnOp, a: Expr) -> Expr {
    e(ExprKind::Unary(op, Box::new(a)))
}

fn ident(n: &str) -> Ident {
    Ident { name: n.to_string(), span: Span::default() }
}

/// Prints an expression, parses it back (as a `const` initializer) and compares.
fn assert_expr_round_trip(expr: &Expr) {
    let printed = print_expr(expr);
    let src = format!("const X = {printed};");
    let file = parse(&src).unwrap_or_else(|d| panic!("`{printed}` does not parse: {}", d.message));
    let Some(Item::Const(c)) = file.items.first() else { panic!("`{printed}` is not one const item") };
    assert_eq!(strip_expr_spans(&c.value), strip_expr_spans(expr), "`{printed}` parses to something else");
    assert_eq!(print_expr(&c.value), printed, "printing `{printed}` is not idempotent");
}

#[test]
fn every_operator_pair_in_both_nestings() {
    let mut n = 0;
    for op1 in BINARY {
        for op2 in BINARY {
            // (a op1 b) op2 c  and  a op1 (b op2 c): precedence and associativity decide which
            // of the two needs parentheses.
            assert_expr_round_trip(&bin(op2, bin(op1, name("a"), name("b")), name("c")));
            assert_expr_round_trip(&bin(op1, name("a"), bin(op2, name("b"), name("c"))));
            n += 2;
        }
        for u in [UnOp::Neg, UnOp::Not] {
            assert_expr_round_trip(&un(u, bin(op1, name("a"), name("b"))));
            assert_expr_round_trip(&bin(op1, un(u, name("a")), un(u, name("b"))));
            assert_expr_round_trip(&e(ExprKind::Field {
                base: Box::new(bin(op1, name("a"), name("b"))),
                name: ident("x"),
            }));
            assert_expr_round_trip(&e(ExprKind::Index {
                base: Box::new(un(u, name("a"))),
                index: vec![bin(op1, name("i"), name("j"))],
            }));
            n += 4;
        }
    }
    assert_eq!(n, 18 * 18 * 2 + 18 * 8);
}

#[test]
fn parentheses_are_minimal() {
    assert_eq!(print_expr(&bin(BinOp::Sub, bin(BinOp::Sub, name("a"), name("b")), name("c"))), "a - b - c");
    assert_eq!(print_expr(&bin(BinOp::Sub, name("a"), bin(BinOp::Sub, name("b"), name("c")))), "a - (b - c)");
    assert_eq!(print_expr(&bin(BinOp::Add, name("a"), bin(BinOp::Mul, name("b"), name("c")))), "a + b * c");
    assert_eq!(print_expr(&bin(BinOp::Mul, bin(BinOp::Add, name("a"), name("b")), name("c"))), "(a + b) * c");
    assert_eq!(print_expr(&un(UnOp::Neg, un(UnOp::Neg, name("a")))), "--a");
    assert_eq!(print_expr(&bin(BinOp::Lt, bin(BinOp::Lt, name("a"), name("b")), name("c"))), "a < b < c");
}

// ---- Random ASTs ---------------------------------------------------------------------------------

const KEYWORDS: [&str; 15] = [
    "kernel", "fn", "host", "let", "mut", "if", "else", "for", "in", "return", "const", "launch", "true", "false", "_",
];

fn arb_name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,6}".prop_filter("keywords are not names", |s| !KEYWORDS.contains(&s.as_str()))
}

fn arb_ident() -> impl Strategy<Value = Ident> {
    arb_name().prop_map(|name| ident(&name))
}

fn arb_binop() -> impl Strategy<Value = BinOp> {
    proptest::sample::select(BINARY.to_vec())
}

/// Leaves: what the parser can produce (literals are never negative, floats are finite; a negative
/// number is a `Neg` applied to a literal).
fn arb_leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (0i64..=i64::MAX).prop_map(|v| e(ExprKind::Int(v))),
        (0i64..1000).prop_map(|v| e(ExprKind::Int(v))),
        (proptest::num::f64::POSITIVE
            | proptest::num::f64::NORMAL
            | proptest::num::f64::SUBNORMAL
            | proptest::num::f64::ZERO)
            .prop_map(|v| e(ExprKind::Float(v))),
        Just(e(ExprKind::Float(0.0))),
        any::<bool>().prop_map(|b| e(ExprKind::Bool(b))),
        ".{0,8}".prop_map(|s| e(ExprKind::Str(s))),
        arb_name().prop_map(|n| e(ExprKind::Name(n))),
        Just(e(ExprKind::Wildcard)),
    ]
}

fn arb_args(inner: impl Strategy<Value = Expr> + Clone) -> impl Strategy<Value = Vec<Arg>> {
    prop::collection::vec((prop::option::of(arb_ident()), inner).prop_map(|(name, value)| Arg { name, value }), 0..4)
}

fn arb_expr() -> BoxedStrategy<Expr> {
    arb_leaf()
        .prop_recursive(6, 64, 4, |inner| {
            prop_oneof![
                (arb_binop(), inner.clone(), inner.clone()).prop_map(|(op, a, b)| bin(op, a, b)),
                (arb_binop(), inner.clone(), inner.clone()).prop_map(|(op, a, b)| bin(op, a, b)),
                (prop::sample::select(vec![UnOp::Neg, UnOp::Not]), inner.clone()).prop_map(|(op, a)| un(op, a)),
                prop::collection::vec(inner.clone(), 1..4).prop_map(|items| e(ExprKind::Tuple(items))),
                (arb_ident(), arb_args(inner.clone())).prop_map(|(callee, args)| e(ExprKind::Call { callee, args })),
                (inner.clone(), arb_ident(), arb_args(inner.clone())).prop_map(|(r, name, args)| e(ExprKind::Method {
                    receiver: Box::new(r),
                    name,
                    args
                })),
                (inner.clone(), arb_ident()).prop_map(|(b, name)| e(ExprKind::Field { base: Box::new(b), name })),
                (inner.clone(), prop::collection::vec(inner, 0..3))
                    .prop_map(|(b, index)| e(ExprKind::Index { base: Box::new(b), index })),
            ]
        })
        .boxed()
}

fn arb_int_tuple() -> impl Strategy<Value = IntTupleLit> {
    prop_oneof![
        (0i64..100).prop_map(|v| IntTupleLit::Int(v, Span::default())),
        Just(IntTupleLit::Dynamic(Span::default())),
        // `?{div=N}`, and the parser's record of a key other than `div`.
        (-1i64..64).prop_map(|d| IntTupleLit::DynamicDiv(d, Span::default())),
    ]
    .prop_recursive(3, 12, 3, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(|items| IntTupleLit::Tuple(items, Span::default()))
    })
}

fn arb_type() -> impl Strategy<Value = TypeExpr> {
    let layout = (arb_int_tuple(), prop::option::of(arb_int_tuple())).prop_map(|(shape, stride)| LayoutLit {
        shape,
        stride,
        span: Span::default(),
    });
    let tensor = (arb_ident(), arb_ident(), prop::option::of(layout), prop::option::of(0i64..512)).prop_map(
        |(elem, space, layout, align)| TypeExpr::Tensor {
            elem,
            space,
            layout,
            align: align.map(|a| (a, Span::default())),
            span: Span::default(),
        },
    );
    prop_oneof![arb_ident().prop_map(TypeExpr::Named), tensor].prop_recursive(2, 8, 3, |inner| {
        (prop::collection::vec(inner.clone(), 0..3), inner).prop_map(|(params, ret)| TypeExpr::Fn {
            params,
            ret: Box::new(ret),
            span: Span::default(),
        })
    })
}

fn arb_pattern() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        arb_ident().prop_map(Pattern::Name),
        arb_ident().prop_map(Pattern::Mut),
        Just(Pattern::Wildcard(Span::default()))
    ]
    .prop_recursive(3, 10, 3, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(|items| Pattern::Tuple(items, Span::default()))
    })
}

fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts, span: Span::default() }
}

fn arb_simple_stmt() -> impl Strategy<Value = Stmt> {
    let expr = arb_expr();
    prop_oneof![
        (arb_pattern(), prop::option::of(arb_type()), expr.clone()).prop_map(|(pattern, ty, value)| Stmt::Let {
            pattern,
            ty,
            value,
            span: Span::default()
        }),
        (expr.clone(), expr.clone()).prop_map(|(target, value)| Stmt::Assign { target, value, span: Span::default() }),
        expr.clone().prop_map(Stmt::Expr),
        prop::option::of(expr.clone()).prop_map(|value| Stmt::Return { value, span: Span::default() }),
        (
            arb_ident(),
            arb_args(expr.clone()),
            prop::collection::vec((arb_ident(), prop::collection::vec(expr, 0..3)), 0..4)
        )
            .prop_map(|(kernel, args, clauses)| Stmt::Launch {
                kernel,
                args,
                clauses: clauses
                    .into_iter()
                    .map(|(name, args)| LaunchClause { name, args, span: Span::default() })
                    .collect(),
                span: Span::default(),
            }),
    ]
}

fn arb_stmt() -> impl Strategy<Value = Stmt> {
    arb_simple_stmt().prop_recursive(3, 24, 4, |inner| {
        let body = prop::collection::vec(inner, 0..4).prop_map(block);
        // An `else` holds a block or another `if`, as the grammar builds them.
        let els = prop_oneof![
            Just(None),
            body.clone().prop_map(|b| Some(Box::new(Stmt::Block(b)))),
            (arb_expr(), body.clone()).prop_map(|(cond, then)| Some(Box::new(Stmt::If {
                cond,
                then,
                els: None,
                span: Span::default()
            }))),
        ];
        prop_oneof![
            (arb_expr(), body.clone(), els).prop_map(|(cond, then, els)| Stmt::If {
                cond,
                then,
                els,
                span: Span::default()
            }),
            (arb_ident(), arb_expr(), arb_expr(), prop::option::of((arb_ident(), arb_expr())), body).prop_map(
                |(var, start, end, step, body)| { Stmt::For { var, start, end, step, body, span: Span::default() } }
            ),
        ]
    })
}

fn arb_item() -> impl Strategy<Value = Item> {
    let kind = prop::sample::select(vec![FnKind::Kernel, FnKind::Device, FnKind::Host]);
    // A parameter without a type is `Infer`, as the parser records it.
    let param = (any::<bool>(), arb_ident(), prop::option::of(arb_type())).prop_map(|(is_const, name, ty)| Param {
        is_const,
        name,
        ty: ty.unwrap_or(TypeExpr::Infer(Span::default())),
        span: Span::default(),
    });
    let function = (
        kind,
        arb_ident(),
        prop::collection::vec(param, 0..4),
        prop::option::of(arb_type()),
        prop::collection::vec((arb_ident(), prop::collection::vec(arb_ident(), 1..3)), 0..2),
        prop::collection::vec(arb_stmt(), 0..5),
    )
        .prop_map(|(kind, name, params, ret, clauses, stmts)| {
            Item::Function(Function {
                kind,
                name,
                type_params: Vec::new(),
                params,
                ret,
                clauses: clauses
                    .into_iter()
                    .map(|(name, values)| FnClause { name, values, span: Span::default() })
                    .collect(),
                body: block(stmts),
                span: Span::default(),
            })
        });
    let constant = (arb_ident(), prop::option::of(arb_type()), arb_expr())
        .prop_map(|(name, ty, value)| Item::Const(ConstItem { name, ty, value, span: Span::default() }));
    prop_oneof![function, constant]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_expressions_round_trip(expr in arb_expr()) {
        assert_expr_round_trip(&expr);
    }

    #[test]
    fn random_files_round_trip(items in prop::collection::vec(arb_item(), 0..4)) {
        let file = File { imports: Vec::new(), items, imported: Vec::new(), tunes: Vec::new() };
        let printed = print_file(&file);
        let parsed = match parse(&printed) {
            Ok(f) => f,
            Err(d) => panic!("printed file does not parse: {}\n{printed}", d.message),
        };
        prop_assert_eq!(strip_spans(&parsed), file, "{}", printed);
        prop_assert_eq!(print_file(&parsed), printed);
    }
}
