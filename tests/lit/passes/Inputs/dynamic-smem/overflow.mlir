// cute-lower-to-gpu (from dynamic-smem.mlir): the allocations, each rounded up to 128 bytes, must fit
// in the kernel's dynamic shared memory. 16 f32 (64 bytes, 128 rounded) then 3 bf16 (6 bytes, 128
// rounded) need 256 bytes; the kernel has 255. The error points at the allocation that overflows.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @overflow() kernel attributes {cute.dynamic_smem = 255 : i64} {
      %a = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(16):(1)">
      // CHECK: overflow.mlir:[[# @LINE + 1]]:12: error: shared allocations need 256 bytes but the kernel's dynamic shared memory is 255
      %b = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(3):(1)">
      gpu.return
    }
  }
}
