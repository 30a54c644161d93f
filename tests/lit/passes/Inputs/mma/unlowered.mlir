module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @unlowered(%va: vector<8xbf16>, %vb: vector<4xbf16>, %vc: vector<4xf32>, %out: !cute.tensor<f32, "gmem", 16, "4:1">) kernel {
      %d = "cute.mma"(%va, %vb, %vc) {atom = "SM80_16x8x16_F32BF16BF16F32_TN"} : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      "cute.store_frag"(%d, %out) : (vector<4xf32>, !cute.tensor<f32, "gmem", 16, "4:1">) -> ()
      gpu.return
    }
  }
}
