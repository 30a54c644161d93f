// One RS wgmma (A from registers): the A fragment is written into its register tensor before the
// warpgroup fence and read by the wgmma after it; B is a 128-byte swizzled shared tile.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @rs(%v: vector<8xbf16>) kernel {
      %ra = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16 : i64, "(8):(1)">
      %rc = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16 : i64, "(32):(1)">
      %b = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %zero = arith.constant dense<0.0> : vector<32xf32>
      "cute.store_frag"(%v, %ra) : (vector<8xbf16>, !cute.tensor<bf16, "rmem", 16 : i64, "(8):(1)">) -> ()
      "cute.store_frag"(%zero, %rc) : (vector<32xf32>, !cute.tensor<f32, "rmem", 16 : i64, "(32):(1)">) -> ()
      "cute.warpgroup_fence"() : () -> ()
      %a = "cute.load_frag"(%ra) : (!cute.tensor<bf16, "rmem", 16 : i64, "(8):(1)">) -> vector<8xbf16>
      %c = "cute.load_frag"(%rc) : (!cute.tensor<f32, "rmem", 16 : i64, "(32):(1)">) -> vector<32xf32>
      %d = "cute.wgmma"(%a, %b, %c) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (vector<8xbf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      "cute.store_frag"(%d, %rc) : (vector<32xf32>, !cute.tensor<f32, "rmem", 16 : i64, "(32):(1)">) -> ()
      nvvm.wgmma.commit.group.sync.aligned
      "cute.warpgroup_wait_group"() {n = 0 : i64} : () -> ()
      gpu.return
    }
  }
}
