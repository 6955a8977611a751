# tests/fuzz/copy_corpus.cmake — `cmake -DSEEDS=dir -DWORK=dir -DARTIFACTS=dir
# -P` this file: refresh WORK with a copy of the seed corpus SEEDS (WORK is
# created empty when SEEDS does not exist), so a fuzz.* test starts from the
# same corpus every run and never writes into the source tree; and make the
# directory where libFuzzer writes crashing inputs (it does not create it).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK} ${ARTIFACTS})
if(EXISTS ${SEEDS})
  file(GLOB seed_files ${SEEDS}/*)
  if(seed_files)
    file(COPY ${seed_files} DESTINATION ${WORK})
  endif()
endif()
