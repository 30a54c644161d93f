// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// The IRDL definition rejects a memory space that is not gmem, smem or rmem.
// CHECK: verify-errors.mlir:6:29: error: '"xmem"' does not satisfy the constraint
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "xmem", 4, "8:1">) kernel {
      gpu.return
    }
  }
}
