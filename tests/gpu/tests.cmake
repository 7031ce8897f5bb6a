# GPU tests: label "gpu"; skipped (exit 77) with a message where no GPU is visible.
add_executable(nccl_selftest ${CMAKE_CURRENT_LIST_DIR}/nccl_selftest.c)
target_link_libraries(nccl_selftest PRIVATE dlcore)
add_test(NAME gpu_nccl_selftest COMMAND nccl_selftest)
set_tests_properties(gpu_nccl_selftest PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)

# A benchmark (not a test): a small call's time taken apart, beside dlcomm's.
if(DL_NCCL)
  add_executable(nccl_launch_bench ${CMAKE_CURRENT_LIST_DIR}/nccl_launch_bench.c)
  target_link_libraries(nccl_launch_bench PRIVATE dlcore)
endif()

# preflight's copy checks alone (D2D, H2D, D2H of every GPU); scripts/gpu-preflight.sh runs it.
add_executable(gpu_copy_check ${CMAKE_CURRENT_LIST_DIR}/gpu_copy_check.c)
target_link_libraries(gpu_copy_check PRIVATE dlcore)
add_test(NAME gpu_copy_check COMMAND gpu_copy_check)
set_tests_properties(gpu_copy_check PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 120)
