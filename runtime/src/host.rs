//! Calling a `.cute` host function: [`Module::host`] → [`HostFn`], [`HostFn::call`].
//!
//! A call checks the arguments against the host's parameters (the checked-launch rules),
//! evaluates the launch plan the manifest carries ([`crate::plan::HostPlan`]), checks every view
//! it would pass (partial tiles, bounds, alignment, i32 ranges), and only then launches the
//! kernels, in order, on the given stream. A refusal launches nothing. A call whose arguments have
//! the signature of an earlier accepted call reuses that call's evaluation
//! ([`crate::call_cache`]): same checks, same outcome, less work.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::call_cache::CallCache;
use crate::checked::Arg;
use crate::device::Stream;
use crate::error::{Result, RuntimeError};
use crate::generic::HostGroup;
use crate::kernel::Kernel;
use crate::manifest::Manifest;
use crate::module::Module;
use crate::plan::{HostPlan, HostSig, PlanScratch, PlannedLaunch};

/// A host function of a loaded module, ready to call. Cheap to clone (shares its kernels and
/// buffers); keeps the module loaded.
#[derive(Clone)]
pub struct HostFn {
    inner: Arc<HostGroupInner>,
}

/// A host function, or every instance of a generic one (`host add<T: f16 | f32>`): a call
/// selects the instance by its arguments' dtypes ([`crate::generic`]).
struct HostGroupInner {
    group: HostGroup,
    instances: Vec<HostInner>,
}

struct HostInner {
    plan: HostPlan,
    /// The kernel of each launch (looked up once).
    kernels: Vec<Kernel>,
    /// Reused between calls: a warm call allocates nothing, and a call with the signature of an
    /// earlier accepted one reuses its evaluation ([`CallCache`]).
    state: Mutex<CallState>,
}

struct CallState {
    scratch: PlanScratch,
    cache: CallCache,
}

impl Module {
    /// The host function `name` of this module's manifest. Errors: no manifest, no such host
    /// function (the message lists those there are), or a plan that does not match the module's
    /// kernels. Each launched kernel is looked up once here. A generic host function's name gives
    /// all its instances, selected per call by the arguments' dtypes; `add<f16>` gives one instance.
    pub fn host(&self, name: &str) -> Result<HostFn> {
        let m = self.manifest().ok_or_else(|| {
            RuntimeError::NoManifest(format!("{} has no cutec manifest, so it has no host functions", self.label()))
        })?;
        let group = HostGroup::new(m, name)?;
        let instances = group.plans().iter().map(|p| self.host_instance(p.clone())).collect::<Result<Vec<_>>>()?;
        Ok(HostFn { inner: Arc::new(HostGroupInner { group, instances }) })
    }

    fn host_instance(&self, plan: HostPlan) -> Result<HostInner> {
        let mut kernels: Vec<Kernel> = Vec::with_capacity(plan.sig().launches.len());
        for l in &plan.sig().launches {
            let k = match kernels.iter().find(|k| k.name() == l.kernel) {
                Some(k) => k.clone(),
                None => self.kernel(&l.kernel)?,
            };
            kernels.push(k);
        }
        let state = Mutex::new(CallState { scratch: PlanScratch::default(), cache: CallCache::new(&plan) });
        Ok(HostInner { plan, kernels, state })
    }

    /// Names of the host functions in the manifest, a generic one once (empty without one).
    pub fn host_names(&self) -> Vec<String> {
        self.manifest().map(Manifest::host_names).unwrap_or_default()
    }
}

impl HostFn {
    /// The host function's signature and launch plan (a generic one's first instance: see
    /// [`HostFn::instances`]).
    pub fn signature(&self) -> &HostSig {
        self.inner.instances[0].plan.sig()
    }

    /// The pure plan (no driver); a generic host function's first instance.
    pub fn plan(&self) -> &HostPlan {
        &self.inner.instances[0].plan
    }

    /// The name it was looked up by (`add` for every instance of a generic `add`).
    pub fn name(&self) -> &str {
        self.inner.group.name()
    }

    /// Whether this is a generic host function whose instance each call selects.
    pub fn is_generic(&self) -> bool {
        self.inner.group.is_generic()
    }

    /// The signature of every instance (one for an ordinary host function).
    pub fn instances(&self) -> impl Iterator<Item = &HostSig> {
        self.inner.instances.iter().map(|i| i.plan.sig())
    }

    /// The index (in [`HostFn::instances`]) of the instance a call with `args` uses; refused when
    /// their dtypes select none (pure).
    pub fn select(&self, args: &[Arg]) -> Result<usize> {
        self.inner.group.select(args)
    }

    /// Checks `args` and evaluates the plan without launching: what [`HostFn::call`] would launch.
    pub fn check(&self, args: &[Arg]) -> Result<Vec<PlannedLaunch>> {
        let i = self.inner.group.select(args)?;
        self.inner.instances[i].plan.evaluate(args)
    }

    /// Calls the host function on `stream` (asynchronously): checks every argument against the
    /// host's parameters, evaluates the launch plan, checks every view it passes (a tile count
    /// computed with `ceildiv` must be exact — the kernels have no tail handling —, each view must
    /// stay inside its host tensor, dynamic values must fit the kernels' i32), then launches each
    /// kernel. Any refusal is an `Err` before the first launch.
    pub fn call(&self, stream: &Stream, args: &[Arg]) -> Result<()> {
        let inner = match self.inner.instances.as_slice() {
            [one] if !self.inner.group.is_generic() => one,
            all => &all[self.inner.group.select(args)?],
        };
        // Contended (another thread is calling): evaluate in a fresh buffer rather than wait.
        let mut local;
        let mut guard = inner.state.try_lock().ok();
        let s: &mut PlanScratch = match guard.as_deref_mut() {
            Some(CallState { scratch, cache }) => {
                cache.evaluate(&inner.plan, args, scratch)?;
                scratch
            }
            None => {
                local = PlanScratch::default();
                inner.plan.evaluate_into(args, &mut local)?;
                &mut local
            }
        };
        let named = named_streams(inner, stream, args, s)?;
        let stream_of = |li: usize| -> &Stream {
            match inner.plan.sig().launches.get(li).and_then(|l| l.stream) {
                Some(p) => named.iter().find(|(q, _)| *q == p).map_or(stream, |(_, st)| st),
                None => stream,
            }
        };
        if s.prints.is_empty() {
            for (li, cfg, range) in &s.launches {
                launch_one(inner, *li, stream_of(*li), *cfg, &s.flat[range.clone()])?;
            }
            return Ok(());
        }
        // Host prints run at call time, in source order with the launches (of the branches taken
        // and loop trips made), with the text the evaluation formatted.
        let mut prints = s.print_texts().peekable();
        for n in 0..=s.launches.len() {
            while let Some((_, text)) = prints.next_if(|(before, _)| *before == n) {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            if let Some((li, cfg, range)) = s.launches.get(n) {
                launch_one(inner, *li, stream_of(*li), *cfg, &s.flat[range.clone()])?;
            }
        }
        Ok(())
    }
}

/// The streams named by the `stream(s)` clauses of the launches this call makes, other than the
/// call's own: (host parameter, stream), each parameter once. Before anything is launched, under
/// CUDA graph capture: every stream the call launches on must be capturing into the same graph as
/// the call's stream (or none may be capturing). A launch on a stream outside the capture would
/// run at once instead of being recorded (and one on the legacy default stream would invalidate
/// the capture), so such a call is refused.
fn named_streams(inner: &HostInner, stream: &Stream, args: &[Arg], s: &PlanScratch) -> Result<Vec<(usize, Stream)>> {
    let sig = inner.plan.sig();
    let mut named: Vec<(usize, Stream)> = Vec::new();
    for (li, _, _) in &s.launches {
        let Some(p) = sig.launches.get(*li).and_then(|l| l.stream) else { continue };
        if named.iter().any(|(q, _)| *q == p) {
            continue;
        }
        let Some(Arg::Stream(h)) = args.get(p) else {
            return Err(RuntimeError::ArgumentMismatch(format!("host `{}`: argument {p} is not a stream", sig.name)));
        };
        let st = if *h == stream.handle() {
            stream.clone()
        } else {
            // SAFETY: the contract of `Arg::Stream`: a live stream of the module's context.
            unsafe { stream.device().borrow_stream(*h) }
        };
        named.push((p, st));
    }
    if named.iter().all(|(_, st)| st.handle() == stream.handle()) {
        return Ok(named);
    }
    // The legacy default stream never captures (and asking the driver about it while another
    // stream captures is itself an error): it is "not capturing".
    let state_of = |st: &Stream| if st.handle() == 0 { Ok(None) } else { st.capture_state() };
    let call = state_of(stream)?;
    for (p, st) in &named {
        let state = state_of(st)?;
        if state != call {
            let what = |c: Option<u64>| if c.is_some() { "is capturing a CUDA graph" } else { "is not capturing" };
            let pname = sig.params.get(*p).map_or("?", |p| p.name.as_str());
            return Err(RuntimeError::InvalidArgument(format!(
                "host `{}`: stream parameter `{pname}` ({:#x}) {} but the call's stream ({:#x}) {}{}; under graph capture every stream a \
                 call launches on must be part of the same capture (fork it from the capturing stream with an event, as \
                 torch.cuda.graph does for side streams); nothing was launched",
                sig.name,
                st.handle(),
                what(state),
                stream.handle(),
                what(call),
                if state.is_some() && call.is_some() { " (another capture)" } else { "" },
            )));
        }
    }
    Ok(named)
}

/// Launches the kernel of launch `li` of the plan.
fn launch_one(
    inner: &HostInner,
    li: usize,
    stream: &Stream,
    cfg: crate::launch::LaunchConfig,
    args: &[crate::launch::KernelArg],
) -> Result<()> {
    let k = inner.kernels.get(li).ok_or_else(|| {
        RuntimeError::InvalidImage(format!("host `{}`: launch {li} does not exist", inner.plan.sig().name))
    })?;
    k.launch(stream, cfg, args)
}

impl fmt::Debug for HostFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostFn").field("name", &self.name()).field("instances", &self.inner.instances.len()).finish()
    }
}
