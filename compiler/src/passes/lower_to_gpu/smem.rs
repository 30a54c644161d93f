//! Where a kernel's tensors live: registers (`alloca`), shared memory (a global per allocation, or a
//! place in the launch's dynamic shared memory), and the launch's own dynamic region.

use super::memory::memory_elem;
use super::{bind_leaves, Int, Kernel, Lowered};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{fail, tensor_info, Reported};
use cute_dialect::TensorTypeInfo;
use cute_layout::Layout;

/// How a kernel places its shared allocations. With `cute.dynamic_smem = N`, shared allocations
/// are placed one after another (each `kir::SMEM_ALIGN`-aligned) in the launch's dynamic shared
/// memory, which the front end sized as N bytes; without, each is a global of its own.
pub(super) struct Placement {
    /// The kernel's dynamic shared memory in bytes (`cute.dynamic_smem`).
    dynamic: Option<i64>,
    /// The next free byte of the dynamic shared memory.
    offset: i64,
    /// The shared globals made so far.
    count: usize,
}

impl Placement {
    /// Reads (and removes) the kernel's `cute.dynamic_smem`.
    pub(super) fn take(func: Op) -> Placement {
        let dynamic = ir::int_attr(func, "cute.dynamic_smem");
        ir::remove_attr(func, "cute.dynamic_smem");
        Placement { dynamic, offset: 0, count: 0 }
    }
}

impl Kernel {
    /// `cute.launch_smem`: the launch's own region starts after what the compiler placed in dynamic
    /// shared memory.
    pub(super) fn launch_smem(&mut self, op: Op) -> Result<(), Reported> {
        let result = ir::result(op, 0);
        let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
        let leaves = bind_leaves(&layout, &[]).ok_or_else(|| fail(op, "`cute.launch_smem` needs a static layout"))?;
        let offset =
            ir::int_attr(op, "offset").ok_or_else(|| fail(op, "`cute.launch_smem` needs an `offset` attribute"))?;
        let ptr = dynamic_shared(self.func, op, self.smem.dynamic.unwrap_or(0) + offset);
        self.push_allocation(result, ptr, &info, elem_bytes, leaves, layout);
        Ok(())
    }

    /// `cute.alloc`: registers, or shared memory placed as [`Placement`] says.
    pub(super) fn alloc(&mut self, op: Op) -> Result<(), Reported> {
        let result = ir::result(op, 0);
        let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
        let cosize = layout
            .cosize()
            .ok()
            .and_then(|c| c.as_static())
            .ok_or_else(|| fail(op, "`cute.alloc` needs a static layout"))?;
        let leaves = bind_leaves(&layout, &[]).ok_or_else(|| fail(op, "`cute.alloc` needs a static layout"))?;
        if info.swizzle.is_some() && info.space != "smem" {
            return Err(fail(op, &format!("only shared memory can be swizzled, not {}", info.space)));
        }
        // The bytes the allocation takes (whole swizzle periods), in elements.
        let bytes = cute_layout::atom::smem::smem_bytes(cosize, elem_bytes, info.swizzle) as i64;
        // Swizzled allocations start at a multiple of their swizzle's period (up to 1024 bytes).
        let align = cute_layout::atom::smem::smem_align(info.swizzle, elem_bytes) as i64;
        let ptr = match info.space.as_str() {
            "rmem" => alloca(op, &memory_elem(&info.elem), cosize),
            "smem" => match self.smem.dynamic {
                Some(total) => {
                    let at = (self.smem.offset + align - 1) / align * align;
                    self.smem.offset = at + bytes;
                    if self.smem.offset > total {
                        let need = self.smem.offset;
                        return Err(fail(op, &format!("shared allocations need {need} bytes but the kernel's dynamic shared memory is {total}")));
                    }
                    dynamic_shared(self.func, op, at)
                }
                None => {
                    self.smem.count += 1;
                    shared_global(
                        self.func,
                        op,
                        &memory_elem(&info.elem),
                        bytes / elem_bytes as i64,
                        self.smem.count,
                        align,
                    )
                }
            },
            other => return Err(fail(op, &format!("cannot allocate {other} memory in a kernel"))),
        };
        if self.acc_allocs.iter().any(|a| a.ptr == op.ptr) {
            self.acc_roots.push((ptr, cosize, info.elem.clone()));
        }
        self.push_allocation(result, ptr, &info, elem_bytes, leaves, layout);
        Ok(())
    }

    /// Records a whole allocation (static layout, no `?` values) starting at `ptr`: a swizzled one
    /// is swizzled from its own start.
    fn push_allocation(
        &mut self,
        value: Val,
        ptr: Val,
        info: &TensorTypeInfo,
        elem_bytes: u32,
        leaves: Vec<(Int, Int)>,
        layout: Layout,
    ) {
        self.tensors.push(Lowered {
            value,
            ptr,
            swizzled: info.swizzle.map(|sw| (sw, Int::Const(0))),
            elem: memory_elem(&info.elem),
            elem_bytes,
            leaves,
            dyn_values: Vec::new(),
            layout,
            align: info.align,
        });
    }
}

/// Registers for a tensor: an `alloca` that the backend promotes to registers when every access is at
/// a static offset (as CuTe C++'s register arrays).
fn alloca(op: Op, elem: &str, cosize: i64) -> Val {
    let b = Builder::before(op);
    let n = b.const_int(cosize.max(1), "i32");
    let ptr_ty = b.ty("!llvm.ptr");
    let a = b.create("llvm.alloca", &[n], &[ptr_ty], &[("elem_type", b.attr(elem)), ("alignment", b.attr("16 : i64"))]);
    ir::result(a, 0)
}

/// The symbol of the launch's dynamic shared memory (CUDA's `extern __shared__`), shared by every
/// kernel of the module.
const DYNAMIC_SMEM: &str = "__cute_dynamic_smem";

/// Shared memory for a tensor at byte `offset` of the launch's dynamic shared memory.
fn dynamic_shared(func: Op, op: Op, offset: i64) -> Val {
    let module = unsafe { mlir_sys::mlirOperationGetParentOperation(func) };
    let exists = ir::nested_ops(module)
        .into_iter()
        .any(|o| ir::op_name(o) == "llvm.mlir.global" && ir::symbol_name(o).as_deref() == Some(DYNAMIC_SMEM));
    if !exists {
        let g = Builder::before(func);
        g.create_with_regions(
            "llvm.mlir.global",
            &[],
            &[
                ("sym_name", g.attr(&format!("\"{DYNAMIC_SMEM}\""))),
                ("global_type", g.attr("!llvm.array<0 x i8>")),
                ("linkage", g.attr("#llvm.linkage<external>")),
                ("addr_space", g.attr("3 : i32")),
                // The base of every dynamic allocation: aligned as the most any of them asks.
                ("alignment", g.attr(&format!("{} : i64", cute_layout::atom::smem::SMEM_MAX_ALIGN))),
            ],
            1,
        );
    }
    let b = Builder::before(op);
    let ptr_ty = b.ty("!llvm.ptr<3>");
    let base = ir::result(
        b.create("llvm.mlir.addressof", &[], &[ptr_ty], &[("global_name", b.attr(&format!("@{DYNAMIC_SMEM}")))]),
        0,
    );
    if offset == 0 {
        return base;
    }
    byte_gep(&b, base, offset)
}

/// The address `bytes` bytes past `base` (a constant offset, in `base`'s address space).
pub(super) fn byte_gep(b: &Builder, base: Val, bytes: i64) -> Val {
    let off = b.const_int(bytes, "i64");
    let gep = b.create(
        "llvm.getelementptr",
        &[base, off],
        &[ir::value_type(base)],
        &[("elem_type", b.attr("i8")), ("rawConstantIndices", b.attr("array<i32: -2147483648>"))],
    );
    ir::result(gep, 0)
}

/// Shared memory for a tensor: a block-wide global in address space 3 beside the kernel.
fn shared_global(func: Op, op: Op, elem: &str, elements: i64, index: usize, align: i64) -> Val {
    let fname = ir::symbol_name(func).unwrap_or_default();
    let sym = format!("__smem_{fname}_{index}");
    let g = Builder::before(func);
    g.create_with_regions(
        "llvm.mlir.global",
        &[],
        &[
            ("sym_name", g.attr(&format!("\"{sym}\""))),
            ("global_type", g.attr(&format!("!llvm.array<{} x {elem}>", elements.max(1)))),
            ("linkage", g.attr("#llvm.linkage<internal>")),
            ("addr_space", g.attr("3 : i32")),
            ("alignment", g.attr(&format!("{align} : i64"))),
        ],
        1,
    );
    let b = Builder::before(op);
    let ptr_ty = b.ty("!llvm.ptr<3>");
    ir::result(b.create("llvm.mlir.addressof", &[], &[ptr_ty], &[("global_name", b.attr(&format!("@{sym}")))]), 0)
}
