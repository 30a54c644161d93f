// RUN: %cutec opt %s --pass cute-canonicalize | FileCheck %s --check-prefix=CANON
// RUN: %cutec opt %s --pass cute-canonicalize --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %cutec opt %s --pass cute-canonicalize -o %t.mlir
// RUN: %cutec opt %t.mlir --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: not %cutec opt %S/Inputs/swizzle/errors.mlir 2>&1 | FileCheck %S/Inputs/swizzle/errors.mlir
// A swizzled shared-memory tensor: its type's layout is CuTe's composed layout `S<B,M,S> o 0 o L`.
// The swizzle acts on element offsets from the start of the allocation: views keep it (and their
// offset from the allocation), cute-canonicalize keeps it through folding, and cute-lower-to-gpu
// applies `o ^ ((o & yyy_mask) >> S)` to every access's offset from the allocation, folded when
// the offset is static. A plain layout over the same memory (`make_view`) drops the swizzle.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // S<3,3,3> on a (8,64):(64,1) f16 tile: thread t's row t%8, 8-element chunk t/8. The slice keeps
    // the swizzle; lowering computes the chunk's offset from the allocation (64*(t%8) + 8*(t/8)),
    // masks bits 6-8 (448), shifts them by 3 and XORs them into bits 3-5, then moves 16 bytes.
    // CANON-LABEL: gpu.func @rows(
    // CANON: "cute.view"(%{{.*}}, %{{.*}}) : (!cute.tensor<f16, "smem", 16 : i64, "S<3,3,3> o 0 o (8,64):(64,1)">, i32) -> !cute.tensor<f16, "smem", 16 : i64, "S<3,3,3> o 0 o 8:1">
    // GPU-LABEL: gpu.func @rows(
    // GPU: %[[OFF:.*]] = arith.addi
    // GPU: %[[MASK:.*]] = arith.constant 448 : i32
    // GPU-NEXT: %[[Y:.*]] = arith.andi %[[OFF]], %[[MASK]] : i32
    // GPU-NEXT: %[[S:.*]] = arith.constant 3 : i32
    // GPU-NEXT: %[[Z:.*]] = arith.shrui %[[Y]], %[[S]] : i32
    // GPU-NEXT: %[[X:.*]] = arith.xori %[[OFF]], %[[Z]] : i32
    // GPU-NEXT: %[[X64:.*]] = arith.extsi %[[X]] : i32 to i64
    // GPU-NEXT: %[[P:.*]] = llvm.getelementptr %{{.*}}[%[[X64]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, f16
    // GPU-NEXT: llvm.load %[[P]] {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
    gpu.func @rows(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c8 = arith.constant 8 : i32
      %r = arith.remui %ti, %c8 : i32
      %q = arith.divui %ti, %c8 : i32
      %row = "cute.slice"(%s, %r) {args = ["(?,_)"], operandSegmentSizes = array<i32: 1, 0, 1>} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, i32) -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (64):(1)">
      %chunk = "cute.local_tile"(%row, %q) {args = ["8", "?"], operandSegmentSizes = array<i32: 1, 0, 1>} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (64):(1)">, i32) -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8):(1)">
      %v = "cute.load_frag"(%chunk) : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8):(1)">) -> vector<8xf16>
      gpu.return
    }

    // A static coordinate: element 64 (row 1, column 0) is at 64 ^ ((64 & 448) >> 3) = 72, folded
    // here.
    // GPU-LABEL: gpu.func @folded(
    // GPU: %[[C72:.*]] = arith.constant 72 : i32
    // GPU-NEXT: %[[X64:.*]] = arith.extsi %[[C72]] : i32 to i64
    // GPU-NEXT: llvm.getelementptr %{{.*}}[%[[X64]]]
    gpu.func @folded(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %c1 = arith.constant 1 : i32
      %c0 = arith.constant 0 : i32
      %x = "cute.load_at"(%s, %c1, %c0) {coord = "(?,?)"} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, i32, i32) -> f16
      gpu.return
    }

    // The same memory under a plain layout (CuTe's make_tensor(t.iterator, layout)): no swizzle.
    // The relaid view is a root of its own: the access goes through it, not through the swizzled
    // allocation.
    // CANON-LABEL: gpu.func @relayout(
    // CANON: %[[P:.*]] = "cute.view"(%{{.*}}, %{{.*}}) : (!cute.tensor<f16, "smem", 16 : i64, "S<3,3,3> o 0 o (8,64):(64,1)">, i32) -> !cute.tensor<f16, "smem", 16 : i64, "(16,32):(32,1)">
    // CANON: "cute.load"(%[[P]], %{{.*}}) : (!cute.tensor<f16, "smem", 16 : i64, "(16,32):(32,1)">, i32) -> f16
    // GPU-LABEL: gpu.func @relayout(
    // GPU-NOT: arith.xori
    // GPU: gpu.return
    gpu.func @relayout(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %l = "cute.make_layout"() : () -> !cute.layout<"(16,32):(32,1)">
      %p = "cute.make_view"(%s, %l) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, !cute.layout<"(16,32):(32,1)">) -> !cute.tensor<f16, "smem", 16, "(16,32):(32,1)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c0 = arith.constant 0 : i32
      %x = "cute.load_at"(%p, %ti, %c0) {coord = "(?,?)"} : (!cute.tensor<f16, "smem", 16, "(16,32):(32,1)">, i32, i32) -> f16
      gpu.return
    }

    // The allocation laid out again with another swizzle (make_tensor(alloc, S<2,3,3> o ...)): the
    // access uses the new one (mask 192: bits 6-7), from the allocation's start.
    // GPU-LABEL: gpu.func @reswizzle(
    // GPU: arith.constant 192 : i32
    // GPU-NOT: arith.constant 448 : i32
    // GPU: gpu.return
    gpu.func @reswizzle(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %l = "cute.make_layout"() : () -> !cute.layout<"(16,32):(32,1)">
      %p = "cute.make_view"(%s, %l) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, !cute.layout<"(16,32):(32,1)">) -> !cute.tensor<f16, "smem", 16, "S<2,3,3> o 0 o (16,32):(32,1)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c8 = arith.constant 8 : i32
      %x = "cute.load_at"(%p, %ti, %c8) {coord = "(?,?)"} : (!cute.tensor<f16, "smem", 16, "S<2,3,3> o 0 o (16,32):(32,1)">, i32, i32) -> f16
      gpu.return
    }
    // The work every access of a thread shares is done once. Element (r, 16, stage) of a 4-stage
    // ring, r = t % 8: the offset r*64 + 16 + stage*512 has a per-thread part (bits 6-8), a
    // constant that no bit of it overlaps (16: no carry, so r*64 + 16 = r*64 ^ 16, and the swizzle,
    // linear over XOR, gives swizzle(r*64) ^ swizzle(16) = swizzle(r*64) ^ 16), and a multiple of
    // the period 512, which the swizzle leaves alone and which is added after it.
    // GPU-LABEL: gpu.func @shared_work(
    // GPU: %[[R:.*]] = arith.remui %{{.*}}, %{{.*}} : i32
    // GPU: %[[ROW:.*]] = arith.muli %[[R]], %{{.*}} : i32
    // GPU: %[[STAGE:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
    // GPU: %[[Y:.*]] = arith.andi %[[ROW]], %{{.*}} : i32
    // GPU-NEXT: %{{.*}} = arith.constant 3 : i32
    // GPU-NEXT: %[[Z:.*]] = arith.shrui %[[Y]], %{{.*}} : i32
    // GPU-NEXT: %[[SW:.*]] = arith.xori %[[ROW]], %[[Z]] : i32
    // GPU-NEXT: %[[C16:.*]] = arith.constant 16 : i32
    // GPU-NEXT: %[[COL:.*]] = arith.xori %[[SW]], %[[C16]] : i32
    // GPU-NEXT: %[[AT:.*]] = arith.addi %[[COL]], %[[STAGE]] : i32
    // GPU-NEXT: arith.extsi %[[AT]] : i32 to i64
    gpu.func @shared_work(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64,4):(64,1,512)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c8 = arith.constant 8 : i32
      %r = arith.remui %ti, %c8 : i32
      %b = gpu.block_id x
      %bi = arith.index_cast %b : index to i32
      %c4 = arith.constant 4 : i32
      %stage = arith.remui %bi, %c4 : i32
      %c16 = arith.constant 16 : i32
      %x = "cute.load_at"(%s, %r, %c16, %stage) {coord = "(?,?,?)"} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64,4):(64,1,512)">, i32, i32, i32) -> f16
      gpu.return
    }

    // Where the per-thread part may carry into the constant's bits (column t % 32 plus 16), the
    // swizzle is applied to the whole sum.
    // GPU-LABEL: gpu.func @carries(
    // GPU: %[[COL:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
    // GPU: %[[SUM:.*]] = arith.addi %{{.*}}, %[[COL]] : i32
    // GPU-NEXT: arith.constant 448 : i32
    // GPU-NEXT: %[[Y:.*]] = arith.andi %[[SUM]], %{{.*}} : i32
    // GPU: %[[Z:.*]] = arith.shrui %[[Y]], %{{.*}} : i32
    // GPU-NEXT: arith.xori %[[SUM]], %[[Z]] : i32
    // GPU-NOT: arith.xori
    // GPU: gpu.return
    gpu.func @carries(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c32 = arith.constant 32 : i32
      %col = arith.remui %ti, %c32 : i32
      %c16 = arith.constant 16 : i32
      %at = arith.addi %col, %c16 : i32
      %c1 = arith.constant 1 : i32
      %x = "cute.load_at"(%s, %c1, %at) {coord = "(?,?)"} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">, i32, i32) -> f16
      gpu.return
    }
  }
}
