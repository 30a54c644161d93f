//! Repeated host calls: the evaluation of an accepted call, reused by later calls whose arguments
//! have the same signature.
//!
//! What a host call checks and computes ([`HostPlan::evaluate_into`]: the argument checks, the
//! `assert` and `require` lines, each launch's configuration, views and flat arguments) depends on
//! the arguments only through their **signature**: each tensor's dtype, shape and stride leaves
//! and byte size, its pointer's residue modulo the largest alignment any parameter of the host or
//! of its kernels asks for, and each scalar's type and bits. (Alignments are powers of two and a
//! view adds whole elements to its host tensor's pointer, so the residue decides every alignment
//! check; null pointers and pointers near the top of the address space are never looked up.) Two
//! calls with one signature therefore get the same verdict and the same launches, and their flat
//! arguments differ only in the pointers, each its host tensor's pointer plus the same offset.
//!
//! So a [`CallCache`] keeps the evaluation of up to [`CAPACITY`] accepted signatures per host
//! function, and a later call with a kept signature copies that evaluation and moves its pointers
//! to the new tensors instead of evaluating the plan again (the per-call cost of a host call from
//! Python: `docs/python.md`). Refused calls are never kept: they are evaluated in full, every time,
//! and get the full message.

use crate::checked::Arg;
use crate::error::Result;
use crate::launch::KernelArg;
use crate::manifest::{DType, ParamKind};
use crate::plan::{HostPlan, PlanScratch};

/// Signatures kept per host function (replaced round-robin).
pub const CAPACITY: usize = 8;

/// Pointers at or above this are not looked up: the plan's pointer arithmetic could overflow there.
const HIGHEST_CACHED_PTR: u64 = 1 << 62;

/// One argument's part of a signature.
#[derive(Clone, Debug, PartialEq)]
enum ArgKey {
    Tensor {
        dtype: DType,
        shape: Vec<i64>,
        stride: Vec<i64>,
        bytes: Option<u64>,
        residue: u64,
    },
    Scalar(DType, u64),
    /// A stream: the evaluation does not depend on which (the call launches on the one given).
    Stream,
}

impl ArgKey {
    fn of(a: &Arg, modulus: u64) -> ArgKey {
        match a {
            Arg::Tensor(v) => ArgKey::Tensor {
                dtype: v.dtype,
                shape: v.shape.clone(),
                stride: v.stride.clone(),
                bytes: v.bytes,
                residue: v.ptr % modulus,
            },
            Arg::Scalar(d, bits) => ArgKey::Scalar(*d, *bits),
            Arg::Stream(_) => ArgKey::Stream,
        }
    }

    fn matches(&self, a: &Arg, modulus: u64) -> bool {
        match (self, a) {
            (ArgKey::Tensor { dtype, shape, stride, bytes, residue }, Arg::Tensor(v)) => {
                *dtype == v.dtype
                    && *bytes == v.bytes
                    && *residue == v.ptr % modulus
                    && *shape == v.shape
                    && *stride == v.stride
            }
            (ArgKey::Scalar(d, bits), Arg::Scalar(e, b)) => d == e && bits == b,
            (ArgKey::Stream, Arg::Stream(_)) => true,
            _ => false,
        }
    }
}

/// An accepted call's evaluation.
#[derive(Debug)]
struct Entry {
    key: Vec<ArgKey>,
    /// The pointer of each argument (0 for scalars) when it was evaluated.
    bases: Vec<u64>,
    vars: Vec<i64>,
    flat: Vec<KernelArg>,
    launches: Vec<(usize, crate::launch::LaunchConfig, std::ops::Range<usize>)>,
    prints: Vec<(usize, usize)>,
    print_text: String,
    print_spans: Vec<std::ops::Range<usize>>,
    launch_vars: Vec<i64>,
    ptr_sources: Vec<(usize, usize)>,
}

/// The kept evaluations of one host function's accepted calls.
#[derive(Debug)]
pub struct CallCache {
    /// The largest alignment of any tensor parameter of the host or its kernels; `None` disables
    /// the cache.
    modulus: Option<u64>,
    entries: Vec<Entry>,
    next: usize,
}

fn pointers(args: &[Arg]) -> impl Iterator<Item = u64> + '_ {
    args.iter().map(|a| match a {
        Arg::Tensor(v) => v.ptr,
        Arg::Scalar(..) | Arg::Stream(_) => 0,
    })
}

impl CallCache {
    /// An empty cache for calls of `plan`.
    pub fn new(plan: &HostPlan) -> CallCache {
        let sig = plan.sig();
        let kernel_params = (0..sig.launches.len()).filter_map(|i| plan.kernel_sig(i)).flat_map(|k| k.params.iter());
        let mut aligns = sig.params.iter().chain(kernel_params).filter_map(|p| match &p.kind {
            ParamKind::Tensor(t) => Some(u64::from(t.align)),
            ParamKind::Scalar(_) | ParamKind::Stream => None,
        });
        // Alignments are powers of two (the manifest reader refuses others): their lcm is their max.
        let modulus = aligns.try_fold(1u64, |m, a| a.is_power_of_two().then(|| m.max(a)));
        CallCache { modulus, entries: Vec::new(), next: 0 }
    }

    /// Number of kept signatures.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Evaluates a call of `plan` into `s`, exactly as [`HostPlan::evaluate_into`] would: from a
    /// kept evaluation when an accepted call had the same signature, else in full (keeping the
    /// result when the call is accepted).
    pub fn evaluate(&mut self, plan: &HostPlan, args: &[Arg], s: &mut PlanScratch) -> Result<()> {
        let Some(modulus) = self.modulus else { return plan.evaluate_into(args, s) };
        if !pointers(args).zip(args).all(|(p, a)| matches!(a, Arg::Scalar(..)) || (p != 0 && p < HIGHEST_CACHED_PTR)) {
            return plan.evaluate_into(args, s);
        }
        let hit = self
            .entries
            .iter()
            .find(|e| e.key.len() == args.len() && e.key.iter().zip(args).all(|(k, a)| k.matches(a, modulus)));
        if let Some(e) = hit {
            s.vars.clone_from(&e.vars);
            s.flat.clone_from(&e.flat);
            s.launches.clone_from(&e.launches);
            s.prints.clone_from(&e.prints);
            s.print_text.clone_from(&e.print_text);
            s.print_spans.clone_from(&e.print_spans);
            s.launch_vars.clone_from(&e.launch_vars);
            s.ptr_sources.clone_from(&e.ptr_sources);
            for &(i, param) in &e.ptr_sources {
                if let (Some(KernelArg::Ptr(p)), Some(Arg::Tensor(v)), Some(&base)) =
                    (s.flat.get_mut(i), args.get(param), e.bases.get(param))
                {
                    // The view's offset from its host tensor (never negative: the plan refuses
                    // negative offsets), moved onto the new tensor.
                    *p = p.wrapping_sub(base).wrapping_add(v.ptr);
                }
            }
            return Ok(());
        }
        plan.evaluate_into(args, s)?;
        let entry = Entry {
            key: args.iter().map(|a| ArgKey::of(a, modulus)).collect(),
            bases: pointers(args).collect(),
            vars: s.vars.clone(),
            flat: s.flat.clone(),
            launches: s.launches.clone(),
            prints: s.prints.clone(),
            print_text: s.print_text.clone(),
            print_spans: s.print_spans.clone(),
            launch_vars: s.launch_vars.clone(),
            ptr_sources: s.ptr_sources.clone(),
        };
        if self.entries.len() < CAPACITY {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % CAPACITY;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checked::TensorView;
    use crate::manifest::Manifest;
    use cute_abi::manifest::seal;

    /// A host with a view at an offset (`mB` viewed 16 elements in), a scalar computed from the
    /// shape, an alignment of 16, and a partial-tile rule.
    const MANIFEST: &str = "cutec-manifest 1\narch sm_90\n\
        kernel k\n\
        param a tensor elem=f16 space=gmem align=16 rank=2 shape=(?,64) stride=(?,1)\n\
        param b tensor elem=f16 space=gmem align=16 rank=1 shape=? stride=1\n\
        param n scalar elem=i32\n\
        end\n\
        host h\n\
        param mA tensor elem=f16 space=gmem align=16 rank=2 shape=(?,64) stride=(?,1)\n\
        param mB tensor elem=f16 space=gmem align=2 rank=1 shape=? stride=1\n\
        param s scalar elem=i32\n\
        require $0 | 16\n\
        launch k\n\
        grid (ceildiv $0 16) | 1 | 1\n\
        block 128 | 1 | 1\n\
        smem 0\n\
        arg tensor 0 | 0 | $0 | $1\n\
        arg tensor 1 | 8 | (min $2 32)\n\
        arg scalar i32 | (mul $0 $3)\n\
        endlaunch\n\
        end\n";

    fn plan() -> HostPlan {
        HostPlan::new(&Manifest::parse(&seal(MANIFEST)).unwrap(), "h").unwrap()
    }

    fn args(a: u64, b: u64, m: i64, s: i32) -> Vec<Arg> {
        vec![
            Arg::tensor(TensorView::new(a, DType::F16, &[m, 64], &[64, 1]).with_bytes(m as u64 * 128)),
            Arg::tensor(TensorView::new(b, DType::F16, &[40], &[1])),
            Arg::i32(s),
        ]
    }

    /// The cached evaluation equals the full one, field by field.
    fn same_as_full(cache: &mut CallCache, plan: &HostPlan, a: &[Arg]) -> std::result::Result<(), String> {
        let (mut cached, mut full) = (PlanScratch::default(), PlanScratch::default());
        let c = cache.evaluate(plan, a, &mut cached).map_err(|e| e.to_string());
        let f = plan.evaluate_into(a, &mut full).map_err(|e| e.to_string());
        assert_eq!(c, f);
        if c.is_ok() {
            assert_eq!((&cached.vars, &cached.flat, &cached.launches), (&full.vars, &full.flat, &full.launches));
        }
        c
    }

    #[test]
    fn a_kept_evaluation_is_rebased_onto_new_pointers() {
        let p = plan();
        let mut cache = CallCache::new(&p);
        assert_eq!(cache.modulus, Some(16));
        let first = args(0x7f00_0000_0000, 0x7f10_0000_0000, 32, 3);
        same_as_full(&mut cache, &p, &first).unwrap();
        assert_eq!(cache.len(), 1);
        // Same signature, other pointers (same residues): a hit, with every pointer moved.
        let moved = args(0x7f20_0000_0100, 0x7f30_0000_0010, 32, 3);
        same_as_full(&mut cache, &p, &moved).unwrap();
        assert_eq!(cache.len(), 1);
        let mut s = PlanScratch::default();
        cache.evaluate(&p, &moved, &mut s).unwrap();
        assert_eq!(s.flat[0], KernelArg::Ptr(0x7f20_0000_0100));
        // mB viewed 8 f16 elements in.
        assert_eq!(s.flat[3], KernelArg::Ptr(0x7f30_0000_0010 + 16));
        // Another shape or scalar: another signature.
        same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0000, 48, 3)).unwrap();
        same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0000, 48, 5)).unwrap();
        assert_eq!(cache.len(), 3);
    }

    #[test]
    fn refusals_are_never_kept_and_residues_decide_alignment() {
        let p = plan();
        let mut cache = CallCache::new(&p);
        same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0000, 32, 3)).unwrap();
        // mA misaligned by 8 bytes: another residue, evaluated in full, refused with the message.
        let e = same_as_full(&mut cache, &p, &args(0x7f00_0000_0008, 0x7f10_0000_0000, 32, 3)).unwrap_err();
        assert!(e.contains("misaligned pointer: 0x7f0000000008 is not a multiple of 16 bytes"), "{e}");
        // mB at +2 bytes: allowed for mB (align 2), but its view at +16 bytes is not 16-aligned for
        // the kernel's `b`: refused although the host parameter's own check passes.
        let e = same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0002, 32, 3)).unwrap_err();
        assert!(e.contains("argument `b` = view of `mB` at offset 8") && e.contains("misaligned"), "{e}");
        // A partial tile (M = 33) is refused, and stays refused when asked again.
        for _ in 0..2 {
            let e = same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0000, 33, 3)).unwrap_err();
            assert!(e.contains("mA extent 33 (mode 0) is not a multiple of the tile 16"), "{e}");
        }
        // Null pointers bypass the cache (and are refused).
        let e = same_as_full(&mut cache, &p, &args(0, 0x7f10_0000_0000, 32, 3)).unwrap_err();
        assert!(e.contains("null pointer"), "{e}");
        assert_eq!(cache.len(), 1);
        // A smaller memory size is another signature: bounds are checked again.
        let mut small = args(0x7f00_0000_0000, 0x7f10_0000_0000, 32, 3);
        if let Arg::Tensor(v) = &mut small[0] {
            v.bytes = Some(100);
        }
        assert!(same_as_full(&mut cache, &p, &small).unwrap_err().contains("out of bounds"));
    }

    #[test]
    fn capacity_is_bounded() {
        let p = plan();
        let mut cache = CallCache::new(&p);
        for m in 1..=(CAPACITY as i64 + 4) {
            same_as_full(&mut cache, &p, &args(0x7f00_0000_0000, 0x7f10_0000_0000, 16 * m, 1)).unwrap();
        }
        assert_eq!(cache.len(), CAPACITY);
        // The oldest were replaced; a recent one is still a hit and still right.
        same_as_full(&mut cache, &p, &args(0x7f40_0000_0000, 0x7f50_0000_0000, 16 * (CAPACITY as i64 + 4), 1)).unwrap();
        assert_eq!(cache.len(), CAPACITY);
    }
}
