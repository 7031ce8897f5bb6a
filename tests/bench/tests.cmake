# Benchmark, not a test: the bare MPI_Allreduce loop that
# scripts/bench-mpi.sh compares `dlcomm sweep` with. Built, never run by ctest.
add_executable(bench_bare_allreduce ${CMAKE_CURRENT_LIST_DIR}/bare_allreduce.c)
target_link_libraries(bench_bare_allreduce PRIVATE MPI::MPI_C)
# Benchmark, not a test: the OSU-method latency of the rooted collectives
# that scripts/bench-osu.sh compares `dlcomm sweep` (mpi) with.
add_executable(bench_osu_rooted ${CMAKE_CURRENT_LIST_DIR}/osu_rooted.c)
target_link_libraries(bench_osu_rooted PRIVATE MPI::MPI_C)
