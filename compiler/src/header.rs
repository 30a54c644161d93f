//! `cutec build FILE --emit=header`: a typed C header for a `.cute` file.
//!
//! For each kernel it declares, on top of `cute_runtime.h`:
//! * `NAME_get(module, &kernel)`: looks the kernel up;
//! * `NAME_PARAM_view(ptr, <one int64_t per dynamic entry>, bytes)`: a
//!   `cute_tensor` for a tensor parameter with every static shape/stride
//!   entry filled in from the kernel's type, so only the dynamic ones are
//!   written by hand;
//! * `NAME_launch(kernel, stream, config, <typed parameters>)`: a checked
//!   launch (`cute_kernel_launch`) with one C parameter per `.cute`
//!   parameter (`const cute_tensor*` for tensors, the C scalar type for
//!   scalars), so a wrong argument count or kind is a C compile error and
//!   the rest is checked at run time against the cubin's manifest.
//!
//! For each host function the same view helpers, `NAME_get(module, &host)` and
//! `NAME_call(host, stream, <typed parameters>)`, a checked call of the host function's launch plan
//! (`cute_host_call`).

use cute_lang::kir::{Module, Param, ParamKind};
use cute_lang::types::Scalar;
use std::fmt::Write;

const C_KEYWORDS: [&str; 44] = [
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern", "float",
    "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed", "sizeof",
    "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
    "args", "kernel", "stream", "config", "module", "out", "bytes",
];

/// A C identifier for a `.cute` name (keywords and the names the generated
/// functions use themselves get a trailing `_`).
fn c_ident(name: &str) -> String {
    // An instance of a generic host function, `add<f16,f32>`, is `add_f16_f32` in C.
    let name = name.strip_suffix('>').map_or_else(|| name.to_string(), |n| n.replace(['<', ','], "_"));
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if C_KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// The C type of a scalar parameter and the `cute_arg` constructor for it.
fn c_scalar(s: Scalar) -> (&'static str, String) {
    let d = s.c_name();
    match s {
        Scalar::I8 => ("int8_t", format!("cute_arg_scalar_i({d}, %)")),
        Scalar::I16 => ("int16_t", format!("cute_arg_scalar_i({d}, %)")),
        Scalar::I32 => ("int32_t", format!("cute_arg_scalar_i({d}, %)")),
        Scalar::I64 => ("int64_t", format!("cute_arg_scalar_i({d}, %)")),
        Scalar::U8 => ("uint8_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::U16 => ("uint16_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::U32 => ("uint32_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::U64 => ("uint64_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::Bool => ("int", format!("cute_arg_scalar_u({d}, (%) != 0)")),
        // Bit patterns.
        Scalar::F16 | Scalar::BF16 => ("uint16_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::F8E4M3 | Scalar::F8E5M2 => ("uint8_t", format!("cute_arg_scalar_u({d}, %)")),
        Scalar::F32 | Scalar::TF32 => ("float", format!("cute_arg_scalar_f({d}, %)")),
        Scalar::F64 => ("double", format!("cute_arg_scalar_f({d}, %)")),
    }
}

/// What a set of wrappers is for: a kernel (launched with a configuration) or a host function
/// (called; its plan launches the kernels).
#[derive(Clone, Copy, PartialEq)]
enum Entry {
    Kernel,
    Host,
}

fn entry_decls(entry: Entry, symbol: &str, params: &[Param], out: &mut String) {
    struct F<'a> {
        symbol: &'a str,
        params: &'a [Param],
    }
    let f = F { symbol, params };
    let k = c_ident(f.symbol);
    let mut sig = Vec::new();
    let mut launch_params = Vec::new();
    let mut launch_args = Vec::new();
    let mut views = String::new();
    for p in f.params {
        let pn = c_ident(&p.name);
        match &p.kind {
            ParamKind::Scalar(s) => {
                let (cty, ctor) = c_scalar(*s);
                sig.push(format!("{}: {}", p.name, s.name()));
                launch_params.push(format!("{cty} {pn}"));
                launch_args.push(ctor.replace('%', &pn));
            }
            ParamKind::Stream => {
                sig.push(format!("{}: stream", p.name));
                launch_params.push(format!("void* /* CUstream */ {pn}"));
                launch_args.push(format!("cute_arg_stream({pn})"));
            }
            ParamKind::Tensor { ty: t, .. } => {
                sig.push(format!("{}: {t}", p.name));
                launch_params.push(format!("const cute_tensor* {pn}"));
                launch_args.push(format!("cute_arg_tensor({pn})"));
                let shape = t.layout.shape.leaves();
                let stride = t.layout.stride.leaves();
                let mut view_params = vec!["uint64_t ptr".to_string()];
                let mut body = format!(
                    "    cute_tensor t;\n    memset(&t, 0, sizeof t);\n    t.ptr = ptr;\n    t.dtype = {};\n    t.nleaves = {};\n    t.bytes = bytes;\n",
                    t.elem.c_name(),
                    shape.len()
                );
                for (what, leaves) in [("shape", &shape), ("stride", &stride)] {
                    for (i, e) in leaves.iter().enumerate() {
                        match e.as_static() {
                            Some(v) => {
                                let _ = writeln!(body, "    t.{what}[{i}] = {v};");
                            }
                            None => {
                                view_params.push(format!("int64_t {what}{i}"));
                                let _ = writeln!(body, "    t.{what}[{i}] = {what}{i};");
                            }
                        }
                    }
                }
                view_params.push("uint64_t bytes".into());
                let _ = write!(
                    views,
                    "/* A view for `{}` of {}: {t}. Dynamic entries are arguments; `bytes` is the\n   \
                     memory addressable from ptr (0 = unknown, no bounds check). */\n\
                     static inline cute_tensor {k}_{pn}_view({}) {{\n{body}    return t;\n}}\n\n",
                    p.name,
                    f.symbol,
                    view_params.join(", ")
                );
            }
        }
    }
    let (what, handle, lookup) = match entry {
        Entry::Kernel => ("kernel", "cute_kernel", "cute_module_kernel"),
        Entry::Host => ("host", "cute_host", "cute_module_host"),
    };
    let _ = write!(
        out,
        "/* ---- {what} {}({}) ---- */\n\n\
         #define {}_{}_NAME \"{}\"\n\n\
         /* Looks the {what} up in a module loaded from this file's cubin. */\n\
         static inline int {k}_get(const cute_module* module, {handle}** out) {{\n    \
         return {lookup}(module, \"{}\", out);\n}}\n\n{views}",
        f.symbol,
        sig.join(", "),
        k.to_ascii_uppercase(),
        what.to_ascii_uppercase(),
        f.symbol,
        f.symbol,
    );
    let n = launch_args.len();
    let (name, mut params, call, doc) = match entry {
        Entry::Kernel => (
            format!("{k}_launch"),
            vec!["const cute_kernel* kernel".to_string(), "const cute_stream* stream".into(), "const cute_launch_config* config".into()],
            "cute_kernel_launch(kernel, stream, config",
            "Checked, asynchronous launch: each argument is checked against the cubin's manifest\n   before anything is launched (CUTE_ERROR_ARGUMENT_MISMATCH names the parameter).",
        ),
        Entry::Host => (
            format!("{k}_call"),
            vec!["const cute_host* host".to_string(), "const cute_stream* stream".into()],
            "cute_host_call(host, stream",
            "Checked, asynchronous call: the arguments are checked against the manifest, then the\n   host function's launch plan runs (its launches are refused, not overrun, on partial tiles).",
        ),
    };
    params.extend(launch_params);
    let _ = write!(out, "/* {doc} */\nstatic inline int {name}({}) {{\n", params.join(", "));
    if n == 0 {
        let _ = write!(out, "    return {call}, NULL, 0);\n}}\n\n");
    } else {
        let _ = writeln!(out, "    cute_arg args[{n}];");
        for (i, a) in launch_args.iter().enumerate() {
            let _ = writeln!(out, "    args[{i}] = {a};");
        }
        let _ = write!(out, "    return {call}, args, {n});\n}}\n\n");
    }
}

/// The C header text for an elaborated module (one set of wrappers per kernel instance, named
/// by its cubin symbol); `file_name` names the source in the banner and the include guard.
pub fn header_text(module: &Module, file_name: &str) -> String {
    let stem = std::path::Path::new(file_name).file_stem().and_then(|s| s.to_str()).unwrap_or("cute");
    let guard: String = format!(
        "CUTEC_{}_H",
        stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect::<String>()
    );
    let banner_name = file_name.replace("*/", "* /");
    let mut out = format!(
        "/* Generated by `cutec build {banner_name} --emit=header`; do not edit.\n   \
         Typed wrappers over cute_runtime.h for the kernels and host functions of {banner_name}. */\n\
         #ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n#include <string.h>\n#include \"cute_runtime.h\"\n\n\
         #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n"
    );
    for k in &module.kernels {
        entry_decls(Entry::Kernel, &k.symbol, &k.params, &mut out);
    }
    let mut generics: Vec<&str> = Vec::new();
    for h in &module.hosts {
        // A generic host function: its name looks up every instance (a call selects one by the
        // tensors' dtypes); each instance has its typed wrappers (`add_f16_call`, ...).
        if let Some(inst) = &h.instance {
            if !generics.contains(&inst.generic.as_str()) {
                generics.push(&inst.generic);
                let k = c_ident(&inst.generic);
                let names: Vec<&str> = module
                    .hosts
                    .iter()
                    .filter(|o| o.instance.as_ref().is_some_and(|i| i.generic == inst.generic))
                    .map(|o| o.name.as_str())
                    .collect();
                let _ = write!(
                    out,
                    "/* ---- generic host {g}: instances {list} ---- */\n\n\
                     #define {K}_HOST_NAME \"{g}\"\n\n\
                     /* Looks up every instance of the generic host function: a call (cute_host_call, or the\n   \
                     instances' typed _call wrappers) runs the one its tensors' dtypes select. */\n\
                     static inline int {k}_get(const cute_module* module, cute_host** out) {{\n    \
                     return cute_module_host(module, \"{g}\", out);\n}}\n\n",
                    g = inst.generic,
                    list = names.join(", "),
                    K = k.to_ascii_uppercase(),
                );
            }
        }
        entry_decls(Entry::Host, &h.name, &h.params, &mut out);
    }
    let _ = write!(out, "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */\n");
    out
}
