//! The one error type of the runtime: every public API returns
//! `Result<_, RuntimeError>` and nothing in this crate panics on a missing
//! driver, a missing GPU, a bad cubin or a bad launch.

use std::fmt;
use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

/// Everything that can go wrong while loading and launching cutec kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeError {
    /// `libcuda.so` could not be loaded (no NVIDIA driver on this machine).
    NoDriver(String),
    /// The driver is there but no usable GPU is (cuInit failed, no device,
    /// ordinal out of range, ...).
    NoDevice(String),
    /// The driver is older than the CUDA version the bindings were built for.
    DriverTooOld {
        /// Version reported by `cuDriverGetVersion` (e.g. 12040 = 12.4).
        found: i32,
        /// Minimum version this crate needs (13000 = 13.0).
        required: i32,
    },
    /// A CUDA driver call failed.
    Driver {
        /// What we were doing, e.g. `"cuModuleLoadData(kernels.cubin)"`.
        op: String,
        /// The `CUresult` name, e.g. `CUDA_ERROR_NO_BINARY_FOR_GPU`.
        code: String,
        /// The driver's description plus any hint we could add.
        message: String,
    },
    /// Reading a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The bytes given to `Module::load` are not a loadable image.
    InvalidImage(String),
    /// `Module::host` was asked for a host function the manifest does not describe.
    HostNotFound {
        /// The requested name.
        name: String,
        /// The host functions the manifest does describe.
        available: Vec<String>,
    },
    /// `Module::kernel` was asked for a name the module does not contain.
    KernelNotFound {
        /// The requested name.
        name: String,
        /// The kernels the module does have, when the driver can enumerate them.
        available: Option<Vec<String>>,
    },
    /// The launch configuration is invalid (zero dimension, too many threads, ...).
    InvalidLaunch(String),
    /// The argument list does not match the kernel's parameter list.
    ArgumentMismatch(String),
    /// Any other misuse of the API (length mismatch on copies, ...).
    InvalidArgument(String),
    /// A checked launch was asked of a kernel whose image has no cutec manifest.
    NoManifest(String),
}

impl RuntimeError {
    /// True when the error means "this machine cannot run CUDA at all"
    /// (no driver, no GPU, driver too old): test runners report SKIP
    /// (exit code 77) instead of FAIL.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, RuntimeError::NoDriver(_) | RuntimeError::NoDevice(_) | RuntimeError::DriverTooOld { .. })
    }
}

/// Formats a CUDA version integer (`13000`) as `13.0`.
pub fn format_cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuntimeError::NoDriver(why) => write!(f, "no CUDA driver (libcuda.so) found: {why}"),
            RuntimeError::NoDevice(why) => write!(f, "no usable CUDA device: {why}"),
            RuntimeError::DriverTooOld { found, required } => write!(
                f,
                "CUDA driver too old: it supports CUDA {} but cute-runtime needs CUDA {} \
                 (NVIDIA driver 580 or newer)",
                format_cuda_version(*found),
                format_cuda_version(*required)
            ),
            RuntimeError::Driver { op, code, message } => {
                write!(f, "{op} failed: {code}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            RuntimeError::Io { path, message } => {
                write!(f, "cannot read {}: {message}", path.display())
            }
            RuntimeError::InvalidImage(why) => write!(f, "invalid kernel image: {why}"),
            RuntimeError::HostNotFound { name, available } => {
                write!(f, "no host function `{name}` in the manifest; host functions: ")?;
                if available.is_empty() {
                    write!(f, "(none)")
                } else {
                    write!(f, "{}", available.join(", "))
                }
            }
            RuntimeError::KernelNotFound { name, available } => {
                write!(f, "kernel `{name}` not found in module")?;
                match available {
                    Some(names) if names.is_empty() => write!(f, " (the module has no kernels)"),
                    Some(names) => write!(f, "; available kernels: {}", names.join(", ")),
                    None => Ok(()),
                }
            }
            RuntimeError::InvalidLaunch(why) => write!(f, "invalid launch configuration: {why}"),
            RuntimeError::ArgumentMismatch(why) => write!(f, "kernel argument mismatch: {why}"),
            RuntimeError::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            RuntimeError::NoManifest(why) => write!(f, "no kernel manifest: {why}"),
        }
    }
}

impl std::error::Error for RuntimeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_readable() {
        let e = RuntimeError::NoDriver("searched libcuda.so".into());
        assert_eq!(e.to_string(), "no CUDA driver (libcuda.so) found: searched libcuda.so");
        assert!(e.is_unavailable());

        let e = RuntimeError::KernelNotFound {
            name: "vector_add".into(),
            available: Some(vec!["gemm".into(), "copy".into()]),
        };
        assert_eq!(e.to_string(), "kernel `vector_add` not found in module; available kernels: gemm, copy");
        assert!(!e.is_unavailable());

        let e = RuntimeError::DriverTooOld { found: 12040, required: 13000 };
        assert!(e.to_string().contains("CUDA 12.4"));
        assert!(e.to_string().contains("CUDA 13.0"));
        assert!(e.is_unavailable());
    }

    #[test]
    fn version_format() {
        assert_eq!(format_cuda_version(13000), "13.0");
        assert_eq!(format_cuda_version(12080), "12.8");
    }
}
