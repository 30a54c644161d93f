//! The manifest's writer and reader agree: for generated manifests (kernels with tensors, scalars,
//! launch conditions (multiples and minimums), fast divisors, TMA records and clusters; host functions with checks and plans
//! of launches, prints, run-time `if`s and loops), write → parse gives the same manifest back, and
//! writing that again gives the same text.

use cute_abi::manifest::{
    Assert, CmpOp, Cond, Expr, HostSig, HostStep, IntTuple, KernelSig, LaunchPlan, Manifest, Need, ParamKind, ParamSig,
    PlanArg, PrintSeg, Require, StepNesting, TensorSig, TmaSig, TypeArgSig, MANIFEST_VERSION,
};
use cute_abi::{DType, MemSpace};
use proptest::prelude::*;

/// An integer expression over `$0 .. $nvars`.
fn expr(nvars: usize) -> impl Strategy<Value = Expr> {
    let leaf = if nvars == 0 {
        (-1000i64..1000).prop_map(Expr::Const).boxed()
    } else {
        prop_oneof![(-1000i64..1000).prop_map(Expr::Const), (0..nvars).prop_map(Expr::Var)].boxed()
    };
    leaf.prop_recursive(3, 12, 3, |inner| {
        let two = (inner.clone(), inner.clone()).prop_map(|(a, b)| (Box::new(a), Box::new(b)));
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::Mul),
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::Add),
            prop::collection::vec(inner.clone(), 1..4).prop_map(Expr::Min),
            prop::collection::vec(inner, 1..4).prop_map(Expr::Max),
            two.clone().prop_map(|(a, b)| Expr::Div(a, b)),
            two.clone().prop_map(|(a, b)| Expr::Mod(a, b)),
            two.clone().prop_map(|(a, b)| Expr::CeilDiv(a, b)),
            two.prop_map(|(a, b)| Expr::CeilQuot(a, b)),
        ]
    })
}

fn cmp() -> impl Strategy<Value = CmpOp> {
    prop::sample::select(CmpOp::ALL.to_vec())
}

fn cond(nvars: usize) -> impl Strategy<Value = Cond> {
    let leaf = (cmp(), expr(nvars), expr(nvars)).prop_map(|(op, a, b)| Cond::Cmp(op, a, b));
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(Cond::And),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Cond::Or),
            inner.prop_map(|c| Cond::Not(Box::new(c))),
        ]
    })
}

/// Any text, including characters the line format could not hold unescaped.
fn text() -> impl Strategy<Value = String> {
    "[ -~é|\n]{0,12}"
}

/// A divisibility condition or a minimum (a static coordinate's bound).
fn require(nvars: usize) -> impl Strategy<Value = Require> {
    let need = prop_oneof![(1i64..1024).prop_map(Need::MultipleOf), (1i64..1 << 40).prop_map(Need::AtLeast)];
    (expr(nvars), need, text()).prop_map(|(expr, need, what)| Require { expr, need, what })
}

fn assert(nvars: usize) -> impl Strategy<Value = Assert> {
    (expr(nvars), cmp(), expr(nvars), text(), text(), text())
        .prop_map(|(lhs, op, rhs, message, lhs_text, rhs_text)| Assert { lhs, op, rhs, message, lhs_text, rhs_text })
}

fn print(nvars: usize) -> impl Strategy<Value = Vec<PrintSeg>> {
    let seg = prop_oneof![text().prop_map(PrintSeg::Text), expr(nvars).prop_map(PrintSeg::Int)];
    prop::collection::vec(seg, 0..4)
}

/// A flat or once-nested tuple of `n` leaves (as the reader keeps them: no one-element tuple).
fn nest(leaves: Vec<IntTuple>, nested: bool) -> IntTuple {
    match leaves.len() {
        1 => leaves.into_iter().next().unwrap(),
        n if nested && n >= 3 => {
            let mut it = leaves.into_iter();
            let inner = IntTuple::Node(vec![it.next().unwrap(), it.next().unwrap()]);
            IntTuple::Node(std::iter::once(inner).chain(it).collect())
        }
        _ => IntTuple::Node(leaves),
    }
}

/// A global-memory tensor of element type `elem`: static or dynamic leaves, dynamic ones with a
/// divisor now and then.
fn tensor(elem: DType) -> impl Strategy<Value = TensorSig> {
    let leaf = prop_oneof![
        (0i64..1000).prop_map(|v| (Some(v), 1)),
        prop::sample::select(vec![1i64, 2, 8, 16]).prop_map(|d| (None, d))
    ];
    (1usize..5)
        .prop_flat_map(move |n| {
            (prop::collection::vec(leaf.clone(), n), prop::collection::vec(leaf.clone(), n), any::<bool>(), 0u32..5)
        })
        .prop_map(move |(shape, stride, nested, align)| {
            let tuple = |v: &[(Option<i64>, i64)]| nest(v.iter().map(|l| IntTuple::Leaf(l.0)).collect(), nested);
            let (shape_t, stride_t) = (tuple(&shape), tuple(&stride));
            TensorSig {
                elem,
                space: MemSpace::Gmem,
                align: 1 << align,
                shape_leaves: shape_t.leaves(),
                stride_leaves: stride_t.leaves(),
                shape: shape_t,
                stride: stride_t,
                shape_div: shape.iter().map(|l| l.1).collect(),
                stride_div: stride.iter().map(|l| l.1).collect(),
            }
        })
}

/// The number of `$k` a parameter list has.
fn nvars(params: &[ParamSig]) -> usize {
    cute_abi::manifest::var_sources_of(params).len()
}

/// A kernel: two tensors and a scalar, and a row-major 2-d tensor its TMA record maps.
fn kernel() -> impl Strategy<Value = KernelSig> {
    let elem = prop::sample::select(vec![DType::F16, DType::BF16, DType::F32, DType::I8]);
    (elem.clone(), elem, prop::sample::select(vec![DType::I32, DType::I64, DType::U32, DType::Bool]))
        .prop_flat_map(|(e0, e1, s)| (tensor(e0), tensor(e1), Just(s), Just(e0)))
        .prop_flat_map(|(t0, t1, s, e0)| {
            let map = TensorSig {
                elem: e0,
                space: MemSpace::Gmem,
                align: 16,
                shape: IntTuple::Node(vec![IntTuple::Leaf(None), IntTuple::Leaf(None)]),
                stride: IntTuple::Node(vec![IntTuple::Leaf(None), IntTuple::Leaf(Some(1))]),
                shape_leaves: vec![None, None],
                stride_leaves: vec![None, Some(1)],
                shape_div: vec![1, 1],
                stride_div: vec![8, 1],
            };
            let params = vec![
                ParamSig { name: "a".into(), kind: ParamKind::Tensor(t0) },
                ParamSig { name: "b".into(), kind: ParamKind::Tensor(t1) },
                ParamSig { name: "n".into(), kind: ParamKind::Scalar(s) },
                ParamSig { name: "m".into(), kind: ParamKind::Tensor(map) },
            ];
            let n = nvars(&params);
            let tma =
                (prop::collection::vec(1u32..=256, 2), prop::sample::select(vec![0u32, 32, 64, 128]), any::<bool>())
                    .prop_map(move |(box_dims, swizzle_bytes, store)| TmaSig {
                        param: 3,
                        elem: e0,
                        order: vec![1, 0],
                        box_dims,
                        swizzle_bytes,
                        store,
                    });
            (
                Just(params),
                prop::collection::vec(require(n), 0..3),
                any::<u32>(),
                prop::collection::vec(expr(n), 0..3),
                prop::collection::vec(tma, 0..2),
                prop::array::uniform3(1u32..4),
                prop::sample::select(vec![32u32, 64]),
                any::<bool>(),
            )
        })
        .prop_map(|(params, requires, dynamic_smem_bytes, fast_divisors, tmas, cluster, index_bits, asserts)| {
            KernelSig {
                name: "k".into(),
                params,
                requires,
                dynamic_smem_bytes,
                fast_divisors,
                tmas,
                cluster,
                index_bits,
                asserts,
            }
        })
}

/// A host plan's steps as a tree: what the plan does, nested as in the source.
#[derive(Clone, Debug)]
enum Node {
    Launch(Vec<Expr>, Option<usize>),
    Print(Vec<PrintSeg>),
    Assert(Assert),
    Require(Require),
    If(Cond, Vec<Node>, Vec<Node>),
    For(Expr, Expr, Expr, Vec<Node>),
    Break,
    Continue,
}

/// Steps over `$0 .. $nvars` (loop variables are not used: their scoping is the reader's check,
/// not the format's).
fn nodes(nvars: usize) -> impl Strategy<Value = Vec<Node>> {
    let launch = (prop::collection::vec(expr(nvars), 7..8), prop::option::of(Just(0usize)))
        .prop_map(|(e, s)| Node::Launch(e, s));
    let leaf = prop_oneof![
        4 => launch,
        1 => print(nvars).prop_map(Node::Print),
        1 => assert(nvars).prop_map(Node::Assert),
        1 => require(nvars).prop_map(Node::Require),
    ];
    let tree = leaf.prop_recursive(2, 12, 3, move |inner| {
        let body = prop::collection::vec(inner, 0..3);
        prop_oneof![
            (cond(nvars), body.clone(), body.clone()).prop_map(|(c, t, e)| Node::If(c, t, e)),
            (expr(nvars), expr(nvars), expr(nvars), body, any::<u8>()).prop_map(|(a, b, s, mut body, j)| {
                match j % 3 {
                    0 => body.push(Node::Break),
                    1 => body.push(Node::Continue),
                    _ => {}
                }
                Node::For(a, b, s, body)
            }),
        ]
    });
    prop::collection::vec(tree, 0..4)
}

/// Appends the steps of `nodes` to `h`; launches pass the host's tensors and `n` to kernel `k`.
fn build(h: &mut HostSig, nest: &mut StepNesting, nodes: &[Node], k: &KernelSig, loops: &mut usize, nvars: usize) {
    for node in nodes {
        let step = match node {
            Node::Launch(e, stream) => {
                let args = k
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, p)| match &p.kind {
                        ParamKind::Tensor(t) => PlanArg::Tensor {
                            host_param: i,
                            offset: e[0].clone(),
                            dyn_leaves: (0..t.abi_len() - 1).map(|j| e[1 + j % 6].clone()).collect(),
                        },
                        ParamKind::Scalar(d) => PlanArg::Scalar { ty: *d, value: e[6].clone() },
                        ParamKind::Stream => unreachable!(),
                    })
                    .collect();
                h.launches_kernels.push(k.name.clone());
                h.launches.push(LaunchPlan {
                    kernel: k.name.clone(),
                    grid: [e[0].clone(), e[1].clone(), e[2].clone()],
                    block: [e[3].clone(), e[4].clone(), e[5].clone()],
                    smem: e[6].clone(),
                    args,
                    stream: stream.map(|_| h.params.len() - 1),
                });
                HostStep::Launch(h.launches.len() - 1)
            }
            Node::Print(segs) => HostStep::Print(segs.clone()),
            // Outside every block, a check belongs to the host (checked before anything is launched).
            Node::Assert(a) if nest.is_empty() => {
                h.asserts.push(a.clone());
                continue;
            }
            Node::Require(r) if nest.is_empty() => {
                h.requires.push(r.clone());
                continue;
            }
            Node::Assert(a) => HostStep::Assert(a.clone()),
            Node::Require(r) => HostStep::Require(r.clone()),
            Node::Break => HostStep::Break { end_at: 0 },
            Node::Continue => HostStep::Continue { endfor_at: 0 },
            Node::If(c, then, els) => {
                nest.push(h, HostStep::If { cond: c.clone(), else_at: 0 }).unwrap();
                build(h, nest, then, k, loops, nvars);
                if !els.is_empty() {
                    nest.push(h, HostStep::Else { end_at: 0 }).unwrap();
                    build(h, nest, els, k, loops, nvars);
                }
                HostStep::EndIf
            }
            Node::For(start, end, step, body) => {
                let var = nvars + *loops;
                *loops += 1;
                let st = HostStep::For { var, start: start.clone(), end: end.clone(), step: step.clone(), end_at: 0 };
                nest.push(h, st).unwrap();
                build(h, nest, body, k, loops, nvars);
                HostStep::EndFor { for_at: 0 }
            }
        };
        nest.push(h, step).unwrap();
    }
}

/// A host function calling kernel `k`: the kernel's parameters, then a stream.
fn host(k: KernelSig) -> impl Strategy<Value = HostSig> {
    let mut params = k.params.clone();
    params.push(ParamSig { name: "s".into(), kind: ParamKind::Stream });
    let n = nvars(&params);
    let generic = any::<bool>();
    (
        Just((k, params)),
        prop::collection::vec(require(n), 0..2),
        prop::collection::vec(assert(n), 0..2),
        nodes(n),
        generic,
    )
        .prop_map(move |((k, params), requires, asserts, nodes, generic)| {
            let ParamKind::Tensor(t) = &params[0].kind else { unreachable!() };
            let type_args = vec![TypeArgSig { name: "T".into(), dtype: t.elem, params: vec![0] }];
            let mut h = HostSig {
                name: if generic { format!("h<{}>", t.elem) } else { "h".into() },
                params,
                launches: Vec::new(),
                launches_kernels: Vec::new(),
                plan_error: None,
                requires,
                asserts,
                steps: Vec::new(),
                generic: generic.then(|| "h".to_string()),
                type_args: if generic { type_args } else { Vec::new() },
                // `cutec tune`'s table, one line per tuned shape (any text to the line's end).
                tuned: if generic {
                    Vec::new()
                } else {
                    vec!["1024,4096 | ILP=2; TILE=(8, 4)".into(), "64,64 | ILP=1".into()]
                },
            };
            let mut nest = StepNesting::default();
            build(&mut h, &mut nest, &nodes, &k, &mut 0, n);
            h
        })
}

fn manifest() -> impl Strategy<Value = Manifest> {
    kernel().prop_flat_map(|k| (Just(k.clone()), prop::collection::vec(host(k), 0..3))).prop_map(|(k, hosts)| {
        Manifest { version: MANIFEST_VERSION, arch: Some("sm_90".into()), kernels: vec![k], hosts, text: String::new() }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn write_then_parse_gives_the_manifest_back(m in manifest()) {
        let text = m.to_text();
        let back = Manifest::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        for h in &back.hosts {
            prop_assert_eq!(&h.plan_error, &None, "{}", text);
        }
        prop_assert_eq!(&back.text, &text);
        prop_assert_eq!(Manifest { text: String::new(), ..back.clone() }, m);
        prop_assert_eq!(back.to_text(), text);
    }

    #[test]
    fn expressions_and_conditions_print_as_they_parse(e in expr(8), c in cond(8)) {
        prop_assert_eq!(Expr::parse(&e.to_string()), Ok(e));
        prop_assert_eq!(Cond::parse(&c.to_string()), Ok(c));
    }
}
