// RUN: %cutec opt %s --pass cute-slice-vectors -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s
// RUN: %cutec opt %s --pass cute-slice-vectors | FileCheck %s --check-prefix=DEAD
// RUN: %cutec build %samples/gemm_sm80.cute --emit=gpu 2>/dev/null | FileCheck %s --check-prefix=GEMM
// cute-slice-vectors: each slice a store takes of a whole-fragment vector is computed from the slices
// of its inputs; the whole-fragment vectors left unused are erased. Printed, re-parsed, checked.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // An epilogue: a 64-element f32 fragment assembled from 16-byte chunks, converted to bf16,
    // stored 16 bytes (8 bf16) at a time. Each store's 8 values are two loaded chunks joined,
    // converted as 8: no 64-wide vector is left.
    // CHECK-LABEL: gpu.func @epilogue
    gpu.func @epilogue(%p: !llvm.ptr, %q: !llvm.ptr) kernel {
      // CHECK: %[[C0:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
      // CHECK: %[[C1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
      // CHECK: %[[J:.*]] = vector.shuffle %[[C0]], %[[C1]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
      // CHECK: %[[T:.*]] = arith.truncf %[[J]] : vector<8xf32> to vector<8xbf16>
      // CHECK: llvm.store %[[T]], %{{.*}} : vector<8xbf16>, !llvm.ptr
      // CHECK-NOT: vector<64x
      // CHECK: gpu.return
      %zero = arith.constant dense<0.000000e+00> : vector<64xf32>
      %c0 = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
      %p1 = llvm.getelementptr %p[4] : (!llvm.ptr) -> !llvm.ptr, f32
      %c1 = llvm.load %p1 {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
      %v0 = vector.insert_strided_slice %c0, %zero {offsets = [0], strides = [1]} : vector<4xf32> into vector<64xf32>
      %v1 = vector.insert_strided_slice %c1, %v0 {offsets = [4], strides = [1]} : vector<4xf32> into vector<64xf32>
      %t = arith.truncf %v1 : vector<64xf32> to vector<64xbf16>
      %s = vector.extract_strided_slice %t {offsets = [0], sizes = [8], strides = [1]} : vector<64xbf16> to vector<8xbf16>
      llvm.store %s, %q {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr
      gpu.return
    }

    // A slice outside every inserted chunk comes from what they were inserted into (a splat
    // constant: the same constant, narrower); an element read alone (an MMA's operand) is read from
    // the one chunk that holds it; element-wise ops apply to the slices of their vector operands
    // (a broadcast scalar: broadcast narrower).
    // CHECK-LABEL: gpu.func @sources
    gpu.func @sources(%p: !llvm.ptr, %q: !llvm.ptr, %x: f32) kernel {
      // CHECK: %[[C:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
      // CHECK: %[[Z:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
      // CHECK: llvm.store %[[Z]]
      // CHECK: %[[E:.*]] = vector.extract_strided_slice %[[C]] {offsets = [2], sizes = [1], strides = [1]} : vector<4xf32> to vector<1xf32>
      // CHECK: %[[B:.*]] = vector.broadcast %{{.*}} : f32 to vector<1xf32>
      // CHECK: %[[M:.*]] = arith.mulf %[[E]], %[[B]] : vector<1xf32>
      // CHECK: %[[X:.*]] = vector.extract %[[M]][0] : f32 from vector<1xf32>
      // CHECK: llvm.store %[[X]]
      // CHECK-NOT: vector<64x
      // CHECK: gpu.return
      %one = arith.constant dense<1.000000e+00> : vector<64xf32>
      %c = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
      %v = vector.insert_strided_slice %c, %one {offsets = [8], strides = [1]} : vector<4xf32> into vector<64xf32>
      %far = vector.extract_strided_slice %v {offsets = [60], sizes = [4], strides = [1]} : vector<64xf32> to vector<4xf32>
      llvm.store %far, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
      %b = vector.broadcast %x : f32 to vector<64xf32>
      %m = arith.mulf %v, %b : vector<64xf32>
      %e = vector.extract %m[10] : f32 from vector<64xf32>
      llvm.store %e, %q : f32, !llvm.ptr
      gpu.return
    }

    // Vectors of up to 32 elements are left whole (a TV-layout add's fragments), and so is a slice
    // of a vector this pass does not follow (a function argument).
    // CHECK-LABEL: gpu.func @left
    gpu.func @left(%q: !llvm.ptr, %w: vector<64xf32>, %a: vector<32xf32>) kernel {
      // CHECK: arith.addf %{{.*}} : vector<32xf32>
      // CHECK: vector.extract_strided_slice %{{.*}} {offsets = [4], sizes = [4], strides = [1]} : vector<32xf32> to vector<4xf32>
      // CHECK: vector.extract_strided_slice %{{.*}} {offsets = [4], sizes = [4], strides = [1]} : vector<64xf32> to vector<4xf32>
      %s = arith.addf %a, %a : vector<32xf32>
      %x = vector.extract_strided_slice %s {offsets = [4], sizes = [4], strides = [1]} : vector<32xf32> to vector<4xf32>
      llvm.store %x, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
      %y = vector.extract_strided_slice %w {offsets = [4], sizes = [4], strides = [1]} : vector<64xf32> to vector<4xf32>
      llvm.store %y, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
      gpu.return
    }
  }
}

// The whole-fragment ops are gone, not only unused.
// DEAD-LABEL: gpu.func @epilogue
// DEAD-NOT: vector.insert_strided_slice
// DEAD-NOT: vector<64xbf16>
// DEAD: gpu.return

// The GEMM's accumulators reach LLVM as the MMA's 4-element chunks only.
// GEMM-LABEL: gpu.func @gemm_bf16(
// GEMM-NOT: vector<128x
// GEMM: gpu.return
