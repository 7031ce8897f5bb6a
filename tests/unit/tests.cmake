# Unit tests (cmocka): each executable links the dlcore library, the same
# code as the program. ctest names start with unit_; label "unit".
set(DL_UNIT_TESTS util collectives results measure gpus tune split)
foreach(t ${DL_UNIT_TESTS})
  add_executable(unit_${t} ${CMAKE_CURRENT_LIST_DIR}/test_${t}.c)
  target_link_libraries(unit_${t} PRIVATE dlcore PkgConfig::CMOCKA)
  add_test(NAME unit_${t} COMMAND unit_${t})
  set_tests_properties(unit_${t} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()

# The NCCL profiler plugin, loaded as NCCL loads it (no GPU needed).
add_executable(unit_choice_plugin ${CMAKE_CURRENT_LIST_DIR}/test_choice_plugin.c)
target_link_libraries(unit_choice_plugin PRIVATE PkgConfig::CMOCKA PkgConfig::CJSON ${CMAKE_DL_LIBS})
target_compile_definitions(unit_choice_plugin PRIVATE
  DL_PLUGIN_PATH="$<TARGET_FILE:dlcomm_nccl_profiler>"
  DL_RECORDED_RUN="${CMAKE_SOURCE_DIR}/results/reference/h200-multirank/call1/smoke-4ranks-run.json")
add_dependencies(unit_choice_plugin dlcomm_nccl_profiler)
add_test(NAME unit_choice_plugin COMMAND unit_choice_plugin)
set_tests_properties(unit_choice_plugin PROPERTIES LABELS unit TIMEOUT 60)
