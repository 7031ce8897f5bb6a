# The worker engine with the sim backend: real mpirun, real worker
# processes, faults injected on purpose. ctest names start with engine_.
set(DL_ENGINE_CASES profiles relay hang crash error sigterm bad_profile applies_when transports shipped mpi_profiles)
foreach(case ${DL_ENGINE_CASES})
  add_test(NAME engine_${case}
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/engine_test.py ${case} ${DL_BIN} ${DL_MPIRUN})
  set_tests_properties(engine_${case} PROPERTIES LABELS integration TIMEOUT 120)
endforeach()
