module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @no_atom(%va: vector<8xbf16>, %vb: vector<4xbf16>, %vc: vector<4xf32>) kernel {
      %d = "cute.mma"(%va, %vb, %vc) : (vector<8xbf16>, vector<4xbf16>, vector<4xf32>) -> vector<4xf32>
      gpu.return
    }
  }
}
