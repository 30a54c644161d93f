//! Loading a compiled kernel image (cubin, also fatbin or PTX text) into a
//! device context, and looking its kernels up by name.

use std::ffi::{c_uint, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::sys::{self, CUjit_option, CUresult};

use crate::device::Device;
use crate::driver::{self, check, describe};
use crate::error::{Result, RuntimeError};
use crate::kernel::Kernel;
use crate::manifest::Manifest;

/// Where a module image comes from: a file or bytes already in memory.
#[derive(Clone, Copy, Debug)]
pub enum ModuleSource<'a> {
    /// A `.cubin` (or fatbin / PTX) file.
    Path(&'a Path),
    /// The image bytes.
    Bytes(&'a [u8]),
}

impl<'a> From<&'a Path> for ModuleSource<'a> {
    fn from(p: &'a Path) -> Self {
        ModuleSource::Path(p)
    }
}
impl<'a> From<&'a PathBuf> for ModuleSource<'a> {
    fn from(p: &'a PathBuf) -> Self {
        ModuleSource::Path(p.as_path())
    }
}
impl<'a> From<&'a str> for ModuleSource<'a> {
    /// A string is a file path.
    fn from(p: &'a str) -> Self {
        ModuleSource::Path(Path::new(p))
    }
}
impl<'a> From<&'a [u8]> for ModuleSource<'a> {
    fn from(b: &'a [u8]) -> Self {
        ModuleSource::Bytes(b)
    }
}
impl<'a> From<&'a Vec<u8>> for ModuleSource<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        ModuleSource::Bytes(b.as_slice())
    }
}
impl<'a, const N: usize> From<&'a [u8; N]> for ModuleSource<'a> {
    fn from(b: &'a [u8; N]) -> Self {
        ModuleSource::Bytes(b.as_slice())
    }
}

/// What kind of image a byte string is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// An ELF cubin (what cutec emits).
    Cubin,
    /// A CUDA fat binary (as produced by `nvcc -fatbin`).
    Fatbin,
    /// PTX assembly text (JIT-compiled by the driver).
    Ptx,
}

/// Classifies an image by its magic bytes; errors on anything else.
pub fn classify_image(bytes: &[u8]) -> Result<ImageKind> {
    if bytes.is_empty() {
        return Err(RuntimeError::InvalidImage("the image is empty".into()));
    }
    if bytes.starts_with(b"\x7fELF") {
        return Ok(ImageKind::Cubin);
    }
    if bytes.starts_with(&0xBA55_ED50u32.to_le_bytes()) {
        return Ok(ImageKind::Fatbin);
    }
    let head = &bytes[..bytes.len().min(64 * 1024)];
    let text = String::from_utf8_lossy(head);
    if text.contains(".version") && text.contains(".target") {
        return Ok(ImageKind::Ptx);
    }
    Err(RuntimeError::InvalidImage(format!(
        "expected a cubin (ELF, starts with 7f 45 4c 46), a fatbin or PTX text; \
         the image ({} bytes) starts with {}",
        bytes.len(),
        crate::elf::leading_bytes(bytes)
    )))
}

struct ModuleInner {
    raw: sys::CUmodule,
    device: Device,
    label: String,
    manifest: Option<Arc<Manifest>>,
}

// SAFETY: a CUmodule handle may be used from any thread once its context is
// made current, which every use here does first.
unsafe impl Send for ModuleInner {}
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: `raw` came from cuModuleLoadDataEx and is unloaded once.
            // Errors cannot be reported from drop; a failing unload only leaks.
            let _ = unsafe { sys::cuModuleUnload(self.raw) };
        }
    }
}

/// A loaded module. Cheap to clone; kernels keep it alive.
#[derive(Clone)]
pub struct Module {
    inner: Arc<ModuleInner>,
}

impl Module {
    /// Loads a cubin (or fatbin / PTX) from a path or from bytes:
    /// `Module::load(&dev, "k.cubin")`, `Module::load(&dev, &bytes)`.
    pub fn load<'a>(device: &Device, source: impl Into<ModuleSource<'a>>) -> Result<Module> {
        match source.into() {
            ModuleSource::Path(p) => Module::load_file(device, p),
            ModuleSource::Bytes(b) => Module::load_bytes(device, b, "<memory>"),
        }
    }

    /// Loads the image stored in file `path`.
    pub fn load_file(device: &Device, path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| RuntimeError::Io { path: path.to_path_buf(), message: e.to_string() })?;
        Module::load_bytes(device, &bytes, &path.display().to_string())
    }

    /// Loads an image from memory; `label` names it in error messages.
    pub fn load_bytes(device: &Device, bytes: &[u8], label: &str) -> Result<Module> {
        let kind = classify_image(bytes).map_err(|e| RuntimeError::InvalidImage(format!("{label}: {e}")))?;
        // Read on the host before anything reaches the driver: a corrupt
        // manifest is reported as such.
        let manifest =
            Manifest::from_cubin(bytes).map_err(|e| RuntimeError::InvalidImage(format!("{label}: {e}")))?.map(Arc::new);
        // Copy into 8-byte aligned storage (ELF readers like aligned input)
        // and NUL-terminate (required for PTX, harmless otherwise).
        let words = bytes.len() / 8 + 1;
        let mut image = vec![0u64; words];
        // SAFETY: `image` has words*8 > bytes.len() bytes; regions are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), image.as_mut_ptr() as *mut u8, bytes.len());
        }

        device.bind()?;
        let mut log = vec![0u8; 16 * 1024];
        let mut opts = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        let mut raw: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the image is NUL-terminated and outlives the call; the
        // option arrays have matching lengths; the log buffer has the
        // announced size.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr() as *const c_void,
                opts.len() as c_uint,
                opts.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if r != CUresult::CUDA_SUCCESS {
            let (code, mut message) = describe(cudarc::driver::result::DriverError(r));
            let jit_log =
                CStr::from_bytes_until_nul(&log).map(|s| s.to_string_lossy().trim().to_string()).unwrap_or_default();
            if !jit_log.is_empty() {
                message.push_str(&format!("; JIT log: {jit_log}"));
            }
            if matches!(
                r,
                CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
                    | CUresult::CUDA_ERROR_INVALID_IMAGE
                    | CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                    | CUresult::CUDA_ERROR_INVALID_PTX
            ) {
                if let Ok((major, minor)) = device.compute_capability() {
                    message.push_str(&format!("; the device is sm_{major}{minor}: was the {kind:?} compiled for it?"));
                }
            }
            return Err(RuntimeError::Driver { op: format!("cuModuleLoadData({label})"), code, message });
        }
        Ok(Module { inner: Arc::new(ModuleInner { raw, device: device.clone(), label: label.to_string(), manifest }) })
    }

    /// The device the module is loaded on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// Where the module came from (path or `<memory>`).
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// The manifest cutec embedded in the cubin (kernel signatures), if any.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.inner.manifest.as_deref()
    }

    /// Looks kernel `name` up. A missing name gives
    /// `RuntimeError::KernelNotFound` listing the kernels the module has
    /// (when the driver can enumerate them).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let c_name = CString::new(name)
            .map_err(|_| RuntimeError::InvalidArgument(format!("kernel name {name:?} contains a NUL byte")))?;
        self.inner.device.bind()?;
        let mut func: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the module is loaded and its context is current.
        let r = unsafe { sys::cuModuleGetFunction(&mut func, self.inner.raw, c_name.as_ptr()) };
        match r {
            CUresult::CUDA_SUCCESS => {
                let sig = self.manifest().and_then(|m| m.kernel(name)).cloned().map(Arc::new);
                Ok(Kernel::new(func, self.clone(), name.to_string(), sig))
            }
            CUresult::CUDA_ERROR_NOT_FOUND => {
                Err(RuntimeError::KernelNotFound { name: name.to_string(), available: self.kernel_names().ok() })
            }
            other => {
                check(&format!("cuModuleGetFunction({name}) in {}", self.inner.label), other)?;
                Err(RuntimeError::KernelNotFound { name: name.to_string(), available: None })
            }
        }
    }

    /// Names of the kernels (entry functions) in the module, as the driver
    /// enumerates them (needs a CUDA 12.4+ driver).
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        for sym in ["cuModuleGetFunctionCount", "cuModuleEnumerateFunctions", "cuFuncGetName"] {
            if !driver::has_symbol(sym) {
                return Err(RuntimeError::InvalidArgument(format!(
                    "the driver cannot enumerate kernels ({sym} missing)"
                )));
            }
        }
        self.inner.device.bind()?;
        let mut count: c_uint = 0;
        // SAFETY: module loaded, context current; symbols checked above.
        check("cuModuleGetFunctionCount", unsafe { sys::cuModuleGetFunctionCount(&mut count, self.inner.raw) })?;
        let mut funcs: Vec<sys::CUfunction> = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: `funcs` has room for `count` handles.
        check("cuModuleEnumerateFunctions", unsafe {
            sys::cuModuleEnumerateFunctions(funcs.as_mut_ptr(), count, self.inner.raw)
        })?;
        let mut names = Vec::with_capacity(funcs.len());
        for f in funcs {
            let mut p: *const std::ffi::c_char = std::ptr::null();
            // SAFETY: `f` is a handle the driver just returned.
            check("cuFuncGetName", unsafe { sys::cuFuncGetName(&mut p, f) })?;
            if !p.is_null() {
                // SAFETY: the driver returns a NUL-terminated string it owns.
                names.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module").field("label", &self.inner.label).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify() {
        assert_eq!(classify_image(b"\x7fELF\x02\x01\x01").ok(), Some(ImageKind::Cubin));
        assert_eq!(classify_image(&[0x50, 0xed, 0x55, 0xba, 1, 0]).ok(), Some(ImageKind::Fatbin));
        let ptx = b"//\n.version 8.8\n.target sm_90a\n.address_size 64\n";
        assert_eq!(classify_image(ptx).ok(), Some(ImageKind::Ptx));
        let e = classify_image(b"hello world").unwrap_err();
        assert!(e.to_string().contains("68 65 6c 6c 6f 20 77 6f"), "{e}");
        assert!(classify_image(b"").is_err());
    }
}
