"""`cutec.build` and `cutec.compile`: `.cute` to a cubin with the cutec compiler, through the disk
cache (`cutec.cache`). Which compiler runs, which target is chosen and what the cache key holds are
documented in docs/python.md ("Compiling from Python")."""

import hashlib
import os
import sys

from . import _native, cache

# subprocess, tempfile and shutil are imported where a build misses the cache: a process whose
# builds all hit (a deployed model) never pays for them (~12 ms of imports).
STRING_LABEL = "<string>"


def _error(message):
    return _native.Error(message)


def _stat_id(path):
    """A file's identity for the cache key: its real path, size and modification time (a rebuilt
    binary or a reinstalled tool changes it)."""
    st = os.stat(path)
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}"


class Compiler:
    """The compiler a build runs: the executable, the environment it runs in, and its identity."""

    __slots__ = ("exe", "env", "identity", "wheel")

    def __init__(self, exe, env, identity, wheel):
        self.exe, self.env, self.identity, self.wheel = exe, env, identity, wheel

    def identify(self):
        """The wheel's binary is its build id; another is its file's identity, read again at every
        build (a rebuilt compiler misses the cache at once)."""
        if self.wheel:
            return
        try:
            self.identity = _stat_id(self.exe)
        except OSError as e:
            raise _error(f"cannot run the cutec compiler {self.exe!r}: {e}") from e


_found = {}


def find(compiler=None):
    """The `Compiler` for `compiler` (a path), else $CUTEC, else the `cutec-compiler` package's
    binary, else `cutec` on PATH. The package's binary runs with the ptxas and libdevice that
    `cutec_compiler.tools_env()` finds. Looked up once per process for the same arguments and
    environment (the tools once per process: a ptxas installed meanwhile needs a new process)."""
    memo = (compiler, os.environ.get("CUTEC"), os.environ.get("CUTEC_PTXAS"), os.environ.get("CUTEC_LIBDEVICE"))
    hit = _found.get(memo)
    if hit is not None:
        hit.identify()
        return hit
    exe = os.fspath(compiler) if compiler is not None else os.environ.get("CUTEC")
    if exe:
        found = Compiler(exe, None, None, False)
    else:
        found = _from_wheel()
        if found is None:
            import shutil

            exe = shutil.which("cutec")
            if exe is None:
                raise _error(
                    "the cutec compiler was not found: `pip install cutec-compiler` (or `cutec[compiler]`), "
                    "or put `cutec` on PATH, or set CUTEC=/path/to/cutec"
                )
            found = Compiler(exe, None, None, False)
    found.identify()
    _found[memo] = found
    return found


def _from_wheel():
    try:
        import cutec_compiler
    except ImportError:
        return None
    exe = cutec_compiler.binary()
    if not os.path.isfile(exe):
        return None
    return Compiler(exe, cutec_compiler.tools_env(), cutec_compiler.BUILD_ID, True)


def _tools_identity(env):
    """The ptxas and libdevice a compiler not from the wheel is told about (CUTEC_PTXAS and
    CUTEC_LIBDEVICE); without them it finds its own, which the key then does not cover."""
    env = os.environ if env is None else env
    return [_stat_id(env[v]) if os.path.isfile(env.get(v) or "") else "" for v in ("CUTEC_PTXAS", "CUTEC_LIBDEVICE")]


def read_source(source):
    """(text, path or None, label): `source` is a path (`os.PathLike`, or a `str` with no newline
    and no `{`) or the text of a `.cute` file. A path is made absolute: it is the file's name in
    diagnostics and in the cubin's line info (and so in the cache key)."""
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("cutec.compile takes a path or the source as a str, not bytes")
    if not isinstance(source, str) or ("\n" not in source and "{" not in source):
        path = os.fspath(source)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise _error(f"cannot read the .cute file {path!r}: {e.strerror or e}") from e
        except UnicodeDecodeError as e:
            raise _error(f"{path!r} is not UTF-8 text (.cute sources must be): {e}") from e
        path = os.path.abspath(path)
        return text, path, path
    return source, None, STRING_LABEL


_capability = {}


def _device_capability(device):
    """(major, minor) of CUDA device `device`, or None where there is no driver or no such device."""
    if device not in _capability:
        cc = None
        if _native.driver_available():
            try:
                cc = tuple(_native.compute_capability(device))
            except _native.Error:
                cc = None
        _capability[device] = cc
    return _capability[device]


def source_arch(text):
    """The ARCH of the source's first line `// cutec-build: ... --arch ARCH`, or None."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("//") and line[2:].lstrip().startswith("cutec-build:") and "--arch" in line:
            words = line.split("--arch", 1)[1].lstrip(" =").split()
            if words:
                return words[0]
    return None


def choose_arch(arch, text, device):
    """The target: `arch` when given; else the one the source asks for on a line
    `// cutec-build: --arch ARCH` (as the repository's build scripts read it); else the device's
    (compute capability 9.x: sm_90, 8.x: sm_80); else, with no GPU, sm_90 (the compiler's default)."""
    if arch:
        return arch
    asked = source_arch(text)
    if asked:
        return asked
    cc = _device_capability(device)
    if cc is None:
        return "sm_90"
    major, minor = cc
    if major in (8, 9):
        return f"sm_{major}0"
    raise _error(
        f"device {device} has compute capability {major}.{minor}; cutec compiles for sm_80 (8.x devices), "
        "sm_90 and sm_90a (9.x): pass arch= to build for one of them anyway"
    )


def const_text(name, value):
    """A `consts` value as `.cute` source: int and float as written, bool as true/false, tuple or
    list as a tuple, str as the expression it holds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)):
        inner = ", ".join(const_text(name, v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise TypeError(f"consts[{name!r}]: {type(value).__name__} is not a .cute value (int, float, bool, tuple, str)")


def build_args(arch, consts, release_asserts):
    """The compiler's options for a build (after `build FILE`), in a fixed order (the key holds them)."""
    args = ["--arch", arch]
    for name in sorted(consts or {}):
        args += ["-D", f"{name}={const_text(name, consts[name])}"]
    if not release_asserts:
        args += ["--release-asserts", "off"]
    return args


def cache_key(compiler, text, label, args):
    """The key of a build: the source text and its name (the cubin's line info holds the name), the
    options, the compiler's identity and the ptxas and libdevice it is given."""
    h = hashlib.sha256()
    for field in [cache.FORMAT, compiler.identity, *_tools_identity(compiler.env), label, text, *args]:
        data = field.encode()
        h.update(b"%d:" % len(data) + data)  # length-prefixed: no two lists give the same bytes
    return h.hexdigest()


def search_args(text, path, include_dirs, base_dir):
    """`-I DIR` for each of `include_dirs` (absolute); a source given as text that imports files
    finds them in `base_dir` (default: the working directory) first."""
    dirs = list(include_dirs or [])
    if path is None and "import" in text:
        dirs.insert(0, base_dir if base_dir is not None else os.getcwd())
    return [a for d in dirs for a in ("-I", os.path.abspath(os.fspath(d)))]


def build(
    source,
    arch=None,
    consts=None,
    device=0,
    output=None,
    compiler=None,
    release_asserts=True,
    include_dirs=None,
    base_dir=None,
):
    """Compiles `.cute` source (a path or the text) to a cubin through the disk cache and returns the
    cubin's path (the cache entry, or `output` when given: the cubin is copied there). No GPU is
    needed. Raises `cutec.CompileError` with the compiler's rendered diagnostics."""
    text, path, label = read_source(source)
    arch = choose_arch(arch, text, device)
    args = build_args(arch, consts, release_asserts) + search_args(text, path, include_dirs, base_dir)
    found = find(compiler)
    key = cache_key(found, text, label, args)
    entry = cache.entry_path(key)
    if not (os.path.isfile(entry) and cache.deps_current(key)):
        entry = _compile_into_cache(found, text, path, label, args, key)
    if output is None:
        return entry
    import shutil

    shutil.copyfile(entry, output)
    return os.fspath(output)


def _compile_into_cache(found, text, path, label, args, key):
    if found.wheel and not found.env.get("CUTEC_PTXAS"):
        import cutec_compiler

        try:
            cutec_compiler.find_ptxas()
        except cutec_compiler.ToolNotFound as e:
            raise _error(str(e)) from None
    try:
        temp = cache.temp_path(key)
    except OSError as e:
        raise _error(f"cannot write the compile cache in {cache.directory()!r}: {e}; set CUTEC_CACHE_DIR") from e
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="cutec-src-") as tmp:
            if path is None:
                # The compiler reads a file: one named `<string>`, given by that relative name, so
                # that diagnostics and the cubin's line info say `<string>`, not a temporary path.
                path = label
                with open(os.path.join(tmp, label), "w", encoding="utf-8") as f:
                    f.write(text)
            deps = os.path.join(tmp, "deps.d")
            r = _run(found, [found.exe, "build", path, *args, "-o", temp, "--deps-file", deps], cwd=tmp)
            imported = _imported_files(deps, tmp) if r.returncode == 0 else []
        if r.returncode != 0:
            message = f"cutec build {label} {' '.join(args)} failed (exit {r.returncode}):\n{r.stderr.strip()}"
            if found.wheel and "libdevice not found" in r.stderr:
                import cutec_compiler

                message += f"\n  help: {cutec_compiler.LIBDEVICE_HELP}"
            raise CompileError(message, stderr=r.stderr, returncode=r.returncode)
        if r.stderr:  # warnings and compile-time prints, as the command line shows them
            sys.stderr.write(r.stderr)
        if imported:
            cache.publish_deps(key, imported)
        elif os.path.exists(cache.deps_path(key)):
            os.remove(cache.deps_path(key))
        return cache.publish(temp, key)
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def _imported_files(deps, cwd):
    """The files a build imported: the prerequisites of the compiler's `--deps-file` rule after
    the source itself, as absolute paths."""
    import re

    with open(deps, encoding="utf-8") as f:
        rule = f.read().replace("\\\n", " ")
    prerequisites = re.split(r"(?<!\\)\s+", rule.split(": ", 1)[1].strip())
    return [os.path.join(cwd, p.replace("\\ ", " ")) for p in prerequisites[1:]]


def _run(found, cmd, cwd):
    import subprocess

    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=found.env, cwd=cwd)
    except OSError as e:
        raise _error(f"cannot run the cutec compiler {found.exe!r}: {e}") from e


class CompileError(_native.Error):
    """`cutec build` failed; `.stderr` holds the compiler's diagnostics, `.returncode` its exit code."""

    def __init__(self, message, stderr="", returncode=None):
        super().__init__(message)
        self.stderr, self.returncode, self.status = stderr, returncode, "COMPILE"
