//! The manifest cutec embeds in every cubin (the format and its types: [`cute_abi::manifest`]),
//! as the runtime reads it and checks launches against it.
//!
//! # Where it lives
//!
//! cutec emits a global `__cutec_manifest` (a byte array with external
//! linkage in the global address space) into the kernel module; ptxas keeps
//! it, with its initializer, as an `OBJECT` symbol in `.nv.global.init`. The
//! runtime reads it from the cubin bytes by walking the ELF symbol table
//! ([`crate::elf`]) on the host: no driver, no GPU, no companion file.

use std::fmt;
use std::ops::Deref;
use std::path::Path;

use crate::elf;
use crate::error::{Result, RuntimeError};

pub use cute_abi::manifest::{
    Assert, Cond, HostSig, HostStep, IntTuple, LaunchPlan, ParamKind, ParamSig, Require, TensorSig, MANIFEST_SYMBOL,
    MANIFEST_VERSION,
};
/// Element types and memory spaces: cute-abi's, under the names this crate's users know.
pub use cute_abi::{DType, MemSpace as Space};

/// A kernel's signature ([`cute_abi::manifest::KernelSig`], which it dereferences to) with the
/// launch checks every launch path makes against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSig(pub cute_abi::manifest::KernelSig);

impl Deref for KernelSig {
    type Target = cute_abi::manifest::KernelSig;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl fmt::Display for KernelSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl KernelSig {
    /// Refuses a launch giving `given` bytes of dynamic shared memory when the kernel needs more
    /// (its `smem N` line): the kernel places its shared-memory tensors in the dynamic shared
    /// memory, so a smaller amount would make it access shared memory out of range. A pure check
    /// (no driver call): `Err(RuntimeError::InvalidLaunch)`.
    pub fn check_dynamic_smem(&self, given: u32) -> Result<()> {
        if given < self.dynamic_smem_bytes {
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` needs {} B of dynamic shared memory (its shared-memory tensors), the launch gives {given} B",
                self.name, self.dynamic_smem_bytes
            )));
        }
        Ok(())
    }

    /// Refuses a grid that is not a multiple of the kernel's cluster shape in every dimension:
    /// the kernel is compiled for clusters of that shape (`.reqnctapercluster`), which must tile
    /// the grid. A pure check (no driver call): `Err(RuntimeError::InvalidLaunch)`.
    pub fn check_cluster(&self, grid: (u32, u32, u32)) -> Result<()> {
        let g = [grid.0, grid.1, grid.2];
        if g.iter().zip(self.cluster).any(|(g, c)| c == 0 || g % c != 0) {
            let [cx, cy, cz] = self.cluster;
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` runs in thread-block clusters of ({cx}, {cy}, {cz}) blocks, but the grid ({}, {}, {}) is not a multiple of that in every dimension",
                self.name, g[0], g[1], g[2]
            )));
        }
        Ok(())
    }
}

/// A parsed manifest: [`cute_abi::manifest::Manifest`] with the runtime's kernel signatures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The major version (`cutec-manifest N`).
    pub version: u32,
    /// Target architecture (`sm_90`), when given.
    pub arch: Option<String>,
    /// Kernels in source order.
    pub kernels: Vec<KernelSig>,
    /// Host functions with their launch plans, in source order.
    pub hosts: Vec<HostSig>,
    /// The text it was parsed from.
    pub text: String,
}

impl From<cute_abi::manifest::Manifest> for Manifest {
    fn from(m: cute_abi::manifest::Manifest) -> Manifest {
        let kernels = m.kernels.into_iter().map(KernelSig).collect();
        Manifest { version: m.version, arch: m.arch, kernels, hosts: m.hosts, text: m.text }
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| RuntimeError::Io { path: path.to_path_buf(), message: e.to_string() })
}

impl Manifest {
    /// Parses manifest text ([`cute_abi::manifest::Manifest::parse`]).
    pub fn parse(text: &str) -> Result<Manifest> {
        cute_abi::manifest::Manifest::parse(text)
            .map(Manifest::from)
            .map_err(|e| RuntimeError::InvalidImage(e.to_string()))
    }

    /// Reads the manifest embedded in an image's bytes; `Ok(None)` when the
    /// image has none: not an ELF (PTX text, a fatbin or other bytes, which
    /// [`crate::Module`] loads or refuses on its own), or a cubin not built by a
    /// manifest-writing cutec. A malformed ELF or a damaged manifest is an error.
    ///
    /// The manifest text is the symbol's bytes less one trailing NUL terminator,
    /// if it has one; any other NUL byte is a damaged manifest
    /// ([`Manifest::parse`] refuses it), so Rust, Python and C read the same text.
    pub fn from_cubin(bytes: &[u8]) -> Result<Option<Manifest>> {
        if !elf::is_elf(bytes) {
            return Ok(None);
        }
        let Some(raw) = elf::symbol_bytes(bytes, MANIFEST_SYMBOL)? else { return Ok(None) };
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        let text = std::str::from_utf8(raw)
            .map_err(|e| RuntimeError::InvalidImage(format!("the cutec manifest is not UTF-8: {e}")))?;
        Manifest::parse(text).map(Some)
    }

    /// Reads the manifest of the image file `path` ([`Manifest::from_cubin`]: `Ok(None)` for a
    /// file that is not an ELF).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Option<Manifest>> {
        Manifest::from_cubin(&read(path.as_ref())?)
    }

    /// Reads the manifest of the cubin file `path`, which must be a cubin: an empty or non-ELF
    /// file is an error (`RuntimeError::InvalidImage`), unlike [`Manifest::from_file`], so a
    /// caller that gets only `None` back (the C ABI) cannot take a wrong file for a cubin without
    /// a manifest. `Ok(None)`: an ELF cubin with no manifest.
    pub fn from_cubin_file(path: impl AsRef<Path>) -> Result<Option<Manifest>> {
        let path = path.as_ref();
        let bytes = read(path)?;
        if !elf::is_elf(&bytes) {
            let found = match bytes.is_empty() {
                true => "it is empty".to_string(),
                false => format!("it starts with {}", elf::leading_bytes(&bytes)),
            };
            return Err(RuntimeError::InvalidImage(format!(
                "{} is not a cubin (an ELF file, starting with 7f 45 4c 46): {found}",
                path.display()
            )));
        }
        Manifest::from_cubin(&bytes)
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelSig> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The host function named `name` (an instance of a generic one by its own name, `add<f16>`).
    pub fn host(&self, name: &str) -> Option<&HostSig> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// The instances of generic host function `name` (`instance NAME` blocks), in manifest order;
    /// empty when there is no such generic.
    pub fn host_instances(&self, name: &str) -> Vec<&HostSig> {
        self.hosts.iter().filter(|h| h.generic.as_deref() == Some(name)).collect()
    }

    /// The names a host function is called by: each non-generic host function, and each generic
    /// one once (its instances are also found by their own names, `add<f16>`).
    pub fn host_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for h in &self.hosts {
            let name = h.generic.as_ref().unwrap_or(&h.name);
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_abi::manifest::seal;

    /// The records of a manifest (sealed before reading: [`seal`]).
    const TEXT: &str = "cutec-manifest 1\narch sm_90\nkernel vector_add\n\
        param a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
        param m tensor elem=f16 space=gmem align=16 rank=2 shape=((2,?),8) stride=((1,?),64) future=yes\n\
        param n scalar elem=i32\nend\n";

    #[test]
    fn parses_and_prints() {
        let m = Manifest::parse(&seal(TEXT)).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.arch.as_deref(), Some("sm_90"));
        let k = m.kernel("vector_add").unwrap();
        assert_eq!(k.params.len(), 3);
        let ParamKind::Tensor(t) = &k.params[1].kind else { panic!() };
        assert_eq!(t.shape_leaves, vec![Some(2), None, Some(8)]);
        assert_eq!(t.stride_leaves, vec![Some(1), None, Some(64)]);
        assert_eq!(t.rank(), 2);
        assert_eq!(t.abi_len(), 3);
        assert_eq!(
            k.to_string(),
            "vector_add(a: tensor<f32, gmem, ?:1, align: 4>, m: tensor<f16, gmem, ((2,?),8):((1,?),64), align: 16>, n: i32)"
        );
        assert_eq!(k.abi(), "(u64 a, i32 a.shape[0], u64 m, i32 m.shape[1], i32 m.stride[1], i32 n)");
    }

    #[test]
    fn forward_compatible_and_versioned() {
        let m = Manifest::parse(&seal(
            "cutec-manifest 1\nsomething new\nhost h\nparam x scalar elem=f32\nlaunches k\nend\n",
        ))
        .unwrap();
        assert_eq!(m.hosts.len(), 1);
        assert!(m.kernels.is_empty());
        assert_eq!(Manifest::parse(&seal("cutec-manifest 2\n")).unwrap().version, 2);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 3\n")).unwrap().version, 3);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 4\n")).unwrap().version, 4);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 5\n")).unwrap().version, 5);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 6\n")).unwrap().version, 6);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 7\n")).unwrap().version, 7);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 8\n")).unwrap().version, 8);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 9\n")).unwrap().version, 9);
        assert_eq!(Manifest::parse(&seal("cutec-manifest 10\n")).unwrap().version, 10);
        let e = Manifest::parse(&seal("cutec-manifest 11\n")).unwrap_err();
        assert!(e.to_string().contains("manifest version 11 is newer than this runtime understands (10)"), "{e}");
        assert!(Manifest::parse(&seal("hello\n")).is_err());
        assert!(Manifest::parse(&seal(
            "cutec-manifest 1\nkernel k\nparam a tensor elem=f32 space=gmem align=4 shape=(?,8) stride=1\nend\n"
        ))
        .is_err());
        assert!(Manifest::parse(&seal("cutec-manifest 1\nkernel k\n")).is_err());
        assert!(Manifest::parse(&seal(
            "cutec-manifest 1\nkernel k\nparam a tensor elem=q32 space=gmem align=4 shape=? stride=1\nend"
        ))
        .is_err());
    }

    #[test]
    fn fast_divisors() {
        let text = "cutec-manifest 3\nkernel k\nparam a tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)\n\
                    fastdiv $1\nfastdiv (div $1 8)\nend\n";
        let m = Manifest::parse(&seal(text)).unwrap();
        let k = m.kernel("k").unwrap();
        assert_eq!(k.fast_divisors.len(), 2);
        assert_eq!(k.fast_divisors[1].to_string(), "(div $1 8)");
        assert_eq!(
            k.abi(),
            "(u64 a, i32 a.shape[0], i32 a.shape[1], i32 a.stride[0], u32 fastdiv[0].multiplier, u32 fastdiv[0].shift, \
             u32 fastdiv[1].multiplier, u32 fastdiv[1].shift)"
        );
        assert_eq!(crate::fastdiv::declared_abi_len(k), 4);
        // Skipping a divisor would launch the kernel with too few parameters: a bad line fails.
        let e = Manifest::parse(&seal("cutec-manifest 3\nkernel k\nfastdiv (div $1\nend\n")).unwrap_err();
        assert!(e.to_string().contains("bad `fastdiv` line"), "{e}");
        // In a host block it means nothing.
        assert!(Manifest::parse(&seal("cutec-manifest 3\nhost h\nfastdiv $0\nend\n")).is_ok());
    }

    #[test]
    fn tuples() {
        for s in ["?", "8", "(?,8)", "((2,?),8)", "(1,(2,(3,?)))"] {
            assert_eq!(IntTuple::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(IntTuple::parse("(8)").unwrap().to_string(), "8");
        let (t, divs) = IntTuple::parse_with_div("(?,?{div=8}):").map_or((IntTuple::Leaf(None), vec![]), |x| x);
        assert!(divs.is_empty(), "{t}");
        let (t, divs) = IntTuple::parse_with_div("((2,?{div=16}),?)").unwrap();
        assert_eq!((t.to_string(), divs), ("((2,?),?)".to_string(), vec![1, 16, 1]));
        for s in ["", "(", "(,)", "()", "-1", "(1,2", "1 2", "x", "?{div=0}", "?{mod=2}", "?{div=8"] {
            assert!(IntTuple::parse(s).is_none(), "{s}");
        }
    }

    #[test]
    fn from_cubin_reads_the_elf_symbol() {
        let text = seal(TEXT);
        let elf = crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, text.as_bytes());
        let m = Manifest::from_cubin(&elf).unwrap().unwrap();
        assert_eq!(m.kernels[0].name, "vector_add");
        assert_eq!(Manifest::from_cubin(b"// ptx text").unwrap(), None);
        let other = crate::elf::tests::tiny_elf("something_else", b"x");
        assert_eq!(Manifest::from_cubin(&other).unwrap(), None);
        // One NUL terminator is no part of the text; a second NUL byte is a damaged manifest.
        let terminated = crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, format!("{text}\0").as_bytes());
        assert_eq!(Manifest::from_cubin(&terminated).unwrap().unwrap().text, text);
        let twice = crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, format!("{text}\0\0").as_bytes());
        let e = Manifest::from_cubin(&twice).unwrap_err().to_string();
        assert!(e.ends_with(&format!("a NUL byte at byte {}: the manifest is damaged", text.len())), "{e}");
        // A manifest whose records no longer match its checksum is refused; so is one without it.
        let edited = text.replace("align=16", "align=32");
        let e = Manifest::from_cubin(&crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, edited.as_bytes())).unwrap_err();
        assert!(
            e.to_string().contains(
                "manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build"
            ),
            "{e}"
        );
        let e = Manifest::from_cubin(&crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, TEXT.as_bytes())).unwrap_err();
        assert!(e.to_string().contains("no `checksum` line"), "{e}");
    }

    #[test]
    fn dtype_codes_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_code(d.code()), Some(d));
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        assert_eq!(DType::F32.code(), 12);
    }
}
