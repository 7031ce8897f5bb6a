# The documentation held to the program (tests/docs/docs_test.py): options
# named in README, docs/ and docs/man/ exist, every option is documented, the
# check can fail, the man pages build and render without a troff warning,
# links resolve, and the sweep's documented columns are the real ones.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(dl_docs ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/docs_test.py)
add_test(NAME docs_options COMMAND ${dl_docs} options ${CMAKE_SOURCE_DIR} ${DL_BIN})
add_test(NAME docs_selftest COMMAND ${dl_docs} selftest ${CMAKE_SOURCE_DIR} ${DL_BIN})
add_test(NAME docs_man COMMAND ${dl_docs} man ${CMAKE_SOURCE_DIR} ${DL_BIN} ${CMAKE_BINARY_DIR})
add_test(NAME docs_links COMMAND ${dl_docs} links ${CMAKE_SOURCE_DIR} ${DL_BIN})
add_test(NAME docs_output COMMAND ${dl_docs} output ${CMAKE_SOURCE_DIR} ${DL_BIN} ${DL_MPIRUN})
set_tests_properties(docs_options docs_selftest docs_man docs_links docs_output
                     PROPERTIES LABELS docs TIMEOUT 120)
# The code's shape: functions of at most 80 lines, a thin cmd_sweep.c, no
# command in another's code, preflight never naming a backend.
add_test(NAME docs_structure COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/structure_test.py ${CMAKE_SOURCE_DIR})
add_test(NAME docs_structure_selftest COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/structure_test.py ${CMAKE_SOURCE_DIR} selftest)
set_tests_properties(docs_structure docs_structure_selftest PROPERTIES LABELS docs TIMEOUT 60)
