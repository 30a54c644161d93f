// RUN: not %cutec opt %s --pass cute-canonicalize 2>&1 | FileCheck %s
// A view whose dynamic values do not match its layout's `?` entries never reaches a pass: cute-verify
// rejects it when the IR is read.
// CHECK: canonicalize-errors.mlir:8:12: error: `cute.view` has 0 dynamic values but its layout (4,?):(1,4) has 1 `?` entries
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "gmem", 4, "?:1">, %o: i32) kernel {
      %v = "cute.view"(%t, %o) : (!cute.tensor<f32, "gmem", 4, "?:1">, i32) -> !cute.tensor<f32, "gmem", 4, "(4,?):(1,4)">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%v, %c0) : (!cute.tensor<f32, "gmem", 4, "(4,?):(1,4)">, i32) -> f32
      gpu.return
    }
  }
}
