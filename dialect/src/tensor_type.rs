//! `!cute.tensor<elem, "space", align, "layout">`: building it, and reading its parameters back.
//!
//! A swizzled shared-memory tensor writes its layout as CuTe prints a composed layout,
//! `"S<3,3,3> o 0 o (128,64):(64,1)"`: the swizzle acts on element offsets from where the swizzled
//! layout was attached to memory (docs/dialect.md).
//!
//! The MLIR C API cannot read the parameters of an IRDL-defined type, so they are read back from the
//! type's printed form, which IRDL keeps stable: `!cute.tensor<f32, "gmem", 4 : i64, "(?):(1)">`.

use crate::DialectError;
use cute_layout::Swizzle;
use melior::ir::Type;
use melior::Context;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorTypeInfo {
    /// The element type as MLIR prints it (`f32`, `i32`, ...).
    pub elem: String,
    pub space: String,
    pub align: u32,
    /// The layout in CuTe notation, `?` for dynamic entries (without the swizzle).
    pub layout: String,
    pub swizzle: Option<Swizzle>,
}

impl TensorTypeInfo {
    pub fn to_mlir(&self) -> String {
        match self.swizzle {
            Some(sw) => format!(
                "!cute.tensor<{}, \"{}\", {}, \"{sw} o 0 o {}\">",
                self.elem, self.space, self.align, self.layout
            ),
            None => format!("!cute.tensor<{}, \"{}\", {}, \"{}\">", self.elem, self.space, self.align, self.layout),
        }
    }

    pub fn build<'c>(&self, context: &'c Context) -> Result<Type<'c>, DialectError> {
        Type::parse(context, &self.to_mlir())
            .ok_or_else(|| DialectError(format!("internal error: cannot build type {}", self.to_mlir())))
    }

    /// Reads a type's parameters back; `None` when the type is not a `cute.tensor`.
    pub fn read(ty: Type) -> Option<TensorTypeInfo> {
        Self::parse(&ty.to_string())
    }

    pub fn parse(printed: &str) -> Option<TensorTypeInfo> {
        let inner = printed.strip_prefix("!cute.tensor<")?.strip_suffix('>')?;
        let (elem, rest) = inner.split_once(", \"")?;
        let (space, rest) = rest.split_once("\", ")?;
        let (align, rest) = rest.split_once(", \"")?;
        let align = align.trim_end_matches(" : i64").parse().ok()?;
        let layout = rest.strip_suffix('"')?;
        let (swizzle, layout) = match layout.strip_prefix("S<") {
            Some(rest) => {
                let (params, layout) = rest.split_once("> o 0 o ")?;
                let p: Vec<i64> = params.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
                let [b, m, s] = p[..] else { return None };
                (Some(Swizzle::new(b, m, s).ok()?), layout)
            }
            None => (None, layout),
        };
        Some(TensorTypeInfo {
            elem: elem.to_string(),
            space: space.to_string(),
            align,
            layout: layout.to_string(),
            swizzle,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_builds() {
        let printed = "!cute.tensor<f32, \"gmem\", 4 : i64, \"(?,8):(8,1)\">";
        let info = TensorTypeInfo::parse(printed).unwrap();
        assert_eq!(
            info,
            TensorTypeInfo {
                elem: "f32".into(),
                space: "gmem".into(),
                align: 4,
                layout: "(?,8):(8,1)".into(),
                swizzle: None
            }
        );
    }

    #[test]
    fn reads_back_a_swizzle() {
        let printed = "!cute.tensor<bf16, \"smem\", 16 : i64, \"S<3,3,3> o 0 o (8,64):(64,1)\">";
        let info = TensorTypeInfo::parse(printed).unwrap();
        assert_eq!(info.swizzle, Some(Swizzle::new(3, 3, 3).unwrap()));
        assert_eq!(info.layout, "(8,64):(64,1)");
        assert_eq!(TensorTypeInfo::parse(&info.to_mlir().replace(", 16,", ", 16 : i64,")), Some(info));
        // A swizzle CuTe would not accept is not a type.
        assert_eq!(TensorTypeInfo::parse("!cute.tensor<bf16, \"smem\", 16 : i64, \"S<3,3,2> o 0 o 8:1\">"), None);
    }
}
