// cute-verify (from copy-async.mlir): the cp.async operations copy gmem to smem, in the chunk sizes
// the PTX ISA allows (`max_vector` elements), and any other `op` name is refused. Only they take a
// predicate (zero-fill).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%g: !cute.tensor<bf16, "gmem", 16, "(32):(1)">, %h: !cute.tensor<bf16, "gmem", 16, "(32):(1)">, %f: !cute.tensor<f32, "gmem", 16, "(32):(1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(32):(1)">
      %t = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(32):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(32):(1)">
      %sf = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(32):(1)">
      %p = arith.constant true
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: only a `cp.async` copy takes a predicate (false: nothing is read, the destination is zero-filled); guard other copies with `scf.if`
      "cute.copy"(%s, %t, %p) {max_vector = 8 : i32} : (!cute.tensor<bf16, "smem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">, i1) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.cg copies from gmem to smem, not from gmem to gmem
      "cute.copy"(%g, %h) {max_vector = 8 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "gmem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.ca copies from gmem to smem, not from smem to smem
      "cute.copy"(%s, %t) {max_vector = 8 : i32, op = "cp.async.ca"} : (!cute.tensor<bf16, "smem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.cg copies from gmem to smem, not from gmem to rmem
      "cute.copy"(%g, %r) {max_vector = 8 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "rmem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: unknown copy operation "cp.async.cz"; the operations are "cp.async.ca", "cp.async.cg"
      "cute.copy"(%g, %s) {max_vector = 8 : i32, op = "cp.async.cz"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.cg moves 16 bytes per copy, but `max_vector` gives 8
      "cute.copy"(%g, %s) {max_vector = 4 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.ca moves 4, 8, 16 bytes per copy, but `max_vector` gives 12
      "cute.copy"(%f, %sf) {max_vector = 3 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 16, "(32):(1)">, !cute.tensor<f32, "smem", 16, "(32):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.ca moves 4, 8, 16 bytes per copy, but `max_vector` gives 2
      "cute.copy"(%g, %s) {max_vector = 1 : i32, op = "cp.async.ca"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      // Without `max_vector` there is no chunk size.
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: cp.async.cg moves 16 bytes per copy, but `max_vector` gives 0
      "cute.copy"(%g, %s) {op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      gpu.return
    }
  }
}
