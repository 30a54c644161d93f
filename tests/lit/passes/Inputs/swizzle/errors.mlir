// cute-verify (from swizzle.mlir): only shared memory is swizzled; a view keeps its source's
// swizzle (only `make_view` lays memory out again); a swizzled tensor claims no more alignment than
// the swizzle's unmoved runs of 2^M elements; a swizzle CuTe would refuse is not a type.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK: errors.mlir:[[# @LINE + 1]]:5: error: kernel argument of type !cute.tensor<f16, "gmem", 16 : i64, "S<3,3,3> o 0 o (8,64):(64,1)"> must be in gmem, unswizzled
    gpu.func @swizzled_argument(%g: !cute.tensor<f16, "gmem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">) kernel {
      gpu.return
    }
    gpu.func @bad(%g: !cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) kernel {
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: only shared memory can be swizzled, not rmem
      %r = "cute.alloc"() : () -> !cute.tensor<f16, "rmem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: a tensor swizzled by S<3,2,3> claims 16-byte alignment, but the swizzle keeps only 8-byte runs together
      %w = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,2,3> o 0 o (8,64):(64,1)">
      %s = "cute.alloc"() : () -> !cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: `cute.local_tile` of a tensor with S<3,3,3> cannot have no swizzle: a view keeps its source's swizzle
      %t = "cute.local_tile"(%s) {args = ["(8,8)", "(0,1)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f16, "smem", 16, "S<3,3,3> o 0 o (8,64):(64,1)">) -> !cute.tensor<f16, "smem", 16, "(8,8):(64,1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:12: error: `cute.local_tile` of a tensor with no swizzle cannot have S<3,3,3>: a view keeps its source's swizzle
      %u = "cute.local_tile"(%g) {args = ["(8,8)", "(0,1)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f16, "gmem", 16, "(8,64):(64,1)">) -> !cute.tensor<f16, "gmem", 16, "S<3,3,3> o 0 o (8,8):(64,1)">
      gpu.return
    }
  }
}
