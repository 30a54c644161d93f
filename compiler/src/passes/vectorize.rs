//! `cute-vectorize`: chooses the vector width of every fragment load and store, and of every copy.
//!
//! For `cute.load_frag`/`cute.store_frag` on a tensor of static size `n`, the width `w` is the largest
//! power of two such that: the first `w` elements of every chunk are contiguous in memory (the
//! layout's max_common_vector with the fragment's compact layout is a multiple of `w`), every other
//! stride of the coalesced layout is a multiple of `w` (so every chunk starts aligned; a `?` stride
//! counts by its known divisibility, `?{div=8}`), `w` elements fit in 16 bytes (the widest global
//! access, `ld.global.v4.b32`), and the tensor's proven base alignment covers `w` elements. The
//! choice is recorded on the op as `vector = w`, which `cute-lower-to-gpu` follows. A `max_vector`
//! attribute (a copy atom's width, from `copy(tiled_copy, src, dst)`) caps it. A `cute.copy` moves
//! through registers, so each side gets its own width: `src_vector` and `dst_vector`.

use super::common::{fail, tensor_info, vector_width, Reported};
use crate::ir::{self, Op};
use melior::pass::Pass;

pub const NAME: &str = "cute-vectorize";
pub const SUMMARY: &str = "Record on each cute.load_frag/store_frag/copy the widest vector access its layouts and alignment prove (vector = N)";

static PASS_ID: super::PassId = super::PassId(3);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

fn run(module: Op) -> Result<(), Reported> {
    for op in ir::nested_ops(module) {
        // A copy goes through registers: each side gets its own width (`src_vector`, `dst_vector`).
        let sides: &[(usize, &str)] = match ir::op_name(op).as_str() {
            "cute.load_frag" => &[(0, "vector")],
            "cute.store_frag" => &[(1, "vector")],
            "cute.copy" => &[(0, "src_vector"), (1, "dst_vector")],
            _ => continue,
        };
        for &(operand, attr_name) in sides {
            let (info, layout, elem_bytes) =
                tensor_info(op, &ir::type_to_string(ir::value_type(ir::operand(op, operand))))?;
            let mut w = vector_width(&layout, info.align, elem_bytes).map_err(|e| fail(op, &format!("{NAME}: {e}")))?;
            // A copy atom's width caps the access (CuTe moves exactly what the atom moves).
            if let Some(cap) = ir::int_attr(op, "max_vector") {
                w = w.min(cap.max(1) as u32);
            }
            let attr = ir::parse_attr(ir::context(op), &format!("{w} : i32"))
                .ok_or_else(|| fail(op, "internal error: bad attribute"))?;
            ir::set_attr(op, attr_name, attr);
        }
    }
    Ok(())
}
