//! Launch plans of host functions: what a `.cute` `host` function does when it is called.
//!
//! cutec elaborates a host function into launches whose grid, block, shared memory and kernel
//! arguments are integer expressions over the call's **dynamic values** `$0, $1, ...`: walking the
//! host parameters in order, each tensor parameter contributes its `?` shape leaves then its `?`
//! stride leaves (flattened order), each scalar parameter contributes itself. The manifest writes
//! them inside the `host` block:
//!
//! ```text
//! launch elementwise_add_kernel
//! grid (mul (ceildiv $6 16) (ceildiv $7 256)) | 1 | 1
//! block 128 | 1 | 1
//! smem 0
//! arg tensor 0 | 0 | (ceildiv $0 16) | (ceildiv $1 256) | $2 | (mul 16 $2)
//! arg scalar i32 | (mul $0 $1)
//! endlaunch
//! ```
//!
//! `arg tensor P | OFFSET | D...`: the kernel's next tensor argument is a view of host parameter
//! `P` starting `OFFSET` elements after its pointer; `D...` are the values of the kernel
//! parameter's `?` entries in ABI order (shapes, then strides). `arg scalar T | E` passes `E` as a
//! `T`: an integer expression (checked to fit `T`) for integer types and `bool`; for a float type,
//! a constant (the value's IEEE bit pattern) or one `$k` of a host parameter of type `T`, passed
//! through unchanged (plans do no float arithmetic, and no expression may use a float's `$k`).
//!
//! `assert LHS OP RHS | s:MSG | s:LHS_TEXT | s:RHS_TEXT` ([`Assert`]), in the `host` block before
//! the launches: a `.cute` `assert` over run-time values. A call is refused unless `LHS OP RHS`
//! holds (`OP`: `== != < <= > >=`); the texts (hex UTF-8) are the message and the sides' source.
//!
//! A plan's steps ([`HostStep`]) are walked in order: `if COND` ... `else` ... `endif` branch at run
//! time, and `for $K | START | END | STEP` ... `endfor` loop, `$K` a slot after the call's dynamic
//! values; the trip count is fixed when a loop starts (a step that is not positive, or a call past
//! [`MAX_LOOP_TRIPS`] or [`MAX_LAUNCHES`], is refused), so an `endfor`'s jump back, the only
//! backward jump, cannot loop forever ([`HostSig::validate`] checks the nesting and every target).
//!
//! Expressions ([`Expr`]) are parsed once, when the manifest is read, and evaluated with checked
//! `i64` arithmetic ([`Expr::eval`]): overflow and division by zero are errors, never panics.
//! [`HostPlan`] binds a host function to the kernel signatures it launches and evaluates a call
//! ([`HostPlan::evaluate`]) as a pure function of the arguments: the runtime's `HostFn::call` and
//! the offline `cute-run plan` use the same code.

use std::sync::Arc;

use crate::checked::{check_tensor_ref, Arg, Callee, TensorView, ViewRef};
use crate::error::{Result, RuntimeError};
use crate::launch::{KernelArg, LaunchConfig};
use crate::manifest::{KernelSig, Manifest};
use cute_abi::manifest::TensorSig;
use cute_abi::DType;

use cute_abi::manifest::write_print;
/// The plan's types, its expressions and their evaluation: cute-abi's, under this module's names.
pub use cute_abi::manifest::{
    format_print, var_name_of, var_sources_of, Assert, CmpOp, Cond, EvalError, Expr, HostSig, HostStep, Inexact,
    LaunchPlan, ParamKind, ParamSig, PlanArg, PrintSeg, Require, TypeArgSig, VarSource,
};

/// The most loop trips one call may make, all loops together (a nested loop's trips counted on
/// every trip of the loops around it). A call that would make more is refused before anything is
/// launched: a plan is evaluated in full first, so an unbounded loop would never launch at all.
pub const MAX_LOOP_TRIPS: u64 = 1 << 20;
/// The most launches one call may make. A call that would make more is refused before anything is
/// launched (each launch's arguments are kept until the call launches).
pub const MAX_LAUNCHES: usize = 1 << 20;

/// Integer types and `bool`: what a plan computes with (a float is passed through as its bits).
fn is_integer(d: DType) -> bool {
    !d.is_float()
}

/// The range of plan values (i64) of type `d`.
fn int_range(d: DType) -> (i64, i64) {
    let (lo, hi) = d.integer_range().unwrap_or((i128::MIN, i128::MAX));
    let clamp = |v: i128| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
    (clamp(lo), clamp(hi))
}

fn int_kernel_arg(d: DType, v: i64) -> KernelArg {
    match d {
        DType::U32 => return KernelArg::U32(v as u32),
        DType::U64 => return KernelArg::U64(v as u64),
        _ => {}
    }
    match d.size_bytes() {
        8 => KernelArg::I64(v),
        4 => KernelArg::I32(v as i32),
        2 => KernelArg::F16Bits(v as u16),
        _ => KernelArg::U8(v as u8),
    }
}

/// A float scalar from its bit pattern (in the low bits).
fn float_kernel_arg(d: DType, bits: u64) -> KernelArg {
    match d.size_bytes() {
        8 => KernelArg::F64(f64::from_bits(bits)),
        4 => KernelArg::F32(f32::from_bits(bits as u32)),
        2 => KernelArg::F16Bits(bits as u16),
        _ => KernelArg::U8(bits as u8),
    }
}

/// A tensor view a launch passes, for display: (kernel parameter, host parameter, element offset,
/// shape leaves, stride leaves).
pub type ShownView = (String, String, i64, Vec<i64>, Vec<i64>);

/// One evaluated launch (what [`HostPlan::evaluate`] returns).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedLaunch {
    /// Index of the launch in the plan.
    pub index: usize,
    /// The kernel.
    pub kernel: String,
    /// Grid, block, shared memory.
    pub config: LaunchConfig,
    /// The flat kernel-ABI arguments.
    pub args: Vec<KernelArg>,
    /// The tensor views passed, for display.
    pub views: Vec<ShownView>,
    /// The host's `stream` parameter (index) the launch goes to; `None`: the call's stream.
    pub stream: Option<usize>,
}

/// Reusable buffers of [`HostPlan::evaluate_into`] (no allocation per call once warm).
#[derive(Debug, Default)]
pub struct PlanScratch {
    /// `$k` values.
    pub vars: Vec<i64>,
    /// The flat kernel arguments of all launches, back to back.
    pub flat: Vec<KernelArg>,
    /// Per launch the call makes, in order: its index in the plan's launches, its config and its
    /// range in `flat` (a plan with `if`s makes the launches of the branches taken).
    pub launches: Vec<(usize, LaunchConfig, std::ops::Range<usize>)>,
    /// Per `print` step the call makes, in order: how many of `launches` come before it, and the
    /// step's index in the plan's steps.
    pub prints: Vec<(usize, usize)>,
    /// The text of every print, back to back: print `j` is `print_text[print_spans[j]]`
    /// (formatted when its step is reached, with the loop variables of that trip).
    pub print_text: String,
    /// Per print, its range in `print_text`.
    pub print_spans: Vec<std::ops::Range<usize>>,
    /// Per launch, the values of the plan's loop variables when it was made (none for a plan
    /// without loops), back to back.
    pub(crate) launch_vars: Vec<i64>,
    /// Per pointer in `flat` that views a host tensor: (its index in `flat`, the host parameter).
    pub(crate) ptr_sources: Vec<(usize, usize)>,
    /// Per loop, its trips left and its step, while it runs.
    loop_state: Vec<LoopState>,
    /// The loop trips the call has made so far ([`MAX_LOOP_TRIPS`]).
    trips: u64,
    shape: Vec<i64>,
    stride: Vec<i64>,
    host_flat: Vec<KernelArg>,
}

impl PlanScratch {
    /// The prints of the call, in order: how many launches come before each, and its text.
    pub fn print_texts(&self) -> impl Iterator<Item = (usize, &str)> {
        self.prints
            .iter()
            .zip(&self.print_spans)
            .map(|(&(before, _), r)| (before, self.print_text.get(r.clone()).unwrap_or("")))
    }
}

/// A running loop of a call: its trips left (this one included) and its step.
#[derive(Clone, Copy, Debug, Default)]
struct LoopState {
    left: u64,
    step: i64,
}

/// A host function bound to the kernel signatures it launches: evaluates calls (pure).
#[derive(Clone, Debug)]
pub struct HostPlan {
    sig: Arc<HostSig>,
    /// Per launch, the kernel's signature.
    kernels: Vec<Arc<KernelSig>>,
    vars: Vec<VarSource>,
    /// The plan's loop variables (slots after `vars`).
    nloops: usize,
}

fn refuse(host: &str, what: String) -> RuntimeError {
    RuntimeError::ArgumentMismatch(format!("host `{host}`: {what}"))
}

impl HostPlan {
    /// The plan of host function `name` of manifest `m`; an error when there is none or its plan
    /// is unusable (the message says why).
    pub fn new(m: &Manifest, name: &str) -> Result<HostPlan> {
        let sig = m
            .host(name)
            .ok_or_else(|| RuntimeError::HostNotFound { name: name.to_string(), available: m.host_names() })?;
        HostPlan::from_sig(m, Arc::new(sig.clone()))
    }

    pub(crate) fn from_sig(m: &Manifest, sig: Arc<HostSig>) -> Result<HostPlan> {
        if let Some(e) = &sig.plan_error {
            return Err(RuntimeError::InvalidImage(format!("host function `{}`: unusable launch plan: {e}", sig.name)));
        }
        if sig.launches.is_empty() && !sig.launches_kernels.is_empty() {
            return Err(RuntimeError::InvalidImage(format!(
                "host function `{}` launches {} but its manifest has no launch plan (built by an older cutec?)",
                sig.name,
                sig.launches_kernels.join(", ")
            )));
        }
        sig.validate(|k| m.kernel(k).map(|k| &**k))
            .map_err(|e| RuntimeError::InvalidImage(format!("host function `{}`: {e}", sig.name)))?;
        let mut kernels: Vec<Arc<KernelSig>> = Vec::with_capacity(sig.launches.len());
        for l in &sig.launches {
            match kernels.iter().find(|k| k.name == l.kernel) {
                Some(k) => kernels.push(k.clone()),
                None => kernels.push(Arc::new(
                    m.kernel(&l.kernel)
                        .cloned()
                        .ok_or_else(|| RuntimeError::InvalidImage(format!("no kernel `{}`", l.kernel)))?,
                )),
            }
        }
        let vars = sig.var_sources();
        let nloops = sig.loop_count();
        Ok(HostPlan { sig, kernels, vars, nloops })
    }

    /// The host function's signature and plan.
    pub fn sig(&self) -> &HostSig {
        &self.sig
    }

    /// The signature of the kernel of launch `i`.
    pub fn kernel_sig(&self, i: usize) -> Option<&KernelSig> {
        self.kernels.get(i).map(|k| &**k)
    }

    /// Where each `$k` comes from.
    pub fn var_sources(&self) -> &[VarSource] {
        &self.vars
    }

    /// Evaluates a call: checks `args` against the host's parameters (as checked kernel launches
    /// do), collects the dynamic values, then evaluates each launch and checks each view it passes.
    /// Nothing is launched: see `HostFn::call`.
    pub fn evaluate(&self, args: &[Arg]) -> Result<Vec<PlannedLaunch>> {
        let mut s = PlanScratch::default();
        self.evaluate_into(args, &mut s)?;
        let mut out = Vec::with_capacity(s.launches.len());
        let nvars = self.vars.len();
        let mut vars = s.vars.clone();
        for (n, &(i, ref cfg, ref range)) in s.launches.iter().enumerate() {
            let kernel = &self.kernels[i];
            // The loop variables as they were when this launch was made.
            if let (Some(dst), Some(src)) =
                (vars.get_mut(nvars..), s.launch_vars.get(n * self.nloops..(n + 1) * self.nloops))
            {
                dst.copy_from_slice(src);
            }
            let mut views = Vec::new();
            for (kp, a) in kernel.params.iter().zip(&self.sig.launches[i].args) {
                if let (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) = (&kp.kind, a) {
                    let off = offset.eval(&vars).unwrap_or(0);
                    let (sh, st) = fill_leaves(t, dyn_leaves, &vars).unwrap_or_default();
                    views.push((kp.name.clone(), self.sig.params[*host_param].name.clone(), off, sh, st));
                }
            }
            out.push(PlannedLaunch {
                index: i,
                kernel: kernel.name.clone(),
                config: *cfg,
                args: s.flat[range.clone()].to_vec(),
                views,
                stream: self.sig.launches[i].stream,
            });
        }
        Ok(out)
    }

    /// [`HostPlan::evaluate`] into reusable buffers (`scratch.launches[i]` = (config, range of
    /// `scratch.flat`)). On `Err` nothing must be launched.
    pub fn evaluate_into(&self, args: &[Arg], s: &mut PlanScratch) -> Result<()> {
        let host = self.sig.name.as_str();
        s.vars.clear();
        s.flat.clear();
        s.launches.clear();
        s.prints.clear();
        s.print_text.clear();
        s.print_spans.clear();
        s.launch_vars.clear();
        s.ptr_sources.clear();
        // 1. The arguments against the host's parameters: the checked-launch rules.
        // Its tensors may reach as far as the widest kernel it launches indexes; each launch
        // checks its own arguments against its kernel's width.
        let index_bits = self.kernels.iter().map(|k| k.index_bits).max().unwrap_or(32);
        crate::checked::check_args_named(host, "host", &self.sig.params, args, index_bits, &mut s.host_flat)?;
        // 2. The dynamic values, in $k order.
        for src in &self.vars {
            let v = match (*src, &args) {
                (VarSource::Shape { param, leaf }, _) => match args.get(param) {
                    Some(Arg::Tensor(v)) => v.shape.get(leaf).copied(),
                    _ => None,
                },
                (VarSource::Stride { param, leaf }, _) => match args.get(param) {
                    Some(Arg::Tensor(v)) => v.stride.get(leaf).copied(),
                    _ => None,
                },
                (VarSource::Scalar { param }, _) => match args.get(param) {
                    Some(Arg::Scalar(d, bits)) => Some(scalar_value(*d, *bits)),
                    _ => None,
                },
            };
            s.vars.push(v.ok_or_else(|| {
                RuntimeError::InvalidArgument(format!("host `{host}`: dynamic value source {src:?} missing"))
            })?);
        }
        // 3. The host's `assert`s, then the launch conditions the compiler wrote (`require`):
        // partial tiles and the like.
        for a in &self.sig.asserts {
            a.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
        }
        for r in &self.sig.requires {
            r.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
        }
        // 4. The steps: each launch of the branches taken and of every loop trip, with the checks
        // of those branches and trips.
        let steps = &self.sig.steps;
        let nvars = self.vars.len();
        s.vars.resize(nvars + self.nloops, 0);
        s.loop_state.clear();
        s.loop_state.resize(self.nloops, LoopState::default());
        s.trips = 0;
        let mut i = 0;
        while let Some(st) = steps.get(i) {
            let next = match st {
                HostStep::Launch(li) => {
                    self.evaluate_launch(*li, args, s)?;
                    i + 1
                }
                HostStep::Print(segs) => {
                    // Formatted now: a loop variable has this trip's value only now.
                    let start = s.print_text.len();
                    write_print(segs, &s.vars, &mut s.print_text).map_err(|e| refuse(host, format!("print: {e}")))?;
                    s.prints.push((s.launches.len(), i));
                    s.print_spans.push(start..s.print_text.len());
                    i + 1
                }
                HostStep::For { var, start, end, step, end_at } => {
                    let ev = |e: &Expr| {
                        e.eval(&s.vars)
                            .map_err(|err| refuse(host, format!("for ${var} | {start} | {end} | {step}: {err}")))
                    };
                    let (a, b, st) = (ev(start)?, ev(end)?, ev(step)?);
                    if st <= 0 {
                        let what = match step {
                            Expr::Var(k) if *k < nvars => self.sig.var_name(self.vars[*k]),
                            other => other.to_string(),
                        };
                        return Err(refuse(host, format!("the step of a loop must be positive, but {what} = {st} (loop ${var} from {a} to {b}: it would never end)")));
                    }
                    // i128: b - a + st - 1 cannot overflow it.
                    let trips = if b > a {
                        ((i128::from(b) - i128::from(a) + i128::from(st) - 1) / i128::from(st)) as u64
                    } else {
                        0
                    };
                    s.trips = s.trips.saturating_add(trips);
                    if s.trips > MAX_LOOP_TRIPS {
                        return Err(refuse(
                            host,
                            format!("the call would make more than {MAX_LOOP_TRIPS} loop trips (for ${var} from {a} to {b} step {st} makes {trips}); a call is limited to {MAX_LOOP_TRIPS}: use a larger step, or loop inside a kernel"),
                        ));
                    }
                    let (Some(slot), Some(state)) =
                        (s.vars.get_mut(*var), var.checked_sub(nvars).and_then(|l| s.loop_state.get_mut(l)))
                    else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: loop variable ${var} has no slot (validated plan; please report)"
                        )));
                    };
                    if trips == 0 {
                        *end_at
                    } else {
                        *slot = a;
                        *state = LoopState { left: trips, step: st };
                        i + 1
                    }
                }
                HostStep::EndFor { for_at } => {
                    let Some(HostStep::For { var, .. }) = steps.get(*for_at) else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: `endfor` without its `for` (validated plan; please report)"
                        )));
                    };
                    let (Some(slot), Some(state)) =
                        (s.vars.get_mut(*var), var.checked_sub(nvars).and_then(|l| s.loop_state.get_mut(l)))
                    else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: loop variable ${var} has no slot (validated plan; please report)"
                        )));
                    };
                    state.left = state.left.saturating_sub(1);
                    match slot.checked_add(state.step) {
                        // Below `end` by construction of the trip count: no overflow on a trip left.
                        Some(v) if state.left > 0 => {
                            *slot = v;
                            *for_at + 1
                        }
                        _ => i + 1,
                    }
                }
                HostStep::Break { end_at } => *end_at,
                HostStep::Continue { endfor_at } => *endfor_at,
                HostStep::If { cond, else_at } => match cond.eval(&s.vars) {
                    Ok(true) => i + 1,
                    Ok(false) => *else_at,
                    Err(e) => return Err(refuse(host, format!("if {cond}: {e}"))),
                },
                HostStep::Else { end_at } => *end_at,
                HostStep::EndIf => i + 1,
                HostStep::Assert(a) => {
                    a.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
                    i + 1
                }
                HostStep::Require(r) => {
                    r.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
                    i + 1
                }
            };
            // Jumps go forward (validated when the plan is made), but for an `endfor`'s jump back
            // into its own loop, which ends when the loop's trips run out: no plan loops forever.
            if next <= i && !matches!(st, HostStep::EndFor { for_at } if next == for_at + 1) {
                return Err(RuntimeError::InvalidImage(format!("host `{host}`: step {i} jumps back to step {next}")));
            }
            i = next;
        }
        Ok(())
    }

    /// Evaluates launch `li` of the plan into `s` (appending to `s.flat` and `s.launches`), with
    /// every check of its configuration and arguments.
    fn evaluate_launch(&self, li: usize, args: &[Arg], s: &mut PlanScratch) -> Result<()> {
        let host = self.sig.name.as_str();
        if s.launches.len() >= MAX_LAUNCHES {
            return Err(refuse(host, format!("the call would make more than {MAX_LAUNCHES} launches (launch {li} of a loop); a call is limited to {MAX_LAUNCHES}: use a larger step, or loop inside a kernel")));
        }
        {
            let (Some(l), Some(kernel)) = (self.sig.launches.get(li), self.kernels.get(li)) else {
                return Err(RuntimeError::InvalidImage(format!("host `{host}`: launch {li} does not exist")));
            };
            let ev = |e: &Expr, what: &dyn Fn() -> String| -> Result<i64> {
                e.eval(&s.vars).map_err(|err| refuse(host, format!("launch {li} ({}): {}: {err}", l.kernel, what())))
            };
            let dim = |e: &Expr, what: &str, i: usize| -> Result<u32> {
                let v = ev(e, &|| format!("{what}[{i}] = {e}"))?;
                u32::try_from(v).map_err(|_| {
                    RuntimeError::InvalidLaunch(format!(
                        "host `{host}` launch {li} ({}): {what} dimension {i} = {e} = {v} is out of range",
                        l.kernel
                    ))
                })
            };
            let cfg = LaunchConfig {
                grid: (dim(&l.grid[0], "grid", 0)?, dim(&l.grid[1], "grid", 1)?, dim(&l.grid[2], "grid", 2)?),
                block: (dim(&l.block[0], "block", 0)?, dim(&l.block[1], "block", 1)?, dim(&l.block[2], "block", 2)?),
                shared_mem_bytes: dim(&l.smem, "smem", 0)?,
            };
            // The launch config, and the dynamic shared memory the kernel needs (its `smem` line:
            // cutec adds it to the plan's `smem`, checked again here).
            cfg.validate()
                .and_then(|()| kernel.check_dynamic_smem(cfg.shared_mem_bytes))
                .and_then(|()| kernel.check_cluster(cfg.grid))
                .map_err(|e| match e {
                    RuntimeError::InvalidLaunch(m) => {
                        RuntimeError::InvalidLaunch(format!("host `{host}` launch {li} ({}): {m}", l.kernel))
                    }
                    other => other,
                })?;
            let start = s.flat.len();
            for (ai, (kp, a)) in kernel.params.iter().zip(&l.args).enumerate() {
                match (&kp.kind, a) {
                    (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) => {
                        let hp = &self.sig.params[*host_param];
                        let Some(Arg::Tensor(hv)) = args.get(*host_param) else {
                            return Err(refuse(host, format!("parameter `{}` is not a tensor", hp.name)));
                        };
                        let ndyn_shape = t.shape_leaves.iter().filter(|e| e.is_none()).count();
                        // The partial-tile check: a tile count must be an exact division.
                        for e in &dyn_leaves[..ndyn_shape.min(dyn_leaves.len())] {
                            let hit = e
                                .inexact_division(&s.vars)
                                .map_err(|err| refuse(host, format!("launch {li} ({}): {err}", l.kernel)))?;
                            if let Some(hit) = hit {
                                return Err(refuse(
                                    host,
                                    format!(
                                        "{} (launch {li}: {}, argument `{}`)",
                                        self.partial_tile(&hp.name, &hit),
                                        l.kernel,
                                        kp.name
                                    ),
                                ));
                            }
                        }
                        let off = ev(offset, &|| format!("argument `{}` offset", kp.name))?;
                        // The view's leaves: static from the kernel, dynamic from the plan.
                        s.shape.clear();
                        s.stride.clear();
                        let mut it = dyn_leaves.iter();
                        for leaf in &t.shape_leaves {
                            s.shape.push(match leaf {
                                Some(v) => *v,
                                None => ev(it.next().unwrap_or(&Expr::Const(0)), &|| {
                                    format!("argument `{}` shape", kp.name)
                                })?,
                            });
                        }
                        for leaf in &t.stride_leaves {
                            s.stride.push(match leaf {
                                Some(v) => *v,
                                None => ev(it.next().unwrap_or(&Expr::Const(0)), &|| {
                                    format!("argument `{}` stride", kp.name)
                                })?,
                            });
                        }
                        let ctx = || {
                            format!(
                                "launch {li} ({}) argument `{}` = view of `{}` at offset {off}",
                                l.kernel, kp.name, hp.name
                            )
                        };
                        // Inside the host tensor: offset >= 0 and offset + the view's largest
                        // element offset <= the host tensor's largest element offset.
                        let elem = i128::from(t.elem.size_bytes());
                        if off < 0 {
                            return Err(refuse(host, format!("{}: negative offset", ctx())));
                        }
                        if s.shape.iter().all(|&x| x > 0) && hv.shape.iter().all(|&x| x > 0) {
                            let reach = |sh: &[i64], st: &[i64]| {
                                sh.iter().zip(st).map(|(&a, &b)| i128::from(a - 1) * i128::from(b)).sum::<i128>()
                            };
                            let view_max = i128::from(off) + reach(&s.shape, &s.stride);
                            let host_max = reach(&hv.shape, &hv.stride);
                            if view_max > host_max {
                                return Err(refuse(
                                    host,
                                    format!(
                                        "{}: the view reaches element {view_max} but `{}` (shape {:?}, stride {:?}) ends at element {host_max}",
                                        ctx(),
                                        hp.name,
                                        hv.shape,
                                        hv.stride
                                    ),
                                ));
                            }
                        }
                        let byte_off = i128::from(off) * elem;
                        let ptr = u64::try_from(i128::from(hv.ptr) + byte_off)
                            .map_err(|_| refuse(host, format!("{}: pointer overflow", ctx())))?;
                        let bytes = hv.bytes.map(|b| u64::try_from((i128::from(b) - byte_off).max(0)).unwrap_or(0));
                        let view = ViewRef { ptr, dtype: hv.dtype, shape: &s.shape, stride: &s.stride, bytes };
                        s.ptr_sources.push((s.flat.len(), *host_param));
                        check_tensor_ref(&Callee::kernel(kernel), ai, &kp.name, t, &view, &mut s.flat).map_err(
                            |e| match e {
                                RuntimeError::ArgumentMismatch(m) => refuse(host, format!("{}: {m}", ctx())),
                                other => other,
                            },
                        )?;
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { value, .. }) if !is_integer(*d) => {
                        // Passed through: the bits of a float host parameter or constant.
                        let bits = ev(value, &|| format!("argument `{}`", kp.name))?;
                        s.flat.push(float_kernel_arg(*d, bits as u64));
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { value, .. }) => {
                        let v = ev(value, &|| format!("argument `{}`", kp.name))?;
                        let (lo, hi) = int_range(*d);
                        if v < lo || v > hi {
                            return Err(refuse(
                                host,
                                format!(
                                    "launch {li} ({}) argument `{}` = {value} = {v} does not fit {d}",
                                    l.kernel, kp.name
                                ),
                            ));
                        }
                        s.flat.push(int_kernel_arg(*d, v));
                    }
                    _ => {
                        return Err(refuse(
                            host,
                            format!("launch {li}: argument {ai} kind mismatch (validated plan; please report)"),
                        ))
                    }
                }
            }
            // A grid computed with a floor division that is not exact would leave the remainder
            // uncomputed (the kernels have no tail handling): the divisions the grid's count is
            // made of, not those under a `min` or `max` (a cap, a host `where`'s condition).
            for (i, e) in l.grid.iter().enumerate() {
                let hit = e
                    .inexact_count(&s.vars)
                    .map_err(|err| refuse(host, format!("launch {li} ({}): {err}", l.kernel)))?;
                if let Some(hit) = hit.filter(|h| !h.ceil) {
                    return Err(refuse(
                        host,
                        format!(
                            "grid dimension {i} of launch {li} ({}): {}",
                            l.kernel,
                            self.partial_tile("the grid", &hit)
                        ),
                    ));
                }
            }
            // The launched kernel's own launch conditions (e.g. a `local_tile` inside the kernel
            // needs whole tiles), over its dynamic ABI values: every argument but the pointers.
            if !kernel.requires.is_empty() {
                let vars: Vec<i64> = s.flat[start..].iter().filter_map(KernelArg::dynamic_value).collect();
                let sources = var_sources_of(&kernel.params);
                for r in &kernel.requires {
                    r.check(&vars, &kernel.params, &sources)
                        .map_err(|m| refuse(host, format!("launch {li} ({}): {m}", l.kernel)))?;
                }
            }
            // The multiplier and shift of each run-time divisor of the kernel's index math.
            if !kernel.fast_divisors.is_empty() {
                let vars = crate::fastdiv::vars_of(&s.flat[start..]);
                crate::fastdiv::push_fast_divisors(kernel, &vars, &mut s.flat)
                    .map_err(|m| refuse(host, format!("launch {li} ({}): {m}", l.kernel)))?;
            }
            s.launches.push((li, cfg, start..s.flat.len()));
            // This trip's loop variables, for the views `evaluate` reports.
            if let Some(loop_vars) = s.vars.get(self.vars.len()..) {
                s.launch_vars.extend_from_slice(loop_vars);
            }
        }
        Ok(())
    }
}

impl HostPlan {
    /// "mA extent 1000 (mode 0) is not a multiple of the tile 16; this kernel has no tail handling"
    fn partial_tile(&self, viewed: &str, hit: &Inexact<'_>) -> String {
        let what = match hit.numerator {
            Expr::Var(k) => match self.vars.get(*k) {
                Some(VarSource::Shape { param, leaf }) => {
                    let pn = &self.sig.params[*param].name;
                    format!("{pn} extent {} ({})", hit.value, self.sig.params[*param].mode_of_leaf(*leaf))
                }
                Some(src) => format!("{} = {}", self.sig.var_name(*src), hit.value),
                None => format!("{} = {}", hit.numerator, hit.value),
            },
            other => format!("{other} = {} (for {viewed})", hit.value),
        };
        let consequence = if hit.ceil {
            "this kernel has no tail handling"
        } else {
            "this kernel has no tail handling (the remainder would not be computed)"
        };
        format!("{what} is not a multiple of the tile {}; {consequence}", hit.divisor)
    }
}

fn fill_leaves(t: &TensorSig, dyn_leaves: &[Expr], vars: &[i64]) -> Option<(Vec<i64>, Vec<i64>)> {
    let mut it = dyn_leaves.iter();
    let mut next = |leaf: &Option<i64>| -> Option<i64> {
        match leaf {
            Some(v) => Some(*v),
            None => it.next()?.eval(vars).ok(),
        }
    };
    let sh = t.shape_leaves.iter().map(&mut next).collect::<Option<Vec<_>>>()?;
    let st = t.stride_leaves.iter().map(&mut next).collect::<Option<Vec<_>>>()?;
    Some((sh, st))
}

fn scalar_value(d: DType, bits: u64) -> i64 {
    match d {
        DType::I8 => i64::from(bits as u8 as i8),
        DType::I16 => i64::from(bits as u16 as i16),
        DType::I32 => i64::from(bits as u32 as i32),
        DType::I64 | DType::U64 => bits as i64,
        DType::U8 | DType::Bool => i64::from(bits as u8),
        DType::U16 => i64::from(bits as u16),
        DType::U32 => i64::from(bits as u32),
        // Floating scalars keep their slot in the numbering; plans never compute with them.
        _ => bits as i64,
    }
}

/// A view of a host tensor parameter for offline evaluation (`cute-run plan --shape`): a fake,
/// aligned pointer, the given shape, compact strides matching the parameter's static strides
/// (row-major first, else column-major), and its size in bytes.
pub fn synthetic_view(p: &ParamSig, index: usize, shape: &[i64]) -> std::result::Result<TensorView, String> {
    let ParamKind::Tensor(t) = &p.kind else { return Err(format!("`{}` is not a tensor", p.name)) };
    if shape.len() != t.shape_leaves.len() {
        return Err(format!(
            "`{}` has {} shape leaves ({}) but {} extents were given",
            p.name,
            t.shape_leaves.len(),
            t.shape,
            shape.len()
        ));
    }
    let compact = |order: &mut dyn Iterator<Item = usize>| {
        let mut st = vec![0i64; shape.len()];
        let mut acc = 1i64;
        for i in order {
            st[i] = acc;
            acc = acc.saturating_mul(shape[i].max(1));
        }
        st
    };
    let n = shape.len();
    let right = compact(&mut (0..n).rev());
    let left = compact(&mut (0..n));
    let fits = |st: &[i64]| t.stride_leaves.iter().zip(st).all(|(w, g)| w.is_none_or(|w| w == *g));
    let stride = if fits(&right) {
        right
    } else if fits(&left) {
        left
    } else {
        return Err(format!("no compact layout of `{}` matches its strides {}", p.name, t.stride));
    };
    let cos: i64 = shape.iter().zip(&stride).map(|(s, d)| (s - 1).max(0) * d).sum::<i64>() + 1;
    let ptr = 0x7f00_0000_0000u64 + (index as u64) * 0x10_0000_0000;
    Ok(TensorView::new(ptr, t.elem, shape, &stride).with_bytes((cos as u64) * u64::from(t.elem.size_bytes())))
}
