#!/usr/bin/env python3
"""tools/update-cli-doc.py -- rewrite the help texts quoted in docs/CLI.md
from what `ncc <cmd> --help` prints now (tests/docs/test_docs.py checks
they agree, so a changed --help fails the suite until this is run).

Usage: python3 tools/update-cli-doc.py [path/to/ncc]   (default build/ncc)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ncc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ncc")
path = os.path.join(ROOT, "docs", "CLI.md")
doc = open(path).read()


def fresh(m):
    out = subprocess.run([ncc, *m.group(1).split()], capture_output=True, text=True,
                         check=True).stdout.rstrip()
    return "$ ncc %s\n%s\n" % (m.group(1), out) + m.group(2)[len(m.group(2).rstrip()) + 1:]


new = re.sub(r"^\$ ncc ((?:\w+ )?--help)\n(.*?)(?=^\$ ncc |^```)", fresh, doc,
             flags=re.M | re.S)
if new != doc:
    with open(path + ".tmp", "w") as f:
        f.write(new)
    os.replace(path + ".tmp", path)
    print("docs/CLI.md: help texts updated")
else:
    print("docs/CLI.md: up to date")
