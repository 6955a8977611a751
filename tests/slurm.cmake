# tests/slurm.cmake — the sharded experiment sweep on a real scheduler: a
# one-node Slurm cluster (Debian's slurm-wlm and munge) started in a temporary
# directory, the sweep submitted as a job array, the shards merged and checked
# against a local run (tests/slurm/test_slurm_sweep.py).  Label `slurm`
# (and `harness`); exit 77 (skip, with its reason) when not root or, outside
# CI, when the packages are missing (docs/TESTING.md).
add_test(NAME slurm.sweep
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/slurm/test_slurm_sweep.py)
set_tests_properties(slurm.sweep PROPERTIES
  ENVIRONMENT "${NCC_TEST_ENV}"
  LABELS "slurm;harness;release"
  TIMEOUT 300
  SKIP_RETURN_CODE 77)
