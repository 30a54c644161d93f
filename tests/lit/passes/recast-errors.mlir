// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// cute-verify: `cute.recast` is the source's memory in another element type. Its layout must be
// recast_layout of the source's, cover exactly the same memory, and keep the base aligned for the
// new element; memory space, swizzles and bools cannot change or be recast.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%a: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">, %b: !cute.tensor<f16, "gmem", 2, "(8,64):(64,1)">, %c: !cute.tensor<f16, "gmem", 16, "(8,2):(8,1)">, %n: i32) kernel {
      // CHECK: recast-errors.mlir:[[# @LINE + 1]]:12: error: `cute.recast` of (8,64):(64,1) from f16 to i32 gives (8,32):(32,1) by recast_layout, but its result type says "(8,64):(64,1)"
      %0 = "cute.recast"(%a) : (!cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) -> !cute.tensor<i32, "gmem", 16, "(8,64):(64,1)">
      // CHECK: recast-errors.mlir:[[# @LINE + 1]]:12: error: `cute.recast` to 4-byte elements claims 4-byte alignment from a 2-byte aligned source
      %1 = "cute.recast"(%b) : (!cute.tensor<f16, "gmem", 2, "(8,64):(64,1)">) -> !cute.tensor<i32, "gmem", 4, "(8,32):(32,1)">
      // CHECK: recast-errors.mlir:[[# @LINE + 1]]:12: error: `cute.recast` of (8,2):(8,1) from f16 to i64: (8,1):(2,1) does not cover the same memory
      %2 = "cute.recast"(%c) : (!cute.tensor<f16, "gmem", 16, "(8,2):(8,1)">) -> !cute.tensor<i64, "gmem", 16, "(8,1):(2,1)">
      // CHECK: recast-errors.mlir:[[# @LINE + 1]]:12: error: `cute.recast` of gmem memory cannot be typed smem
      %3 = "cute.recast"(%a) : (!cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) -> !cute.tensor<i32, "smem", 16, "(8,32):(32,1)">
      // CHECK: recast-errors.mlir:[[# @LINE + 1]]:12: error: `cute.recast` has 1 dynamic values but its layout (8,32):(32,1) has 0 `?` entries
      %4 = "cute.recast"(%a, %n) : (!cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">, i32) -> !cute.tensor<i32, "gmem", 16, "(8,32):(32,1)">
      gpu.return
    }
  }
}
