//! The GPU targets cutec compiles for, and what each one has.
//!
//! A kernel's instructions need [`Feature`]s; an [`Arch`] answers whether it has them. The compiler
//! checks a kernel's features against the target it builds for (one walker over the kernel IR)
//! instead of comparing target names, and the NVVM target, ptxas' `-arch` and the manifest's `arch`
//! line all come from the one value parsed from `--arch`.

use std::fmt;
use std::str::FromStr;

/// A compilation target: an NVIDIA compute capability, with or without its arch-specific
/// (`a`) instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// Ampere (A100): `mma.sync`, `cp.async`, `ldmatrix`.
    Sm80,
    /// Hopper, portable subset: adds TMA, transaction-count mbarriers, thread-block clusters,
    /// 8-bit float conversions and `stmatrix`. Runs on Hopper and later GPUs.
    #[default]
    Sm90,
    /// Hopper's arch-specific target: adds `wgmma` and `setmaxnreg`. Runs on Hopper GPUs only.
    Sm90a,
}

/// An instruction family that not every target has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Warpgroup MMA (`wgmma.mma_async` and its fence, commit and wait).
    Wgmma,
    /// Register re-allocation between warpgroups (`setmaxnreg`).
    Setmaxnreg,
    /// The tensor memory accelerator (`cp.async.bulk.tensor`, bulk groups).
    Tma,
    /// mbarriers with transaction counts, `try_wait` and the mbarrier-init fence.
    MbarrierTx,
    /// Thread-block clusters: cluster launches, barriers, registers and distributed shared memory.
    Clusters,
    /// Conversions to and from the 8-bit floats (`cvt` with `e4m3x2` / `e5m2x2`; sm_89 and later).
    Fp8Convert,
    /// The sm_90 atomics: `atom.add.noftz.bf16` and the vector `red.global.add.v4.f32`.
    AtomicsSm90,
    /// Warp-wide matrix stores from registers to shared memory (`stmatrix`).
    Stmatrix,
}

impl Arch {
    /// Every target, oldest first.
    pub const ALL: [Arch; 3] = [Arch::Sm80, Arch::Sm90, Arch::Sm90a];

    /// `sm_80`, `sm_90`, `sm_90a`: the spelling of `--arch`, ptxas' `-arch`, the NVVM chip and the
    /// manifest.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Sm80 => "sm_80",
            Arch::Sm90 => "sm_90",
            Arch::Sm90a => "sm_90a",
        }
    }

    pub fn from_name(name: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The names of every target, for messages: `sm_80, sm_90, sm_90a`.
    pub fn names() -> String {
        Arch::ALL.map(Arch::name).join(", ")
    }

    /// Whether code for this target may use `feature`.
    pub fn supports(self, feature: Feature) -> bool {
        match feature {
            Feature::Wgmma | Feature::Setmaxnreg => self == Arch::Sm90a,
            Feature::Tma
            | Feature::MbarrierTx
            | Feature::Clusters
            | Feature::Fp8Convert
            | Feature::AtomicsSm90
            | Feature::Stmatrix => self >= Arch::Sm90,
        }
    }

    pub fn has_wgmma(self) -> bool {
        self.supports(Feature::Wgmma)
    }

    pub fn has_setmaxnreg(self) -> bool {
        self.supports(Feature::Setmaxnreg)
    }

    pub fn has_tma(self) -> bool {
        self.supports(Feature::Tma)
    }

    pub fn has_mbarrier_tx(self) -> bool {
        self.supports(Feature::MbarrierTx)
    }

    pub fn has_clusters(self) -> bool {
        self.supports(Feature::Clusters)
    }

    pub fn has_fp8_convert(self) -> bool {
        self.supports(Feature::Fp8Convert)
    }

    /// The PTX ISA features the NVVM target is given (`nvvm-attach-target{features=...}`): PTX 8.0,
    /// the first with every instruction above, for every target, so that one PTX text serves all.
    pub fn ptx_features(self) -> &'static str {
        "+ptx80"
    }

    /// The PTX ISA version of [`Arch::ptx_features`] (`major * 10 + minor`).
    pub fn ptx_version(self) -> u32 {
        80
    }

    /// The oldest targets that have `feature`, for a diagnostic's help: `sm_90` (or `sm_90a`).
    pub fn with(feature: Feature) -> Vec<Arch> {
        Arch::ALL.into_iter().filter(|a| a.supports(feature)).collect()
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A target name that is none of [`Arch::ALL`]'s; its message lists them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownArch(pub String);

impl fmt::Display for UnknownArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown target `{}`; the targets are {}", self.0, Arch::names())
    }
}

impl std::error::Error for UnknownArch {}

impl FromStr for Arch {
    type Err = UnknownArch;

    fn from_str(name: &str) -> Result<Arch, UnknownArch> {
        Arch::from_name(name).ok_or_else(|| UnknownArch(name.to_string()))
    }
}

impl TryFrom<&str> for Arch {
    type Error = UnknownArch;

    fn try_from(name: &str) -> Result<Arch, UnknownArch> {
        name.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Arch::ALL {
            assert_eq!(Arch::from_name(a.name()), Some(a));
        }
        assert_eq!(Arch::from_name("sm_100a"), None);
        assert_eq!("sm_90a".parse(), Ok(Arch::Sm90a));
        let unknown = "sm_75".parse::<Arch>().unwrap_err();
        assert_eq!(unknown.to_string(), "unknown target `sm_75`; the targets are sm_80, sm_90, sm_90a");
        assert_eq!(Arch::names(), "sm_80, sm_90, sm_90a");
        assert_eq!(Arch::default(), Arch::Sm90);
    }

    #[test]
    fn features_by_target() {
        assert!(!Arch::Sm80.has_tma() && !Arch::Sm80.has_clusters() && !Arch::Sm80.has_fp8_convert());
        assert!(Arch::Sm90.has_tma() && Arch::Sm90.has_mbarrier_tx() && !Arch::Sm90.has_wgmma());
        assert!(Arch::Sm90a.has_wgmma() && Arch::Sm90a.has_setmaxnreg() && Arch::Sm90a.has_clusters());
        assert_eq!(Arch::with(Feature::Wgmma), vec![Arch::Sm90a]);
        assert_eq!(Arch::with(Feature::Tma), vec![Arch::Sm90, Arch::Sm90a]);
    }
}
