# lit configuration for cutec: the CLI end to end, each --emit stage, each pass through `cutec opt`.
import os
import subprocess

import lit.formats

config.name = "cutec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cute", ".mlir", ".test"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.environ.get("CUTEC_LIT_OUT", "/tmp/cutec-lit"))

root = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
bin_dir = os.environ.get("CUTEC_BIN_DIR", os.path.join(root, "target", "debug"))
llvm_bin = "/usr/lib/llvm-22/bin"

config.environment["PATH"] = os.pathsep.join([bin_dir, llvm_bin, os.environ.get("PATH", "")])
for var in ("CUTEC_PTXAS", "LD_LIBRARY_PATH", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%cutec", os.path.join(bin_dir, "cutec")))
config.substitutions.append(("%cute-run", os.path.join(bin_dir, "cute-run")))
config.substitutions.append(("%samples", os.path.join(root, "samples")))
config.substitutions.append(("%root", root))
config.substitutions.append(("%bindir", bin_dir))

# `REQUIRES: gpu` tests run only where the runner can open a device; elsewhere lit reports them
# as UNSUPPORTED, and the test script prints that they were skipped for lack of a GPU.
runner = os.path.join(bin_dir, "cute-run")
has_gpu = False
if os.path.exists(runner):
    try:
        has_gpu = subprocess.run([runner, "info"], capture_output=True, timeout=60).returncode == 0
    except Exception:
        has_gpu = False
if has_gpu:
    config.available_features.add("gpu")
else:
    lit_config.note("no GPU/driver found: tests that REQUIRE gpu are skipped (UNSUPPORTED)")
