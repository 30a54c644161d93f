"""The fresh-machine walk-through of the cutec wheels (python/wheel-install-test.sh runs it inside a
new virtualenv holding only them): compile a sample from Python with the installed compiler, cold
and cached, in this process and in a new one, `python -m cutec` and the `cutec` command, read the
manifest and check a call without a GPU; with a GPU (and torch), compile-and-load cold and cached,
then run the sample against torch. Prints each timing; the last line is `walkthrough: PASS`.
Exits non-zero at the first failure.

    python wheel_walkthrough.py SAMPLES_DIR
"""

import os
import shutil
import subprocess
import sys
import time


def ms(seconds):
    return f"{seconds * 1e3:.2f} ms"


def best(f, n=20):
    """The fastest of `n` calls of f(), in seconds, and its last result."""
    times, r = [], None
    for _ in range(n):
        t = time.perf_counter()
        r = f()
        times.append(time.perf_counter() - t)
    return min(times), r


def main():
    samples = os.path.abspath(sys.argv[1])
    t = time.perf_counter()
    import cutec
    import cutec_compiler

    print(f"import cutec: {ms(time.perf_counter() - t)} ({cutec.__file__})")
    exe = cutec_compiler.binary()
    print(f"cutec-compiler {cutec_compiler.__version__}, build {cutec_compiler.BUILD_ID}")
    print(f"compiler binary: {exe} ({os.path.getsize(exe) / 2**20:.1f} MiB)")
    for find in (cutec_compiler.find_ptxas, cutec_compiler.find_libdevice):
        try:
            print(f"{find.__name__}: {find()}")
        except cutec_compiler.ToolNotFound as e:
            print(f"{find.__name__}: {e}")
    for tool in ("cargo", "rustc", "llvm-config", "mlir-opt"):
        assert shutil.which(tool) is None, f"{tool} is on PATH: this is not a clean machine"
    print(f"cache: {cutec.cache.directory()}")

    sample = os.path.join(samples, "elementwise_add.cute")
    cutec.cache.clear()
    t = time.perf_counter()
    path = cutec.build(sample)
    print(f"first build of elementwise_add.cute (no GPU needed): {ms(time.perf_counter() - t)}")
    cached, again = best(lambda: cutec.build(sample))
    assert again == path
    print(f"cached build: {ms(cached)} (best of 20)")
    code = (
        "import time; t = time.perf_counter(); import cutec; p = cutec.build(__import__('sys').argv[1]); "
        "print(f'{(time.perf_counter() - t) * 1e3:.2f} ms')"
    )
    fresh = subprocess.run([sys.executable, "-c", code, sample], capture_output=True, text=True, check=True)
    print(f"cached build in a new process, import included: {fresh.stdout.strip()}")

    man = cutec.manifest(path)
    print(f"manifest: arch {man.arch}, hosts {man.hosts}")
    f16 = [cutec.TensorView(0x10000 * (k + 1), "f16", (2048, 2048)) for k in range(3)]
    launches = man.host("elementwise_add").check(*f16)
    print(f"checked call without a GPU: {len(launches)} launch(es)")

    narrow = cutec.build(os.path.join(samples, "chunked_add.cute"), consts={"TILE_N": 32})
    assert "shape=(16,32)" in cutec.manifest(narrow).text
    print("consts={'TILE_N': 32}: the manifest has the 16 x 32 tile")
    try:
        cutec.build("host h(a: i32) {\n    let x = nope + a;\n}\n")
        raise AssertionError("a bad source compiled")
    except cutec.CompileError as e:
        assert "<string>:2:13" in str(e)
        print("CompileError:", str(e).splitlines()[1])

    out = os.path.abspath("va.cubin")
    subprocess.run(
        [sys.executable, "-m", "cutec", "build", os.path.join(samples, "vector_add.cute"), "-o", out], check=True
    )
    assert cutec.manifest(out).kernels == ["vector_add"]
    version = subprocess.run(["cutec", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    print(f"python -m cutec build: ok; the cutec command: {version}")

    if not (cutec.driver_available() and cutec.device_count() > 0):
        print("no GPU here: compile-and-load and the run are skipped")
    else:
        on_gpu(cutec, sample)
    print("walkthrough: PASS")


def on_gpu(cutec, sample):
    import torch

    print(f"device 0: compute capability {cutec.compute_capability(0)}, torch {torch.__version__}")
    torch.empty(1, device="cuda")
    cutec.cache.clear()
    t = time.perf_counter()
    m = cutec.compile(sample)
    print(f"first compile (build and load): {ms(time.perf_counter() - t)} ({m.arch})")
    cached, m = best(lambda: cutec.compile(sample))
    print(f"cached compile (hash, read, load): {ms(cached)} (best of 20)")
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.float16)
    b, c = torch.randn_like(a), torch.empty_like(a)
    m.elementwise_add(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b), "elementwise_add differs from torch"
    print("elementwise_add on the GPU: equal to torch")


if __name__ == "__main__":
    main()
