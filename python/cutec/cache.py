"""The on-disk cache of `cutec.compile` / `cutec.build`: one cubin per key, in `directory()`.

The key (`cutec._compile`) is a SHA-256 of everything a build depends on: the source text, the
consts, the target, the options (import search directories included), the compiler's identity
and the ptxas and libdevice it is given. A source that imports other files has a second file
beside its cubin, `KEY.deps`: each imported file's path and SHA-256 (from the compiler's
`--deps-file`); a hit re-hashes them, and a changed or missing file makes it a miss. An entry is written whole to a
temporary file in the same folder, then renamed over its name (`os.replace`, atomic on POSIX): a
reader sees no entry or a complete one, and processes that compile the same source at once each
write their own temporary file and the last rename wins, with the same bytes.
"""

import os

# The layout of the cache and the meaning of its keys: a change of either takes a new folder.
FORMAT = "v1"
_SUFFIX = ".cubin"
_DEPS_SUFFIX = ".deps"
_TEMP_PREFIX = ".tmp-"

__all__ = ["FORMAT", "clear", "directory", "entries"]


def directory():
    """The cache folder: $CUTEC_CACHE_DIR, else $XDG_CACHE_HOME/cutec, else ~/.cache/cutec (its
    entries are under FORMAT/)."""
    explicit = os.environ.get("CUTEC_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cutec")


def _folder():
    return os.path.join(directory(), FORMAT)


def entry_path(key):
    """Where the cubin of `key` is (or would be)."""
    return os.path.join(_folder(), key + _SUFFIX)


def temp_path(key):
    """A fresh, empty temporary file beside the entry of `key` (for the compiler's `-o`); the
    caller renames it into place with `publish` or removes it."""
    import tempfile

    folder = _folder()
    os.makedirs(folder, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix=_TEMP_PREFIX + key[:16] + "-", suffix=_SUFFIX, dir=folder)
    os.close(fd)
    return path


def publish(temp, key):
    """Renames the finished `temp` to the entry of `key` (atomically) and returns the entry's path."""
    path = entry_path(key)
    os.replace(temp, path)
    return path


def deps_path(key):
    """Where the imported files of `key`'s source and their hashes are listed (if it imports any)."""
    return os.path.join(_folder(), key + _DEPS_SUFFIX)


def file_hash(path):
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def deps_current(key):
    """Whether every file the entry of `key` imported still has the contents it was built from
    (true for an entry whose source imports nothing)."""
    try:
        with open(deps_path(key), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return True
    for line in lines:
        path, _, digest = line.rpartition("\t")
        try:
            if file_hash(path) != digest:
                return False
        except OSError:
            return False
    return True


def publish_deps(key, paths):
    """Writes the list of imported `paths` with their hashes for `key` (before its cubin is
    published: an entry is never seen without its list)."""
    import tempfile

    fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=_DEPS_SUFFIX, dir=_folder())
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(f"{p}\t{file_hash(p)}\n" for p in paths)
    os.replace(temp, deps_path(key))


def entries():
    """The paths of the cached cubins."""
    try:
        names = os.listdir(_folder())
    except FileNotFoundError:
        return []
    return [os.path.join(_folder(), n) for n in sorted(names) if n.endswith(_SUFFIX) and not n.startswith(_TEMP_PREFIX)]


def clear():
    """Removes every cached cubin (not the temporary files of builds in progress in other
    processes, which then complete normally). Returns how many were removed."""
    removed = 0
    for p in entries():
        try:
            os.remove(p)
            removed += 1
        except FileNotFoundError:  # removed by another process meanwhile
            pass
        try:
            os.remove(p[: -len(_SUFFIX)] + _DEPS_SUFFIX)
        except FileNotFoundError:
            pass
    return removed
