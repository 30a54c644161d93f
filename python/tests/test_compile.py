"""`cutec.build` / `cutec.compile` and the compile cache, with the compiler of the checkout (no GPU):
hits and misses, what the key covers, consts, the default target, diagnostics, processes compiling
at once, `cutec.cache.clear()`, `python -m cutec`, and how the compiler wheel finds its tools.
These run in CI."""

import importlib
import os
import subprocess
import sys
import time

import pytest

import cutec
from conftest import REPO, SAMPLES, find_compiler

COMPILER_PACKAGE = REPO / "python" / "compiler"


@pytest.fixture
def exe():
    found = find_compiler()
    if found is None:
        pytest.skip("no cutec compiler here (cargo build -p cutec)")
    return found


@pytest.fixture
def counted(exe, tmp_path, monkeypatch):
    """A compiler that logs each run (a wrapper around the real one), and an empty cache."""
    monkeypatch.setenv("CUTEC_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "runs.log"
    wrapper = tmp_path / "cutec"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{exe}" "$@"\n')
    wrapper.chmod(0o755)

    def runs():
        return log.read_text().splitlines() if log.exists() else []

    return str(wrapper), runs


def test_a_second_build_is_a_cache_hit(counted):
    wrapper, runs = counted
    first = cutec.build(SAMPLES / "vector_add.cute", compiler=wrapper)
    assert len(runs()) == 1 and first.startswith(cutec.cache.directory())
    times = []
    for _ in range(5):  # the best of 5: a loaded CI machine may stall one
        start = time.perf_counter()
        again = cutec.build(SAMPLES / "vector_add.cute", compiler=wrapper)
        times.append(time.perf_counter() - start)
    assert again == first and len(runs()) == 1
    assert min(times) < 0.005, f"a cached build took {min(times) * 1e3:.2f} ms"
    assert cutec.manifest(again).kernels == ["vector_add"] and cutec.cache.entries() == [first]


def test_the_key_covers_source_consts_arch_and_options(counted, tmp_path, monkeypatch):
    wrapper, runs = counted
    src = (SAMPLES / "chunked_add.cute").read_text()
    base = cutec.build(src, compiler=wrapper)
    variants = [
        cutec.build(src + "\n// an edit\n", compiler=wrapper),
        cutec.build(src, consts={"TILE_N": 32}, compiler=wrapper),
        cutec.build(src, arch="sm_80", compiler=wrapper),
        cutec.build(src, release_asserts=False, compiler=wrapper),
    ]
    assert len({base, *variants}) == 5 and len(runs()) == 5
    # The file's name is in the cubin's line info: the same text from a file is another entry, and
    # that file again (by a relative path too) a hit.
    copy = tmp_path / "copy.cute"
    copy.write_text(src)
    from_file = cutec.build(copy, compiler=wrapper)
    assert from_file != base and len(runs()) == 6
    monkeypatch.chdir(tmp_path)
    assert cutec.build("copy.cute", compiler=wrapper) == from_file and len(runs()) == 6
    # Another compiler (here the same one, touched: a rebuilt binary) misses.
    os.utime(wrapper, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert cutec.build(src, compiler=wrapper) != base and len(runs()) == 7


def test_consts_override_const_items(counted, tmp_path):
    wrapper, _ = counted
    default = cutec.manifest(cutec.build(SAMPLES / "chunked_add.cute", compiler=wrapper)).text
    narrow = cutec.manifest(cutec.build(SAMPLES / "chunked_add.cute", consts={"TILE_N": 32}, compiler=wrapper)).text
    assert "shape=(16,64)" in default and "shape=(16,32)" in narrow and "shape=(16,64)" not in narrow
    out = tmp_path / "k.cubin"
    assert cutec.build(SAMPLES / "chunked_add.cute", consts={"TILE_M": "4 * 2"}, output=out, compiler=wrapper) == str(
        out
    )
    assert "shape=(8,64)" in cutec.manifest(out).text
    with pytest.raises(cutec.CompileError) as e:
        cutec.build(SAMPLES / "chunked_add.cute", consts={"BM": 128}, compiler=wrapper)
    assert "-D BM: the source has no top-level `const BM` to override (its consts: TILE_M, TILE_N)" in str(e.value)
    with pytest.raises(TypeError, match=r"consts\['TILE_N'\]: dict is not a .cute value"):
        cutec.build(SAMPLES / "chunked_add.cute", consts={"TILE_N": {}}, compiler=wrapper)
    assert cutec._compile.const_text("T", (1, (2, True), 1.5)) == "(1, (2, true), 1.5)"


def test_compile_errors_carry_the_rendered_diagnostics(counted):
    wrapper, runs = counted
    src = "host h(a: i32) {\n    let x = nope + a;\n}\n"
    with pytest.raises(cutec.CompileError) as e:
        cutec.build(src, compiler=wrapper)
    text = str(e.value)
    assert text.startswith("cutec build <string> --arch sm_90 failed (exit 1):\nerror: cannot find value `nope`")
    assert "┌─ <string>:2:13" in text and "2 │     let x = nope + a;" in text
    assert e.value.returncode == 1 and e.value.status == "COMPILE" and "<string>:2:13" in e.value.stderr
    assert cutec.cache.entries() == [] and os.listdir(cutec.cache.directory() + "/" + cutec.cache.FORMAT) == []
    with pytest.raises(cutec.CompileError):  # failures are not cached
        cutec.build(src, compiler=wrapper)
    assert len(runs()) == 2
    with pytest.raises(cutec.Error, match="cannot read the .cute file"):
        cutec.build(SAMPLES / "absent.cute", compiler=wrapper)


def test_the_default_target(counted):
    wrapper, _ = counted
    # The source's own `// cutec-build: --arch sm_90a` line, unless arch= says otherwise.
    assert cutec.manifest(cutec.build(SAMPLES / "wgmma_atom.cute", compiler=wrapper)).arch == "sm_90a"
    choose = cutec._compile.choose_arch
    assert choose("sm_80", "// cutec-build: --arch sm_90a\n", 0) == "sm_80"
    assert choose(None, "  // cutec-build: --arch sm_90a\nkernel k() {}", 0) == "sm_90a"
    if not cutec.driver_available():  # no GPU: the compiler's default
        assert choose(None, "kernel k() {}", 0) == "sm_90"


_WORKER = "import sys, cutec; sys.stdout.write(cutec.build(sys.argv[1], compiler=sys.argv[2]))"


def test_processes_compiling_at_once_share_one_entry(counted):
    wrapper, runs = counted
    src = (SAMPLES / "chunked_add.cute").read_text() + f"\n// {time.time_ns()}\n"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, src, wrapper], stdout=subprocess.PIPE, env=dict(os.environ))
        for _ in range(6)
    ]
    paths = {p.communicate()[0].decode() for p in procs}
    assert all(p.returncode == 0 for p in procs) and len(paths) == 1
    (entry,) = paths
    assert 1 <= len(runs()) <= 6
    assert os.listdir(os.path.dirname(entry)) == [os.path.basename(entry)], "temporary files were left behind"
    # Whole: its manifest (read through the ELF's section table, its checksum checked) is there.
    # (Bytes are not compared with another build: ptxas' temporary path, with the process id, is in
    # the cubin.)
    assert cutec.manifest(entry).hosts == ["chunked_add", "tiled_add"]


def test_clear_empties_the_cache(counted):
    wrapper, runs = counted
    cutec.build(SAMPLES / "vector_add.cute", compiler=wrapper)
    cutec.build(SAMPLES / "vector_add.cute", arch="sm_80", compiler=wrapper)
    assert len(cutec.cache.entries()) == 2
    assert cutec.cache.clear() == 2 and cutec.cache.entries() == []
    cutec.build(SAMPLES / "vector_add.cute", compiler=wrapper)
    assert len(runs()) == 3


def test_python_dash_m_cutec_is_the_command_line(exe, tmp_path):
    out = tmp_path / "va.cubin"
    env = dict(os.environ, CUTEC=exe)
    r = subprocess.run(
        [sys.executable, "-m", "cutec", "build", str(SAMPLES / "printing.cute"), "--emit=ast", "-D", "b=7"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0 and ">>> 7" in r.stderr and "const b = 7;" in r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "cutec", "build", str(SAMPLES / "vector_add.cute"), "-o", str(out)], env=env
    )
    assert r.returncode == 0 and cutec.manifest(out).kernels == ["vector_add"]


# ---- the compiler wheel's package (python/compiler/cutec_compiler) -------------------------------------


@pytest.fixture
def cutec_compiler(monkeypatch):
    monkeypatch.syspath_prepend(str(COMPILER_PACKAGE))
    import cutec_compiler

    for var in ("CUTEC_PTXAS", "CUTEC_LIBDEVICE", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    return cutec_compiler


def test_the_compiler_package_finds_nvidias_and_tritons_tools(cutec_compiler, tmp_path, monkeypatch):
    def put(rel):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
        importlib.invalidate_caches()
        return str(p)

    # Triton's copies are found when NVIDIA's packages are absent, NVIDIA's first when both are there.
    for top in ("nvidia", "triton"):
        monkeypatch.delitem(sys.modules, top, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    triton_ptxas = put("triton/backends/nvidia/bin/ptxas")
    put("triton/__init__.py")
    assert cutec_compiler.find_ptxas() in (triton_ptxas, *_nvidia_ptxas_on_sys_path(cutec_compiler))
    nvidia_ptxas = put("nvidia/cu13/bin/ptxas")
    libdevice = put("nvidia/cu13/nvvm/libdevice/libdevice.10.bc")
    assert cutec_compiler.find_ptxas() == nvidia_ptxas and cutec_compiler.find_libdevice() == libdevice
    env = cutec_compiler.tools_env()
    assert env["CUTEC_PTXAS"] == nvidia_ptxas and env["CUTEC_LIBDEVICE"] == libdevice
    # An explicit setting wins, and one that names no file is an error that says how to install.
    monkeypatch.setenv("CUTEC_PTXAS", str(tmp_path / "none"))
    with pytest.raises(cutec_compiler.ToolNotFound) as e:
        cutec_compiler.find_ptxas()
    assert f"ptxas not found (looked at: CUTEC_PTXAS={tmp_path / 'none'})" in str(e.value)
    assert "pip install 'cutec-compiler[cuda]'" in str(e.value)
    assert cutec_compiler.tools_env()["CUTEC_PTXAS"] == str(tmp_path / "none")


def _nvidia_ptxas_on_sys_path(cutec_compiler):
    """The ptxas of NVIDIA's packages already importable here (CI puts .tools/python on the path),
    which the search takes before Triton's."""
    found = []
    for top, rel in cutec_compiler._PTXAS_IN_PACKAGES:
        if top == "nvidia":
            found += [os.path.join(d, rel) for d in cutec_compiler._package_dirs(top)]
    return [p for p in found if os.path.isfile(p)]


def test_the_key_covers_imported_files(counted, tmp_path):
    """A build of a file that imports another is a hit while the imported file is unchanged and a
    miss once it changes (its cubin then has the new value); a source given as text imports
    relative to `base_dir`, and `include_dirs` is searched after the importing file's folder."""
    wrapper, runs = counted
    lib = tmp_path / "lib" / "scale.cute"
    lib.parent.mkdir()
    lib.write_text("const SCALE = 2.0;\n")
    main = tmp_path / "main.cute"
    main.write_text(
        'import "lib/scale.cute";\n'
        "kernel scale(a: tensor<f32, gmem, (128):(1)>) {\n    a[thread_idx.x] = SCALE * a[thread_idx.x];\n}\n"
    )
    first = cutec.build(main, compiler=wrapper)
    assert cutec.build(main, compiler=wrapper) == first and len(runs()) == 1
    before = open(first, "rb").read()
    lib.write_text("const SCALE = 3.0;\n")
    assert cutec.build(main, compiler=wrapper) == first and len(runs()) == 2
    assert open(first, "rb").read() != before
    assert cutec.build(main, compiler=wrapper) == first and len(runs()) == 2
    text = main.read_text()
    from_text = cutec.build(text, compiler=wrapper, base_dir=tmp_path)
    assert len(runs()) == 3 and cutec.manifest(from_text).kernels == ["scale"]
    with pytest.raises(cutec.CompileError, match="cannot import `scale.cute`"):
        cutec.build(text.replace("lib/", ""), compiler=wrapper, base_dir=tmp_path / "elsewhere")
    found = cutec.build(text.replace("lib/", ""), compiler=wrapper, base_dir=tmp_path, include_dirs=[lib.parent])
    assert cutec.manifest(found).kernels == ["scale"]
