// cute-verify (from ldmatrix.mlir): ldmatrix copies 16-bit elements from smem to rmem.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%g: !cute.tensor<bf16, "gmem", 16, "(8):(1)">) kernel {
      %sf = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8):(1)">
      %rf = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "(8):(1)">
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(8):(1)">
      %t = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(8):(1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4 moves 16-bit elements, not f32
      "cute.copy"(%sf, %rf) {op = "ldmatrix.x4"} : (!cute.tensor<f32, "smem", 16, "(8):(1)">, !cute.tensor<f32, "rmem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4 copies from smem to rmem, not from gmem to rmem
      "cute.copy"(%g, %r) {op = "ldmatrix.x4"} : (!cute.tensor<bf16, "gmem", 16, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4 copies from smem to rmem, not from smem to smem
      "cute.copy"(%s, %t) {op = "ldmatrix.x4"} : (!cute.tensor<bf16, "smem", 16, "(8):(1)">, !cute.tensor<bf16, "smem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4.trans copies from smem to rmem, not from rmem to smem
      "cute.copy"(%r, %s) {op = "ldmatrix.x4.trans"} : (!cute.tensor<bf16, "rmem", 16, "(8):(1)">, !cute.tensor<bf16, "smem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x2 gives each lane an 8-element row and 4 values, not 8 (layout (8):(1)) into 8 (layout (8):(1))
      "cute.copy"(%s, %r) {op = "ldmatrix.x2"} : (!cute.tensor<bf16, "smem", 16, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: unknown copy operation "ldmatrix.x8"
      "cute.copy"(%s, %r) {op = "ldmatrix.x8"} : (!cute.tensor<bf16, "smem", 16, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      gpu.return
    }
  }
}
