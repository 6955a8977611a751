"""bench/harness — the block-level experiment harness behind `bench/experiment`.

One spec (a preset in bench/specs/ or a file) describes a sweep: blocks x
depth x batch x compilers x configurations, grouped into the experiments
E1..E7 of docs/EXPERIMENTS.md.  The harness expands the spec
into measurements, runs each one through a compiler adapter (all in-process:
ncc through libncc, ncclib.py, or its command line where that cannot load),
checks each model once against an oracle outside ncc (oracle.py: onnxruntime
ORT_DISABLE_ALL, or torch) and then every output against ncc's reference
interpreter where that agreed with the oracle (the oracle's output where it
did not: an ncc failure) before timing,
times the rows of one model and batch together in interleaved rounds, and
appends one self-describing row per measurement to DIR/results.jsonl.
report.py turns the rows into report.md and plots.
docs/EXPERIMENTS-HOWTO.md is the user guide.

Modules: spec (presets, validation, expansion), models (ONNX, inputs,
reference outputs, FLOP matching), oracle (the outside oracle), nccbin (the
ncc binary), ncclib (libncc via ctypes), measure (statistics, interleaved rounds, output check), stats
(median and ratio CIs, the noise verdict), adapters/ (one per compiler),
runner (resume, shards, progress), results (JSONL rows, schema, merge),
envinfo (environment record), metrics (the formulas), report.
"""

SCHEMA_VERSION = 1
