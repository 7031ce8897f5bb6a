# Hardening by class (hardening_test.py): bad values for every option of
# every command (from `dlcomm __options`), special files to every reader,
# encodings, concurrency, signals, secrets, and one case per issue-17
# defect. Label: hardening.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
string(REPLACE ";" " " DL_HARD_MPIRUN "${DL_MPIRUN}")
foreach(group defects options files encodings concurrency secrets signals wide)
  add_test(NAME hardening_${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/hardening_test.py
      --bin ${DL_BIN} --mpirun "${DL_HARD_MPIRUN}" --src ${CMAKE_SOURCE_DIR} ${group})
  set_tests_properties(hardening_${group} PROPERTIES LABELS "hardening" TIMEOUT 240)
endforeach()
# signals: SIGINT/SIGTERM to mpirun, SIGTERM/SIGKILL/SIGSEGV to one rank or
# worker, on mpi and sim (about 30 s: 11 real runs of 2-4 ranks, each signalled
# once its first row is out).
# Its ranks spin (budgets, injected slowness): PROCESSORS 2 keeps ctest -j2 from
# running a timing-judged test (tune) beside it.
set_tests_properties(hardening_signals PROPERTIES LABELS "hardening;signals" PROCESSORS 2)
# Second round (round2_test.py, issue 25): links and permissions planted by
# an unprivileged user against a root run (root only), concurrency without
# --out, launch edge cases, what was silently wrong. Label: hardening.
foreach(group links unattended launch silent)
  add_test(NAME hardening_${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/round2_test.py
      --bin ${DL_BIN} --mpirun "${DL_HARD_MPIRUN}" --src ${CMAKE_SOURCE_DIR} ${group})
  set_tests_properties(hardening_${group} PROPERTIES LABELS "hardening" TIMEOUT 300)
endforeach()
# launch and unattended time signals and run sweeps side by side
set_tests_properties(hardening_launch hardening_unattended PROPERTIES PROCESSORS 2)
# Second round (issue 25, round2b_test.py): the nccl-tests version corpus
# (tests/data/ncclt-corpus, every release 2.0.0 .. 2.19.6), resource limits
# (ulimit -v, large records and comparisons: the large cases also slow), and
# what is printed being true.
add_library(dl_fail_threads SHARED ${CMAKE_CURRENT_LIST_DIR}/fail_threads.c)
target_link_libraries(dl_fail_threads PRIVATE ${CMAKE_DL_LIBS})
foreach(group ncclt_corpus limits truth)
  add_test(NAME hardening_${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/round2b_test.py
      --bin ${DL_BIN} --mpirun "${DL_HARD_MPIRUN}" --src ${CMAKE_SOURCE_DIR}
      --fail-threads $<TARGET_FILE:dl_fail_threads> ${group})
  set_tests_properties(hardening_${group} PROPERTIES LABELS "hardening" TIMEOUT 300)
endforeach()
