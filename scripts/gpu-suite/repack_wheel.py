"""Rewrites a wheel with LZMA-compressed members (same files, same RECORD: hashes are of the
uncompressed contents), so the CuTe DSL wheel and cutec's files fit in one 64 MiB device carry.
pip reads LZMA members (Python's zipfile does). Usage: repack_wheel.py WHEEL (in place)."""

import os
import sys
import zipfile

src = sys.argv[1]
tmp = src + ".tmp"
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_LZMA) as zout:
    for info in zin.infolist():
        out = zipfile.ZipInfo(info.filename, date_time=info.date_time)
        out.external_attr = info.external_attr
        out.compress_type = zipfile.ZIP_LZMA
        zout.writestr(out, zin.read(info))
os.replace(tmp, src)
print(f"{os.path.basename(src)}: {os.path.getsize(src) / 2**20:.1f} MiB")
