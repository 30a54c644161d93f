// RUN: %cutec opt %s | FileCheck %s
// RUN: %cutec opt %s -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s
// RUN: %cutec opt %s --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %cutec opt %s --pass cute-lower-to-gpu -o %t.gpu.mlir
// RUN: %cutec opt %t.gpu.mlir | FileCheck %s --check-prefix=GPU
// RUN: not %cutec opt %S/Inputs/tma-store/bad.mlir 2>&1 | FileCheck %S/Inputs/tma-store/bad.mlir
// `cute.tma_store`: the shared box, the tensor map (a kernel parameter), one i32 element
// coordinate per mode of the box, innermost first. cute-verify accepts it (printed, it parses
// again); cute-lower-to-gpu makes it NVVM's `nvvm.cp.async.bulk.tensor.global.shared.cta` on the
// box's shared address (swizzled or not: the box starts a swizzle period, so its address is the
// allocation's), which mlir-translate turns into `llvm.nvvm.cp.async.bulk.tensor.s2g.tile.2d`.
// The bulk-group ops are NVVM's own and pass through.
// CHECK-LABEL: gpu.func @store(
// CHECK: "cute.tma_store"(%{{.*}}, %arg1, %arg0, %arg0) : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,64):(64,1)">, !llvm.ptr, i32, i32) -> ()
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-NEXT: "cute.tma_store"(%{{.*}}, %arg1, %arg0, %arg0, %arg0) : (!cute.tensor<f32, "smem", 16 : i64, "(4,8,16):(1,4,32)">, !llvm.ptr, i32, i32, i32) -> ()
// GPU-LABEL: gpu.func @store(
// GPU: %[[S:.*]] = llvm.mlir.addressof @{{.*}} : !llvm.ptr<3>
// GPU: nvvm.cp.async.bulk.tensor.global.shared.cta %arg1, %[[S]], box[%arg0, %arg0] : !llvm.ptr, <3>
// GPU-NEXT: nvvm.cp.async.bulk.commit.group
// GPU-NEXT: nvvm.cp.async.bulk.wait_group 1 {read}
// GPU-NEXT: nvvm.cp.async.bulk.wait_group 0
// GPU: nvvm.cp.async.bulk.tensor.global.shared.cta %arg1, %{{.*}}, box[%arg0, %arg0, %arg0] : !llvm.ptr, <3>
// GPU-NOT: cute.tma_store
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @store(%i: i32, %map: !llvm.ptr) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "S<3,3,3> o 0 o (64,64):(64,1)">
      %t = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(4,8,16):(1,4,32)">
      "cute.tma_store"(%s, %map, %i, %i) : (!cute.tensor<bf16, "smem", 16, "S<3,3,3> o 0 o (64,64):(64,1)">, !llvm.ptr, i32, i32) -> ()
      nvvm.cp.async.bulk.commit.group
      nvvm.cp.async.bulk.wait_group 1 {read}
      nvvm.cp.async.bulk.wait_group 0
      "cute.tma_store"(%t, %map, %i, %i, %i) : (!cute.tensor<f32, "smem", 16, "(4,8,16):(1,4,32)">, !llvm.ptr, i32, i32, i32) -> ()
      gpu.return
    }
  }
}
