# html: report, compare and history pages loaded in headless Chromium (real
# sweeps made here, nccl-tests samples from tests/analysis/data). Skipped
# (77) where chromium or python3-websocket is absent.
add_test(NAME html_browser
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/browser_test.py ${DL_BIN}
                 ${CMAKE_CURRENT_BINARY_DIR}/html-work ${CMAKE_SOURCE_DIR}/tests/analysis/data
                 ${CMAKE_CURRENT_BINARY_DIR}/html-shots ${DL_MPIRUN})
set_tests_properties(html_browser PROPERTIES LABELS "browser;html" TIMEOUT 120 SKIP_RETURN_CODE 77)
