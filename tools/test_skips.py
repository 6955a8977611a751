#!/usr/bin/env python3
"""tools/test_skips.py — the skipped ctest tests of a run, with their reasons,
and the strict-CI verdict on them (docs/TESTING.md, "Skips").

A ctest test skips by exiting 77 (SKIP_RETURN_CODE); ctest then counts it
as passed-but-not-run and prints no output, so a broken pip install that
makes every oracle suite skip would leave the run green. tools/test.sh
runs each ctest stage with --output-junit and passes the files here.

The reason of a skip is the test's own "skipped: ..." / "SKIP ...: ..."
lines (every suite prints one before exiting 77), else its last output
line. In strict mode (--strict; tools/test.sh is strict unless
NCC_STRICT_TESTS=0) a skip is allowed only when its reason matches one of
HARDWARE_REASONS: the machine has no GPU or no CUDA driver, or its CPU lacks
a feature a kernel test needs. Anything else
(a missing Python package, a missing tool, no reason at all) fails.

  test_skips.py [--strict] [--stage NAME] JUNIT.xml...

Prints "N skipped" and one line per skipped test with its reason and
verdict. Exit status: 0 fine, 1 strict mode and a skip without a hardware
reason, 2 an unreadable or missing JUnit file (ctest did not write it).
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET

# The documented hardware reasons (docs/TESTING.md): the messages the cuda
# target gives for a machine without an NVIDIA GPU or driver
# (targets/cuda/cuda.c), which tests print with their skip.
HARDWARE_REASONS = [
    r"no CUDA driver",
    r"no CUDA device",
    r"libcuda is only a stub",
    r"no NVIDIA driver",
    r"\bno GPU\b",
    # the CUDA toolkit (NVRTC, ptxas) comes with the machine image, not from
    # Debian's or PyPI's registries that tools/setup.sh installs from
    r"no ptxas at ",
    r"no NVRTC here",
    # a CPU feature a test of its kernels needs (tests/filecheck/run.py's
    # REQUIRES: host-feature=F), e.g. AMX on an older x86 or on AArch64
    r"the host CPU has no \w+",
]
HARDWARE_RE = re.compile("|".join(HARDWARE_REASONS), re.I)
SKIP_LINE_RE = re.compile(r"^\s*(skipped\b|skip\b)", re.I)


def reason_of(output):
    """The skip reason a test printed: its skip lines joined, else its last
    non-empty line, else a note that it printed nothing."""
    lines = [ln.strip() for ln in (output or "").splitlines() if ln.strip()]
    said = [ln for ln in lines if SKIP_LINE_RE.match(ln)]
    if said:
        return "; ".join(said)[:400]
    return lines[-1][:400] if lines else "(the test printed no reason)"


def is_hardware(reason):
    return bool(HARDWARE_RE.search(reason))


def skipped_tests(path):
    """(test name, reason) of every skipped testcase of one JUnit file."""
    root = ET.parse(path).getroot()
    out = []
    for tc in root.iter("testcase"):
        if tc.find("skipped") is None:
            continue
        so = tc.find("system-out")
        out.append((tc.get("name", "?"), reason_of(so.text if so is not None else "")))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strict", action="store_true",
                    help="fail on a skip whose reason is not a documented hardware reason")
    ap.add_argument("--stage", default="", help="name of the ctest stage, for the messages")
    ap.add_argument("junit", nargs="+")
    a = ap.parse_args(argv)
    skips = []
    for path in a.junit:
        try:
            skips += skipped_tests(path)
        except (OSError, ET.ParseError) as e:
            print("test_skips: cannot read %s: %s" % (path, e), file=sys.stderr)
            return 2
    stage = (a.stage + ": ") if a.stage else ""
    bad = [(n, r) for n, r in skips if not is_hardware(r)]
    print("%s%d skipped (%d for a hardware reason)" % (stage, len(skips), len(skips) - len(bad)))
    for name, why in skips:
        verdict = "hardware" if is_hardware(why) else (
            "NOT ALLOWED in strict mode" if a.strict else "not a hardware reason")
        print("  skipped %s [%s]: %s" % (name, verdict, why))
    if a.strict and bad:
        print("%sFAILED: %d test(s) skipped without a documented hardware reason "
              "(docs/TESTING.md; NCC_STRICT_TESTS=0 allows them outside CI)" % (stage, len(bad)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
