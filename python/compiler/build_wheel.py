"""Packs the cutec-compiler wheel from a built `cutec` executable (python/build-compiler-wheel.sh
builds it and calls this): the package cutec_compiler/ beside this file, the executable as
cutec_compiler/bin/cutec, a `cutec` command, and the metadata. The platform tag comes from the
executable itself: every shared library it needs must be one manylinux allows (libc, libm,
libgcc_s, ...), and the newest glibc symbol version it uses gives `manylinux_2_N`. Prints the
wheel's path.

    python3 build_wheel.py --binary target/release/cutec --version 0.1.0 --build-id ID --out DIR
"""

import argparse
import base64
import hashlib
import os
import re
import subprocess
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "cutec_compiler"
# What the manylinux policies allow an executable to need (PEP 600 and auditwheel's lists, the
# libraries every glibc system has). libstdc++ is linked in statically (its versions vary).
ALLOWED = {
    "libc.so.6",
    "libm.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
}
# ptxas and libdevice from NVIDIA's PyPI packages: `pip install cutec-compiler[cuda]`.
CUDA_EXTRA = ["nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*"]


def platform_tag(binary):
    """`manylinux_2_N_x86_64` for `binary`, or an error naming a library manylinux does not allow."""
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    extra = sorted(set(needed) - ALLOWED)
    if extra:
        raise SystemExit(
            f"build_wheel: {binary} needs {', '.join(extra)}, which a manylinux wheel may not: "
            "link them statically (python/build-compiler-wheel.sh does for libz, libzstd, libstdc++)"
        )
    symbols = subprocess.run(["objdump", "-T", binary], capture_output=True, text=True, check=True).stdout
    glibc = max((int(m) for m in re.findall(r"GLIBC_2\.(\d+)", symbols)), default=17)
    return f"manylinux_2_{max(glibc, 17)}_x86_64"


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def metadata(version):
    requires = "".join(f'Requires-Dist: {r}; extra == "cuda"\n' for r in CUDA_EXTRA)
    return (
        "Metadata-Version: 2.1\n"
        f"Name: cutec-compiler\nVersion: {version}\n"
        "Summary: The cutec compiler for .cute GPU kernels (MLIR and LLVM linked in), for `cutec.compile`\n"
        "License: Apache-2.0\nRequires-Python: >=3.9\nProvides-Extra: cuda\n"
        f"{requires}"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "\n"
        "The cutec compiler as a wheel: `cutec.compile` (package `cutec`) runs it, and so does the `cutec`\n"
        "command it installs. It finds ptxas and libdevice in NVIDIA's PyPI packages (the `cuda` extra),\n"
        "Triton's package or a CUDA toolkit. The guide is docs/python.md in the cutec repository.\n"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--build-id", required=True, help="the source's identity, e.g. git describe")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    tag = platform_tag(a.binary)
    with open(a.binary, "rb") as f:
        exe = f.read()
    build_id = f"{a.version}+{a.build_id}+{hashlib.sha256(exe).hexdigest()[:16]}"
    files = []  # (arcname, bytes, mode)
    for name in sorted(os.listdir(os.path.join(HERE, NAME))):
        if name.endswith(".py") and name != "_build.py":
            with open(os.path.join(HERE, NAME, name), "rb") as f:
                files.append((f"{NAME}/{name}", f.read(), 0o644))
    build = f'"""Written by python/compiler/build_wheel.py."""\n\nVERSION = {a.version!r}\nBUILD_ID = {build_id!r}\n'
    files.append((f"{NAME}/_build.py", build.encode(), 0o644))
    files.append((f"{NAME}/bin/cutec", exe, 0o755))
    info = f"{NAME}-{a.version}.dist-info"
    wheel = f"Wheel-Version: 1.0\nGenerator: cutec build_wheel.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    files.append((f"{info}/METADATA", metadata(a.version).encode(), 0o644))
    files.append((f"{info}/WHEEL", wheel.encode(), 0o644))
    files.append((f"{info}/entry_points.txt", f"[console_scripts]\ncutec = {NAME}:main\n".encode(), 0o644))
    record = [record_line(n, d) for n, d, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{NAME}-{a.version}-py3-none-{tag}.whl")
    with zipfile.ZipFile(path + ".tmp", "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for arcname, data, mode in files:
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    os.replace(path + ".tmp", path)
    print(path)


if __name__ == "__main__":
    main()
