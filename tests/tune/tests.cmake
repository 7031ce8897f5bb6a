# dlcomm tune end to end: real mpirun, 4 MPI ranks or the sim backend's
# workers, the --json record and run.json checked. ctest names start with
# tune_; labels: integration, and fault / usage for those cases.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
string(REPLACE ";" " " DL_TUNE_MPIRUN "${DL_MPIRUN}")
foreach(c ddp_np4 horovod_np4_curve sim64 hang bad_model script_file)
  add_test(NAME tune_${c} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/tune_test.py ${c}
           --mpirun "${DL_TUNE_MPIRUN}" --bin ${DL_BIN})
  set_tests_properties(tune_${c} PROPERTIES LABELS "integration;tune" TIMEOUT 120)
endforeach()
set_tests_properties(tune_hang PROPERTIES LABELS "integration;tune;fault")
set_tests_properties(tune_bad_model PROPERTIES LABELS "integration;tune;usage")
