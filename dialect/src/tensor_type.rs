//! `!cute.tensor<elem, "space", align, "layout">`: building it, and reading its parameters back.
//!
//! The MLIR C API cannot read the parameters of an IRDL-defined type, so they are read back from the
//! type's printed form, which IRDL keeps stable: `!cute.tensor<f32, "gmem", 4 : i64, "(?):(1)">`.

use crate::DialectError;
use melior::ir::Type;
use melior::Context;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorTypeInfo {
    /// The element type as MLIR prints it (`f32`, `i32`, ...).
    pub elem: String,
    pub space: String,
    pub align: u32,
    /// The layout in CuTe notation, `?` for dynamic entries.
    pub layout: String,
}

impl TensorTypeInfo {
    pub fn to_mlir(&self) -> String {
        format!("!cute.tensor<{}, \"{}\", {}, \"{}\">", self.elem, self.space, self.align, self.layout)
    }

    pub fn build<'c>(&self, context: &'c Context) -> Result<Type<'c>, DialectError> {
        Type::parse(context, &self.to_mlir()).ok_or_else(|| DialectError(format!("internal error: cannot build type {}", self.to_mlir())))
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
        Some(TensorTypeInfo { elem: elem.to_string(), space: space.to_string(), align, layout: layout.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_builds() {
        let printed = "!cute.tensor<f32, \"gmem\", 4 : i64, \"(?,8):(8,1)\">";
        let info = TensorTypeInfo::parse(printed).unwrap();
        assert_eq!(info, TensorTypeInfo { elem: "f32".into(), space: "gmem".into(), align: 4, layout: "(?,8):(8,1)".into() });
    }
}
