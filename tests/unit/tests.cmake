# Unit tests (cmocka): each executable links the dlcore library, the same
# code as the program. ctest names start with unit_; label "unit".
set(DL_UNIT_TESTS util collectives results measure gpus tune split)
foreach(t ${DL_UNIT_TESTS})
  add_executable(unit_${t} ${CMAKE_CURRENT_LIST_DIR}/test_${t}.c)
  target_link_libraries(unit_${t} PRIVATE dlcore PkgConfig::CMOCKA)
  add_test(NAME unit_${t} COMMAND unit_${t})
  set_tests_properties(unit_${t} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
