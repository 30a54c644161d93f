//! The part of the XLA FFI C API (OpenXLA's `xla/ffi/api/c_api.h`) that cutec's JAX custom call
//! uses ([`crate::jax_ops`]), declared here from the header: a call frame's buffers, attributes
//! and execution context, the stream it runs on, errors, and the metadata XLA asks a handler for
//! when it is registered.
//!
//! The API is a C ABI whose every struct starts with its size; additions append fields and bump
//! the minor version, incompatible changes bump the major one (0 for every XLA so far). So a
//! frame is read only after checking that XLA's structs are at least as large as the fields read
//! here, and the API's major version is 0; anything else is an XLA FFI error saying so, never a
//! read past what XLA passed. The layouts below are those of API version 0.1 (jaxlib 0.4.35 and
//! later), which later minor versions extend without moving them.

use std::ffi::{c_char, c_void, CString};
use std::mem::{offset_of, size_of};

use cute_runtime::DType;

use crate::arguments::Number;

/// The API version this module's declarations follow (`XLA_FFI_API_MAJOR`, `XLA_FFI_API_MINOR`).
const API_MAJOR: i32 = 0;
const API_MINOR: i32 = 1;

const EXTENSION_METADATA: i32 = 1;
const STAGE_EXECUTE: i32 = 3;
const ARG_BUFFER: i32 = 1;
const RET_BUFFER: i32 = 1;
const ATTR_SCALAR: i32 = 3;
const ATTR_STRING: i32 = 4;

/// `XLA_FFI_Error_Code`s the handler reports.
pub const INVALID_ARGUMENT: i32 = 3;
pub const NOT_FOUND: i32 = 5;
pub const FAILED_PRECONDITION: i32 = 9;
pub const INTERNAL: i32 = 13;

/// `XLA_FFI_Error`: opaque, owned by whoever receives it (XLA, for a handler's result).
#[repr(C)]
pub struct XlaError {
    _opaque: [u8; 0],
}

#[repr(C)]
struct ExecutionContext {
    _opaque: [u8; 0],
}

#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: i32,
    next: *mut ExtensionBase,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major: i32,
    minor: i32,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: i32,
}

#[repr(C)]
struct StreamGetArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    ctx: *mut ExecutionContext,
    stream: *mut c_void,
}

/// `XLA_FFI_Api`, up to the last entry used (`XLA_FFI_Stream_Get`).
#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: Option<unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut XlaError>,
    error_get_message: *const c_void,
    error_destroy: *const c_void,
    handler_register: *const c_void,
    stream_get: Option<unsafe extern "C" fn(*mut StreamGetArgs) -> *mut XlaError>,
}

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: i32,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

/// `XLA_FFI_Args` and `XLA_FFI_Rets` (the same layout).
#[repr(C)]
struct Values {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    values: *const *mut c_void,
}

#[repr(C)]
struct ByteSpan {
    ptr: *const c_char,
    len: usize,
}

#[repr(C)]
struct Scalar {
    dtype: i32,
    value: *const c_void,
}

#[repr(C)]
struct Attrs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    names: *const *const ByteSpan,
    attrs: *const *const c_void,
}

/// `XLA_FFI_CallFrame`: what XLA passes a handler.
#[repr(C)]
pub struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut ExecutionContext,
    stage: i32,
    args: Values,
    rets: Values,
    attrs: Attrs,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
}

#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

/// The size of a struct up to and including a field (`XLA_FFI_STRUCT_SIZE`).
macro_rules! size_through {
    ($t:ty, $field:ident, $ft:ty) => {
        offset_of!($t, $field) + size_of::<$ft>()
    };
}

/// A tensor XLA passes: a dense row-major buffer on the device.
pub struct BufferRef<'a> {
    pub dtype: i32,
    pub data: u64,
    pub dims: &'a [i64],
}

/// What a handler was called for.
pub enum Called<'a> {
    /// XLA registering the handler asked for its metadata (answered: there is nothing to do).
    Metadata,
    /// A call to execute.
    Execute(Frame<'a>),
}

/// A call frame whose API and struct sizes have been checked.
pub struct Frame<'a> {
    frame: &'a CallFrame,
    api: &'a Api,
}

/// Reports `message` with `code` through the API of `frame`, or `None` when the frame has no API
/// to report through (which XLA never passes: a frame's API is set in every call it makes).
///
/// # Safety
/// `frame` is null or the call frame XLA passed to the handler.
pub unsafe fn error_in(frame: *const CallFrame, code: i32, message: &str) -> Option<*mut XlaError> {
    // SAFETY: the caller's contract; a frame and its API are read only as far as their sizes say.
    let frame = unsafe { frame.as_ref()? };
    if frame.struct_size < size_through!(CallFrame, api, *const Api) {
        return None;
    }
    // SAFETY: XLA's API table, valid for the life of the process.
    let api = unsafe { frame.api.as_ref()? };
    if api.struct_size < size_through!(Api, error_create, usize) {
        return None;
    }
    let create = api.error_create?;
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: size_of::<ErrorCreateArgs>(),
        extension_start: std::ptr::null_mut(),
        message: message.as_ptr(),
        errc: code,
    };
    // SAFETY: XLA's function, called as the header specifies; it copies the message.
    Some(unsafe { create(&mut args) })
}

impl<'a> Frame<'a> {
    /// The frame XLA passed, checked: its API's major version is 0 and its structs are at least as
    /// large as what is read here. `Err` says what does not hold.
    ///
    /// # Safety
    /// `frame` is the call frame XLA passed to the handler, valid for `'a`.
    pub unsafe fn of(frame: *const CallFrame) -> Result<Called<'a>, String> {
        // SAFETY: the caller's contract.
        let Some(f) = (unsafe { frame.as_ref() }) else { return Err("XLA passed no call frame".into()) };
        // Registration asks for the metadata with a frame that may have no API (jaxlib 0.4.35).
        if f.struct_size >= size_through!(CallFrame, extension_start, usize)
            // SAFETY: the extension chain of the frame, each link read only as far as its size says.
            && unsafe { answer_metadata(f.extension_start) }
        {
            return Ok(Called::Metadata);
        }
        let need = size_through!(CallFrame, attrs, Attrs);
        if f.struct_size < need {
            return Err(format!(
                "XLA's call frame has {} bytes, fewer than the {need} of XLA FFI API 0.1 (jaxlib >= 0.4.35)",
                f.struct_size
            ));
        }
        // SAFETY: XLA's API table, valid for the life of the process.
        let Some(api) = (unsafe { f.api.as_ref() }) else { return Err("XLA passed no API table".into()) };
        if api.struct_size < size_through!(Api, stream_get, usize) {
            return Err(format!(
                "XLA's FFI API table has {} bytes, too few to hold XLA_FFI_Stream_Get",
                api.struct_size
            ));
        }
        if api.api_version.major != API_MAJOR {
            return Err(format!(
                "XLA's FFI API is version {}.{}; cutec's handler speaks {API_MAJOR}.x",
                api.api_version.major, api.api_version.minor
            ));
        }
        if f.stage != STAGE_EXECUTE {
            return Err(format!("called at execution stage {}; cutec's handler only executes", f.stage));
        }
        Ok(Called::Execute(Frame { frame: f, api }))
    }

    /// `message` with `code`, as the error the handler returns.
    pub fn error(&self, code: i32, message: &str) -> *mut XlaError {
        // SAFETY: this frame was checked to have an API with `XLA_FFI_Error_Create`.
        unsafe { error_in(self.frame, code, message) }.unwrap_or(std::ptr::null_mut())
    }

    /// The raw `CUstream` the call runs on. `Err`: XLA's own error (returned as it is).
    pub fn stream(&self) -> Result<u64, *mut XlaError> {
        let get = self.api.stream_get.ok_or_else(|| self.error(INTERNAL, "XLA's API has no XLA_FFI_Stream_Get"))?;
        let mut args = StreamGetArgs {
            struct_size: size_of::<StreamGetArgs>(),
            extension_start: std::ptr::null_mut(),
            ctx: self.frame.ctx,
            stream: std::ptr::null_mut(),
        };
        // SAFETY: XLA's function, called with this call's execution context.
        let err = unsafe { get(&mut args) };
        if !err.is_null() {
            return Err(err);
        }
        Ok(args.stream as usize as u64)
    }

    /// Operand `i` (`XLA_FFI_Args`).
    pub fn operand(&self, i: usize) -> Result<BufferRef<'a>, String> {
        // SAFETY: the frame's operand list, of the size it says.
        unsafe { buffer(&self.frame.args, i, ARG_BUFFER, "operand") }
    }

    /// Result `i` (`XLA_FFI_Rets`).
    pub fn result(&self, i: usize) -> Result<BufferRef<'a>, String> {
        // SAFETY: the frame's result list, of the size it says.
        unsafe { buffer(&self.frame.rets, i, RET_BUFFER, "result") }
    }

    /// The string attribute `name`, if there is one.
    pub fn string_attr(&self, name: &str) -> Option<&'a [u8]> {
        let (kind, value) = self.attr(name)?;
        if kind != ATTR_STRING {
            return None;
        }
        // SAFETY: a string attribute's value is an `XLA_FFI_ByteSpan`.
        let span = unsafe { (value as *const ByteSpan).as_ref()? };
        if span.ptr.is_null() {
            return Some(&[]);
        }
        // SAFETY: XLA's bytes, alive for the call.
        Some(unsafe { std::slice::from_raw_parts(span.ptr as *const u8, span.len) })
    }

    /// The scalar attribute `name` as a number: `Ok(None)` when there is none, `Err` for a value
    /// of a type that is not an integer, a float or a bool.
    pub fn scalar_attr(&self, name: &str) -> Result<Option<Number>, String> {
        let Some((kind, value)) = self.attr(name) else { return Ok(None) };
        if kind != ATTR_SCALAR {
            return Err(format!("attribute `{name}` is not a scalar (attribute type {kind})"));
        }
        // SAFETY: a scalar attribute's value is an `XLA_FFI_Scalar`.
        let s = unsafe { (value as *const Scalar).as_ref() }.ok_or("a null scalar attribute")?;
        // SAFETY: `s.value` points at one value of `s.dtype`.
        unsafe { number(s) }
            .map(Some)
            .map_err(|t| format!("attribute `{name}` is an XLA {t} scalar, not a number cutec takes"))
    }

    /// `(type, value pointer)` of the attribute `name`.
    fn attr(&self, name: &str) -> Option<(i32, *const c_void)> {
        let a = &self.frame.attrs;
        if a.struct_size < size_through!(Attrs, attrs, usize) {
            return None;
        }
        (0..usize::try_from(a.size).ok()?).find_map(|i| {
            // SAFETY: the attribute lists have `size` entries.
            let (kind, span, value) = unsafe { (*a.types.add(i), (*a.names.add(i)).as_ref()?, *a.attrs.add(i)) };
            // SAFETY: an attribute name's bytes, alive for the call.
            let bytes = unsafe { std::slice::from_raw_parts(span.ptr as *const u8, span.len) };
            (bytes == name.as_bytes()).then_some((kind, value))
        })
    }
}

/// Fills in the metadata XLA asks for when it registers the handler (newer XLA calls it once with
/// a metadata extension): the API version it speaks and no traits (not command-buffer
/// compatible: a host function may print or choose its launches at call time). The version is
/// 0.1, the one these declarations follow, which every XLA since jaxlib 0.4.35 accepts (newer
/// ones accept 0.1 up to their own). `false`: not a metadata request.
///
/// # Safety
/// `ext` is null or the frame's extension chain.
unsafe fn answer_metadata(mut ext: *mut ExtensionBase) -> bool {
    // SAFETY: the caller's contract; each link is read only as far as its size says.
    while let Some(e) = unsafe { ext.as_ref() } {
        if e.struct_size < size_of::<ExtensionBase>() {
            return false;
        }
        if e.kind == EXTENSION_METADATA {
            if e.struct_size >= size_of::<MetadataExtension>() {
                // SAFETY: a metadata extension of the size checked above.
                let m = unsafe { (*(ext as *mut MetadataExtension)).metadata };
                // SAFETY: XLA's metadata struct, written only within its size.
                if let Some(m) = unsafe { m.as_mut() } {
                    if m.struct_size >= size_through!(Metadata, traits, u32) {
                        m.api_version.major = API_MAJOR;
                        m.api_version.minor = API_MINOR;
                        m.traits = 0;
                    }
                }
            }
            return true;
        }
        ext = e.next;
    }
    false
}

/// Buffer `i` of an operand or result list, which must be a buffer (`want`).
///
/// # Safety
/// `list` is a list of the call frame.
unsafe fn buffer<'a>(list: &Values, i: usize, want: i32, what: &str) -> Result<BufferRef<'a>, String> {
    let n = usize::try_from(list.size).unwrap_or(0);
    if list.struct_size < size_through!(Values, values, usize) || i >= n {
        return Err(format!("the custom call has {n} {what}s; cutec expects one more (its {what} {i})"));
    }
    // SAFETY: the list has `size` entries.
    let (kind, value) = unsafe { (*list.types.add(i), *list.values.add(i)) };
    if kind != want {
        return Err(format!("its {what} {i} is not a buffer (XLA FFI type {kind})"));
    }
    // SAFETY: a buffer entry points at an `XLA_FFI_Buffer`.
    let b = unsafe { (value as *const Buffer).as_ref() }.ok_or_else(|| format!("its {what} {i} is null"))?;
    if b.struct_size < size_through!(Buffer, dims, usize) {
        return Err(format!("its {what} {i} is an XLA_FFI_Buffer of {} bytes, too few", b.struct_size));
    }
    let rank = usize::try_from(b.rank).map_err(|_| format!("its {what} {i} has rank {}", b.rank))?;
    let dims = if rank == 0 {
        &[][..]
    } else {
        // SAFETY: `rank` extents, alive for the call.
        unsafe { std::slice::from_raw_parts(b.dims, rank) }
    };
    Ok(BufferRef { dtype: b.dtype, data: b.data as usize as u64, dims })
}

/// A scalar attribute's value, or the XLA name of its type when it is not a number cutec takes.
///
/// # Safety
/// `s.value` points at a value of type `s.dtype`.
unsafe fn number(s: &Scalar) -> Result<Number, String> {
    let p = s.value;
    // SAFETY: the caller's contract (unaligned reads: XLA makes no promise of alignment).
    unsafe {
        Ok(match s.dtype {
            1 => Number::Bool(std::ptr::read_unaligned(p as *const u8) != 0),
            2 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const i8))),
            3 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const i16))),
            4 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const i32))),
            5 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const i64))),
            6 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const u8))),
            7 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const u16))),
            8 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const u32))),
            9 => Number::Int(i128::from(std::ptr::read_unaligned(p as *const u64))),
            11 => Number::Float(f64::from(std::ptr::read_unaligned(p as *const f32))),
            12 => Number::Float(std::ptr::read_unaligned(p as *const f64)),
            d => return Err(xla_type_name(d)),
        })
    }
}

/// The cutec element type of an `XLA_FFI_DataType`; `Err` names the XLA type.
pub fn element_type(code: i32) -> Result<DType, String> {
    Ok(match code {
        1 => DType::Bool,
        2 => DType::I8,
        3 => DType::I16,
        4 => DType::I32,
        5 => DType::I64,
        6 => DType::U8,
        7 => DType::U16,
        8 => DType::U32,
        9 => DType::U64,
        10 => DType::F16,
        11 => DType::F32,
        12 => DType::F64,
        16 => DType::BF16,
        19 => DType::F8E5M2,
        20 => DType::F8E4M3,
        d => return Err(xla_type_name(d)),
    })
}

/// The XLA name of a data type (for messages).
pub fn xla_type_name(code: i32) -> String {
    let name = match code {
        1 => "pred",
        2..=5 => return format!("s{}", 8 << (code - 2)),
        6..=9 => return format!("u{}", 8 << (code - 6)),
        10 => "f16",
        11 => "f32",
        12 => "f64",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        28 => "f8e4m3",
        29 => "f8e3m4",
        _ => return format!("data type {code}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The struct sizes XLA's header computes (`XLA_FFI_STRUCT_SIZE`) on x86_64 for API 0.1.
    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_through!(CallFrame, attrs, Attrs), 168);
        assert_eq!(size_through!(Buffer, dims, usize), 48);
        assert_eq!(size_through!(Api, stream_get, usize), 88);
        assert_eq!(size_of::<StreamGetArgs>(), 32);
        assert_eq!(size_of::<ErrorCreateArgs>(), 32);
        assert_eq!(size_through!(Metadata, traits, u32), 36);
    }
}
