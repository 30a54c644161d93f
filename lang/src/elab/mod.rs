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
//!
//! This file holds the entry point, the program (its functions, `const`s and kernel instances) and
//! the binding of a kernel's or host function's parameters. A `Frame` elaborates one function
//! (`frame.rs`): its statements (`stmt.rs`, jumps in `flow.rs` and `host_flow.rs`), expressions
//! (`expr.rs`), calls (`call.rs`), tensor coordinates and views (`view.rs`) and launches
//! (`launch.rs`); the builtins and each hardware feature have a file of their own.

mod asm;
mod asserts;
mod atomic;
mod budget;
pub(crate) mod builtins;
mod call;
mod cluster;
mod copy_if;
mod expr;
mod fast_math;
mod flow;
mod fragment_loops;
mod frame;
mod generics;
mod host_flow;
mod index_width;
mod launch;
mod launch_bounds;
mod mbarrier;
mod mma;
mod pipeline;
mod pipeline_state;
mod recast;
mod ring_checks;
mod ring_phase;
mod ring_release;
mod ring_threads;
mod ring_walk;
mod smem;
mod stmt;
mod swizzle;
mod tma;
mod tuned;
mod value;
mod view;

pub use budget::{cancelled, Budget, DEFAULT_BUDGET};
pub(crate) use expr::is_static_value;
use flow::FnCtx;
pub(crate) use frame::{Frame, Mode};
pub use value::{Origin, TensorVal, Value};

use crate::ast::*;
use crate::check::resolve_type;
use crate::diag::Diagnostic;
use crate::kir::{self, ParamKind, TensorTy, ValueId, ValueTy};
use crate::pretty::print_type;
use crate::span::Span;
use crate::types::{Extent, MemSpace, Scalar, Tuple, Ty};
use cute_layout::{Int, IntTuple, Layout};
use std::collections::HashMap;

pub type R<T> = Result<T, Diagnostic>;

pub(crate) fn layout_err(e: cute_layout::Error, span: Span) -> Diagnostic {
    Diagnostic::error(format!("layout algebra: {e}"), span, "in this operation")
}

/// What elaboration reports as it goes, besides the module it makes: the editor records each
/// binding's values per kernel instance or host function with it.
pub(crate) trait Observer {
    /// The name written at `at` (a parameter, a pattern, a loop variable, a `const`) is bound to `v`.
    fn binding(&mut self, at: Span, v: &Value);
    /// Elaboration enters the instance `symbol` of the kernel whose name is written at `kernel`.
    fn enter_instance(&mut self, kernel: Span, symbol: &str);
    /// Elaboration enters the host function (or instance of a generic one) `name`.
    fn enter_host(&mut self, name: &str);
    /// Elaboration leaves the kernel instance or host function it entered last.
    fn leave(&mut self);
}

/// The compiler's observer: it ignores everything.
struct Unobserved;

impl Observer for Unobserved {
    fn binding(&mut self, _: Span, _: &Value) {}
    fn enter_instance(&mut self, _: Span, _: &str) {}
    fn enter_host(&mut self, _: &str) {}
    fn leave(&mut self) {}
}

/// Elaborates a parsed file into KIR: every kernel instance and every host function.
pub fn elaborate(file: &File, budget: Budget) -> Result<kir::Module, Vec<Diagnostic>> {
    elaborate_observed(file, &mut Unobserved, budget)
}

/// Elaborates a file, telling `observer` the value of every binding as it is made (for the
/// editor). What was observed before an error stays observed. Once the budget runs out (or is
/// cancelled) nothing more is elaborated: its one error is the answer.
pub(crate) fn elaborate_observed(
    file: &File,
    observer: &mut dyn Observer,
    budget: Budget,
) -> Result<kir::Module, Vec<Diagnostic>> {
    elaborate_with(file, observer, budget, None)
}

/// [`elaborate`] with a tuning table (`cutec build --tuning`): each tuned host function dispatches
/// on the shape to its winners' instances (`tuned.rs`). `source` is the file's text (candidate
/// values are matched by their text).
pub fn elaborate_tuned(
    file: &File,
    source: &str,
    table: &crate::tune::Table,
    budget: Budget,
) -> Result<kir::Module, Vec<Diagnostic>> {
    elaborate_with(file, &mut Unobserved, budget, Some((source, table)))
}

fn elaborate_with(
    file: &File,
    observer: &mut dyn Observer,
    budget: Budget,
    tuning: Option<(&str, &crate::tune::Table)>,
) -> Result<kir::Module, Vec<Diagnostic>> {
    let mut prog = Program {
        functions: HashMap::new(),
        consts: HashMap::new(),
        module: kir::Module::default(),
        instances: HashMap::new(),
        symbols: HashMap::new(),
        diags: Vec::new(),
        observer,
        cluster_launches: HashMap::new(),
        work: budget::Work::new(budget),
        tuned: HashMap::new(),
        variants: Vec::new(),
        variant_keys: Vec::new(),
        variant: 0,
    };
    for item in file.all_items() {
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
                        prog.observer.binding(c.name.span, &v);
                        prog.consts.insert(c.name.name.clone(), v);
                    }
                    Err(d) => prog.diags.push(d),
                }
            }
        }
        if prog.work.stopped() {
            return Err(prog.diags);
        }
    }
    // Type parameters are checked as declared, before any instance is made.
    let all_functions = file.all_items().filter_map(|i| match i {
        Item::Function(f) => Some(f),
        Item::Const(_) => None,
    });
    for f in all_functions {
        if let Err(d) = generics::check_type_params(f)
            .and_then(|()| index_width::of(f).map(drop))
            .and_then(|()| fast_math::of(f).map(drop))
        {
            prog.diags.push(d);
        }
    }
    if !prog.diags.is_empty() {
        return Err(prog.diags);
    }
    match tuning {
        Some((source, table)) => prog.prepare_tuning(file, source, table).map_err(|d| vec![d])?,
        // Checked on every build, so a mistake shows before `cutec tune` runs.
        None => crate::tune::specs(file, "").map(drop)?,
    }
    // The entry points are the file's own: an imported kernel is compiled where a launch asks.
    for f in file.functions() {
        let r = match f.kind {
            FnKind::Host => prog.host(f),
            FnKind::Kernel if is_standalone(f) => prog.standalone_kernel(f),
            _ => Ok(()),
        };
        if let Err(d) = r {
            prog.diags.push(d);
        }
        if prog.work.stopped() {
            return Err(prog.diags);
        }
    }
    if prog.diags.is_empty() {
        prog.diags.extend(launch_bounds::apply(&mut prog.module));
    }
    if prog.diags.is_empty() {
        let (errors, warnings) = ring_checks::check(&prog.module);
        prog.diags.extend(errors);
        prog.module.warnings = warnings;
    }
    if prog.diags.is_empty() {
        prog.module.compile_steps = prog.work.used();
        Ok(prog.module)
    } else {
        // Warnings are not lost to the errors: they follow them, marked as warnings.
        let warnings = std::mem::take(&mut prog.module.warnings);
        prog.diags.extend(warnings.into_iter().map(Diagnostic::into_warning));
        Err(prog.diags)
    }
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
    /// Told of every binding as it is made (for the editor); borrowed, like the file, for `'f`.
    observer: &'f mut dyn Observer,
    /// Per kernel instance (symbol), the cluster shape of its first launch and where it was given
    /// (one shape per instance: [`cluster`]).
    cluster_launches: HashMap<String, (Option<[u32; 3]>, Span)>,
    /// The compile-time work done so far, against the file's budget.
    work: budget::Work,
    /// Tuned host functions by name (`cutec build --tuning`), the const values of each winner
    /// (variant `k` is `variants[k - 1]`, keyed by `variant_keys[k - 1]`), and the variant being
    /// elaborated (0: the file's own consts), which instance keys include.
    tuned: HashMap<String, tuned::Tuned>,
    variants: Vec<HashMap<String, Value>>,
    variant_keys: Vec<String>,
    variant: usize,
}

/// A declared tensor type's element type, memory space, alignment and layout (if written).
type DeclaredTensor = (Scalar, MemSpace, Option<u32>, Option<Layout>);

/// A tensor type as a parameter declares it, with the dynamic entries still `?`.
fn declared_tensor(ty: &TypeExpr) -> R<Option<DeclaredTensor>> {
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
                // A typed scalar parameter is read at run time whatever the launch passes: a
                // compile-time integer keys as a run-time one, so `f(x, 0)` and `f(x, n)` share
                // an instance.
                (false, Value::Int(_)) => "i32".to_string(),
                (false, v) => v.kind(),
            });
        }
        if self.variant != 0 {
            key.push_str(&format!("#tuned{}", self.variant));
        }
        if let Some(sym) = self.instances.get(&key) {
            return Ok(sym.clone());
        }
        let n = self.symbols.entry(f.name.name.clone()).or_insert(0);
        let symbol = if *n == 0 { f.name.name.clone() } else { format!("{}_{}", f.name.name, n) };
        *n += 1;
        self.instances.insert(key, symbol.clone());
        self.work.steps(budget::INSTANCE_WEIGHT, at)?;
        // A launch multiplies the kernel's work by its instances; a standalone kernel (`at` its own
        // name) is just itself.
        let launched = at != f.name.span;
        if launched {
            self.work.enter(budget::Multiplier::Instance { span: at, kernel: f.name.name.clone() });
        }
        self.observer.enter_instance(f.name.span, &symbol);
        self.work.kernel_begins();
        let kernel = Frame::new(self, Mode::Kernel).kernel(f, args, &symbol);
        self.observer.leave();
        if launched {
            self.work.leave();
        }
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
            self.observer.enter_host(&f.name.name);
            let host = Frame::new(self, Mode::Host).host(f, &Vec::new());
            self.observer.leave();
            let mut host = host?;
            host.tuned = self.tuned.get(&f.name.name).map(|t| t.lines.clone()).unwrap_or_default();
            self.module.hosts.push(host);
            return Ok(());
        }
        for b in generics::host_instances(f) {
            let name = generics::instance_name(f, &b);
            self.observer.enter_host(&name);
            let host = Frame::new(self, Mode::Host).host(f, &b);
            self.observer.leave();
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

impl Frame<'_, '_> {
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

    fn kernel(mut self, f: &Function, args: &[Value], symbol: &str) -> R<kir::Kernel> {
        if let Some(ret) = &f.ret {
            return Err(Diagnostic::error("a kernel cannot return a value", ret.span(), "return type here")
                .with_help("write results into a tensor parameter"));
        }
        let width = index_width::of(f)?;
        let math = fast_math::of(f)?;
        self.index_bits = width.bits();
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
            blocks_per_sm: 1,
            span: f.span,
            cluster: None,
            index64: width.clause,
            math,
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
        self.host_body(f)?;
        Ok(kir::Host {
            tuned: Vec::new(),
            name: f.name.name.clone(),
            instance: None,
            params,
            steps: self.steps,
            requires: self.requires,
            asserts: self.asserts,
            span: f.span,
        })
    }
}
