//! `cute-verify`: the checks on `cute` ops that IRDL's constraints cannot express.
//!
//! IRDL checks operand and result kinds (a `!cute.tensor`, `i32` offsets, a vector). This pass checks
//! what needs the layout: each CuTe tensor op's result type is what the layout algebra gives
//! (`algebra.rs`) and its operands match its `args`; a coordinate indexes its tensor; a view passes
//! one value per `?` entry of its result layout; `cute.dyn` names an existing entry; loads and stores
//! use the tensor's element type; a fragment has exactly the tensor's (static) number of elements; a
//! copy's two sides agree; copy atoms and tiled copies are consistent; allocations have static
//! layouts in rmem or smem; a kernel argument tensor lives in gmem. Errors point at the op's
//! location, which for IR built from `.cute` is the source line.

use super::algebra::{self, Folder, TiledCopyType};
use super::common::{fail, tensor_info, Reported};
use crate::ir::{self, Op};
use cute_abi::DType;
use cute_layout::atom::atomic::red_fragment_for;
use cute_layout::{IntTuple, Layout};
use melior::pass::Pass;

pub const NAME: &str = "cute-verify";
pub const SUMMARY: &str = "Check cute ops against their layouts (dynamic value counts, element types, fragment sizes)";

static PASS_ID: super::PassId = super::PassId(1);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

fn tensor_of(op: Op, v: ir::Val) -> Result<(cute_dialect::TensorTypeInfo, Layout), Reported> {
    let (info, layout, _) = tensor_info(op, &ir::type_to_string(ir::value_type(v)))?;
    Ok((info, layout))
}

/// `vector<8xf16>` → (8, "f16").
fn vector_shape(ty: &str) -> Option<(usize, String)> {
    let inner = ty.strip_prefix("vector<")?.strip_suffix('>')?;
    let (n, elem) = inner.split_once('x')?;
    Some((n.parse().ok()?, elem.to_string()))
}

fn run(module: Op) -> Result<(), Reported> {
    let mut failed = false;
    let mut check = |r: Result<(), Reported>| {
        if r.is_err() {
            failed = true;
        }
    };
    // CuTe's tensor ops are checked in program order, each against the algebra's result of its source.
    let mut folder = Folder::default();
    let mut failed_values = std::collections::HashSet::new();
    for op in ir::nested_ops(module) {
        match ir::op_name(op).as_str() {
            "gpu.func" => check(verify_func(op)),
            "cute.view" => check(verify_view(op).and_then(|_| verify_swizzle_kept(op, "cute.view"))),
            "cute.dyn" => check(verify_dyn(op)),
            "cute.recast" => check(verify_recast(op)),
            "cute.load" | "cute.store" => check(verify_access(op)),
            "cute.load_at" | "cute.store_at" => {
                check(verify_access(op));
                if !depends_on_failure(&failed_values, op) {
                    check(folder.eval_access(op).map(|_| ()));
                }
            }
            "cute.load_frag" | "cute.store_frag" => check(verify_frag(op)),
            "cute.copy" => check(verify_copy(op)),
            "cute.alloc" => check(verify_alloc(op)),
            "cute.launch_smem" => check(verify_launch_smem(op)),
            "cute.make_layout" => check(verify_make_layout(op)),
            "cute.make_tiled_copy" => check(verify_make_tiled_copy(op)),
            "cute.make_copy_atom" => check(verify_copy_atom(op)),
            "cute.make_mma_atom" => {
                check(mma_atom_of(op, &ir::type_to_string(ir::value_type(ir::result(op, 0)))).map(|_| ()))
            }
            "cute.make_tiled_mma" => check(verify_make_tiled_mma(op)),
            "cute.mma" => check(verify_mma(op)),
            "cute.wgmma" => check(verify_wgmma(op)),
            "cute.mbarrier" => check(verify_mbarrier(op)),
            "cute.tma_load" => check(verify_tma_load(op)),
            "cute.dsmem_load" | "cute.dsmem_store" => check(verify_dsmem(op)),
            "cute.atomic" => check(verify_atomic(op)),
            "cute.atomic_add_frag" => check(verify_atomic_add_frag(op)),
            "cute.tma_store" => check(verify_tma_store(op)),
            // An op whose source failed is not checked again: its error would only repeat the first.
            name if algebra::is_foldable(name) => {
                check(verify_swizzle_kept(op, name));
                if depends_on_failure(&failed_values, op) {
                    failed_values.insert(ir::result(op, 0).ptr as usize);
                    continue;
                }
                match folder.eval(op) {
                    Ok(t) => folder.record(ir::result(op, 0), t),
                    Err(e) => {
                        failed_values.insert(ir::result(op, 0).ptr as usize);
                        check(Err(e))
                    }
                }
            }
            _ => {}
        }
    }
    if failed {
        Err(Reported)
    } else {
        Ok(())
    }
}

fn verify_func(func: Op) -> Result<(), Reported> {
    for arg in ir::block_args(ir::entry_block(func)) {
        let printed = ir::type_to_string(ir::value_type(arg));
        if printed.starts_with("!cute.tensor<") {
            let (info, _) = tensor_of(func, arg)?;
            if info.space != "gmem" || info.swizzle.is_some() {
                return Err(fail(func, &format!("kernel argument of type {printed} must be in gmem, unswizzled")));
            }
        }
    }
    Ok(())
}

fn verify_view(op: Op) -> Result<(), Reported> {
    let (src, _) = tensor_of(op, ir::operand(op, 0))?;
    let (info, layout) = tensor_of(op, ir::result(op, 0))?;
    if info.elem != src.elem || info.space != src.space {
        return Err(fail(
            op,
            &format!("`cute.view` of {} {} memory cannot be typed {} {}", src.space, src.elem, info.space, info.elem),
        ));
    }
    if info.align > src.align {
        return Err(fail(
            op,
            &format!("`cute.view` claims {}-byte alignment, more than its source's {}", info.align, src.align),
        ));
    }
    let given = ir::operand_count(op) - 2;
    let needed = layout.dynamic_leaves().len();
    if given != needed {
        return Err(fail(
            op,
            &format!("`cute.view` has {given} dynamic values but its layout {layout} has {needed} `?` entries"),
        ));
    }
    Ok(())
}

/// `cute.recast`: the source's memory as elements of the result's type. The layout must be CuTe's
/// `recast_layout` of the source's and cover exactly the same memory; the base must be aligned for
/// the new element; bools (not every byte is a value) and swizzled tensors (the swizzle permutes
/// elements of the old width) cannot be recast.
fn verify_recast(op: Op) -> Result<(), Reported> {
    let (src, src_layout, src_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(ir::operand(op, 0))))?;
    let (dst, dst_layout, dst_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(ir::result(op, 0))))?;
    if src.space != dst.space {
        return Err(fail(op, &format!("`cute.recast` of {} memory cannot be typed {}", src.space, dst.space)));
    }
    if src.swizzle.is_some() || dst.swizzle.is_some() {
        return Err(fail(op, "`cute.recast` of a swizzled tensor: the swizzle permutes elements of the old width"));
    }
    if src.elem == "i1" || dst.elem == "i1" {
        return Err(fail(op, "`cute.recast` cannot recast bool (i1) elements"));
    }
    if dst.align > src.align || dst.align < dst_bytes {
        return Err(fail(
            op,
            &format!(
                "`cute.recast` to {}-byte elements claims {}-byte alignment from a {}-byte aligned source",
                dst_bytes, dst.align, src.align
            ),
        ));
    }
    let given = ir::operand_count(op) - 1;
    let needed = dst_layout.dynamic_leaves().len();
    if given != needed {
        return Err(fail(
            op,
            &format!("`cute.recast` has {given} dynamic values but its layout {dst_layout} has {needed} `?` entries"),
        ));
    }
    let (old_bits, new_bits) = (8 * i64::from(src_bytes), 8 * i64::from(dst_bytes));
    let expected = cute_layout::recast_layout(new_bits, old_bits, &src_layout)
        .map_err(|e| fail(op, &format!("`cute.recast`: the layout algebra rejects it: {e}")))?;
    if expected.to_string() != dst.layout {
        return Err(fail(op, &format!("`cute.recast` of {src_layout} from {} to {} gives {expected} by recast_layout, but its result type says \"{}\"", src.elem, dst.elem, dst.layout)));
    }
    if !cute_layout::recast_is_exact(new_bits, old_bits, &src_layout, &expected).unwrap_or(false) {
        return Err(fail(
            op,
            &format!(
                "`cute.recast` of {src_layout} from {} to {}: {expected} does not cover the same memory",
                src.elem, dst.elem
            ),
        ));
    }
    Ok(())
}

fn verify_dyn(op: Op) -> Result<(), Reported> {
    let (_, layout) = tensor_of(op, ir::operand(op, 0))?;
    let index = ir::int_attr(op, "index").ok_or_else(|| fail(op, "`cute.dyn` needs an integer `index` attribute"))?;
    let n = layout.dynamic_leaves().len();
    if index < 0 || index as usize >= n {
        return Err(fail(
            op,
            &format!("`cute.dyn` index {index} is out of range: layout {layout} has {n} `?` entries"),
        ));
    }
    Ok(())
}

/// Whether an op uses the result of a CuTe op that failed its check (keys: value addresses).
fn depends_on_failure(failed: &std::collections::HashSet<usize>, op: Op) -> bool {
    (0..ir::operand_count(op)).any(|i| failed.contains(&(ir::operand(op, i).ptr as usize)))
}

fn verify_access(op: Op) -> Result<(), Reported> {
    let is_load = matches!(ir::op_name(op).as_str(), "cute.load" | "cute.load_at");
    let (info, _) = tensor_of(op, ir::operand(op, if is_load { 0 } else { 1 }))?;
    let value_ty = ir::type_to_string(ir::value_type(if is_load { ir::result(op, 0) } else { ir::operand(op, 0) }));
    if value_ty != info.elem {
        return Err(fail(
            op,
            &format!("a tensor of {} cannot {} a `{value_ty}`", info.elem, if is_load { "load" } else { "store" }),
        ));
    }
    Ok(())
}

/// `cute.mbarrier`: a known kind with its number of arguments, on an unswizzled `i64` shared
/// tensor at least 8-byte aligned (so every element, a barrier, is 8-byte aligned).
fn verify_mbarrier(op: Op) -> Result<(), Reported> {
    let kind = ir::string_attr(op, "kind").unwrap_or_default();
    let want = match kind.as_str() {
        "init" | "arrive_expect_tx" | "wait" | "try_wait" | "arrive_cluster" => 1,
        "arrive" => 0,
        other => {
            return Err(fail(
                op,
                &format!(
                "`cute.mbarrier` kind \"{other}\" is not one of \"init\", \"arrive\", \"arrive_expect_tx\", \"wait\", \"try_wait\", \"arrive_cluster\""
            ),
            ))
        }
    };
    // Only `try_wait` gives a result: whether the phase completed.
    let results = usize::from(kind == "try_wait");
    if ir::result_count(op) != results {
        return Err(fail(
            op,
            &format!("`cute.mbarrier` \"{kind}\" has {results} result(s), found {}", ir::result_count(op)),
        ));
    }
    let args = ir::operand_count(op).saturating_sub(2);
    if args != want {
        return Err(fail(
            op,
            &format!(
                "`cute.mbarrier` \"{kind}\" takes {want} argument{} after the offset, found {args}",
                if want == 1 { "" } else { "s" }
            ),
        ));
    }
    let (info, _) = tensor_of(op, ir::operand(op, 0))?;
    if info.space != "smem" || info.elem != "i64" || info.swizzle.is_some() || info.align < 8 {
        return Err(fail(
            op,
            &format!("an mbarrier is an 8-byte-aligned `i64` element of an unswizzled shared-memory tensor, not an element of a {} {} tensor (alignment {}{})", info.space, info.elem, info.align, if info.swizzle.is_some() { ", swizzled" } else { "" }),
        ));
    }
    Ok(())
}

/// `cute.tma_load`: a shared destination, a barrier as `cute.mbarrier`'s, 1 to 5 coordinates (and
/// the multicast mask where the op has `multicast`).
fn verify_tma_load(op: Op) -> Result<(), Reported> {
    let (dst, _) = tensor_of(op, ir::operand(op, 0))?;
    if dst.space != "smem" {
        return Err(fail(
            op,
            &format!("the destination of `cute.tma_load` is a shared-memory tensor, not a {} tensor", dst.space),
        ));
    }
    let (bar, _) = tensor_of(op, ir::operand(op, 1))?;
    if bar.space != "smem" || bar.elem != "i64" || bar.swizzle.is_some() || bar.align < 8 {
        return Err(fail(op, &format!("the barrier of `cute.tma_load` is an 8-byte-aligned `i64` element of an unswizzled shared-memory tensor, not an element of a {} {} tensor", bar.space, bar.elem)));
    }
    // A multicast load's mask follows the coordinates.
    let mask = usize::from(ir::int_attr(op, "multicast").is_some());
    let coords = ir::operand_count(op).saturating_sub(4 + mask);
    if !(1..=5).contains(&coords) {
        return Err(fail(op, &format!("`cute.tma_load` takes 1 to 5 coordinates, found {coords}")));
    }
    Ok(())
}

/// `cute.dsmem_load`/`cute.dsmem_store`: an element of a shared tensor (another block's copy of
/// it), of the tensor's element type; not `i1` or fp8, which memory holds in another type (a byte).
fn verify_dsmem(op: Op) -> Result<(), Reported> {
    let name = ir::op_name(op);
    let (info, _) = tensor_of(op, ir::operand(op, 0))?;
    if info.space != "smem" {
        return Err(fail(
            op,
            &format!("`{name}` reaches another block's shared memory; its tensor is a {} tensor", info.space),
        ));
    }
    let value_ty = ir::type_to_string(ir::value_type(if name == "cute.dsmem_load" {
        ir::result(op, 0)
    } else {
        ir::operand(op, 3)
    }));
    if value_ty != info.elem {
        return Err(fail(op, &format!("`{name}` on a tensor of {} cannot move a `{value_ty}`", info.elem)));
    }
    if info.elem == "i1" || info.elem.starts_with("f8") {
        return Err(fail(
            op,
            &format!("`{name}` of `{}` elements is not supported (memory holds them as bytes)", info.elem),
        ));
    }
    Ok(())
}

/// `cute.atomic`: a known operation whose PTX type is one the atomic table gives for an element
/// type held as the tensor's, on global or shared memory, with the operand count of its kind.
fn verify_atomic(op: Op) -> Result<(), Reported> {
    use cute_layout::atom::atomic::{AtomicOp, MemOrder, MemScope};
    let (info, _) = tensor_of(op, ir::operand(op, 0))?;
    let Some(kind) = ir::string_attr(op, "kind").and_then(|k| AtomicOp::from_name(&k)) else {
        return Err(fail(op, "`cute.atomic` needs a `kind`: add, min, max, exch, cas, and, or or xor"));
    };
    let ty = ir::string_attr(op, "type").unwrap_or_default();
    let elems = || DType::ALL.into_iter().filter(|d| d.mlir_name() == info.elem);
    // A packed 16-bit pair (`atom.add.noftz.f16x2`) takes and gives a `vector<2xf16>`.
    let pair =
        kind == AtomicOp::Add && elems().any(|d| cute_layout::atom::atomic::add_pair_ptx_type(d) == Some(ty.as_str()));
    let known = pair || elems().any(|d| kind.ptx_type(d) == Ok(ty.as_str()));
    if !known {
        return Err(fail(
            op,
            &format!("`cute.atomic` {} has no PTX type `{ty}` on `{}` elements", kind.name(), info.elem),
        ));
    }
    if info.space != "gmem" && info.space != "smem" {
        return Err(fail(op, &format!("`cute.atomic` acts on global or shared memory, not {}", info.space)));
    }
    let scope = ir::string_attr(op, "scope").and_then(|s| MemScope::from_name(&s));
    let order = ir::string_attr(op, "order").and_then(|s| MemOrder::from_name(&s));
    if scope.is_none() || order.is_none() {
        return Err(fail(op, "`cute.atomic` needs a `scope` (cta, cluster, gpu, sys) and an `order` (relaxed, acquire, release, acq_rel)"));
    }
    let want = if kind == AtomicOp::Cas { 2 } else { 1 };
    let operand = if pair { format!("vector<2x{}>", info.elem) } else { info.elem.clone() };
    let args: Vec<String> =
        (2..ir::operand_count(op)).map(|i| ir::type_to_string(ir::value_type(ir::operand(op, i)))).collect();
    if args.len() != want || args.iter().any(|a| *a != operand) {
        return Err(fail(
            op,
            &format!("`cute.atomic` {} {ty} takes {want} `{operand}` operand(s) after the offset", kind.name()),
        ));
    }
    Ok(())
}

/// `cute.atomic_add_frag`: a vector into a global tensor of its element type and size, whose
/// layout and alignment hold the contiguous runs of one of the `red` forms
/// (`cute_layout::atom::atomic::red_fragment`).
fn verify_atomic_add_frag(op: Op) -> Result<(), Reported> {
    let (info, layout) = tensor_of(op, ir::operand(op, 1))?;
    let vector = vector_shape(&ir::type_to_string(ir::value_type(ir::operand(op, 0))));
    let size = layout.size().ok().and_then(|s| s.as_static());
    let form = DType::from_name(&info.elem)
        .ok_or_else(|| format!("no `red` on {}", info.elem))
        .and_then(|e| red_fragment_for(e, &layout, info.align));
    match (vector, form) {
        (Some((n, elem)), Ok(form)) if elem == info.elem && info.space == "gmem" && size == Some(n as i64) && n % form.elems == 0 => Ok(()),
        (_, form) => Err(fail(op, &format!("`cute.atomic_add_frag` adds an f32, f16 or bf16 vector into a global tensor of its element type and size holding contiguous, aligned runs of a `red` form; found {} into layout {layout} ({}, {}, {}-byte aligned){}", ir::type_to_string(ir::value_type(ir::operand(op, 0))), info.elem, info.space, info.align, form.err().map(|e| format!(": {e}")).unwrap_or_default()))),
    }
}

/// `cute.tma_store`: a shared source, the tensor map, and one coordinate per mode of the source
/// (1 to 5). The source is a box TMA reads: each mode one static extent of 1 to 256 at one stride,
/// one of them at stride 1 and, in the element type, a multiple of 16 bytes long.
fn verify_tma_store(op: Op) -> Result<(), Reported> {
    let (src, layout) = tensor_of(op, ir::operand(op, 0))?;
    if src.space != "smem" {
        return Err(fail(
            op,
            &format!("the source of `cute.tma_store` is a shared-memory tensor, not a {} tensor", src.space),
        ));
    }
    let coords = ir::operand_count(op).saturating_sub(2);
    let rank = layout.shape.rank();
    if !(1..=5).contains(&coords) || coords != rank {
        return Err(fail(
            op,
            &format!("`cute.tma_store` takes one coordinate per mode of its box {layout} (1 to 5), found {coords}"),
        ));
    }
    // A stage slice's mode may be split (`(8,16):(64,512)`): coalesced, it is one extent.
    let modes: Option<Vec<(i64, i64)>> = layout
        .modes()
        .iter()
        .map(|m| match cute_layout::coalesce(m).ok()?.leaves().as_slice() {
            [(sh, st)] => Some((sh.as_static()?, st.as_static()?)),
            _ => None,
        })
        .collect();
    let bytes = i64::from(DType::mlir_size_bytes(&src.elem).unwrap_or(0));
    let box_ok = modes.is_some_and(|m| {
        m.iter().all(|(e, _)| (1..=256).contains(e))
            && m.iter().any(|(e, st)| *st == 1 && *e > 1 && (e * bytes) % 16 == 0)
    });
    if !box_ok {
        return Err(fail(
            op,
            &format!("the source of `cute.tma_store`, {layout} of {}, is not a box TMA reads: each mode one static extent of 1 to 256 at one stride, the stride-1 mode a multiple of 16 bytes long", src.elem),
        ));
    }
    Ok(())
}

fn verify_frag(op: Op) -> Result<(), Reported> {
    let is_load = ir::op_name(op) == "cute.load_frag";
    let (info, layout) = tensor_of(op, ir::operand(op, if is_load { 0 } else { 1 }))?;
    let vec_ty = ir::type_to_string(ir::value_type(if is_load { ir::result(op, 0) } else { ir::operand(op, 0) }));
    let Some((n, elem)) = vector_shape(&vec_ty) else {
        return Err(fail(op, &format!("a fragment is a 1-D vector, found `{vec_ty}`")));
    };
    let size = layout.size().ok().and_then(|s| s.as_static());
    let Some(size) = size else {
        return Err(fail(op, &format!("a fragment needs a tensor of static size, found layout {layout}")));
    };
    if size != n as i64 {
        return Err(fail(
            op,
            &format!("a fragment of {n} elements does not match the tensor's {size} (layout {layout})"),
        ));
    }
    if elem != info.elem {
        return Err(fail(op, &format!("a fragment of {elem} does not match the tensor's element type {}", info.elem)));
    }
    Ok(())
}

/// A copy moves every element: one element type, one static size on both sides.
fn verify_copy(op: Op) -> Result<(), Reported> {
    let (src, src_layout) = tensor_of(op, ir::operand(op, 0))?;
    let (dst, dst_layout) = tensor_of(op, ir::operand(op, 1))?;
    if src.elem != dst.elem {
        return Err(fail(op, &format!("`cute.copy` moves {} elements into a tensor of {}", src.elem, dst.elem)));
    }
    // A predicate zero-fills: only `cp.async` has the operand that does it (`ignore-src`).
    if ir::operand_count(op) > 2 && !ir::string_attr(op, "op").is_some_and(|n| n.starts_with("cp.async")) {
        return Err(fail(op, "only a `cp.async` copy takes a predicate (false: nothing is read, the destination is zero-filled); guard other copies with `scf.if`"));
    }
    if let Some(name) = ir::string_attr(op, "op") {
        let copy = super::common::copy_op(&name).ok_or_else(|| {
            fail(
                op,
                &format!(
                    "unknown copy operation \"{name}\"; the operations are {}",
                    cute_layout::atom::CopyOp::names(false)
                ),
            )
        })?;
        if let Some((from, to, _)) =
            copy.spaces().filter(|(from, to, _)| src.space != from.name() || dst.space != to.name())
        {
            return Err(fail(
                op,
                &format!(
                    "{name} copies from {} to {}, not from {} to {}",
                    from.name(),
                    to.name(),
                    src.space,
                    dst.space
                ),
            ));
        }
        if copy.lane_elements().is_some() {
            if DType::mlir_size_bytes(&src.elem) != Some(2) {
                return Err(fail(op, &format!("{name} moves 16-bit elements, not {}", src.elem)));
            }
        } else {
            let bytes =
                ir::int_attr(op, "max_vector").unwrap_or(0) * i64::from(DType::mlir_size_bytes(&src.elem).unwrap_or(0));
            if !copy.bits().iter().any(|&b| i64::from(b / 8) == bytes) {
                return Err(fail(
                    op,
                    &format!(
                        "{name} moves {} bytes per copy, but `max_vector` gives {bytes}",
                        copy.bits().iter().map(|b| (b / 8).to_string()).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
    }
    let size = |l: &Layout| l.size().ok().and_then(|s| s.as_static());
    // An ldmatrix lane gives one 8-element row and receives 2 values per matrix; a stmatrix lane
    // gives the values and one row.
    let copy = ir::string_attr(op, "op").and_then(|n| super::common::copy_op(&n));
    let lane = copy.and_then(|c| c.lane_elements());
    match (size(&src_layout), size(&dst_layout)) {
        (Some(a), Some(b)) if lane.is_none() && a == b => Ok(()),
        (Some(a), Some(b)) if lane == Some((a as u32, b as u32)) => Ok(()),
        (Some(a), Some(b)) if lane.is_some() => {
            let name = ir::string_attr(op, "op").unwrap_or_default();
            let (ls, ld) = lane.unwrap_or_default();
            let what = if copy.is_some_and(|c| c.is_stmatrix()) {
                format!("takes {ls} values and an 8-element row of each lane")
            } else {
                format!("gives each lane an 8-element row and {ld} values")
            };
            Err(fail(op, &format!("{name} {what}, not {a} (layout {src_layout}) into {b} (layout {dst_layout})")))
        }
        (Some(a), Some(b)) => {
            Err(fail(op, &format!("`cute.copy` of {a} elements (layout {src_layout}) into {b} (layout {dst_layout})")))
        }
        _ => Err(fail(
            op,
            &format!("`cute.copy` needs tensors of static size, found layouts {src_layout} and {dst_layout}"),
        )),
    }
}

fn verify_alloc(op: Op) -> Result<(), Reported> {
    let (info, layout) = tensor_of(op, ir::result(op, 0))?;
    if info.space != "rmem" && info.space != "smem" {
        return Err(fail(op, &format!("`cute.alloc` makes rmem or smem tensors, not {}", info.space)));
    }
    if !layout.is_static() {
        return Err(fail(op, &format!("`cute.alloc` needs a static layout, found {layout}")));
    }
    if let Some(sw) = info.swizzle {
        if info.space != "smem" {
            return Err(fail(op, &format!("only shared memory can be swizzled, not {}", info.space)));
        }
        swizzled_alignment(op, &info, sw)?;
    }
    Ok(())
}

/// A view of the launch's dynamic shared memory: shared, static, at a 128-byte aligned offset (the
/// alignment its type and swizzle count on).
fn verify_launch_smem(op: Op) -> Result<(), Reported> {
    let (info, layout) = tensor_of(op, ir::result(op, 0))?;
    if info.space != "smem" {
        return Err(fail(op, &format!("`cute.launch_smem` makes smem tensors, not {}", info.space)));
    }
    if !layout.is_static() {
        return Err(fail(op, &format!("`cute.launch_smem` needs a static layout, found {layout}")));
    }
    match ir::int_attr(op, "offset") {
        Some(o) if o >= 0 && (o as u64).is_multiple_of(cute_layout::atom::smem::SMEM_ALIGN) => {}
        Some(o) => {
            return Err(fail(
                op,
                &format!(
                    "`cute.launch_smem` offset {o} is not a non-negative multiple of {}",
                    cute_layout::atom::smem::SMEM_ALIGN
                ),
            ))
        }
        None => return Err(fail(op, "`cute.launch_smem` needs an integer `offset` attribute (bytes)")),
    }
    if let Some(sw) = info.swizzle {
        swizzled_alignment(op, &info, sw)?;
    }
    Ok(())
}

/// A swizzle keeps runs of 2^M elements together and nothing longer: a swizzled tensor claiming a
/// larger alignment would let wider accesses straddle two runs that the swizzle sends apart.
fn swizzled_alignment(op: Op, info: &cute_dialect::TensorTypeInfo, sw: cute_layout::Swizzle) -> Result<(), Reported> {
    let bytes = DType::mlir_size_bytes(&info.elem).unwrap_or(1);
    let run = (1u64 << sw.base.min(20)) * u64::from(bytes);
    if u64::from(info.align) > run.max(u64::from(bytes)) {
        return Err(fail(op, &format!("a tensor swizzled by {sw} claims {}-byte alignment, but the swizzle keeps only {run}-byte runs together", info.align)));
    }
    Ok(())
}

/// Views keep their source's swizzle: the swizzle acts on offsets from the allocation, whatever the
/// view. Only `make_view` (and `cute.view`, into which cute-canonicalize folds it) lays memory out
/// again: without a swizzle, or with another one over the whole allocation.
fn verify_swizzle_kept(op: Op, name: &str) -> Result<(), Reported> {
    // Layout operations on `!cute.layout` values have no memory to swizzle.
    if !ir::type_to_string(ir::value_type(ir::result(op, 0))).starts_with("!cute.tensor<") {
        return Ok(());
    }
    let (src, _) = tensor_of(op, ir::operand(op, 0))?;
    let (info, _) = tensor_of(op, ir::result(op, 0))?;
    if let Some(sw) = info.swizzle {
        swizzled_alignment(op, &info, sw)?;
    }
    let relayout = matches!(name, "cute.make_view" | "cute.view");
    match (src.swizzle, info.swizzle) {
        (a, b) if a == b => Ok(()),
        _ if relayout => Ok(()),
        (a, b) => {
            let show = |s: Option<cute_layout::Swizzle>| s.map_or("no swizzle".to_string(), |s| s.to_string());
            Err(fail(
                op,
                &format!(
                    "`{name}` of a tensor with {} cannot have {}: a view keeps its source's swizzle",
                    show(a),
                    show(b)
                ),
            ))
        }
    }
}

/// `cute.make_layout` passes one value per `?` entry of its layout.
fn verify_make_layout(op: Op) -> Result<(), Reported> {
    let printed = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let text = algebra::layout_type_text(&printed)
        .ok_or_else(|| fail(op, &format!("`cute.make_layout` makes a !cute.layout, not {printed}")))?;
    let layout = super::common::type_layout(text).map_err(|e| fail(op, &format!("invalid layout \"{text}\": {e}")))?;
    let (want, have) = (layout.dynamic_leaves().len(), ir::operand_count(op));
    if want != have {
        return Err(fail(
            op,
            &format!("`cute.make_layout` has {have} dynamic values but its layout {text} has {want} `?` entries"),
        ));
    }
    Ok(())
}

/// A copy atom moves whole elements, at most 128 bits (the widest access).
fn verify_copy_atom(op: Op) -> Result<(), Reported> {
    let printed = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let (elem, bits) = algebra::copy_atom_type(&printed)
        .ok_or_else(|| fail(op, &format!("expected a !cute.copy_atom, found {printed}")))?;
    let elem_bits =
        DType::mlir_size_bytes(&elem).ok_or_else(|| fail(op, &format!("unsupported element type `{elem}`")))? * 8;
    if bits == 0 || bits % elem_bits != 0 || bits > 128 {
        return Err(fail(
            op,
            &format!("a copy atom of {bits} bits does not move whole {elem} elements (at most 128 bits)"),
        ));
    }
    Ok(())
}

/// The atom a `!cute.mma_atom<"NAME">` type names.
fn mma_atom_of(op: Op, printed: &str) -> Result<&'static cute_layout::MmaAtom, Reported> {
    let name = printed
        .strip_prefix("!cute.mma_atom<\"")
        .and_then(|s| s.strip_suffix("\">"))
        .ok_or_else(|| fail(op, &format!("expected a !cute.mma_atom, found {printed}")))?;
    cute_layout::MmaAtom::by_name(name).ok_or_else(|| {
        let known: Vec<&str> = cute_layout::MmaAtom::all().iter().map(|a| a.name).collect();
        fail(op, &format!("unknown MMA atom \"{name}\"; the atoms are {}", known.join(", ")))
    })
}

/// `cute.make_tiled_mma` makes a valid tiled MMA of its operand's atom.
fn verify_make_tiled_mma(op: Op) -> Result<(), Reported> {
    let tiled = algebra::tiled_mma_of(op, ir::result(op, 0))?;
    let atom = mma_atom_of(op, &ir::type_to_string(ir::value_type(ir::operand(op, 0))))?;
    if atom.name != tiled.atom.name {
        return Err(fail(
            op,
            &format!("the atom operand is {} but the tiled MMA's type says {}", atom.name, tiled.atom.name),
        ));
    }
    Ok(())
}

/// `cute.mma` fragments are one atom's values of A, B and C, of the atom's element types, and the
/// result is C's type.
fn verify_mma(op: Op) -> Result<(), Reported> {
    let name = ir::string_attr(op, "atom")
        .ok_or_else(|| fail(op, "`cute.mma` needs an `atom` attribute naming the MMA atom"))?;
    let atom = mma_atom_of(op, &format!("!cute.mma_atom<\"{name}\">"))?;
    let ops = [(0, cute_layout::MmaOperand::A), (1, cute_layout::MmaOperand::B), (2, cute_layout::MmaOperand::C)];
    for (i, operand) in ops {
        let printed = ir::type_to_string(ir::value_type(ir::operand(op, i)));
        let elem = match atom.elem(operand) {
            "tf32" => "f32",
            e => e,
        };
        let want = format!("vector<{}x{elem}>", atom.values(operand));
        if printed != want {
            return Err(fail(
                op,
                &format!(
                    "{} holds one thread's {} values of {} as {want}, found {printed}",
                    operand.name(),
                    atom.values(operand),
                    atom.name
                ),
            ));
        }
    }
    let (c, d) =
        (ir::type_to_string(ir::value_type(ir::operand(op, 2))), ir::type_to_string(ir::value_type(ir::result(op, 0))));
    if c != d {
        return Err(fail(op, &format!("the result is D = A*B + C, of C's type {c}, not {d}")));
    }
    Ok(())
}

/// One operand tile of a `cute.wgmma`: the tensor's (rows, K) layout (a rank-1 view of one
/// `(rows, K)` mode is unpacked), its swizzle and element bytes.
pub(crate) fn wgmma_tile(op: Op, i: usize) -> Result<(cute_dialect::TensorTypeInfo, Layout, u32), Reported> {
    let (info, layout, bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(ir::operand(op, i))))?;
    let layout = if layout.rank() == 1 { layout.mode(0).map_err(|e| fail(op, &e.to_string()))? } else { layout };
    // cute-canonicalize flattens and merges a view's modes (an MN-major (64,16):(1,64) tile is
    // `1024:1`): the same function of the colexicographic index, so composing it with the atom's
    // (rows, K) tile gives the tile's (rows, K) layout back.
    let operand = if i == 0 { cute_layout::MmaOperand::A } else { cute_layout::MmaOperand::B };
    let atom = ir::string_attr(op, "atom").and_then(|n| cute_layout::MmaAtom::by_name(&n));
    let layout = match atom.map(|a| a.tile(operand)) {
        Some([rows, k]) if layout.rank() != 2 && layout.size().ok().and_then(|s| s.as_static()) == Some(rows * k) => {
            Layout::col_major(IntTuple::Tuple(vec![rows.into(), k.into()]))
                .and_then(|t| cute_layout::composition(&layout, &t))
                .map_err(|e| fail(op, &e.to_string()))?
        }
        _ => layout,
    };
    Ok((info, layout, bytes))
}

/// `cute.wgmma`: a wgmma atom; A and B one atom's tiles in shared memory, of its element types,
/// each a canonical K- or MN-major GMMA layout (the descriptor's LBO/SBO are read off it); C and D one
/// thread's accumulator values. With an RS atom, A is instead one thread's A fragment, a vector of
/// the atom's 8 16-bit or 16 FP8 values (four 32-bit registers).
fn verify_wgmma(op: Op) -> Result<(), Reported> {
    let name = ir::string_attr(op, "atom")
        .ok_or_else(|| fail(op, "`cute.wgmma` needs an `atom` attribute naming the MMA atom"))?;
    let atom = cute_layout::MmaAtom::by_name(&name)
        .filter(|a| a.is_wgmma())
        .ok_or_else(|| fail(op, &format!("\"{name}\" is not a wgmma atom (SM90_64xNx16_..._SS or _RS)")))?;
    let a_printed = ir::type_to_string(ir::value_type(ir::operand(op, 0)));
    if !atom.reads_smem(cute_layout::MmaOperand::A) {
        let elem = cute_abi::DType::from_name(atom.a).map_or(atom.a, |d| d.mlir_name());
        let want = format!("vector<{}x{elem}>", atom.values(cute_layout::MmaOperand::A));
        if a_printed != want {
            return Err(fail(
                op,
                &format!(
                    "{} reads A from registers: one thread's {} A values as {want}, found {a_printed}",
                    atom.name,
                    atom.values(cute_layout::MmaOperand::A)
                ),
            ));
        }
    } else if a_printed.starts_with("vector<") {
        return Err(fail(
            op,
            &format!(
                "{} reads A from shared memory (a tensor); a register A ({a_printed}) needs the RS atom {}",
                atom.name,
                atom.name.replace("_SS", "_RS")
            ),
        ));
    }
    for (i, operand) in [(0, cute_layout::MmaOperand::A), (1, cute_layout::MmaOperand::B)] {
        if !atom.reads_smem(operand) {
            continue;
        }
        let (info, layout, bytes) = wgmma_tile(op, i)?;
        if info.space != "smem" {
            return Err(fail(
                op,
                &format!("{} reads {} from shared memory, not {}", atom.name, operand.name(), info.space),
            ));
        }
        // The IR spells element types as MLIR does (`f8E4M3FN` for `f8e4m3`).
        let want_elem = cute_abi::DType::from_name(atom.elem(operand)).map_or(atom.elem(operand), |d| d.mlir_name());
        if info.elem != want_elem {
            return Err(fail(
                op,
                &format!(
                    "{} takes {} elements for {}, found {}",
                    atom.name,
                    atom.elem(operand),
                    operand.name(),
                    info.elem
                ),
            ));
        }
        let [rows, k] = atom.tile(operand);
        let size = layout.size().ok().and_then(|s| s.as_static());
        if layout.rank() != 2 || size != Some(rows * k) {
            return Err(fail(
                op,
                &format!("{} takes one ({rows},{k}) tile of {}, found layout {layout}", atom.name, operand.name()),
            ));
        }
        cute_layout::gmma::operand_desc(&layout, info.swizzle, bytes, operand.name())
            .map_err(|e| fail(op, &format!("{}: {}", atom.name, e.reason)))?;
    }
    let want = format!("vector<{}x{}>", atom.values(cute_layout::MmaOperand::C), atom.c);
    for (what, v) in [("C", ir::operand(op, 2)), ("D", ir::result(op, 0))] {
        let printed = ir::type_to_string(ir::value_type(v));
        if printed != want {
            return Err(fail(
                op,
                &format!(
                    "{what} holds one thread's {} accumulators of {} as {want}, found {printed}",
                    atom.values(cute_layout::MmaOperand::C),
                    atom.name
                ),
            ));
        }
    }
    Ok(())
}

/// `cute.make_tiled_copy` agrees with its parts: the atom's element type and width, the TV layout.
fn verify_make_tiled_copy(op: Op) -> Result<(), Reported> {
    let copy = TiledCopyType::of(op, ir::result(op, 0))?;
    let atom = ir::type_to_string(ir::value_type(ir::operand(op, 0)));
    let (elem, bits) =
        algebra::copy_atom_type(&atom).ok_or_else(|| fail(op, &format!("expected a !cute.copy_atom, found {atom}")))?;
    if elem != copy.elem || bits != copy.bits {
        return Err(fail(
            op,
            &format!(
                "the copy atom moves {bits} bits of {elem} but the tiled copy's type says {} bits of {}",
                copy.bits, copy.elem
            ),
        ));
    }
    let tv = ir::type_to_string(ir::value_type(ir::operand(op, 1)));
    let text =
        algebra::layout_type_text(&tv).ok_or_else(|| fail(op, &format!("expected a !cute.layout, found {tv}")))?;
    if text != copy.tv.to_string() {
        return Err(fail(op, &format!("the TV layout operand is {text} but the tiled copy's type says {}", copy.tv)));
    }
    let tile = copy.tile.product().ok().and_then(|s| s.as_static()).unwrap_or(0);
    let covered = copy.tv.cosize().ok().and_then(|s| s.as_static()).unwrap_or(i64::MAX);
    if covered > tile {
        return Err(fail(
            op,
            &format!("the TV layout {} reaches element {} but the tile {} has {tile}", copy.tv, covered - 1, copy.tile),
        ));
    }
    Ok(())
}
