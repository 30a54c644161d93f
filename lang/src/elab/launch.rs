//! `launch` in a host function: the kernel instantiated for the arguments, each argument checked
//! against its parameter, the launch clauses; and the launch conditions (`requires`) that a
//! kernel's partial tiles need.

use super::expr::{is_static_value, static_f64};
use super::value::{Origin, Value};
use super::{declared_tensor, generics, is_stream_type, layout_err, stream_param_error, Frame, Mode, R};
use crate::ast::{Arg, FnKind, Function, Ident, LaunchClause, Param};
use crate::check::resolve_type;
use crate::diag::{did_you_mean, Diagnostic};
use crate::kir::{self, PlanArg, ValueId};
use crate::pretty::print_type;
use crate::span::Span;
use crate::types::{Scalar, Ty};
use cute_abi::manifest::Need;
use cute_layout::{Int, Layout};

/// What a launch's clauses give: the grid and block, the bytes of shared memory of the launch's own
/// region, and the stream and cluster shape with where each was written.
struct LaunchClauses {
    grid: [Int; 3],
    block: [Int; 3],
    smem: Int,
    stream: Option<(usize, Span)>,
    cluster: Option<([u32; 3], Span)>,
}

impl<'f> Frame<'_, 'f> {
    pub(super) fn launch(&mut self, kernel: &Ident, args: &[Arg], clauses: &[LaunchClause], span: Span) -> R<()> {
        let f = self.launched_kernel(kernel, args, span)?;
        let (values, plan) = self.launch_args(f, args)?;
        let LaunchClauses { grid, block, smem, stream, cluster } = self.launch_clauses(clauses, span)?;
        let symbol = self.prog.instantiate(f, &values, span)?;
        self.record_cluster(&symbol, &f.name.name, cluster, &grid, span)?;
        let smem = self.launch_smem(&symbol, f, smem, span)?;
        self.steps.push(kir::HostStep::Launch(kir::Launch {
            kernel: symbol,
            args: plan,
            grid,
            block,
            smem_bytes: smem,
            stream: stream.map(|(p, _)| p),
            span,
        }));
        Ok(())
    }

    /// The kernel a `launch` names, checked to be one and to be given as many arguments as it takes.
    fn launched_kernel(&self, kernel: &Ident, args: &[Arg], span: Span) -> R<&'f Function> {
        if self.mode != Mode::Host {
            return Err(Diagnostic::error("`launch` is only allowed in host functions", span, "launch here")
                .with_help("kernels cannot launch kernels"));
        }
        let Some(&f) = self.prog.functions.get(&kernel.name) else {
            let names: Vec<&str> = self
                .prog
                .functions
                .values()
                .filter(|f| f.kind == FnKind::Kernel)
                .map(|f| f.name.name.as_str())
                .collect();
            let mut d = Diagnostic::error(format!("cannot find kernel `{}`", kernel.name), kernel.span, "not found");
            if let Some(s) = did_you_mean(&kernel.name, names) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d);
        };
        if f.kind != FnKind::Kernel {
            return Err(Diagnostic::error(format!("`{}` is not a kernel", kernel.name), kernel.span, "not a kernel")
                .with_secondary(f.name.span, "defined here"));
        }
        if args.len() != f.params.len() {
            return Err(Diagnostic::error(
                format!(
                    "`{}` takes {} but {} given",
                    kernel.name,
                    crate::diag::count(f.params.len(), "argument"),
                    if args.len() == 1 { "1 was".to_string() } else { format!("{} were", args.len()) }
                ),
                span,
                "wrong number of arguments",
            )
            .with_secondary(f.name.span, "kernel defined here"));
        }
        Ok(f)
    }

    /// A launch's arguments: the values the kernel instance is elaborated with, and what the plan
    /// passes for its non-`const` parameters.
    fn launch_args(&mut self, f: &Function, args: &[Arg]) -> R<(Vec<Value>, Vec<PlanArg>)> {
        let mut evaluated = Vec::with_capacity(args.len());
        for a in args {
            evaluated.push(self.expr(&a.value)?);
        }
        // The element types a generic kernel is instantiated with, from the tensors passed.
        let bindings = {
            let spanned: Vec<(&Value, Span)> = evaluated.iter().zip(args).map(|(v, a)| (v, a.value.span)).collect();
            generics::deduce(f, &spanned)?
        };
        let tys = self.prog.param_types(f, &bindings)?;
        let mut values = Vec::new();
        let mut plan = Vec::new();
        for ((a, p), (v, ty)) in args.iter().zip(&f.params).zip(evaluated.into_iter().zip(tys)) {
            let p = &Param { ty, ..p.clone() };
            if p.is_const {
                if !is_static_value(&v) {
                    return Err(Diagnostic::error(
                        format!("`const` parameter `{}` needs a compile-time value", p.name.name),
                        a.value.span,
                        "known only at run time",
                    )
                    .with_secondary(p.span, "declared `const` here"));
                }
                values.push(v);
                continue;
            }
            let (v, arg) = self.check_kernel_arg(p, v, a.value.span)?;
            plan.push(arg);
            values.push(v);
        }
        Ok((values, plan))
    }

    /// A launch's clauses, each given at most once; `grid` and `block` are required.
    fn launch_clauses(&mut self, clauses: &[LaunchClause], span: Span) -> R<LaunchClauses> {
        let mut grid = None;
        let mut block = None;
        let mut smem = Int::ZERO;
        let mut stream: Option<(usize, Span)> = None;
        let mut cluster: Option<([u32; 3], Span)> = None;
        for c in clauses {
            if c.name.name == "cluster" {
                if let Some((_, first)) = cluster {
                    return Err(Diagnostic::error(
                        "this launch has two `cluster(...)` clauses",
                        c.span,
                        "second cluster clause",
                    )
                    .with_secondary(first, "first one here"));
                }
                cluster = Some((self.cluster_clause(c)?, c.span));
                continue;
            }
            if c.name.name == "stream" {
                stream = Some((self.stream_clause(c, stream.map(|(_, first)| first))?, c.span));
                continue;
            }
            let vals: Vec<Int> = c.args.iter().map(|e| self.index(e)).collect::<R<_>>()?;
            match c.name.name.as_str() {
                "grid" | "block" => {
                    if vals.is_empty() || vals.len() > 3 {
                        return Err(Diagnostic::error(
                            format!("`{}` takes 1 to 3 extents", c.name.name),
                            c.span,
                            "wrong number of extents",
                        ));
                    }
                    let mut dims = [Int::ONE, Int::ONE, Int::ONE];
                    for (d, v) in dims.iter_mut().zip(vals) {
                        *d = v;
                    }
                    if c.name.name == "grid" {
                        check_extents(&GRID_LIMITS, &dims, &c.args)?;
                        grid = Some(dims)
                    } else {
                        block = Some((dims, &c.args))
                    }
                }
                "smem" => {
                    if vals.len() != 1 {
                        return Err(Diagnostic::error(
                            "`smem` takes the number of bytes",
                            c.span,
                            "one value expected",
                        ));
                    }
                    smem = vals[0].clone();
                    // A static byte count is checked here (the runtime checks a dynamic one at
                    // the call): negative, or more than any block has, it could never launch.
                    if let Some(v) = smem.as_static().filter(|v| !(0..=kir::MAX_SMEM as i64).contains(v)) {
                        return Err(Diagnostic::error(
                            format!("`smem` is a byte count from 0 to {}, not {v}", kir::MAX_SMEM),
                            c.args[0].span,
                            "out of range",
                        )
                        .with_help(format!("a block has at most {} bytes of shared memory on sm_90", kir::MAX_SMEM)));
                    }
                }
                other => {
                    let mut d =
                        Diagnostic::error(format!("unknown launch clause `{other}`"), c.name.span, "unknown clause");
                    if let Some(s) = did_you_mean(other, ["grid", "block", "smem", "stream", "cluster"]) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    } else {
                        d = d.with_help("the clauses are `grid(x, y, z)`, `block(x, y, z)`, `smem(bytes)`, `stream(s)` and `cluster(x, y, z)`");
                    }
                    return Err(d);
                }
            }
        }
        let (has_grid, has_block) = (grid.is_some(), block.is_some());
        let (Some(grid), Some(block)) = (grid, block) else {
            let missing = match (has_grid, has_block) {
                (false, false) => "`grid(...)` and `block(...)`",
                (false, true) => "`grid(...)`",
                _ => "`block(...)`",
            };
            return Err(Diagnostic::error(
                format!("this launch has no {missing}"),
                span,
                "missing launch configuration",
            )
            .with_help("write `launch k(args) grid(x[, y, z]) block(x[, y, z]);`"));
        };
        let (block, block_args) = block;
        check_block_threads(&block, span)?;
        check_extents(&BLOCK_LIMITS, &block, block_args)?;
        Ok(LaunchClauses { grid, block, smem, stream, cluster })
    }

    /// The host parameter index of the stream a `stream(s)` clause names; `first` is where an
    /// earlier one was written.
    fn stream_clause(&mut self, c: &LaunchClause, first: Option<Span>) -> R<usize> {
        let [e] = c.args.as_slice() else {
            return Err(Diagnostic::error(
                "`stream` takes one stream parameter of the host function",
                c.span,
                "one stream expected",
            )
            .with_help("declare `s: stream` on the host function and write `stream(s)`"));
        };
        if let Some(first) = first {
            return Err(Diagnostic::error("this launch has two `stream(...)` clauses", c.span, "second stream clause")
                .with_secondary(first, "first one here"));
        }
        match self.expr(e)? {
            Value::Stream(param) => Ok(param),
            other => Err(Diagnostic::error(
                format!(
                    "`stream(...)` takes a `stream` parameter of the host function, found {}",
                    crate::diag::article(&other.kind())
                ),
                e.span,
                "not a stream",
            )
            .with_help("declare a host parameter `s: stream` (the caller passes a CUDA stream) and write `stream(s)`")),
        }
    }

    /// The dynamic shared memory a launch of the instance `symbol` gives: the bytes of its `smem`
    /// clause, which must hold the kernel's tensors in the launch's own region, and the kernel's
    /// allocations beyond the static limit.
    fn launch_smem(&mut self, symbol: &str, f: &Function, smem: Int, span: Span) -> R<Int> {
        // Allocations beyond the static limit live in dynamic shared memory: the launch provides it.
        let (dynamic, needed, own) = self
            .prog
            .module
            .kernels
            .iter()
            .find(|k| k.symbol == symbol)
            .map_or((0, 0, 0), |k| (k.dynamic_smem_bytes(), k.launch_smem_bytes(), k.smem_bytes()));
        if let Some(given) = smem.as_static().filter(|&g| own + g as u64 > kir::MAX_SMEM) {
            return Err(Diagnostic::error(
                format!(
                    "this launch asks for {} bytes of shared memory ({own} of `{}`'s own and {given} in `smem`); a block has at most {}",
                    own + given as u64,
                    f.name.name,
                    kir::MAX_SMEM
                ),
                span,
                "too much shared memory",
            )
            .with_help("give a smaller `smem(...)`, or use fewer pipeline stages or smaller tiles"));
        }
        // The kernel's tensors in the launch's own region must fit in it: checked here when the size
        // is static, by the runtime (the manifest's `smem` line) when it is not.
        if let Some(given) = smem.as_static() {
            if (given as u64) < needed {
                return Err(Diagnostic::error(
                    format!(
                        "`{}` uses {needed} bytes of the launch's shared memory but this launch gives {given}",
                        f.name.name
                    ),
                    span,
                    "too little shared memory",
                )
                .with_help(format!(
                    "launch it with `smem({needed})` or more (the kernel's `allocate_tensor`s need it)"
                )));
            }
        }
        let smem = smem.add(&Int::S(dynamic as i64)).map_err(|e| layout_err(e, span))?;
        Ok(smem)
    }

    /// Checks a launch argument against the kernel parameter's declared type: the value the
    /// instance is elaborated with, and what the plan passes.
    fn check_kernel_arg(&mut self, p: &Param, v: Value, span: Span) -> R<(Value, PlanArg)> {
        if let Value::Tensor(t) = &v {
            let Origin::Host { param, offset } = &t.origin else { unreachable!("host tensors have host origins") };
            let arg = PlanArg::Tensor {
                host_param: *param,
                offset: offset.clone(),
                dyn_leaves: t.ty.layout.dynamic_leaves(),
            };
            return self.check_kernel_tensor_arg(p, v, span).map(|v| (v, arg));
        }
        if is_stream_type(&p.ty) {
            return Err(stream_param_error(p, "a kernel").with_secondary(span, "passed here"));
        }
        if let Value::Stream(_) = v {
            return Err(Diagnostic::error(
                format!("a stream cannot be passed to a kernel (`{}`)", p.name.name),
                span,
                "a stream",
            )
            .with_secondary(p.ty.span(), "parameter type here")
            .with_help("to launch the kernel on this stream, write the clause `stream(s)` after `block(...)`"));
        }
        if declared_tensor(&p.ty)?.is_some() {
            return Err(Diagnostic::error(
                format!("`{}` expects a tensor, found a {}", p.name.name, v.kind()),
                span,
                "not a tensor",
            )
            .with_secondary(p.ty.span(), "parameter type here"));
        }
        let ty = match resolve_type(&p.ty)? {
            Ty::Scalar(s) => s,
            other => {
                return Err(Diagnostic::error(
                    format!("kernel parameters of type `{other}` cannot be launched from a host function"),
                    p.ty.span(),
                    "unsupported parameter type",
                ))
            }
        };
        let value = scalar_plan_value(ty, &v).ok_or_else(|| {
            let found = match &v {
                Value::Int(i) if !i.is_static() && ty.is_float() => {
                    "a run-time i32 (host functions do not convert run-time values)".to_string()
                }
                other => crate::diag::article(&other.kind()),
            };
            Diagnostic::error(
                format!("`{}` expects {}, found {found}", p.name.name, crate::diag::article(ty.name())),
                span,
                format!("not {}", crate::diag::article(ty.name())),
            )
            .with_secondary(p.ty.span(), "parameter type here")
            .with_help(match &v {
                Value::Scalar(..) => {
                    format!("declare the host parameter as `{}`, or convert in the kernel with `.to(...)`", ty.name())
                }
                _ => format!(
                    "pass {} value: a host parameter of that type or a literal",
                    crate::diag::article(ty.name())
                ),
            })
        })?;
        if let (Some(c), Some((lo, hi))) = (value.as_static(), int_range(ty)) {
            if ty != Scalar::Bool && (c < lo || c > hi) {
                return Err(Diagnostic::error(
                    format!("{c} does not fit `{}` (`{}`)", p.name.name, ty.name()),
                    span,
                    "out of range",
                )
                .with_secondary(p.ty.span(), "parameter type here")
                .with_help(format!("a `{}` holds {lo} to {hi}", ty.name())));
            }
        }
        // The instance sees an index integer for `i32` and a run-time scalar otherwise.
        let inst = if ty == Scalar::I32 { v } else { Value::Scalar(ty, 0) };
        Ok((inst, PlanArg::Scalar { ty, value }))
    }

    /// Checks a tensor launch argument against the kernel parameter's declared type.
    fn check_kernel_tensor_arg(&mut self, p: &Param, v: Value, span: Span) -> R<Value> {
        match (declared_tensor(&p.ty)?, &v) {
            (Some((elem, space, align, layout)), Value::Tensor(t)) => {
                let mismatch = |what: String| {
                    Diagnostic::error(
                        format!("argument for `{}` does not match its type: {what}", p.name.name),
                        span,
                        format!("this is {}", t.ty),
                    )
                    .with_secondary(p.ty.span(), "parameter type here")
                };
                if t.ty.elem != elem {
                    return Err(mismatch(format!("element type {} is not {}", t.ty.elem.name(), elem.name())));
                }
                if t.ty.space != space {
                    return Err(mismatch(format!("memory space {} is not {}", t.ty.space.name(), space.name())));
                }
                if let Some(a) = align {
                    if t.ty.align < a {
                        return Err(mismatch(format!("alignment {} is less than {a}", t.ty.align)));
                    }
                }
                if let Some(l) = layout {
                    let fits = l.shape.congruent(&t.ty.layout.shape)
                        && l.shape
                            .leaves()
                            .iter()
                            .zip(t.ty.layout.shape.leaves())
                            .chain(l.stride.leaves().iter().zip(t.ty.layout.stride.leaves()))
                            .all(|(d, a)| match d.as_static() {
                                Some(_) => *d == a,
                                // `?{div=N}` accepts what is known to be a multiple of N.
                                None => {
                                    d.divisibility() <= 1
                                        || a.as_static().map_or(a.divisibility(), |v| v) % d.divisibility() == 0
                                }
                            });
                    if !fits {
                        return Err(mismatch(format!("layout {} does not fit {}", t.ty.layout, l)));
                    }
                }
                Ok(v)
            }
            _ => Err(Diagnostic::error(
                format!("`{}` expects `{}`, found {}", p.name.name, print_type(&p.ty), crate::diag::article(&v.kind())),
                span,
                "not a scalar",
            )
            .with_secondary(p.ty.span(), "parameter type here")),
        }
    }

    /// Tiling a tensor (of memory) by `tiler`: a static extent the tile does not divide is an error now
    /// (the last tile would reach past the tensor: past a shared-memory buffer, an illegal address), a
    /// run-time one becomes a launch condition ([`Self::require_whole_tiles`]).
    pub(crate) fn require_tiles_divide(&mut self, layout: &Layout, tiler: &cute_layout::Tiler, span: Span) -> R<()> {
        if let Some((_, l, e, s)) = cute_layout::tiler::partial_tile(layout, tiler) {
            return Err(Diagnostic::error(format!("a tile of {s} does not divide the extent {e} (layout {l}): the last tile would reach past the tensor"), span, "partial tile")
                .with_help("pick a tile that divides the extent, or predicate with an identity tensor"));
        }
        let divided = cute_layout::zipped_divide(layout, tiler).map_err(|e| layout_err(e, span))?;
        self.require_whole_tiles(&divided, span);
        Ok(())
    }

    /// Records that every run-time extent a layout operation divided by a static tile must be a
    /// multiple of it: a `ceil_div` in the result means a partial tile the kernel would overrun.
    /// A program's own `ceil_div` (a padded extent) is a value, not a tile count, in a host
    /// function, whose views the runtime keeps inside their tensors; in a kernel, where nothing
    /// bounds a view made of it, it is taken for a tiling's as well.
    pub(crate) fn require_whole_tiles(&mut self, layout: &Layout, span: Span) {
        fn walk(i: &Int, kernel: bool, out: &mut Vec<(Int, i64)>) {
            use cute_layout::int::Op;
            if let Int::D(d) = i {
                for a in d.factors.iter() {
                    if let cute_layout::int::Atom::Op(op) = a {
                        let tile_count = match &**op {
                            Op::CeilDiv(..) => true,
                            Op::CeilQuot(..) => kernel,
                            _ => false,
                        };
                        let (x, y) = op.operands();
                        if tile_count {
                            if let Some(b) = y.as_static() {
                                out.push((x.clone(), b));
                            }
                            walk(x, kernel, out);
                        } else {
                            walk(x, kernel, out);
                            walk(y, kernel, out);
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        for leaf in layout.shape.leaves() {
            walk(&leaf, self.mode == Mode::Kernel, &mut found);
        }
        for (value, divisor) in found {
            let require = kir::Require {
                value,
                need: Need::MultipleOf(divisor),
                what: format!("a run-time extent tiled by {divisor}"),
                span,
            };
            if divisor <= 1 {
                continue;
            }
            // A kernel's tiles are held until accessed; a host function's go to its launches.
            if self.mode == Mode::Kernel {
                self.staged.push(require);
            } else {
                self.add_require(require);
            }
        }
    }

    pub(super) fn add_require(&mut self, require: kir::Require) {
        if !self.requires.iter().any(|r| r.value == require.value && r.need == require.need) {
            self.requires.push(require);
        }
    }

    /// The launch conditions of the tensor `id`'s partial tiles become the kernel's: it is accessed.
    pub(super) fn commit_requires(&mut self, id: ValueId) {
        if let Some(reqs) = self.pending.remove(&id) {
            for r in reqs {
                self.add_require(r);
            }
        }
    }
}

/// A block's thread count, when it is static, must be possible: 1 to 1024.
fn check_block_threads(block: &[Int; 3], span: Span) -> R<()> {
    if let Some(threads) = block.iter().try_fold(1i64, |acc, d| d.as_static().and_then(|v| acc.checked_mul(v))) {
        if !(1..=1024).contains(&threads) {
            return Err(Diagnostic::error(
                format!("a block of {threads} threads is not possible"),
                span,
                "invalid block",
            )
            .with_help("a block has 1 to 1024 threads"));
        }
    }
    Ok(())
}

/// What a `grid` or `block` clause launches, and its largest extent in x, y and z (CUDA's limits).
struct ExtentLimits {
    clause: &'static str,
    unit: &'static str,
    max: [i64; 3],
}
const GRID_LIMITS: ExtentLimits = ExtentLimits { clause: "grid", unit: "blocks", max: [i32::MAX as i64, 65535, 65535] };
const BLOCK_LIMITS: ExtentLimits = ExtentLimits { clause: "block", unit: "threads", max: [1024, 1024, 64] };

/// Each static extent of a `grid` or `block` clause (written as `args`) must be one CUDA can
/// launch, 1 to its axis' limit: otherwise the launch would be refused only when it runs.
fn check_extents(limits: &ExtentLimits, dims: &[Int; 3], args: &[crate::ast::Expr]) -> R<()> {
    let ExtentLimits { clause, unit, max } = limits;
    for ((axis, max), (d, e)) in ["x", "y", "z"].into_iter().zip(*max).zip(dims.iter().zip(args)) {
        if let Some(n) = d.as_static().filter(|n| !(1..=max).contains(n)) {
            return Err(Diagnostic::error(
                format!("a {clause} extent in {axis} is 1 to {max}, not {n}"),
                e.span,
                "cannot be launched",
            )
            .with_help(format!(
                "CUDA launches a {clause} of up to {} x {} x {} {unit}",
                limits.max[0], limits.max[1], limits.max[2]
            )));
        }
    }
    Ok(())
}

/// What a launch plan passes for a scalar argument `v` to a kernel parameter of type `ty`: an
/// index expression for integers (the runtime checks that the value fits `ty`), 0 or 1 for `bool`,
/// and for floats the IEEE bit pattern of a literal or a host parameter of the same type (whose
/// `$k` holds its bits). `None` when `v` cannot be one.
fn scalar_plan_value(ty: Scalar, v: &Value) -> Option<Int> {
    match v {
        Value::Scalar(s, id) if *s == ty => Some(Int::var(*id, 1)),
        Value::Int(i) if ty.is_int() => Some(i.clone()),
        Value::Bool(b) if ty == Scalar::Bool => Some(Int::S(i64::from(*b))),
        _ if ty.is_float() => {
            let x = static_f64(v)?;
            let bits = match ty {
                Scalar::F64 => x.to_bits() as i64,
                Scalar::F32 | Scalar::TF32 => i64::from((x as f32).to_bits()),
                Scalar::F16 => i64::from(half::f16::from_f64(x).to_bits()),
                Scalar::BF16 => i64::from(half::bf16::from_f64(x).to_bits()),
                Scalar::F8E4M3 | Scalar::F8E5M2 => i64::from(crate::types::fp8_bits(x, ty)),
                _ => return None,
            };
            Some(Int::S(bits))
        }
        _ => None,
    }
}

/// The values an integer type holds (`None` for other types).
fn int_range(ty: Scalar) -> Option<(i64, i64)> {
    Some(match ty {
        Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
        Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
        Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
        Scalar::I64 => (i64::MIN, i64::MAX),
        Scalar::U8 => (0, u8::MAX.into()),
        Scalar::U16 => (0, u16::MAX.into()),
        Scalar::U32 => (0, u32::MAX.into()),
        Scalar::U64 => (0, i64::MAX),
        Scalar::Bool => (0, 1),
        _ => return None,
    })
}
