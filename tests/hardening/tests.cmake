# Hardening by class (hardening_test.py): bad values for every option of
# every command (from `dlcomm __options`), special files to every reader,
# encodings, concurrency, signals, secrets, and one case per issue-17
# defect. Label: hardening.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
string(REPLACE ";" " " DL_HARD_MPIRUN "${DL_MPIRUN}")
# signals: run on demand (hardening_test.py ... signals) until issue 17 defect 3 is
# fixed; today mpirun exits 1 on SIGINT/SIGTERM and a killed rank leaves "running".
foreach(group defects options files encodings concurrency secrets)
  add_test(NAME hardening_${group}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/hardening_test.py
      --bin ${DL_BIN} --mpirun "${DL_HARD_MPIRUN}" --src ${CMAKE_SOURCE_DIR} ${group})
  set_tests_properties(hardening_${group} PROPERTIES LABELS "hardening" TIMEOUT 240)
endforeach()
