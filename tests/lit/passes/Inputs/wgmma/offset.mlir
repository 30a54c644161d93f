// A wgmma A tile one 128-byte row into its 128-byte swizzle pattern: canonical, but its
// descriptor would need a base offset, which cute-lower-to-gpu does not make.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @offset() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (128,64):(64,1)">
      %c64 = arith.constant 64 : i32
      %c0 = arith.constant 0 : i32
      %a = "cute.view"(%s, %c64) : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (128,64):(64,1)">, i32) -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %b = "cute.view"(%s, %c0) : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (128,64):(64,1)">, i32) -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %c = arith.constant dense<0.0> : vector<32xf32>
      "cute.warpgroup_fence"() : () -> ()
      %d = "cute.wgmma"(%a, %b, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      nvvm.wgmma.commit.group.sync.aligned
      "cute.warpgroup_wait_group"() {n = 1 : i64} : () -> ()
      gpu.return
    }
  }
}
