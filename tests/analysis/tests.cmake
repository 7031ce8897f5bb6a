# analysis: compare, plot, report and Prometheus output, on runs made here by
# real MPI sweeps (fixture analysis_fixture) and on the nccl-tests samples in
# data/. Every case is one function of an_test.py.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(DL_AN_WORK ${CMAKE_CURRENT_BINARY_DIR}/analysis-work)
set(DL_AN_CASES edited rerun identical nccltests bad_input differ statuses plot_png plot_svg
    plot_nognuplot report report_advice prometheus sweep_plot side_by_side whatdiffers onerow)

function(dl_an_test name)
  add_test(NAME analysis_${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/an_test.py ${name} ${DL_BIN}
                   ${DL_AN_WORK} ${CMAKE_CURRENT_LIST_DIR}/data ${DL_MPIRUN})
  set_tests_properties(analysis_${name} PROPERTIES LABELS analysis TIMEOUT 120)
endfunction()

dl_an_test(fixture)
set_tests_properties(analysis_fixture PROPERTIES FIXTURES_SETUP analysis_runs)
foreach(c ${DL_AN_CASES})
  dl_an_test(${c})
  set_tests_properties(analysis_${c} PROPERTIES FIXTURES_REQUIRED analysis_runs)
endforeach()

# Units: the verdict rule at its edges, spreads, format detection, pairing.
add_executable(analysis_unit ${CMAKE_CURRENT_LIST_DIR}/test_analysis.c)
target_link_libraries(analysis_unit PRIVATE dlcore PkgConfig::CMOCKA)
add_test(NAME analysis_unit COMMAND analysis_unit)
set_tests_properties(analysis_unit PROPERTIES LABELS analysis TIMEOUT 60)

# The readers' fuzzer, 20 s, only when asked for (-DDLCOMM_FUZZ=ON) and clang
# is here; CI does not install clang, so it never depends on this.
option(DLCOMM_FUZZ "run a short libFuzzer pass over the run readers in ctest" OFF)
find_program(DL_CLANG clang)
if(DLCOMM_FUZZ AND DL_CLANG)
  add_test(NAME analysis_fuzz_readers
           COMMAND ${CMAKE_SOURCE_DIR}/scripts/fuzz-readers.sh 20 ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
  set_tests_properties(analysis_fuzz_readers PROPERTIES LABELS "analysis;fuzz" TIMEOUT 120)
endif()

# Compatibility: run.json files written by earlier dlcomm versions
# (tests/data/old-records, made by its make.sh with those builds) read by
# compare and report with the figures and exit codes the old dlcomm gave,
# and valid against docs/schema/run.schema.json.
add_test(NAME analysis_old_records
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/old_records.py ${DL_BIN}
                 ${CMAKE_SOURCE_DIR}/tests/data/old-records)
set_tests_properties(analysis_old_records PROPERTIES LABELS analysis TIMEOUT 120)

# What the library chose per row (choice_test.py): a real sim sweep on 4
# ranks (table, report, Prometheus), and a hand-made NCCL upgrade pair in
# data/choice (report, compare text/JSON/HTML, the page, Prometheus).
foreach(c sim pair)
  add_test(NAME analysis_choice_${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/choice_test.py ${c} ${DL_BIN}
                   ${CMAKE_CURRENT_BINARY_DIR}/choice-work ${CMAKE_CURRENT_LIST_DIR}/data/choice
                   ${DL_MPIRUN})
  set_tests_properties(analysis_choice_${c} PROPERTIES LABELS analysis TIMEOUT 120)
endforeach()
