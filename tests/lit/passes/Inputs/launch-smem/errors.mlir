// cute-verify (from launch-smem.mlir): a `cute.launch_smem` tensor is shared, static, at a
// non-negative offset that is a multiple of 128 bytes, and a swizzle on it claims no more alignment
// than its unmoved runs.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: `cute.launch_smem` makes smem tensors, not rmem
      %r = "cute.launch_smem"() {offset = 0 : i64} : () -> !cute.tensor<f16, "rmem", 16, "(8,64):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: `cute.launch_smem` offset 100 is not a non-negative multiple of 128
      %o = "cute.launch_smem"() {offset = 100 : i64} : () -> !cute.tensor<f16, "smem", 16, "(8,64):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: `cute.launch_smem` offset -128 is not a non-negative multiple of 128
      %n = "cute.launch_smem"() {offset = -128 : i64} : () -> !cute.tensor<f16, "smem", 16, "(8,64):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: a tensor swizzled by S<3,2,3> claims 16-byte alignment, but the swizzle keeps only 8-byte runs together
      %w = "cute.launch_smem"() {offset = 0 : i64} : () -> !cute.tensor<f16, "smem", 16, "S<3,2,3> o 0 o (8,64):(64,1)">
      gpu.return
    }
  }
}
