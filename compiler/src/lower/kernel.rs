//! The `gpu.func` of a kernel instance: its parameters (and the `cute.dyn` values behind tensor
//! parameters' `?` entries), its attributes, and the extra parameters (fast divisors, TMA
//! descriptors) known once the body is written.

use super::{mlir_scalar, mlir_tensor, v, KernelWriter};
use cute_lang::kir::ParamKind;
use cute_lang::span::Span;
use std::fmt::Write;

/// Where the kernel's signature gets the parameters of its fast divisors, known once the body is
/// written.
const FAST_DIV_PARAMS: &str = "{FAST_DIV_PARAMS}";

impl KernelWriter<'_> {
    pub(super) fn kernel(&mut self) {
        let mut params = Vec::new();
        for p in &self.k.params {
            let ty = match &p.kind {
                ParamKind::Tensor { ty, .. } => mlir_tensor(ty),
                ParamKind::Scalar(s) => mlir_scalar(*s).to_string(),
                ParamKind::Stream => unreachable!("elaboration refuses kernel stream parameters"),
            };
            params.push(format!("{}: {ty} {}", v(p.value), self.loc(p.span)));
        }
        // Shared memory past the static limit is dynamic: cute-lower-to-gpu places the allocations in
        // the launch's dynamic shared memory.
        let dynamic = self.k.dynamic_smem_bytes();
        let mut attr_list = Vec::new();
        if dynamic > 0 {
            attr_list.push(format!("cute.dynamic_smem = {dynamic} : i64"));
        }
        // TMA tensor maps: `byval` 128-byte parameters after the fast divisors; the pipeline makes
        // them `nvvm.grid_constant` once the function is an `llvm.func` (docs/design.md (q)).
        if !self.k.tmas.is_empty() {
            attr_list.push(format!("cute.tma_params = {} : i64", self.k.tmas.len()));
        }
        // A fixed block shape (a kernel that re-allocates registers): `.reqntid` for ptxas, and
        // thread indices known to be below it.
        // `.minnctapersm` as well (CUTLASS's `__launch_bounds__(384, 1)`): without it ptxas may
        // size the kernel's registers below the block's share and then ignore `setmaxnreg` ("unable
        // to determine register count at entry", C7508), capping every warpgroup at that count. It
        // is 1, or the blocks the warpgroups' register counts leave room for (lang's
        // launch_bounds.rs: a producer at 24 and one consumer at 232 make 2).
        if let Some([x, y, z]) = self.k.reqntid {
            attr_list.push(format!("known_block_size = array<i32: {x}, {y}, {z}>"));
            attr_list.push(format!("nvvm.minctasm = {} : i32", self.k.blocks_per_sm));
        }
        // A cluster shape (`launch ... cluster(X, Y, Z)`): NVPTX writes `.explicitcluster` and
        // `.reqnctapercluster X, Y, Z`, so every launch of the kernel runs in such clusters.
        // 64-bit index math: cute-lower-to-gpu passes the `?` extents and strides as `i64`, and
        // cute-canonicalize computes offsets in `i64` (the manifest's `index 64`).
        if self.ix != "i32" {
            attr_list.push("cute.index_bits = 64 : i64".to_string());
        }
        // Fast math (`math(ftz, ...)`): NVPTX's `.ftz` forms for the kernel's f32 code.
        attr_list.extend(super::fast_math::kernel_attribute(self.k.math).map(str::to_string));
        if let Some(c) = &self.k.cluster {
            attr_list.push(format!("nvvm.cluster_dim = array<i32: {}, {}, {}>", c.dims[0], c.dims[1], c.dims[2]));
        }
        let attrs =
            if attr_list.is_empty() { String::new() } else { format!(" attributes {{{}}}", attr_list.join(", ")) };
        self.line(&format!("gpu.func @{}({}{FAST_DIV_PARAMS}) kernel{attrs} {{", self.k.symbol, params.join(", ")));
        self.indent += 1;
        // The run-time values behind each tensor parameter's `?` entries.
        for p in &self.k.params {
            if let ParamKind::Tensor { ty, dyn_leaves } = &p.kind {
                // Extents and strides are positive, as the layout algebra assumes; the runtime's
                // checked launches refuse anything else.
                self.non_negative_values.extend(dyn_leaves.iter().copied());
                self.positive_values.extend(dyn_leaves.iter().copied());
                // The kernel ABI passes them in the index type (`i64` where the manifest says
                // `index 64`).
                if self.ix != "i32" {
                    self.wide_values.extend(dyn_leaves.iter().copied());
                }
                let t = mlir_tensor(ty);
                for (i, leaf) in dyn_leaves.iter().enumerate() {
                    let loc = self.loc(p.span);
                    self.line(&format!(
                        "{} = \"cute.dyn\"({}) {{index = {i} : i32}} : ({t}) -> {} {loc}",
                        v(*leaf),
                        v(p.value),
                        self.ix
                    ));
                }
            }
        }
        let body = &self.k.body;
        self.insts(body);
        let loc = self.loc(Span::new(self.k.span.end.saturating_sub(1), self.k.span.end));
        self.line(&format!("gpu.return {loc}"));
        self.indent -= 1;
        let loc = self.loc(self.k.span);
        self.line(&format!("}} {loc}"));
        // The multiplier and shift of each run-time divisor, after the declared parameters (the
        // kernel ABI the manifest's `fastdiv` lines describe).
        let mut extra = String::new();
        for i in 0..self.fast_divisors.len() {
            let sep = if self.k.params.is_empty() && i == 0 { "" } else { ", " };
            let _ = write!(extra, "{sep}%fdm{i}: i32 {loc}, %fds{i}: i32 {loc}");
        }
        for i in 0..self.k.tmas.len() {
            let sep = if self.k.params.is_empty() && self.fast_divisors.is_empty() && i == 0 { "" } else { ", " };
            let _ = write!(extra, "{sep}%tma{i}: !llvm.ptr {{llvm.align = 64 : i64}} {loc}");
        }
        self.out = self.out.replacen(FAST_DIV_PARAMS, &extra, 1);
    }
}
