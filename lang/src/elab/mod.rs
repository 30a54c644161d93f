//! Elaboration: the checked meaning of a `.cute` file.
//!
//! Elaboration walks each function with an environment of [`Value`]s and evaluates everything that is
//! known at compile time — integers, tuples, layouts and the whole layout algebra (through
//! `cute-layout`), `const` parameters, static branches and short static loops — while run-time work
//! becomes KIR instructions. It is the type checker: every error is found here, with a span.
//!
//! Kernels are instantiated per launch, like CuTe DSL's JIT: a host function's `launch` elaborates the
//! kernel with the argument types (layouts included) and `const` values it passes; a kernel whose
//! parameters are all fully typed is also instantiated on its own, under its own name.
//! Host functions become launch plans: each launch's arguments, grid and block are symbolic
//! expressions over the host parameters' dynamic values, evaluated by the runtime at call time.

mod asserts;
pub(crate) mod builtins;
mod cluster;
mod copy_if;
mod flow;
mod fragment_loops;
mod generics;
mod host_flow;
mod launch_bounds;
mod mbarrier;
mod mma;
mod recast;
mod smem;
mod swizzle;
mod tma;
mod value;

use flow::{Flow, FnCtx, Jump};
pub use value::{Origin, TensorVal, Value};

use crate::ide::Recorder;

use crate::ast::*;
use crate::check::resolve_type;
use crate::diag::{did_you_mean, Diagnostic};
use crate::kir::{
    self, BinaryOp, CmpOp, FragTy, Inst, Operand, ParamKind, PlanArg, Special, TensorTy, ValueId, ValueTy,
};
use crate::pretty::print_type;
use crate::span::Span;
use crate::types::{Extent, MemSpace, Scalar, Tuple, Ty};
use cute_layout::{ComposedLayout, Int, IntTuple, Layout};
use std::collections::HashMap;

pub type R<T> = Result<T, Diagnostic>;

/// Loops with a static trip count up to this are unrolled at compile time (every index folds).
const UNROLL_LIMIT: i64 = 64;
/// Nested inlining of `fn` helpers deeper than this is an error (it can only be runaway recursion).
const INLINE_DEPTH: usize = 64;

pub(crate) fn layout_err(e: cute_layout::Error, span: Span) -> Diagnostic {
    Diagnostic::error(format!("layout algebra: {e}"), span, "in this operation")
}

/// Elaborates a parsed file into KIR: every kernel instance and every host function.
pub fn elaborate(file: &File) -> Result<kir::Module, Vec<Diagnostic>> {
    elaborate_recording(file, Recorder::off()).0
}

/// Elaborates a file, telling `recorder` the value of every binding as it is made (for the editor:
/// [`crate::ide`]). What was recorded before an error is kept.
pub(crate) fn elaborate_recording(file: &File, recorder: Recorder) -> (Result<kir::Module, Vec<Diagnostic>>, Recorder) {
    let mut prog = Program {
        functions: HashMap::new(),
        consts: HashMap::new(),
        module: kir::Module::default(),
        instances: HashMap::new(),
        symbols: HashMap::new(),
        diags: Vec::new(),
        recorder,
        cluster_launches: HashMap::new(),
    };
    for item in &file.items {
        match item {
            Item::Function(f) => {
                if let Some(prev) = prog.functions.insert(f.name.name.clone(), f) {
                    prog.diags.push(
                        Diagnostic::error(
                            format!("`{}` is defined twice", f.name.name),
                            f.name.span,
                            "second definition",
                        )
                        .with_secondary(prev.name.span, "first defined here")
                        .with_help("rename one of them"),
                    );
                }
            }
            Item::Const(c) => {
                let r = Frame::new(&mut prog, Mode::Const).const_item(c);
                match r {
                    Ok(v) => {
                        prog.recorder.binding(c.name.span, &v);
                        prog.consts.insert(c.name.name.clone(), v);
                    }
                    Err(d) => prog.diags.push(d),
                }
            }
        }
    }
    // Type parameters are checked as declared, before any instance is made.
    for f in file.functions() {
        if let Err(d) = generics::check_type_params(f) {
            prog.diags.push(d);
        }
    }
    if !prog.diags.is_empty() {
        return (Err(prog.diags), prog.recorder);
    }
    for f in file.functions() {
        let r = match f.kind {
            FnKind::Host => prog.host(f),
            FnKind::Kernel if is_standalone(f) => prog.standalone_kernel(f),
            _ => Ok(()),
        };
        if let Err(d) = r {
            prog.diags.push(d);
        }
    }
    if prog.diags.is_empty() {
        prog.diags.extend(launch_bounds::apply(&mut prog.module));
    }
    let result = if prog.diags.is_empty() { Ok(prog.module) } else { Err(prog.diags) };
    (result, prog.recorder)
}

/// A kernel that can be compiled without a launch: no `const` parameters, every tensor typed fully.
fn is_standalone(f: &Function) -> bool {
    f.type_params.is_empty()
        && f.params.iter().all(|p| !p.is_const && !matches!(p.ty, TypeExpr::Tensor { layout: None, .. }))
}

struct Program<'f> {
    functions: HashMap<String, &'f Function>,
    consts: HashMap<String, Value>,
    module: kir::Module,
    /// Instance key (kernel and argument types) → cubin symbol.
    instances: HashMap<String, String>,
    /// Instances made of each kernel so far, to number the symbols.
    symbols: HashMap<String, usize>,
    diags: Vec<Diagnostic>,
    recorder: Recorder,
    /// Per kernel instance (symbol), the cluster shape of its first launch and where it was given
    /// (one shape per instance: [`cluster`]).
    cluster_launches: HashMap<String, (Option<[u32; 3]>, Span)>,
}

/// A tensor type as a parameter declares it, with the dynamic entries still `?`.
fn declared_tensor(ty: &TypeExpr) -> R<Option<(Scalar, MemSpace, Option<u32>, Option<Layout>)>> {
    Ok(crate::check::tensor_parts(ty)?
        .map(|(elem, space, align, layout)| (elem, space, align, layout.as_ref().map(to_layout))))
}

/// Whether a written type is `stream` (a host function's CUDA stream parameter).
pub(crate) fn is_stream_type(ty: &TypeExpr) -> bool {
    matches!(ty, TypeExpr::Named(id) if id.name == "stream")
}

/// The error for a `stream` parameter anywhere but a host function.
fn stream_param_error(p: &Param, what: &str) -> Diagnostic {
    Diagnostic::error(format!("{what} cannot take a `stream` parameter"), p.ty.span(), "stream parameter")
        .with_help("streams are host parameters: declare `s: stream` on the host function and launch with `stream(s)`")
}

fn to_int_tuple(t: &Tuple, next_dyn: &mut impl FnMut(i64) -> Int) -> IntTuple {
    match t {
        Tuple::Leaf(Extent::Static(v)) => IntTuple::Int(Int::S(*v)),
        Tuple::Leaf(Extent::Dynamic) => IntTuple::Int(next_dyn(1)),
        Tuple::Leaf(Extent::DynamicDiv(d)) => IntTuple::Int(next_dyn(*d)),
        Tuple::Node(items) => IntTuple::Tuple(items.iter().map(|i| to_int_tuple(i, next_dyn)).collect()),
    }
}

/// A declared layout with placeholder dynamic leaves (id 0); `abstract_layout` gives them real ids.
fn to_layout(l: &crate::types::LayoutType) -> Layout {
    let mut placeholder = |div: i64| Int::var(0, div);
    Layout { shape: to_int_tuple(&l.shape, &mut placeholder), stride: to_int_tuple(&l.stride, &mut placeholder) }
}

/// Replaces every dynamic leaf by a fresh value (shape leaves first, then stride leaves: the ABI order),
/// keeping divisibility. Returns the new layout and the fresh value ids.
fn abstract_layout(l: &Layout, fresh: &mut dyn FnMut() -> ValueId) -> (Layout, Vec<ValueId>) {
    let mut ids = Vec::new();
    let mut map = |t: &IntTuple, ids: &mut Vec<ValueId>| -> IntTuple {
        let leaves: Vec<Int> = t
            .leaves()
            .into_iter()
            .map(|leaf| match leaf {
                Int::S(v) => Int::S(v),
                d => {
                    let id = fresh();
                    ids.push(id);
                    Int::var(id, d.divisibility().max(1))
                }
            })
            .collect();
        t.unflatten_like(&mut leaves.into_iter()).unwrap_or_else(|_| t.clone())
    };
    let shape = map(&l.shape, &mut ids);
    let stride = map(&l.stride, &mut ids);
    (Layout { shape, stride }, ids)
}

/// The largest power of two dividing `n` (n > 0), capped.
/// The alignment a view keeps: its base's, unless the element offset proves less.
fn view_align(base_align: u32, offset: &Int, elem_bytes: u32) -> u32 {
    cute_layout::int::offset_alignment(base_align, offset, elem_bytes)
}

impl<'f> Program<'f> {
    fn standalone_kernel(&mut self, f: &'f Function) -> R<()> {
        let tys = self.param_types(f, &Vec::new())?;
        let mut args = Vec::new();
        for (p, pty) in f.params.iter().zip(&tys) {
            if is_stream_type(pty) {
                return Err(stream_param_error(p, "a kernel"));
            }
            match declared_tensor(pty)? {
                Some((elem, space, align, Some(layout))) => {
                    if space != MemSpace::Gmem {
                        return Err(Diagnostic::error(
                            "kernel tensor parameters must be in global memory",
                            p.ty.span(),
                            format!("{} tensor", space.name()),
                        )
                        .with_help("use `gmem`"));
                    }
                    let ty = TensorTy { elem, space, align: align.unwrap_or(elem.size_bytes()), layout, swizzle: None };
                    args.push(Value::Tensor(TensorVal { ty, origin: Origin::Host { param: 0, offset: Int::ZERO } }));
                }
                Some(_) => unreachable!("standalone kernels have full tensor types"),
                None => match resolve_type(pty)? {
                    Ty::Scalar(Scalar::I32) => args.push(Value::Int(Int::var(0, 1))),
                    Ty::Scalar(s) => args.push(Value::Scalar(s, 0)),
                    other => {
                        return Err(Diagnostic::error(
                            format!("a kernel parameter cannot have type `{other}`"),
                            p.ty.span(),
                            "unsupported parameter type",
                        ))
                    }
                },
            }
        }
        self.instantiate(f, &args, f.name.span).map(|_| ())
    }

    /// The symbol of the instance of `f` for these argument values, elaborating it the first time.
    fn instantiate(&mut self, f: &'f Function, args: &[Value], at: Span) -> R<String> {
        let mut key = f.name.name.clone();
        for (p, a) in f.params.iter().zip(args) {
            key.push('|');
            key.push_str(&match (p.is_const, a) {
                (true, v) => format!("{v}"),
                (false, Value::Tensor(t)) => format!("{}", t.ty),
                (false, v) => v.kind(),
            });
        }
        if let Some(sym) = self.instances.get(&key) {
            return Ok(sym.clone());
        }
        let n = self.symbols.entry(f.name.name.clone()).or_insert(0);
        let symbol = if *n == 0 { f.name.name.clone() } else { format!("{}_{}", f.name.name, n) };
        *n += 1;
        self.instances.insert(key, symbol.clone());
        self.recorder.enter_instance(f.name.span, &symbol);
        let kernel = Frame::new(self, Mode::Kernel).kernel(f, args, &symbol);
        self.recorder.leave();
        let kernel = kernel.map_err(|d| {
            if at != f.name.span {
                d.with_secondary(at, format!("in `{}` as launched here", f.name.name))
            } else {
                d
            }
        })?;
        let smem = kernel.smem_bytes() + kernel.launch_smem_bytes();
        if smem > kir::MAX_SMEM {
            return Err(Diagnostic::error(
                format!(
                    "`{}` allocates {smem} bytes of shared memory; a block has at most {}",
                    f.name.name,
                    kir::MAX_SMEM
                ),
                at,
                "too much shared memory",
            )
            .with_secondary(f.name.span, "kernel defined here")
            .with_help("use fewer pipeline stages or smaller tiles"));
        }
        self.module.kernels.push(kernel);
        Ok(symbol)
    }

    /// A host function; a generic one once per combination of its listed element types.
    fn host(&mut self, f: &'f Function) -> R<()> {
        if f.type_params.is_empty() {
            self.recorder.enter_host(&f.name.name);
            let host = Frame::new(self, Mode::Host).host(f, &Vec::new());
            self.recorder.leave();
            self.module.hosts.push(host?);
            return Ok(());
        }
        for b in generics::host_instances(f) {
            let name = generics::instance_name(f, &b);
            self.recorder.enter_host(&name);
            let host = Frame::new(self, Mode::Host).host(f, &b);
            self.recorder.leave();
            let mut host = host.map_err(|d| {
                let list = b.iter().map(|(n, s)| format!("{n} = {}", s.name())).collect::<Vec<_>>().join(", ");
                d.with_secondary(f.name.span, format!("in `{}` with {list}", f.name.name))
            })?;
            host.name = name;
            host.instance = Some(generics::host_instance(f, &b));
            self.module.hosts.push(host);
        }
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Mode {
    Kernel,
    Host,
    Const,
}

pub(crate) struct Frame<'p, 'f> {
    prog: &'p mut Program<'f>,
    pub(crate) mode: Mode,
    scopes: Vec<HashMap<String, Value>>,
    /// The instruction lists being filled: the function body, then nested regions.
    regions: Vec<Vec<Inst>>,
    /// Special registers and allocations, placed at the top of the kernel.
    pub(crate) specials: Vec<Inst>,
    special_values: HashMap<String, Value>,
    value_types: Vec<ValueTy>,
    pub(crate) steps: Vec<kir::HostStep>,
    requires: Vec<kir::Require>,
    /// In a kernel, the value ids of its parameters, and the tensor maps its `tma_load`s use
    /// (`param` a value id until the kernel is built).
    kernel_params: Vec<ValueId>,
    tmas: Vec<kir::TmaDesc>,
    /// In a kernel, the launch conditions a view's partial tiles need, held until the view (or one
    /// of its own views) is accessed: an unpredicated access of a partial tile would overrun, a
    /// predicated copy (`copy_if`) of it does not. `staged` collects them for the view being made.
    pending: HashMap<ValueId, Vec<kir::Require>>,
    staged: Vec<kir::Require>,
    /// Set while `copy_if` emits its copies: their accesses are guarded, so they need no launch
    /// condition.
    predicated: bool,
    /// Run-time `assert`s of a host function.
    asserts: Vec<kir::Assert>,
    /// In a host function, the run-time conditions (`n < 1024`) that `bool` values stand for.
    host_conds: HashMap<ValueId, kir::HostCond>,
    inline_depth: usize,
    /// How many run-time regions (branches, loop bodies, guards) enclose the code being
    /// elaborated: a jump to a target at the same depth is taken at compile time.
    depth: usize,
    /// The loops (innermost last) and functions (kernel, host, inlined `fn` calls) being
    /// elaborated: the targets of `break`/`continue` and `return`.
    loops: Vec<flow::LoopCtx>,
    fns: Vec<FnCtx>,
}

impl<'p, 'f> Frame<'p, 'f> {
    fn new(prog: &'p mut Program<'f>, mode: Mode) -> Self {
        Frame {
            prog,
            mode,
            scopes: vec![HashMap::new()],
            regions: vec![Vec::new()],
            specials: Vec::new(),
            special_values: HashMap::new(),
            value_types: Vec::new(),
            steps: Vec::new(),
            requires: Vec::new(),
            kernel_params: Vec::new(),
            tmas: Vec::new(),
            pending: HashMap::new(),
            staged: Vec::new(),
            predicated: false,
            asserts: Vec::new(),
            host_conds: HashMap::new(),
            inline_depth: 0,
            depth: 0,
            loops: Vec::new(),
            fns: Vec::new(),
        }
    }

    fn fresh(&mut self, ty: ValueTy) -> ValueId {
        self.value_types.push(ty);
        (self.value_types.len() - 1) as ValueId
    }

    fn emit(&mut self, inst: Inst) {
        if !self.predicated {
            let accessed: &[ValueId] = match &inst {
                Inst::Load { tensor, .. }
                | Inst::Store { tensor, .. }
                | Inst::LoadFrag { tensor, .. }
                | Inst::StoreFrag { tensor, .. } => std::slice::from_ref(tensor),
                Inst::Copy { src, dst, .. } => &[*src, *dst],
                _ => &[],
            };
            for id in accessed.to_vec() {
                self.commit_requires(id);
            }
        }
        if let Some(r) = self.regions.last_mut() {
            r.push(inst);
        }
    }

    fn bind(&mut self, name: &str, v: Value) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), v);
        }
    }

    /// Binds a name written at `at` (a parameter, a pattern, a loop variable), telling the recorder.
    fn bind_at(&mut self, name: &Ident, v: Value) {
        self.prog.recorder.binding(name.span, &v);
        self.bind(&name.name, v);
    }

    /// Fails unless this frame can emit run-time instructions (kernels only).
    /// 8-bit floats have no arithmetic (none on the GPU, none in CuTe DSL): `what` on a `ty`
    /// value is refused with a pointer to the conversion.
    pub(crate) fn no_fp8_arith(&self, ty: Scalar, what: &str, span: Span) -> R<()> {
        if !ty.is_fp8() {
            return Ok(());
        }
        Err(Diagnostic::error(
            format!("{what} on `{}` values: 8-bit floats are storage types with no arithmetic", ty.name()),
            span,
            format!("`{}` here", ty.name()),
        )
        .with_help(format!(
            "compute in f32 as CuTe DSL does: `x.to(f32)`, and convert a result back with `.to({})`",
            ty.name()
        )))
    }

    fn need_kernel(&self, what: &str, span: Span) -> R<()> {
        match self.mode {
            Mode::Kernel => Ok(()),
            Mode::Host => {
                Err(Diagnostic::error(format!("{what} is not available in host functions"), span, "needs a kernel")
                    .with_help("host functions compute layouts, sizes and launches; do this work in a kernel"))
            }
            Mode::Const => Err(Diagnostic::error(format!("{what} is not a compile-time value"), span, "not constant")),
        }
    }

    fn const_item(mut self, c: &ConstItem) -> R<Value> {
        let v = self.expr(&c.value)?;
        if !is_static_value(&v) {
            return Err(Diagnostic::error("a `const` must be known at compile time", c.value.span, "not constant"));
        }
        // A written type must fit the value: `const X: i32 = 2.5;` is an error, not a silent float.
        if let Some(t) = &c.ty {
            let fits = match (resolve_type(t)?, &v) {
                (Ty::Scalar(s), Value::Int(_)) => s.is_int() || s.is_float(),
                (Ty::Scalar(s), Value::Float(_)) => s.is_float(),
                (Ty::Scalar(Scalar::Bool), Value::Bool(_)) => true,
                _ => false,
            };
            if !fits {
                return Err(Diagnostic::error(
                    format!("this `const` is {}, not `{}`", crate::diag::article(&v.kind()), print_type(t)),
                    c.value.span,
                    "value here",
                )
                .with_secondary(t.span(), "declared type"));
            }
        }
        Ok(v)
    }

    // ----- functions -------------------------------------------------------------------------

    fn kernel(mut self, f: &Function, args: &[Value], symbol: &str) -> R<kir::Kernel> {
        if let Some(ret) = &f.ret {
            return Err(Diagnostic::error("a kernel cannot return a value", ret.span(), "return type here")
                .with_help("write results into a tensor parameter"));
        }
        if !f.type_params.is_empty() {
            let spanned: Vec<(&Value, Span)> = args.iter().map(|a| (a, f.span)).collect();
            let b = generics::deduce(f, &spanned)?;
            self.bind_types(f, &b);
        }
        let mut params = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            if p.is_const {
                self.bind_at(&p.name, a.clone());
                continue;
            }
            match a {
                Value::Tensor(t) => {
                    let mut fresh = Vec::new();
                    let (layout, ids) = {
                        let types = &mut self.value_types;
                        abstract_layout(&t.ty.layout, &mut || {
                            types.push(ValueTy::Scalar(Scalar::I32));
                            let id = (types.len() - 1) as ValueId;
                            fresh.push(id);
                            id
                        })
                    };
                    let ty = TensorTy { layout, ..t.ty.clone() };
                    let id = self.fresh(ValueTy::Tensor(ty.clone()));
                    self.bind_at(&p.name, Value::Tensor(TensorVal { ty: ty.clone(), origin: Origin::Kernel(id) }));
                    self.kernel_params.push(id);
                    params.push(kir::Param {
                        name: p.name.name.clone(),
                        value: id,
                        kind: ParamKind::Tensor { ty, dyn_leaves: ids },
                        span: p.span,
                    });
                }
                Value::Int(_) => {
                    let id = self.fresh(ValueTy::Scalar(Scalar::I32));
                    self.bind_at(&p.name, Value::Int(Int::var(id, 1)));
                    params.push(kir::Param {
                        name: p.name.name.clone(),
                        value: id,
                        kind: ParamKind::Scalar(Scalar::I32),
                        span: p.span,
                    });
                }
                Value::Scalar(s, _) => {
                    let id = self.fresh(ValueTy::Scalar(*s));
                    self.bind_at(&p.name, Value::Scalar(*s, id));
                    params.push(kir::Param {
                        name: p.name.name.clone(),
                        value: id,
                        kind: ParamKind::Scalar(*s),
                        span: p.span,
                    });
                }
                other => {
                    return Err(Diagnostic::error(
                        format!("a kernel parameter cannot take {}", crate::diag::article(&other.kind())),
                        p.span,
                        "unsupported parameter",
                    )
                    .with_help("mark it `const` to pass a compile-time value"))
                }
            }
        }
        self.fns.push(FnCtx::new(0, false, None));
        self.stmts(&f.body.stmts)?;
        let mut body = std::mem::take(&mut self.specials);
        body.extend(self.regions.pop().unwrap_or_default());
        let mut tmas = std::mem::take(&mut self.tmas);
        for t in &mut tmas {
            t.param = params.iter().position(|p| p.value as usize == t.param).unwrap_or(usize::MAX);
        }
        Ok(kir::Kernel {
            symbol: symbol.to_string(),
            source_name: f.name.name.clone(),
            params,
            body,
            value_types: self.value_types,
            requires: self.requires,
            tmas,
            reqntid: None,
            span: f.span,
            cluster: None,
        })
    }

    fn host(mut self, f: &Function, b: &generics::Bindings) -> R<kir::Host> {
        if let Some(ret) = &f.ret {
            return Err(Diagnostic::error("a host function cannot return a value", ret.span(), "return type here"));
        }
        let tys = self.prog.param_types(f, b)?;
        self.bind_types(f, b);
        let mut params = Vec::new();
        for (index, (p, pty)) in f.params.iter().zip(&tys).enumerate() {
            if p.is_const {
                return Err(Diagnostic::error("host functions take no `const` parameters", p.span, "const parameter")
                    .with_help("use a top-level `const` item, or make it a parameter of the kernel"));
            }
            if is_stream_type(pty) {
                // A CUDA stream the caller passes: launches name it in `stream(s)`. It is not an
                // integer of the plan and cannot be computed with or passed to a kernel.
                let id = self.fresh(ValueTy::Scalar(Scalar::U64));
                self.bind_at(&p.name, Value::Stream(index));
                params.push(kir::Param { name: p.name.name.clone(), value: id, kind: ParamKind::Stream, span: p.span });
                continue;
            }
            match declared_tensor(pty)? {
                Some((elem, space, align, layout)) => {
                    let Some(layout) = layout else {
                        return Err(Diagnostic::error("host tensor parameters need a layout", p.ty.span(), "no layout")
                            .with_help("write the layout in CuTe notation with `?` for run-time extents, e.g. `tensor<f16, gmem, (?,?):(?,1), align: 16>`"));
                    };
                    if space != MemSpace::Gmem {
                        return Err(Diagnostic::error("host tensor parameters must be in global memory", p.ty.span(), format!("{} tensor", space.name())));
                    }
                    let mut fresh = Vec::new();
                    let (layout, ids) = {
                        let types = &mut self.value_types;
                        abstract_layout(&layout, &mut || {
                            types.push(ValueTy::Scalar(Scalar::I32));
                            let id = (types.len() - 1) as ValueId;
                            fresh.push(id);
                            id
                        })
                    };
                    let ty = TensorTy { elem, space, align: align.unwrap_or(elem.size_bytes()), layout, swizzle: None };
                    let id = self.fresh(ValueTy::Tensor(ty.clone()));
                    self.bind_at(&p.name, Value::Tensor(TensorVal { ty: ty.clone(), origin: Origin::Host { param: index, offset: Int::ZERO } }));
                    params.push(kir::Param { name: p.name.name.clone(), value: id, kind: ParamKind::Tensor { ty, dyn_leaves: ids }, span: p.span });
                }
                None => match resolve_type(pty)? {
                    Ty::Scalar(Scalar::I32) => {
                        let id = self.fresh(ValueTy::Scalar(Scalar::I32));
                        self.bind_at(&p.name, Value::Int(Int::var(id, 1)));
                        params.push(kir::Param { name: p.name.name.clone(), value: id, kind: ParamKind::Scalar(Scalar::I32), span: p.span });
                    }
                    // Other scalars are passed through to the kernels as they are: the plan
                    // computes only with index integers (`i32`).
                    Ty::Scalar(s) => {
                        let id = self.fresh(ValueTy::Scalar(s));
                        self.bind_at(&p.name, Value::Scalar(s, id));
                        params.push(kir::Param { name: p.name.name.clone(), value: id, kind: ParamKind::Scalar(s), span: p.span });
                    }
                    other => {
                        return Err(Diagnostic::error(format!("host parameters are tensors, scalars and streams, not `{other}`"), p.ty.span(), "unsupported parameter type")
                            .with_help("a host parameter is a `gmem` tensor with a layout, a scalar (`i32`, `f32`, `bool`, ...) or a `stream`; pass compile-time values as `const` items"))
                    }
                },
            }
        }
        self.fns.push(FnCtx::new(0, false, None));
        self.stmts(&f.body.stmts)?;
        Ok(kir::Host {
            name: f.name.name.clone(),
            instance: None,
            params,
            steps: self.steps,
            requires: self.requires,
            asserts: self.asserts,
            span: f.span,
        })
    }

    // ----- statements ------------------------------------------------------------------------

    /// A statement in a scope of its own (an `else` branch).
    fn scoped_stmt(&mut self, s: &Stmt) -> R<Flow> {
        self.scopes.push(HashMap::new());
        let r = self.stmt(s);
        self.scopes.pop();
        r
    }

    /// Elaborates `b` into a fresh region and returns its instructions.
    fn region(&mut self, f: impl FnOnce(&mut Self) -> R<()>) -> R<Vec<Inst>> {
        self.regions.push(Vec::new());
        let r = f(self);
        let insts = self.regions.pop().unwrap_or_default();
        r.map(|_| insts)
    }

    fn bind_pattern(&mut self, p: &Pattern, v: Value) -> R<()> {
        match p {
            Pattern::Name(id) => {
                self.bind_at(id, v);
                Ok(())
            }
            Pattern::Mut(id) => {
                self.need_kernel("a `let mut` variable", id.span)?;
                let ty = match &v {
                    Value::Int(_) => Scalar::I32,
                    Value::Float(_) => Scalar::F32,
                    Value::Bool(_) => Scalar::Bool,
                    Value::Scalar(s, _) => *s,
                    other => {
                        return Err(Diagnostic::error(
                            format!(
                                "a `let mut` variable holds a number or a bool, not {}",
                                crate::diag::article(&other.kind())
                            ),
                            id.span,
                            "not a scalar",
                        ))
                    }
                };
                let layout = Layout::leaf(1, 0);
                let Value::Tensor(cell) = builtins::alloc(self, ty, MemSpace::Rmem, layout, id.span)? else {
                    unreachable!("alloc gives a tensor")
                };
                let v = self.coerce(v, ty, id.span)?;
                let operand = self.operand(&v, ty, id.span)?;
                let Origin::Kernel(cid) = cell.origin else { unreachable!("kernel tensors have kernel origins") };
                self.emit(Inst::Store {
                    value: operand,
                    tensor: cid,
                    ty: cell.ty.clone(),
                    at: kir::At::Offset(Int::ZERO),
                    span: id.span,
                });
                self.bind_at(id, Value::Var(cell, ty));
                Ok(())
            }
            Pattern::Wildcard(_) => Ok(()),
            // `(n)` is `n`, as a one-entry tuple is its entry in CuTe notation.
            Pattern::Tuple(items, _) if items.len() == 1 && !matches!(v, Value::Tuple(_)) => {
                self.bind_pattern(&items[0], v)
            }
            Pattern::Tuple(items, span) => {
                let parts = match v {
                    Value::Tuple(parts) => parts,
                    Value::Layout(l) => vec![Value::from_int_tuple(&l.shape), Value::from_int_tuple(&l.stride)],
                    other => {
                        return Err(Diagnostic::error(
                            format!(
                                "cannot destructure {} into {} names",
                                crate::diag::article(&other.kind()),
                                items.len()
                            ),
                            *span,
                            "pattern here",
                        ));
                    }
                };
                if parts.len() != items.len() {
                    return Err(Diagnostic::error(
                        format!("this pattern has {} names but the value has {} parts", items.len(), parts.len()),
                        *span,
                        "pattern here",
                    ));
                }
                for (p, v) in items.iter().zip(parts) {
                    self.bind_pattern(p, v)?;
                }
                Ok(())
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        let done = |r: R<()>| r.map(|_| Flow::default());
        match s {
            Stmt::Let { pattern, ty, value, .. } => {
                let mut v = self.expr(value)?;
                if let Some(t) = ty {
                    match resolve_type(t)? {
                        Ty::Scalar(want) => v = self.coerce(v, want, value.span)?,
                        _ => {
                            return Err(Diagnostic::error(
                                "only scalar types can annotate a `let`",
                                t.span(),
                                "type here",
                            ))
                        }
                    }
                }
                done(self.bind_pattern(pattern, v))
            }
            Stmt::Assign { target, value, span } => done(self.assign(target, value, *span)),
            Stmt::Expr(e) => done(self.expr(e).map(|_| ())),
            Stmt::If { cond, then, els, span } => {
                let c = self.expr(cond)?;
                match c {
                    Value::Bool(b) => {
                        // A static condition: only the branch taken is elaborated (CuTe's const_expr).
                        if b {
                            self.block(then)
                        } else if let Some(e) = els {
                            self.scoped_stmt(e)
                        } else {
                            Ok(Flow::default())
                        }
                    }
                    Value::Scalar(Scalar::Bool, id) if self.mode == Mode::Host => {
                        self.host_if(id, cond.span, then, els.as_deref(), *span)
                    }
                    Value::Scalar(Scalar::Bool, id) => {
                        self.need_kernel("a run-time `if`", cond.span)?;
                        let (then_insts, t) = self.runtime_region(|f| f.block(then))?;
                        let (else_insts, e) = match els {
                            Some(e) => self.runtime_region(|f| f.scoped_stmt(e))?,
                            None => (Vec::new(), Flow::default()),
                        };
                        self.emit(Inst::If {
                            cond: Operand::Value(id),
                            then: then_insts,
                            els: else_insts,
                            span: *span,
                        });
                        let mut flags = t.flags;
                        flags.extend(e.flags.into_iter().filter(|f| !flags.contains(f)).collect::<Vec<_>>());
                        Ok(Flow { flags, always: t.always && e.always, jump: None })
                    }
                    other => Err(Diagnostic::error(
                        format!("`if` condition must be `bool`, found {}", other.kind()),
                        cond.span,
                        "not a bool",
                    )
                    .with_help("compare explicitly, e.g. `x != 0`")),
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::For { var, start, end, step, body, span } => {
                self.for_loop(var, start, end, step.as_ref(), body, *span)
            }
            Stmt::Return { value, span } => self.return_stmt(value.as_ref(), *span),
            Stmt::While { cond, body, span } => self.while_loop(cond, body, *span),
            Stmt::Break(span) => self.break_or_continue(Jump::Break, *span),
            Stmt::Continue(span) => self.break_or_continue(Jump::Continue, *span),
            Stmt::Launch { kernel, args, clauses, span } => done(self.launch(kernel, args, clauses, *span)),
        }
    }

    fn for_loop(
        &mut self,
        var: &Ident,
        start: &Expr,
        end: &Expr,
        step: Option<&(Ident, Expr)>,
        body: &Block,
        span: Span,
    ) -> R<Flow> {
        let lb = self.index(start)?;
        let ub = self.index(end)?;
        let st = match step {
            None => Int::ONE,
            Some((kw, e)) => {
                if kw.name != "step" {
                    return Err(Diagnostic::error(
                        format!("expected `step`, found `{}`", kw.name),
                        kw.span,
                        "unknown range clause",
                    )
                    .with_help("write `for i in a..b step s`"));
                }
                let s = self.index(e)?;
                if s.as_static().is_some_and(|v| v <= 0) {
                    return Err(Diagnostic::error("the step of a range must be positive", e.span, "not positive"));
                }
                s
            }
        };
        if let (Some(a), Some(b), Some(s)) = (lb.as_static(), ub.as_static(), st.as_static()) {
            let trips = if b > a { (b - a + s - 1) / s } else { 0 };
            // A longer loop is unrolled too when it indexes a register fragment by its variable,
            // which would otherwise put the fragment in local memory (fragment_loops.rs).
            let over_fragment = || {
                trips <= fragment_loops::FRAGMENT_UNROLL_LIMIT
                    && fragment_loops::indexes_fragment(
                        body,
                        &var.name,
                        &|n| matches!(self.lookup(n), Some(Value::Tensor(t)) if t.ty.space == MemSpace::Rmem),
                    )
            };
            if trips <= UNROLL_LIMIT || self.mode != Mode::Kernel || over_fragment() {
                if self.mode != Mode::Kernel && trips > 4096 {
                    return Err(Diagnostic::error("a compile-time loop may run at most 4096 times", span, "too long"));
                }
                return self.unrolled_loop(
                    trips.max(0) as usize,
                    |f, k| {
                        let i = Value::Int(Int::S(a + s * k as i64));
                        f.prog.recorder.binding(var.span, &i);
                        f.scopes.push(HashMap::from([(var.name.clone(), i)]));
                        let r = f.block(body);
                        f.scopes.pop();
                        r
                    },
                    span,
                );
            }
        }
        if self.mode == Mode::Host {
            return self.host_for(var, lb, ub, st, body, span);
        }
        self.need_kernel("a loop with run-time bounds", span)?;
        let iv = self.fresh(ValueTy::Scalar(Scalar::I32));
        self.prog.recorder.binding(var.span, &Value::Int(Int::var(iv, 1)));
        let (insts, stop, l) = self.runtime_loop_body(|f| {
            f.scopes.push(HashMap::from([(var.name.clone(), Value::Int(Int::var(iv, 1)))]));
            let r = f.block(body);
            f.scopes.pop();
            r
        })?;
        let exit = self.exit_cond(&stop, span);
        self.emit(Inst::For { iv, lb, ub, step: st, body: insts, exit, span });
        Ok(self.runtime_loop_done(stop, &l, span))
    }

    fn launch(&mut self, kernel: &Ident, args: &[Arg], clauses: &[LaunchClause], span: Span) -> R<()> {
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
                let [e] = c.args.as_slice() else {
                    return Err(Diagnostic::error(
                        "`stream` takes one stream parameter of the host function",
                        c.span,
                        "one stream expected",
                    )
                    .with_help("declare `s: stream` on the host function and write `stream(s)`"));
                };
                if let Some((_, first)) = stream {
                    return Err(Diagnostic::error(
                        "this launch has two `stream(...)` clauses",
                        c.span,
                        "second stream clause",
                    )
                    .with_secondary(first, "first one here"));
                }
                match self.expr(e)? {
                    Value::Stream(param) => stream = Some((param, c.span)),
                    other => return Err(Diagnostic::error(
                        format!(
                            "`stream(...)` takes a `stream` parameter of the host function, found {}",
                            crate::diag::article(&other.kind())
                        ),
                        e.span,
                        "not a stream",
                    )
                    .with_help(
                        "declare a host parameter `s: stream` (the caller passes a CUDA stream) and write `stream(s)`",
                    )),
                }
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
                        grid = Some(dims)
                    } else {
                        block = Some(dims)
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
        let symbol = self.prog.instantiate(f, &values, span)?;
        self.record_cluster(&symbol, &f.name.name, cluster, &grid, span)?;
        // Allocations beyond the static limit live in dynamic shared memory: the launch provides it.
        let (dynamic, needed) = self
            .prog
            .module
            .kernels
            .iter()
            .find(|k| k.symbol == symbol)
            .map_or((0, 0), |k| (k.dynamic_smem_bytes(), k.launch_smem_bytes()));
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

    fn assign(&mut self, target: &Expr, value: &Expr, span: Span) -> R<()> {
        if let ExprKind::Name(n) = &target.kind {
            return match self.lookup(n) {
                Some(Value::Var(cell, ty)) => {
                    let v = self.expr(value)?;
                    let v = self
                        .coerce(v, ty, value.span)
                        .map_err(|d| d.with_secondary(target.span, format!("`{n}` holds a `{}`", ty.name())))?;
                    let operand = self.operand(&v, ty, value.span)?;
                    let Origin::Kernel(cid) = cell.origin else { unreachable!("kernel tensors have kernel origins") };
                    self.emit(Inst::Store {
                        value: operand,
                        tensor: cid,
                        ty: cell.ty.clone(),
                        at: kir::At::Offset(Int::ZERO),
                        span,
                    });
                    Ok(())
                }
                Some(_) => Err(Diagnostic::error(
                    format!("cannot assign twice to immutable variable `{n}`"),
                    target.span,
                    "not `let mut`",
                )
                .with_help(format!("declare it with `let mut {n} = ...`, or shadow it with `let {n} = ...`"))),
                None => self.name(n, target.span).map(|_| ()),
            };
        }
        let ExprKind::Index { base, index } = &target.kind else {
            return Err(Diagnostic::error(
                "only tensor elements and slices can be assigned",
                target.span,
                "not a tensor element",
            )
            .with_help("`let` bindings are immutable; write `let x = ...` again to shadow, or assign to `t[i]`"));
        };
        let t = match self.expr(base)? {
            Value::Tensor(t) => t,
            other => {
                return Err(Diagnostic::error(
                    format!("cannot index into {}", crate::diag::article(&other.kind())),
                    base.span,
                    "not a tensor",
                ))
            }
        };
        let crd = self.coordinate(index)?;
        check_rank(&crd, &t.ty.layout, target.span)?;
        let v = self.expr(value)?;
        self.need_kernel("writing memory", span)?;
        let Origin::Kernel(tid) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        if crd_has_under(&crd) || matches!(v, Value::Frag(..)) {
            let view = self.slice(&t, &crd, target.span)?;
            let Value::Frag(ft, fid) = v else {
                return Err(Diagnostic::error(
                    format!(
                        "a tensor slice takes a fragment (from `.load()`), found {}",
                        crate::diag::article(&v.kind())
                    ),
                    value.span,
                    "not a fragment",
                ));
            };
            self.store_frag(&view, &ft, fid, span)
        } else {
            // Checked here for the error's span; cute-canonicalize maps the coordinate to the offset.
            cute_layout::slice_and_offset(&crd, &t.ty.layout).map_err(|e| coord_err(e, &t.ty.layout, target.span))?;
            let v = self.coerce(v, t.ty.elem, value.span).map_err(|d| {
                d.with_secondary(target.span, format!("expected `{}` because of this element", t.ty.elem.name()))
            })?;
            let operand = self.operand(&v, t.ty.elem, value.span)?;
            self.emit(Inst::Store {
                value: operand,
                tensor: tid,
                ty: t.ty.clone(),
                at: kir::At::Coord(cute_layout::expr::crd_value(&crd)),
                span,
            });
            Ok(())
        }
    }

    pub(crate) fn store_frag(&mut self, view: &TensorVal, ft: &FragTy, fid: ValueId, span: Span) -> R<()> {
        let Origin::Kernel(vid) = view.origin else { unreachable!("kernel tensors have kernel origins") };
        let n = view.ty.layout.size().ok().and_then(|s| s.as_static());
        if n != Some(ft.len() as i64) {
            return Err(Diagnostic::error(
                format!(
                    "a fragment of {} elements cannot be stored into a tensor of layout {}",
                    ft.len(),
                    view.ty.layout
                ),
                span,
                "sizes differ",
            ));
        }
        if ft.elem != view.ty.elem {
            return Err(Diagnostic::error(
                format!("a fragment of {} cannot be stored into a tensor of {}", ft.elem.name(), view.ty.elem.name()),
                span,
                "element types differ",
            )
            .with_help(format!("convert with `.to({})`", view.ty.elem.name())));
        }
        self.emit(Inst::StoreFrag { value: fid, tensor: vid, ty: view.ty.clone(), span });
        Ok(())
    }

    // ----- expressions -----------------------------------------------------------------------

    /// An expression that must be an index integer.
    pub(crate) fn index(&mut self, e: &Expr) -> R<Int> {
        match self.expr(e)? {
            Value::Int(i) => Ok(i),
            other => Err(Diagnostic::error(
                format!("expected an integer, found {}", crate::diag::article(&other.kind())),
                e.span,
                "not an integer",
            )),
        }
    }

    fn lookup(&self, name: &str) -> Option<Value> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned()).or_else(|| self.prog.consts.get(name).cloned())
    }

    /// A variable's current value: `let mut` cells are read here.
    fn read(&mut self, v: Value, span: Span) -> Value {
        let Value::Var(cell, ty) = v else { return v };
        let Origin::Kernel(cid) = cell.origin else { return Value::Unit };
        let dst = self.fresh(ValueTy::Scalar(ty));
        self.emit(Inst::Load { dst, tensor: cid, ty: cell.ty.clone(), at: kir::At::Offset(Int::ZERO), span });
        if ty == Scalar::I32 {
            Value::Int(Int::var(dst, 1))
        } else {
            Value::Scalar(ty, dst)
        }
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> R<Value> {
        match &e.kind {
            ExprKind::Int(v) => Ok(Value::Int(Int::S(*v))),
            ExprKind::Float(v) => Ok(Value::Float(*v)),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::Wildcard => Ok(Value::Under),
            ExprKind::Tuple(items) => Ok(Value::Tuple(items.iter().map(|i| self.expr(i)).collect::<R<_>>()?)),
            ExprKind::Name(n) => self.name(n, e.span),
            ExprKind::Unary(op, inner) => {
                let v = self.expr(inner)?;
                self.unary(*op, v, e.span)
            }
            ExprKind::Binary(op, a, b) => {
                let va = self.expr(a)?;
                let vb = self.expr(b)?;
                self.binary(*op, va, vb, e.span, a.span, b.span)
            }
            ExprKind::Field { base, name } => {
                let v = self.expr(base)?;
                self.field(v, name)
            }
            ExprKind::Index { base, index } => {
                let v = self.expr(base)?;
                if let Value::Counting { layout, origin } = &v {
                    let crd = self.coordinate(index)?;
                    check_rank(&crd, layout, e.span)?;
                    let (kept, offset) =
                        cute_layout::slice_and_offset(&crd, layout).map_err(|err| coord_err(err, layout, e.span))?;
                    let at = origin.add(&offset).map_err(|err| layout_err(err, e.span))?;
                    if crd_has_under(&crd) {
                        return Ok(Value::Counting { layout: kept, origin: at });
                    }
                    // An element of a counting tensor is its coordinate.
                    let coord = at.to_arith_tuple(&layout.basis_paths()).map_err(|err| layout_err(err, e.span))?;
                    return Ok(Value::from_int_tuple(&coord));
                }
                let Value::Tensor(t) = v else {
                    return match v {
                        Value::Tuple(items) if index.len() == 1 => {
                            let i = self.index(&index[0])?;
                            let k = i.as_static().ok_or_else(|| {
                                Diagnostic::error("a tuple index must be static", index[0].span, "run-time index")
                            })?;
                            items.get(k as usize).cloned().ok_or_else(|| {
                                Diagnostic::error(
                                    format!("index {k} is out of range for a tuple of {} parts", items.len()),
                                    index[0].span,
                                    "out of range",
                                )
                            })
                        }
                        other => Err(Diagnostic::error(
                            format!("cannot index into {}", crate::diag::article(&other.kind())),
                            base.span,
                            "not a tensor",
                        )),
                    };
                };
                let crd = self.coordinate(index)?;
                check_rank(&crd, &t.ty.layout, e.span)?;
                if crd_has_under(&crd) {
                    return Ok(Value::Tensor(self.slice(&t, &crd, e.span)?));
                }
                cute_layout::slice_and_offset(&crd, &t.ty.layout)
                    .map_err(|err| coord_err(err, &t.ty.layout, e.span))?;
                self.need_kernel("reading memory", e.span)?;
                let Origin::Kernel(tid) = t.origin else { unreachable!("kernel tensors have kernel origins") };
                let ty =
                    if t.ty.elem == Scalar::I32 { ValueTy::Scalar(Scalar::I32) } else { ValueTy::Scalar(t.ty.elem) };
                let dst = self.fresh(ty);
                self.emit(Inst::Load {
                    dst,
                    tensor: tid,
                    ty: t.ty.clone(),
                    at: kir::At::Coord(cute_layout::expr::crd_value(&crd)),
                    span: e.span,
                });
                Ok(if t.ty.elem == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(t.ty.elem, dst) })
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Method { receiver, name, args } => {
                let recv = self.expr(receiver)?;
                self.method(recv, name, args, e.span)
            }
        }
    }

    fn name(&mut self, n: &str, span: Span) -> R<Value> {
        if let Some(v) = self.lookup(n) {
            return Ok(self.read(v, span));
        }
        if let Some(s) = Scalar::from_name(n) {
            return Ok(Value::Type(s));
        }
        match n {
            "thread_idx" => return Ok(Value::Dim3("thread_idx")),
            "block_idx" => return Ok(Value::Dim3("block_idx")),
            "block_dim" => return Ok(Value::Dim3("block_dim")),
            "grid_dim" => return Ok(Value::Dim3("grid_dim")),
            _ => {}
        }
        if self.prog.functions.get(n).is_some_and(|f| f.kind == FnKind::Device) || builtins::is_operator(n) {
            return Ok(Value::Func(n.to_string()));
        }
        let mut names: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        names.extend(self.prog.consts.keys().cloned());
        names.extend(["thread_idx", "block_idx", "block_dim", "grid_dim"].map(String::from));
        let mut d =
            Diagnostic::error(format!("cannot find value `{n}` in this scope"), span, "not found in this scope");
        if let Some(s) = did_you_mean(n, names.iter().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        Err(d)
    }

    fn field(&mut self, v: Value, name: &Ident) -> R<Value> {
        let unknown = |what: &str, fields: &str| {
            Diagnostic::error(format!("no field `{}` on {what}", name.name), name.span, "unknown field")
                .with_help(format!("the fields are {fields}"))
        };
        match v {
            Value::Dim3(which) => {
                let dim = match name.name.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return Err(unknown("`dim3`", "`x`, `y` and `z`")),
                };
                self.special(which, dim, name.span)
            }
            Value::Tensor(t) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&t.ty.layout.shape)),
                "stride" => Ok(Value::from_int_tuple(&t.ty.layout.stride)),
                "layout" => Ok(match t.ty.swizzle {
                    Some(sw) => Value::Composed(Box::new(ComposedLayout {
                        swizzle: sw,
                        offset: Int::ZERO,
                        layout: t.ty.layout.clone(),
                    })),
                    None => Value::Layout(t.ty.layout.clone()),
                }),
                "element_type" => Ok(Value::Type(t.ty.elem)),
                // CuTe's `tensor.iterator`: the memory, to view with another layout (`make_tensor`).
                "iterator" => Ok(Value::Tensor(t)),
                _ => Err(unknown("tensors", "`shape`, `stride`, `layout`, `element_type` and `iterator`")),
            },
            Value::Counting { layout, .. } => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&layout.shape)),
                "layout" => Ok(Value::Layout(layout)),
                _ => Err(unknown("identity tensors", "`shape` and `layout`")),
            },
            Value::Layout(l) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&l.shape)),
                "stride" => Ok(Value::from_int_tuple(&l.stride)),
                _ => Err(unknown("layouts", "`shape` and `stride`")),
            },
            Value::Frag(f, _) => match name.name.as_str() {
                "shape" => Ok(Value::from_int_tuple(&f.shape)),
                "element_type" => Ok(Value::Type(f.elem)),
                _ => Err(unknown("fragments", "`shape` and `element_type`")),
            },
            // CuTe DSL's `dtype.width`: the element type's size in bits.
            Value::Type(t) => match name.name.as_str() {
                "width" => Ok(Value::Int(Int::S(8 * i64::from(t.size_bytes())))),
                _ => Err(unknown("types", "`width` (bits; `sizeof(T)` gives bytes)")),
            },
            other => Err(Diagnostic::error(
                format!("{} has no fields", crate::diag::article(&other.kind())),
                name.span,
                "unknown field",
            )),
        }
    }

    fn special(&mut self, which: &'static str, dim: u8, span: Span) -> R<Value> {
        self.need_kernel(&format!("`{which}`"), span)?;
        let key = format!("{which}.{dim}");
        if let Some(v) = self.special_values.get(&key) {
            return Ok(v.clone());
        }
        let id = self.fresh(ValueTy::Scalar(Scalar::I32));
        let s = match which {
            "thread_idx" => Special::ThreadIdx(dim),
            "block_idx" => Special::BlockIdx(dim),
            "block_dim" => Special::BlockDim(dim),
            _ => Special::GridDim(dim),
        };
        self.specials.push(Inst::Special { dst: id, which: s, span });
        let v = Value::Int(Int::var(id, 1));
        self.special_values.insert(key, v.clone());
        Ok(v)
    }

    /// A coordinate from index expressions: one expression (possibly a tuple), or several (a tuple).
    pub(crate) fn coordinate(&mut self, index: &[Expr]) -> R<cute_layout::Crd> {
        fn crd(v: &Value, span: Span) -> R<cute_layout::Crd> {
            Ok(match v {
                Value::Int(i) => cute_layout::Crd::Int(i.clone()),
                Value::Under => cute_layout::Crd::Under,
                Value::Tuple(items) => cute_layout::Crd::Tuple(items.iter().map(|i| crd(i, span)).collect::<R<_>>()?),
                other => {
                    return Err(Diagnostic::error(
                        format!(
                            "coordinates are integers, `_` and tuples of them, not {}",
                            crate::diag::article(&other.kind())
                        ),
                        span,
                        "not a coordinate",
                    ))
                }
            })
        }
        if index.len() == 1 {
            let v = self.expr(&index[0])?;
            return crd(&v, index[0].span);
        }
        let items = index.iter().map(|e| self.expr(e).and_then(|v| crd(&v, e.span))).collect::<R<_>>()?;
        Ok(cute_layout::Crd::Tuple(items))
    }

    /// The sub-tensor at a coordinate with `_` entries (CuTe's slicing).
    pub(crate) fn slice(&mut self, t: &TensorVal, crd: &cute_layout::Crd, span: Span) -> R<TensorVal> {
        let crd = natural_coordinate(crd, &t.ty.layout.shape);
        let (layout, offset) =
            cute_layout::slice_and_offset(&crd, &t.ty.layout).map_err(|e| coord_err(e, &t.ty.layout, span))?;
        self.view(t, layout, offset, kir::ViewHow::algebra("slice", vec![cute_layout::expr::crd_value(&crd)]), span)
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
    pub(crate) fn require_whole_tiles(&mut self, layout: &Layout, span: Span) {
        fn walk(i: &Int, out: &mut Vec<(Int, i64)>) {
            if let Int::D(d) = i {
                for a in d.factors.iter() {
                    if let cute_layout::int::Atom::Op(op) = a {
                        match &**op {
                            cute_layout::int::Op::CeilDiv(x, y) => {
                                if let Some(b) = y.as_static() {
                                    out.push((x.clone(), b));
                                }
                                walk(x, out);
                            }
                            cute_layout::int::Op::Add(x, y)
                            | cute_layout::int::Op::Div(x, y)
                            | cute_layout::int::Op::Mod(x, y)
                            | cute_layout::int::Op::Min(x, y)
                            | cute_layout::int::Op::Max(x, y) => {
                                walk(x, out);
                                walk(y, out);
                            }
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        for leaf in layout.shape.leaves() {
            walk(&leaf, &mut found);
        }
        for (dividend, divisor) in found {
            let require =
                kir::Require { dividend, divisor, what: format!("a run-time extent tiled by {divisor}"), span };
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

    /// A tensor over the same memory with a new layout, its base moved by `offset` elements, made by
    /// the CuTe operation `how` (which the kernel's IR keeps).
    pub(crate) fn view(
        &mut self,
        t: &TensorVal,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        span: Span,
    ) -> R<TensorVal> {
        self.view_with(t, layout, offset, how, t.ty.swizzle, span)
    }

    fn add_require(&mut self, require: kir::Require) {
        if !self.requires.iter().any(|r| r.dividend == require.dividend && r.divisor == require.divisor) {
            self.requires.push(require);
        }
    }

    /// The launch conditions of the tensor `id`'s partial tiles become the kernel's: it is accessed.
    fn commit_requires(&mut self, id: ValueId) {
        if let Some(reqs) = self.pending.remove(&id) {
            for r in reqs {
                self.add_require(r);
            }
        }
    }

    /// Whether `id` is a tensor an `alloc` made (not a view of one).
    pub(crate) fn is_allocation(&self, id: ValueId) -> bool {
        self.specials.iter().any(|i| matches!(i, Inst::Alloc { dst, .. } | Inst::LaunchSmem { dst, .. } if *dst == id))
    }

    /// A view whose swizzle is `swizzle`: the source's for every CuTe operation, a new one (or none)
    /// when `make_tensor` lays the memory out again. A new swizzle acts on offsets from the view's
    /// base.
    pub(crate) fn view_with(
        &mut self,
        t: &TensorVal,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        swizzle: Option<cute_layout::Swizzle>,
        span: Span,
    ) -> R<TensorVal> {
        self.view_as(t, t.ty.elem, layout, offset, how, swizzle, span)
    }

    /// A view whose elements are `elem` (the source's, but for `recast`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn view_as(
        &mut self,
        t: &TensorVal,
        elem: Scalar,
        layout: Layout,
        offset: Int,
        how: kir::ViewHow,
        swizzle: Option<cute_layout::Swizzle>,
        span: Span,
    ) -> R<TensorVal> {
        if self.mode != Mode::Const {
            self.require_whole_tiles(&layout, span);
        }
        let mut align = view_align(t.ty.align, &offset, t.ty.elem.size_bytes());
        if let Some(sw) = swizzle {
            align = swizzle::swizzled_align(align, sw, t.ty.elem.size_bytes());
        }
        let ty = TensorTy { elem, space: t.ty.space, align, layout, swizzle };
        match &t.origin {
            Origin::Host { param, offset: base } => {
                for r in std::mem::take(&mut self.staged) {
                    self.add_require(r);
                }
                let total = base.add(&offset).map_err(|e| layout_err(e, span))?;
                Ok(TensorVal { ty, origin: Origin::Host { param: *param, offset: total } })
            }
            Origin::Kernel(src) => {
                let dst = self.fresh(ValueTy::Tensor(ty.clone()));
                let mut reqs = std::mem::take(&mut self.staged);
                reqs.extend(self.pending.get(src).into_iter().flatten().cloned());
                if !reqs.is_empty() {
                    self.pending.insert(dst, reqs);
                }
                self.emit(Inst::View { dst, src: *src, how, ty: ty.clone(), span });
                Ok(TensorVal { ty, origin: Origin::Kernel(dst) })
            }
        }
    }

    /// A run-time operand of scalar type `ty` for a value.
    pub(crate) fn operand(&mut self, v: &Value, ty: Scalar, span: Span) -> R<Operand> {
        Ok(match v {
            Value::Int(i) if ty == Scalar::I32 || i.is_static() => Operand::Int(i.clone()),
            Value::Scalar(s, id) if *s == ty => Operand::Value(*id),
            Value::Float(x) if ty.is_float() => Operand::Float(*x),
            Value::Bool(b) if ty == Scalar::Bool => Operand::Bool(*b),
            other => {
                return Err(Diagnostic::error(
                    format!("expected a value of type `{}`, found a {}", ty.name(), other.kind()),
                    span,
                    "wrong type",
                ))
            }
        })
    }

    /// Gives literals the type `want`; other values must already have it.
    pub(crate) fn coerce(&mut self, v: Value, want: Scalar, span: Span) -> R<Value> {
        match (&v, want) {
            (Value::Int(i), Scalar::I32) => Ok(Value::Int(i.clone())),
            (Value::Int(i), s) if i.is_static() && s != Scalar::Bool => {
                let x = i.as_static().unwrap_or(0);
                if s.is_float() {
                    Ok(self.constant(s, Operand::Float(x as f64), span))
                } else {
                    Ok(self.constant(s, Operand::Int(i.clone()), span))
                }
            }
            (Value::Float(x), s) if s.is_float() => Ok(self.constant(s, Operand::Float(*x), span)),
            (Value::Bool(_), Scalar::Bool) => Ok(v),
            (Value::Scalar(s, _), w) if *s == w => Ok(v),
            _ => Err(Diagnostic::error(
                format!("mismatched types: expected `{}`, found {}", want.name(), v.kind()),
                span,
                format!("this is {}", v.kind()),
            )
            .with_help(format!("convert with `.to({})`", want.name()))),
        }
    }

    /// A value of type `ty` that elaboration treats as known only at run time.
    fn dynamic_scalar(&mut self, ty: Scalar, v: Value, span: Span) -> R<Value> {
        self.need_kernel(&format!("a run-time `{}` value", ty.name()), span)?;
        let (from, a) = match &v {
            Value::Int(i) => (if i.is_static() { Scalar::I64 } else { Scalar::I32 }, Operand::Int(i.clone())),
            Value::Float(x) => (Scalar::F64, Operand::Float(*x)),
            Value::Bool(b) => (Scalar::Bool, Operand::Bool(*b)),
            Value::Scalar(s, id) => (*s, Operand::Value(*id)),
            other => {
                return Err(Diagnostic::error(
                    format!("cannot make a `{}` from a {}", ty.name(), other.kind()),
                    span,
                    "not a number",
                ))
            }
        };
        if from == ty {
            return Ok(v);
        }
        let dst = self.fresh(ValueTy::Scalar(ty));
        self.emit(Inst::Convert { dst, from, to: ty, frag: None, a, span });
        Ok(if ty == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(ty, dst) })
    }

    /// A typed constant as a run-time value (the constant folds in code generation).
    fn constant(&mut self, ty: Scalar, c: Operand, span: Span) -> Value {
        if self.mode != Mode::Kernel {
            return match c {
                Operand::Float(x) => Value::Float(x),
                Operand::Int(i) => Value::Int(i),
                Operand::Bool(b) => Value::Bool(b),
                Operand::Value(_) => Value::Unit,
            };
        }
        let dst = self.fresh(ValueTy::Scalar(ty));
        let from = match c {
            Operand::Float(_) => Scalar::F64,
            Operand::Bool(_) => Scalar::Bool,
            _ => Scalar::I64,
        };
        self.emit(Inst::Convert { dst, from, to: ty, frag: None, a: c, span });
        Value::Scalar(ty, dst)
    }

    fn unary(&mut self, op: UnOp, v: Value, span: Span) -> R<Value> {
        match (op, v) {
            (UnOp::Neg, Value::Int(i)) => i.neg().map(Value::Int).map_err(|e| layout_err(e, span)),
            (UnOp::Neg, Value::Float(x)) => Ok(Value::Float(-x)),
            (UnOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
            (UnOp::Not, v @ Value::Scalar(Scalar::Bool, _)) if self.mode == Mode::Host => {
                self.host_not(&v).ok_or_else(|| {
                    Diagnostic::error(
                        "cannot apply `!` to this run-time `bool` in a host function",
                        span,
                        "not a host condition",
                    )
                })
            }
            (op, v @ (Value::Scalar(..) | Value::Frag(..) | Value::Int(_))) => {
                self.need_kernel("run-time arithmetic", span)?;
                let (ty, frag, a) = match &v {
                    Value::Scalar(s, id) => (*s, None, Operand::Value(*id)),
                    Value::Frag(f, id) => (f.elem, Some(f.len()), Operand::Value(*id)),
                    Value::Int(i) => (Scalar::I32, None, Operand::Int(i.clone())),
                    _ => unreachable!(),
                };
                self.no_fp8_arith(ty, if op == UnOp::Neg { "`-`" } else { "`!`" }, span)?;
                if op == UnOp::Neg && !(ty.is_float() || ty.is_signed()) {
                    return Err(Diagnostic::error(
                        format!("cannot negate a `{}`", ty.name()),
                        span,
                        "unsigned or bool",
                    ));
                }
                if op == UnOp::Not && ty.is_float() {
                    return Err(Diagnostic::error(format!("cannot apply `!` to `{}`", ty.name()), span, "float"));
                }
                let dst = self.fresh(self.result_ty(ty, frag, &v));
                self.emit(if op == UnOp::Neg {
                    Inst::Neg { dst, ty, frag, a, span }
                } else {
                    Inst::Not { dst, ty, frag, a, span }
                });
                Ok(self.result_value(ty, frag, &v, dst))
            }
            (op, v) => Err(Diagnostic::error(
                format!("cannot apply `{}` to a {}", if op == UnOp::Neg { "-" } else { "!" }, v.kind()),
                span,
                "unsupported operand",
            )),
        }
    }

    fn result_ty(&self, ty: Scalar, frag: Option<usize>, like: &Value) -> ValueTy {
        match (frag, like) {
            (Some(_), Value::Frag(f, _)) => ValueTy::Frag(FragTy { elem: ty, shape: f.shape.clone() }),
            (Some(n), _) => ValueTy::Frag(FragTy { elem: ty, shape: IntTuple::Int(Int::S(n as i64)) }),
            _ => ValueTy::Scalar(ty),
        }
    }

    fn result_value(&self, ty: Scalar, frag: Option<usize>, like: &Value, dst: ValueId) -> Value {
        match (frag, like) {
            (Some(_), Value::Frag(f, _)) => Value::Frag(FragTy { elem: ty, shape: f.shape.clone() }, dst),
            (Some(n), _) => Value::Frag(FragTy { elem: ty, shape: IntTuple::Int(Int::S(n as i64)) }, dst),
            _ if ty == Scalar::I32 => Value::Int(Int::var(dst, 1)),
            _ => Value::Scalar(ty, dst),
        }
    }

    pub(crate) fn binary(&mut self, op: BinOp, a: Value, b: Value, span: Span, sa: Span, sb: Span) -> R<Value> {
        // Index integers: the layout library's symbolic arithmetic folds and keeps exact expressions.
        if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
            let lerr = |e| layout_err(e, span);
            let folded = match op {
                BinOp::Add => Some(x.add(y).map_err(lerr)?),
                BinOp::Sub => Some(x.sub(y).map_err(lerr)?),
                BinOp::Mul => Some(x.mul(y).map_err(lerr)?),
                BinOp::Div | BinOp::Rem if y.as_static() == Some(0) => {
                    return Err(Diagnostic::error("division by zero", sb, "this is zero"));
                }
                BinOp::Div => Some(x.floor_div(y).map_err(lerr)?),
                BinOp::Rem => Some(x.modulo(y).map_err(lerr)?),
                _ => None,
            };
            if let Some(v) = folded {
                return Ok(Value::Int(v));
            }
            if let (Some(p), Some(q)) = (x.as_static(), y.as_static()) {
                return static_int_op(op, p, q, span);
            }
        }
        if self.mode == Mode::Host {
            if let Some(v) = self.host_binary(op, &a, &b, span, sa, sb)? {
                return Ok(v);
            }
        }
        if let (Value::Bool(x), Value::Bool(y)) = (&a, &b) {
            return match op {
                BinOp::And => Ok(Value::Bool(*x && *y)),
                BinOp::Or => Ok(Value::Bool(*x || *y)),
                BinOp::Eq => Ok(Value::Bool(x == y)),
                BinOp::Ne | BinOp::BitXor => Ok(Value::Bool(x != y)),
                _ => Err(Diagnostic::error(
                    format!("cannot apply `{}` to bools", op.symbol()),
                    span,
                    "unsupported operation",
                )),
            };
        }
        if let (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_)) = (&a, &b) {
            if let (Some(x), Some(y)) = (static_f64(&a), static_f64(&b)) {
                return static_float_op(op, x, y, span);
            }
        }
        // Run-time operations: find the common element type and whether fragments are involved.
        let elem = |v: &Value| match v {
            Value::Scalar(s, _) => Some(*s),
            Value::Frag(f, _) => Some(f.elem),
            Value::Int(i) if !i.is_static() => Some(Scalar::I32),
            Value::Bool(_) => Some(Scalar::Bool),
            _ => None,
        };
        let ty = match (elem(&a), elem(&b)) {
            (Some(x), Some(y)) if x == y => x,
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => {
                return Err(Diagnostic::error(
                    format!("mismatched types in `{}`: `{}` and `{}`", op.symbol(), x.name(), y.name()),
                    span,
                    "operands differ",
                )
                .with_secondary(sa, format!("`{}`", x.name()))
                .with_secondary(sb, format!("`{}`", y.name()))
                .with_help("convert one side with `.to(T)`"));
            }
            (None, None) => {
                let d = Diagnostic::error(
                    format!("cannot apply `{}` to a {} and a {}", op.symbol(), a.kind(), b.kind()),
                    span,
                    "unsupported operands",
                );
                // A stream is no number: it is only named by a launch.
                return Err(if matches!(a, Value::Stream(_)) || matches!(b, Value::Stream(_)) {
                    d.with_help("a `stream` parameter is only named in a launch's `stream(s)` clause; it cannot be computed with or compared")
                } else {
                    d
                });
            }
        };
        let frag = match (&a, &b) {
            (Value::Frag(f, _), Value::Frag(g, _)) => {
                if f.len() != g.len() {
                    return Err(Diagnostic::error(
                        format!("fragments of {} and {} elements cannot be combined", f.len(), g.len()),
                        span,
                        "sizes differ",
                    )
                    .with_secondary(sa, format!("shape {}", f.shape))
                    .with_secondary(sb, format!("shape {}", g.shape)));
                }
                Some(f.len())
            }
            (Value::Frag(f, _), _) | (_, Value::Frag(f, _)) => Some(f.len()),
            _ => None,
        };
        self.need_kernel("run-time arithmetic", span)?;
        self.no_fp8_arith(ty, &format!("`{}`", op.symbol()), span)?;
        let to_operand = |f: &mut Self, v: &Value, s: Span| -> R<Operand> {
            match v {
                Value::Frag(_, id) => Ok(Operand::Value(*id)),
                Value::Int(i) if ty.is_float() => {
                    let x = i.as_static().ok_or_else(|| {
                        Diagnostic::error(format!("an i32 cannot be combined with a `{}`", ty.name()), s, "i32 here")
                            .with_help(format!("convert with `.to({})`", ty.name()))
                    })?;
                    Ok(Operand::Float(x as f64))
                }
                v => f.operand(v, ty, s),
            }
        };
        let x = to_operand(self, &a, sa)?;
        let y = to_operand(self, &b, sb)?;
        let like = if matches!(a, Value::Frag(..)) { a.clone() } else { b.clone() };
        let kop = match op {
            BinOp::Add => Some(BinaryOp::Add),
            BinOp::Sub => Some(BinaryOp::Sub),
            BinOp::Mul => Some(BinaryOp::Mul),
            BinOp::Div => Some(BinaryOp::Div),
            BinOp::Rem => Some(BinaryOp::Rem),
            BinOp::BitAnd | BinOp::And => Some(BinaryOp::And),
            BinOp::BitOr | BinOp::Or => Some(BinaryOp::Or),
            BinOp::BitXor => Some(BinaryOp::Xor),
            BinOp::Shl => Some(BinaryOp::Shl),
            BinOp::Shr => Some(BinaryOp::Shr),
            _ => None,
        };
        if let Some(kop) = kop {
            let logical = matches!(op, BinOp::And | BinOp::Or);
            if logical != (ty == Scalar::Bool) && !matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor) {
                return Err(Diagnostic::error(
                    format!("cannot apply `{}` to `{}`", op.symbol(), ty.name()),
                    span,
                    "unsupported operation",
                ));
            }
            if ty.is_float()
                && matches!(kop, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr)
            {
                return Err(Diagnostic::error(
                    format!("cannot apply `{}` to `{}`", op.symbol(), ty.name()),
                    span,
                    "bitwise operation on a float",
                ));
            }
            let dst = self.fresh(self.result_ty(ty, frag, &like));
            self.emit(Inst::Binary { dst, op: kop, ty, frag, a: x, b: y, span });
            return Ok(self.result_value(ty, frag, &like, dst));
        }
        let cmp = match op {
            BinOp::Lt => CmpOp::Lt,
            BinOp::Le => CmpOp::Le,
            BinOp::Gt => CmpOp::Gt,
            BinOp::Ge => CmpOp::Ge,
            BinOp::Eq => CmpOp::Eq,
            _ => CmpOp::Ne,
        };
        let dst = self.fresh(self.result_ty(Scalar::Bool, frag, &like));
        self.emit(Inst::Cmp { dst, op: cmp, ty, frag, a: x, b: y, span });
        Ok(self.result_value(Scalar::Bool, frag, &like, dst))
    }

    fn call(&mut self, callee: &Ident, args: &[Arg], span: Span) -> R<Value> {
        // A `const` function parameter or a local bound to a function calls what it names.
        let name = match self.lookup(&callee.name) {
            Some(Value::Func(target)) => target,
            Some(other) => {
                return Err(Diagnostic::error(
                    format!("`{}` is a {}, not a function", callee.name, other.kind()),
                    callee.span,
                    "not callable",
                ))
            }
            None => callee.name.clone(),
        };
        if let Some(&f) = self.prog.functions.get(&name) {
            return self.inline(f, args, span);
        }
        if name == "assert" {
            return self.assert_call(args, span);
        }
        if let Some(op) = mbarrier::op_of(&name) {
            // The barrier is an element's place (`bars[i]`), not its value.
            return self.mbarrier_call(op, args, span);
        }
        if name == "tma_load" {
            return self.tma_load_call(args, span);
        }
        if cluster::BUILTINS.contains(&name.as_str()) {
            // `dsmem_load(sA[i], rank)` takes the element's place, not its value.
            return self.cluster_call(&name, args, span);
        }
        match name.as_str() {
            "tma_store" => return self.tma_store_call(args, span),
            // Same instruction as `fence_proxy_async()`, under CuTe's TMA-store name.
            "tma_store_fence" => return self.tma_store_fence_call(args, span),
            "tma_store_arrive" | "tma_store_wait" | "cp_async_bulk_commit_group" | "cp_async_bulk_wait_group" => {
                return self.bulk_group_call(&name, args, span)
            }
            _ => {}
        }
        if builtins::is_operator(&name) {
            let vals = args.iter().map(|a| self.expr(&a.value)).collect::<R<Vec<_>>>()?;
            return self.call_value(&name, vals, span);
        }
        if let Some(ty) = Scalar::from_name(&name) {
            // `f32(3.14)`, `i32(5)`: a run-time value of that type (CuTe DSL's `cutlass.Float32(3.14)`),
            // which compile-time `print` shows as `?`.
            if args.len() != 1 || args[0].name.is_some() {
                return Err(Diagnostic::error(
                    format!("`{name}(x)` takes one value"),
                    span,
                    "wrong number of arguments",
                ));
            }
            let v = self.expr(&args[0].value)?;
            return self.dynamic_scalar(ty, v, args[0].value.span);
        }
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(builtins::Arg {
                name: a.name.as_ref().map(|n| n.name.clone()),
                name_span: a.name.as_ref().map(|n| n.span),
                value: self.expr(&a.value)?,
                span: a.value.span,
            });
        }
        builtins::call(self, &name, callee.span, vals, span)
    }

    pub(crate) fn call_value(&mut self, func: &str, args: Vec<Value>, span: Span) -> R<Value> {
        if builtins::is_operator(func) {
            let mut it = args.into_iter();
            let (Some(a), Some(b)) = (it.next(), it.next()) else {
                return Err(Diagnostic::error(
                    format!("`{func}` takes two operands"),
                    span,
                    "wrong number of arguments",
                ));
            };
            return builtins::operator(self, func, a, b, span);
        }
        let Some(&f) = self.prog.functions.get(func) else {
            return Err(Diagnostic::error(format!("cannot find function `{func}`"), span, "not found"));
        };
        self.inline_values(f, args, span)
    }

    fn inline(&mut self, f: &Function, args: &[Arg], span: Span) -> R<Value> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(&a.value)?);
        }
        self.inline_values(f, vals, span)
    }

    /// Calls a `fn` helper by elaborating its body in place (helpers are always inlined).
    fn inline_values(&mut self, f: &Function, args: Vec<Value>, span: Span) -> R<Value> {
        if f.kind != FnKind::Device {
            return Err(Diagnostic::error(
                format!(
                    "`{}` is a {} and cannot be called",
                    f.name.name,
                    if f.kind == FnKind::Kernel { "kernel" } else { "host function" }
                ),
                span,
                "not callable",
            )
            .with_help(if f.kind == FnKind::Kernel {
                "kernels are started with `launch` from a host function"
            } else {
                "host functions are called from the host program"
            }));
        }
        if args.len() != f.params.len() {
            return Err(Diagnostic::error(
                format!(
                    "`{}` takes {} but {} given",
                    f.name.name,
                    crate::diag::count(f.params.len(), "argument"),
                    if args.len() == 1 { "1 was".to_string() } else { format!("{} were", args.len()) }
                ),
                span,
                "wrong number of arguments",
            )
            .with_secondary(f.name.span, "defined here"));
        }
        if self.inline_depth >= INLINE_DEPTH {
            return Err(Diagnostic::error(
                format!("`{}` is inlined more than {INLINE_DEPTH} levels deep", f.name.name),
                span,
                "runaway recursion?",
            ));
        }
        let mut scope = HashMap::new();
        for (p, v) in f.params.iter().zip(args) {
            let v = match resolve_type(&p.ty) {
                Ok(Ty::Scalar(s)) => self.coerce(v, s, span)?,
                _ => v,
            };
            self.prog.recorder.binding(p.name.span, &v);
            scope.insert(p.name.name.clone(), v);
        }
        // A helper sees its parameters, the file's consts and builtins: not its caller's locals.
        let saved = std::mem::replace(&mut self.scopes, vec![scope]);
        // A helper's `break` cannot leave its caller's loop.
        let saved_loops = std::mem::take(&mut self.loops);
        let ret_ty = match f.ret.as_ref().map(resolve_type) {
            Some(Ok(Ty::Scalar(s))) => Some(s),
            _ => None,
        };
        self.fns.push(FnCtx::new(self.depth, true, ret_ty));
        self.inline_depth += 1;
        let flow = self.stmts(&f.body.stmts);
        self.inline_depth -= 1;
        let ctx = self.fns.pop();
        self.loops = saved_loops;
        self.scopes = saved;
        let end = Span::new(f.body.span.end.saturating_sub(1), f.body.span.end);
        let v = match (flow, ctx) {
            (Ok(flow), Some(ctx)) => self.finish_call(ctx, &flow, &f.name.name, end)?,
            (Err(d), _) => return Err(d),
            (Ok(_), None) => unreachable!("the call's context was pushed above"),
        };
        match (&f.ret, v) {
            (Some(t), v) => match resolve_type(t)? {
                Ty::Scalar(s) => self.coerce(v, s, span),
                _ => Ok(v),
            },
            (None, v) => Ok(v),
        }
    }

    fn method(&mut self, recv: Value, name: &Ident, args: &[Arg], span: Span) -> R<Value> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(builtins::Arg {
                name: a.name.as_ref().map(|n| n.name.clone()),
                name_span: a.name.as_ref().map(|n| n.span),
                value: self.expr(&a.value)?,
                span: a.value.span,
            });
        }
        builtins::method(self, recv, name, vals, span)
    }
}

/// `crd` with every integer that indexes a mode of several run-time extents replaced by its
/// natural coordinate (CuTe's `idx2crd`, colexicographic), as symbolic integers. The divisions are
/// then the front end's, which code generation turns into multiplies by the runtime's fast
/// divisors (design.md (n)), instead of `udiv`s the layout canonicalization would emit. The last
/// leaf takes no remainder: an index in range is below the mode's size.
fn natural_coordinate(crd: &cute_layout::Crd, shape: &IntTuple) -> cute_layout::Crd {
    use cute_layout::Crd;
    match (crd, shape) {
        (Crd::Tuple(cs), IntTuple::Tuple(ss)) if cs.len() == ss.len() => {
            Crd::Tuple(cs.iter().zip(ss).map(|(c, s)| natural_coordinate(c, s)).collect())
        }
        (Crd::Int(i), IntTuple::Tuple(_)) if !shape.is_static() => {
            fn build(i: &Int, shape: &IntTuple, stride: &mut Int, last: &mut usize, leaves: usize) -> Option<Crd> {
                match shape {
                    IntTuple::Tuple(items) => Some(Crd::Tuple(
                        items.iter().map(|s| build(i, s, stride, last, leaves)).collect::<Option<_>>()?,
                    )),
                    IntTuple::Int(s) => {
                        *last += 1;
                        let q = if stride.is(1) { i.clone() } else { i.floor_div(stride).ok()? };
                        let c = if *last == leaves || s.is(1) { q } else { q.modulo(s).ok()? };
                        *stride = stride.mul(s).ok()?;
                        Some(Crd::Int(if s.is(1) { Int::S(0) } else { c }))
                    }
                }
            }
            let leaves = shape.leaves().len();
            build(i, shape, &mut Int::S(1), &mut 0, leaves).unwrap_or_else(|| crd.clone())
        }
        _ => crd.clone(),
    }
}

fn crd_has_under(c: &cute_layout::Crd) -> bool {
    match c {
        cute_layout::Crd::Under => true,
        cute_layout::Crd::Int(_) => false,
        cute_layout::Crd::Tuple(items) => items.iter().any(crd_has_under),
    }
}

/// A coordinate must have one entry per mode of the layout, or be one linear index.
fn check_rank(crd: &cute_layout::Crd, layout: &Layout, span: Span) -> R<()> {
    if let cute_layout::Crd::Tuple(items) = crd {
        let rank = layout.rank();
        if items.len() != rank {
            return Err(Diagnostic::error(
                format!("this tensor has rank {rank} but the coordinate has {} entries", items.len()),
                span,
                format!("{} coordinates", items.len()),
            )
            .with_secondary(span, format!("layout {layout}"))
            .with_help(format!("give {rank} coordinates, or one linear index")));
        }
    }
    Ok(())
}

fn coord_err(e: cute_layout::Error, layout: &Layout, span: Span) -> Diagnostic {
    Diagnostic::error(format!("this coordinate does not fit the tensor: {e}"), span, format!("layout {layout}"))
        .with_help("give one coordinate per mode (nested like the shape), or one linear index")
}

pub(crate) fn is_static_value(v: &Value) -> bool {
    match v {
        Value::Int(i) => i.is_static(),
        Value::Float(_)
        | Value::Bool(_)
        | Value::Type(_)
        | Value::Func(_)
        | Value::Str(_)
        | Value::Under
        | Value::Unit => true,
        Value::Layout(l) => l.is_static(),
        Value::CopyAtom { .. } | Value::MmaAtom(_) | Value::TiledMma(_) => true,
        Value::TiledCopy { tv, tile, .. } => tv.is_static() && tile.is_static(),
        Value::Tuple(items) => items.iter().all(is_static_value),
        _ => false,
    }
}

fn static_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Int(i) => i.as_static().map(|x| x as f64),
        _ => None,
    }
}

fn static_int_op(op: BinOp, p: i64, q: i64, span: Span) -> R<Value> {
    let overflow = || Diagnostic::error("integer overflow in a compile-time value", span, "overflows 64 bits");
    Ok(match op {
        BinOp::Lt => Value::Bool(p < q),
        BinOp::Le => Value::Bool(p <= q),
        BinOp::Gt => Value::Bool(p > q),
        BinOp::Ge => Value::Bool(p >= q),
        BinOp::Eq => Value::Bool(p == q),
        BinOp::Ne => Value::Bool(p != q),
        BinOp::BitAnd => Value::Int(Int::S(p & q)),
        BinOp::BitOr => Value::Int(Int::S(p | q)),
        BinOp::BitXor => Value::Int(Int::S(p ^ q)),
        BinOp::Shl => Value::Int(Int::S(u32::try_from(q).ok().and_then(|s| p.checked_shl(s)).ok_or_else(overflow)?)),
        BinOp::Shr => Value::Int(Int::S(u32::try_from(q).ok().and_then(|s| p.checked_shr(s)).ok_or_else(overflow)?)),
        _ => {
            return Err(Diagnostic::error(
                format!("cannot apply `{}` to integers", op.symbol()),
                span,
                "unsupported operation",
            ))
        }
    })
}

fn static_float_op(op: BinOp, x: f64, y: f64, span: Span) -> R<Value> {
    Ok(match op {
        BinOp::Add => Value::Float(x + y),
        BinOp::Sub => Value::Float(x - y),
        BinOp::Mul => Value::Float(x * y),
        BinOp::Div => Value::Float(x / y),
        BinOp::Lt => Value::Bool(x < y),
        BinOp::Le => Value::Bool(x <= y),
        BinOp::Gt => Value::Bool(x > y),
        BinOp::Ge => Value::Bool(x >= y),
        BinOp::Eq => Value::Bool(x == y),
        BinOp::Ne => Value::Bool(x != y),
        _ => {
            return Err(Diagnostic::error(
                format!("cannot apply `{}` to floats", op.symbol()),
                span,
                "unsupported operation",
            ))
        }
    })
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
