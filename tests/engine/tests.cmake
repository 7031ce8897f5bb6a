# The worker engine with the sim backend: real mpirun, real worker
# processes, faults injected on purpose. ctest names start with engine_.
set(DL_ENGINE_CASES profiles relay hang crash error sigterm bad_profile applies_when transports shipped mpi_profiles slow inject_bounds rooted_agg straggler_mpi straggler_sim profile_end control_pml)
foreach(case ${DL_ENGINE_CASES})
  add_test(NAME engine_${case}
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/engine_test.py ${case} ${DL_BIN} ${DL_MPIRUN})
  set_tests_properties(engine_${case} PROPERTIES LABELS integration TIMEOUT 120)
endforeach()

add_executable(engine_unit ${CMAKE_CURRENT_LIST_DIR}/test_engine_unit.c)
target_link_libraries(engine_unit PRIVATE dlcore PkgConfig::CMOCKA)
target_compile_definitions(engine_unit PRIVATE DL_TEST_DATA="${CMAKE_CURRENT_LIST_DIR}/data")
add_test(NAME engine_unit COMMAND engine_unit)
set_tests_properties(engine_unit PROPERTIES LABELS unit TIMEOUT 60)
