// RUN: not %cutec opt %s --pass cute-lower-to-gpu 2>&1 | FileCheck %s
// A kernel tensor argument must live in global memory; the error points at the function.
// CHECK: lower-to-gpu-errors.mlir:6:5: error: kernel argument of type !cute.tensor<f32, "smem", 4 : i64, "8:1"> must be in gmem
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "smem", 4, "8:1">) kernel {
      gpu.return
    }
  }
}

// -----
// RUN: not %cutec opt %S/Inputs/unproven-width.mlir --pass cute-lower-to-gpu 2>&1 | FileCheck %s --check-prefix=WIDTH
// WIDTH: unproven-width.mlir:5:12: error: vector width 8 is not proven for layout (4,8):(?,1) with 16-byte alignment (at most 1)
