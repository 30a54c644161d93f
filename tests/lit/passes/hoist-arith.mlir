// RUN: %cutec opt %s --pass cute-hoist-arith -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s
// cute-hoist-arith: loop-invariant integer arithmetic, divisions included, moves to before the
// outermost loop its operands are defined outside of; a moved division whose divisor is not a
// non-zero constant divides by `freeze(d) == 0 ? 1 : freeze(d)`. Printed, re-parsed, checked.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // A producer's k loop: the tile coordinate `t / n`, `t % n` of values defined before the loop
    // is computed before it, not between the wait and the load of each iteration.
    // CHECK-LABEL: gpu.func @invariant_division
    gpu.func @invariant_division(%p: !llvm.ptr, %t: i32, %n: i32, %k: i32) kernel {
      // CHECK: %[[F:.*]] = llvm.freeze %{{.*}} : i32
      // CHECK: %[[Z:.*]] = arith.cmpi eq, %[[F]], %{{.*}} : i32
      // CHECK: %[[D:.*]] = arith.select %[[Z]], %{{.*}}, %[[F]] : i32
      // CHECK: %[[Q:.*]] = arith.divsi %{{.*}}, %[[D]] : i32
      // CHECK: %[[R:.*]] = arith.remsi %{{.*}}, %[[D]] : i32
      // CHECK: %[[M:.*]] = arith.muli %[[Q]], %{{.*}} : i32
      // CHECK: scf.for %[[KT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
      // CHECK-NEXT: llvm.inline_asm has_side_effects "mbarrier.try_wait
      // CHECK-NEXT: %[[X:.*]] = arith.muli %[[KT]], %{{.*}} : i32
      // CHECK-NEXT: llvm.inline_asm has_side_effects "cp.async.bulk.tensor{{.*}}" %[[X]], %[[M]], %[[R]]
      // CHECK-NEXT: }
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      scf.for %kt = %c0 to %k step %c1 : i32 {
        llvm.inline_asm has_side_effects "mbarrier.try_wait;", "r" %kt : (i32) -> ()
        %c64 = arith.constant 64 : i32
        %x = arith.muli %kt, %c64 : i32
        %q = arith.divsi %t, %n : i32
        %r = arith.remsi %t, %n : i32
        %c128 = arith.constant 128 : i32
        %m = arith.muli %q, %c128 : i32
        llvm.inline_asm has_side_effects "cp.async.bulk.tensor;", "r,r,r" %x, %m, %r : (i32, i32, i32) -> ()
      }
      gpu.return
    }

    // What depends on the loop's induction variable, on a value the loop loads, or on an
    // iteration argument stays; a division by a non-zero constant moves without a guard; float
    // and vector arithmetic are not this pass's.
    // CHECK-LABEL: gpu.func @variant
    gpu.func @variant(%p: !llvm.ptr, %n: i32, %k: i32, %f: f32, %v: vector<4xi32>) kernel {
      // CHECK-NOT: llvm.freeze
      // CHECK: arith.divui %{{.*}}, %{{.*}} : i32
      // CHECK-NOT: llvm.freeze
      // CHECK: scf.for %[[KT:.*]] = {{.*}} iter_args(%[[ACC:.*]] = {{.*}}) -> (i32) : i32 {
      // CHECK: arith.divsi %[[KT]], %{{.*}} : i32
      // CHECK: %[[L:.*]] = llvm.load
      // CHECK: arith.remui %{{.*}}, %[[L]] : i32
      // CHECK: arith.ceildivsi %[[ACC]], %{{.*}} : i32
      // CHECK: arith.addf
      // CHECK: arith.addi %{{.*}}, %{{.*}} : vector<4xi32>
      // CHECK: scf.yield
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %s = scf.for %kt = %c0 to %k step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
        %a = arith.divsi %kt, %n : i32
        %l = llvm.load %p : !llvm.ptr -> i32
        %b = arith.remui %n, %l : i32
        %c = arith.ceildivsi %acc, %n : i32
        %c8 = arith.constant 8 : i32
        %e = arith.divui %n, %c8 : i32
        %g = arith.addf %f, %f : f32
        %w = arith.addi %v, %v : vector<4xi32>
        %sum = arith.addi %a, %b : i32
        %sum2 = arith.addi %sum, %c : i32
        %sum3 = arith.addi %sum2, %e : i32
        llvm.store %g, %p : f32, !llvm.ptr
        llvm.store %w, %p : vector<4xi32>, !llvm.ptr
        scf.yield %sum3 : i32
      }
      llvm.store %s, %p : i32, !llvm.ptr
      gpu.return
    }

    // Nested loops: each op goes as far out as its operands allow. `a / n` of the kernel's
    // arguments leaves both loops; `t / n` of the outer induction variable leaves the inner loop
    // only; `k / t` of the inner one stays. The two divisions by `n` share one guard, built where
    // `n` is defined.
    // CHECK-LABEL: gpu.func @nested
    gpu.func @nested(%p: !llvm.ptr, %a: i32, %n: i32, %tiles: i32, %k: i32) kernel {
      // CHECK: llvm.freeze
      // CHECK: %[[D:.*]] = arith.select
      // CHECK-NOT: llvm.freeze
      // CHECK: %[[AN:.*]] = arith.divui %{{.*}}, %[[D]] : i32
      // CHECK: scf.for %[[T:.*]] = {{.*}} : i32 {
      // CHECK-NOT: llvm.freeze
      // CHECK: %[[TN:.*]] = arith.floordivsi %[[T]], %[[D]] : i32
      // CHECK: scf.for %[[KT:.*]] = {{.*}} : i32 {
      // CHECK-NEXT: %[[KN:.*]] = arith.divsi %[[KT]], %{{.*}} : i32
      // CHECK-NEXT: llvm.inline_asm {{.*}} %[[AN]], %[[TN]], %[[KN]]
      // CHECK-NEXT: }
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      scf.for %t = %c0 to %tiles step %c1 : i32 {
        scf.for %kt = %c0 to %k step %c1 : i32 {
          %an = arith.divui %a, %n : i32
          %tn = arith.floordivsi %t, %n : i32
          %kn = arith.divsi %kt, %t : i32
          llvm.inline_asm has_side_effects "use;", "r,r,r" %an, %tn, %kn : (i32, i32, i32) -> ()
        }
      }
      gpu.return
    }

    // A division under an `scf.if` in the loop moves too (once per entry into the loop instead
    // of at most once per iteration); its divisor is guarded, so it is defined when the branch
    // would not have run (PTX's division by zero does not trap either). One not in a loop stays
    // under its `if`: moving it out of the branch alone saves nothing.
    // CHECK-LABEL: gpu.func @conditional
    gpu.func @conditional(%p: !llvm.ptr, %t: i32, %n: i32, %k: i32, %c: i1) kernel {
      // CHECK: %[[F:.*]] = llvm.freeze
      // CHECK: %[[D:.*]] = arith.select %{{.*}}, %{{.*}}, %[[F]] : i32
      // CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %[[D]] : i32
      // CHECK: scf.for
      // CHECK-NEXT: %[[E:.*]] = arith.cmpi eq
      // CHECK-NEXT: scf.if %[[E]] {
      // CHECK-NEXT: llvm.store %[[Q]]
      // CHECK: scf.if %{{.*}} {
      // CHECK-NEXT: arith.remui
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      scf.for %kt = %c0 to %k step %c1 : i32 {
        %e = arith.cmpi eq, %kt, %c0 : i32
        scf.if %e {
          %q = arith.divui %t, %n : i32
          llvm.store %q, %p : i32, !llvm.ptr
        }
      }
      scf.if %c {
        %r = arith.remui %t, %n : i32
        llvm.store %r, %p : i32, !llvm.ptr
      }
      gpu.return
    }

    // `scf.while` is a loop too: an invariant division in either region moves before it.
    // CHECK-LABEL: gpu.func @while_loop
    gpu.func @while_loop(%p: !llvm.ptr, %t: i32, %n: i32) kernel {
      // CHECK: arith.remsi
      // CHECK: arith.divsi
      // CHECK: scf.while
      // CHECK-NOT: arith.divsi
      // CHECK-NOT: arith.remsi
      // CHECK: gpu.return
      %c0 = arith.constant 0 : i32
      %r = scf.while (%i = %c0) : (i32) -> i32 {
        %b = arith.remsi %t, %n : i32
        %go = arith.cmpi slt, %i, %b : i32
        scf.condition(%go) %i : i32
      } do {
      ^bb0(%j: i32):
        %q = arith.divsi %t, %n : i32
        %next = arith.addi %j, %q : i32
        scf.yield %next : i32
      }
      llvm.store %r, %p : i32, !llvm.ptr
      gpu.return
    }
  }
}
