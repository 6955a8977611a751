"""tests/py/checks.py -- the pass/fail count the command-line test scripts
share: check() records one named check (printing "FAIL name: detail" on
stderr when it fails), finish() prints the "N passed, M failed" line ctest
logs show and returns the script's exit status."""
import sys

PASSED = 0
FAILED = []


def check(name, cond, detail=""):
    global PASSED
    if cond:
        PASSED += 1
    else:
        FAILED.append(name)
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def finish():
    print(f"{PASSED} passed, {len(FAILED)} failed")
    return 1 if FAILED else 0
