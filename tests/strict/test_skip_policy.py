#!/usr/bin/env python3
"""tests/strict/test_skip_policy.py — tools/test_skips.py, the strict-CI
verdict on skipped ctest tests (docs/TESTING.md, "Skips"), on JUnit files
written here in ctest's format: a skip for a documented hardware reason (no
CUDA driver, no CUDA device) passes in strict mode; a skip for a missing
Python package, a missing tool or with no reason at all fails it (and only
is listed without --strict); the summary counts skips and prints each
reason; a missing JUnit file is an error, not "nothing skipped".
Prints "N passed, M failed"; exit 1 on a failure.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("NCC_SRC") or os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(SRC, "tools", "test_skips.py")

# ctest --output-junit's form of a run, passed and skipped tests
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="x" tests="9">\n'
PASSED = ('<testcase name="unit.ok" classname="unit.ok" time="0.1" status="run">'
          '<system-out>[  PASSED  ] 3 test(s).</system-out></testcase>\n')


def skipped(name, out):
    return ('<testcase name="%s" classname="%s" time="0.1" status="notrun">'
            '<skipped message="SKIP_RETURN_CODE=77"/><system-out>%s</system-out>'
            '</testcase>\n' % (name, name, out))


CUDA = skipped("ops.cuda", "SKIP cuda: no CUDA driver (libcuda.so.1: cannot open shared "
               "object file: No such file or directory)\n")
DEVICE = skipped("gpu.cuda.module", "skipped: target cuda unavailable (no CUDA device)\n")
ORT = skipped("python.diff_ort", "skipped: No module named 'onnxruntime' "
              "(pip install -r tools/requirements.txt)\n")
PTXAS = skipped("gpu.cuda.ptx.blocks", "skipped: no ptxas at /usr/local/cuda/bin/ptxas\n")
QEMU = skipped("aarch64.models", "SKIP: qemu-aarch64 not found\n")
SILENT = skipped("misc.silent", "")


def run(tmp, body, *args):
    path = os.path.join(tmp, "j%d.xml" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        f.write(HEAD + body + "</testsuite>\n")
    p = subprocess.run([sys.executable, TOOL] + list(args) + [path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout + p.stderr


def main():
    failed = passed = 0

    def check(what, ok, out):
        nonlocal failed, passed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s:\n%s" % (what, out))

    with tempfile.TemporaryDirectory(prefix="ncc-skips-") as tmp:
        rc, out = run(tmp, PASSED + CUDA + DEVICE + PTXAS, "--strict")
        check("hardware skips pass in strict mode", rc == 0 and "3 skipped" in out
              and "no CUDA driver" in out and "no CUDA device" in out and "no ptxas" in out,
              out)
        for body, why in ((ORT, "onnxruntime"), (QEMU, "qemu-aarch64"),
                          (SILENT, "printed no reason")):
            rc, out = run(tmp, PASSED + CUDA + body, "--strict")
            check("a skip for %s fails strict mode" % why,
                  rc == 1 and why in out and "NOT ALLOWED" in out and "FAILED" in out, out)
            rc, out = run(tmp, PASSED + CUDA + body)
            check("without --strict a skip for %s is listed, not failed" % why,
                  rc == 0 and why in out and "2 skipped (1 for a hardware reason)" in out, out)
        rc, out = run(tmp, PASSED, "--strict")
        check("no skips", rc == 0 and "0 skipped" in out, out)
        p = subprocess.run([sys.executable, TOOL, "--strict", os.path.join(tmp, "none.xml")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        check("a missing JUnit file is an error", p.returncode == 2, p.stdout)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
