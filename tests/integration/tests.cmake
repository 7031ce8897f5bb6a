# Integration tests of `dlcomm sweep` on the MPI backend: real mpirun, real
# ranks, run.json/run.csv checked field by field by sweep_check.py.
# ctest names start with sweep_; labels: integration, and usage for the
# bad-input cases, fault for injected faults, cli for the plain commands.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
string(REPLACE ";" " " DL_MPIRUN_LINE "${DL_MPIRUN}")
set(DL_SWEEP_CHECK ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sweep_check.py
    --mpirun "${DL_MPIRUN_LINE}" --bin ${DL_BIN})

# dl_sweep_test(NAME LABEL [checker options] -- [sweep arguments])
function(dl_sweep_test name label)
  add_test(NAME sweep_${name} COMMAND ${DL_SWEEP_CHECK} ${ARGN})
  set_tests_properties(sweep_${name} PROPERTIES LABELS "integration;${label}" TIMEOUT 180)
endfunction()

# ---- sweeps that must succeed, every result checked ----
dl_sweep_test(np2_default run --np 2 -- --budget 0.02 -b 8 -e 64K)
# One rank: out of place a local copy (algbw, busbw by the factor); in place
# nothing moves, so no bandwidth (not 9 PB/s), and the summary's peak is a copy's.
dl_sweep_test(np1_placements run --np 1 --expect-stdout "peak [0-9.]+ GB/s \\([a-z]+ [0-9]+ [KMG]?i?B out\\)" --
  -c allreduce,allgather,broadcast -b 8 -e 16M -f 16 --budget 0.01)
dl_sweep_test(np4_all run --np 4 -- -c all --budget 0.02 -b 8 -e 64K -q)
dl_sweep_test(np4_dtypes_ops run --np 4 --
  -c all -d float16,bfloat16,int8,float64 -o prod,min,max,avg -b 8 -e 4K -f 8 -n 5 -w 1 -q)
dl_sweep_test(np4_root_step_inplace run --np 4 --
  -c allreduce,reducescatter,broadcast,reduce -r 3 -d int32 -o sum,avg -b 1K -e 8K -i 1K
  --placement in -n 20 -q)
# gather and scatter, every rank's data checked, a root other than 0, both placements.
dl_sweep_test(np4_gather_scatter run --np 4 --
  -c gather,scatter -r 2 -d int32,float16,int8,float64 -b 8 -e 64K -f 8 -n 5 -w 1 -q)
dl_sweep_test(np2_gather_scatter run --np 2 --
  -c gather,scatter -r 1 -b 7 -e 4K -f 4 --budget 0.01 -q)
# alltoallv: the generated pattern at each size, and a matrix file (5x5: the
# first n rows and columns used), every element checked.
set(DL_A2AV_DATA ${CMAKE_CURRENT_LIST_DIR}/data)
dl_sweep_test(np4_alltoallv run --np 4 --
  -c alltoallv -d int32,float16,int8,float64 -b 8 -e 64K -f 8 -n 5 -w 1 -q)
dl_sweep_test(np4_alltoallv_matrix run --np 4 --
  -c alltoallv,alltoall --matrix ${DL_A2AV_DATA}/alltoallv-5.txt -d float32,int8 -b 4K -e 4K -n 5 -q)
dl_sweep_test(np3_alltoallv_matrix run --np 3 --
  -c alltoallv --matrix ${DL_A2AV_DATA}/alltoallv-5.txt -b 1K -e 1K -n 5 -q)
# -a: how a row's time is formed over ranks, each against the ranks' own means.
foreach(agg max mean min rank0 1)
  dl_sweep_test(np4_aggregate_${agg} run --np 4 --
    -c allreduce,broadcast,gather,scatter -a ${agg} -b 8 -e 4K -f 8 -n 50 -q)
endforeach()
dl_sweep_test(np3_uneven run --np 3 --
  -c all -d float32,float16 -b 7 -e 1000 -f 3 --placement out --budget 0.01 -q)

# ---- faults: the documented exit codes ----
dl_sweep_test(corrupt_rank1 fault --np 2 --env DLCOMM_INJECT=corrupt:1 --expect-exit 1
  --wrong-rank 1 --expect-stderr "wrong elements .*wrong_per_rank" --
  -c allreduce,allgather,reduce -b 8 -e 1K --budget 0.01 -q)
# mpirun passes MPI_Abort's code through: the deadline thread aborts with 3.
dl_sweep_test(hang_timeout fault --np 2 --env DLCOMM_INJECT=hang:1 --expect-exit 3
  --max-seconds 20 --expect-stderr "no progress for 3 s \\(timeout\\)" --
  -c allreduce -b 8 -e 1K --timeout 3 -q)
# A call that fails on one rank leaves its peers inside the collective: the
# failing rank is named and ends the job with 3 within seconds, not after
# the default 300 s --timeout.
dl_sweep_test(error_rank1 fault --np 2 --env DLCOMM_INJECT=error:1 --expect-exit 3
  --max-seconds 20 --expect-stderr "rank 1: injected error in allreduce" --
  -c allreduce -b 8 -e 1K -q)

# ---- bad input: exit 2, one line naming the problem, no files ----
function(dl_bad_input name pattern)
  dl_sweep_test(bad_${name} usage --np 2 --expect-exit 2 --one-error-line --no-files
    --expect-stderr "${pattern}" -- ${ARGN})
endfunction()
dl_bad_input(collective "unknown collective 'allfoo'" -c allreduce,allfoo)
dl_bad_input(dtype "unknown dtype 'float12'" -d float12)
dl_bad_input(op "unknown op 'mean'" -o sum,mean)
dl_bad_input(min_gt_max "--minbytes .* is larger than --maxbytes" -b 1M -e 64K)
dl_bad_input(size_zero "--minbytes: '0' is not a valid SIZE" -b 0)
dl_bad_input(size_negative "--minbytes: '-5' is not a valid SIZE" -b -5)
dl_bad_input(size_suffix "--minbytes: '12Q' is not a valid SIZE" -b 12Q)
dl_bad_input(factor_one "--stepfactor must be > 1" -f 1)
dl_bad_input(factor_half "--stepfactor must be > 1" -f 0.5)
dl_bad_input(unknown_flag "unknown option '--frobnicate'" --frobnicate)
dl_bad_input(missing_value "--timeout needs a value" -q --timeout)
dl_bad_input(bad_number "--iters: 'ten' is not a valid N" -n ten)
dl_bad_input(validator "--ci-target: must be at least 0 and below 1" --ci-target 5)
dl_bad_input(root_ge_ranks "--root 2: there are only 2 ranks" -r 2 -c broadcast)
dl_bad_input(graph_mpi "--graph is an option of the nccl backend. this sweep runs on mpi|unknown option .-G."
  --backend mpi -G 10)
# Where no GPU is visible (CI): nccl says so, or that it is not built in.
if(NOT EXISTS /dev/nvidiactl)
  dl_bad_input(nccl_no_gpu "--backend nccl: (not available here: (no CUDA GPU|no NVIDIA driver on this host)|unknown or not built)"
    --backend nccl)
endif()
dl_bad_input(aggregate "--aggregate must be max, mean, min or rank0 \\(also nccl-tests' 0, 1, 2, 3\\), not 'avg'" -a avg)
dl_bad_input(matrix_square "--matrix .*alltoallv-notsquare.txt: row 2 has 3 values|not a square matrix"
  -c alltoallv --matrix ${CMAKE_CURRENT_LIST_DIR}/data/alltoallv-notsquare.txt -b 1K -e 1K)
dl_bad_input(matrix_missing "--matrix /nonexistent/m.txt: No such file"
  -c alltoallv --matrix /nonexistent/m.txt -b 1K -e 1K)
dl_bad_input(matrix_sizes "--matrix: alltoallv's counts come from the matrix"
  -c alltoallv --matrix ${CMAKE_CURRENT_LIST_DIR}/data/alltoallv-5.txt -b 1K -e 4K)
# -R is the nccl backend's: refused, with the reason, where buffers are the host's.
dl_bad_input(register_mpi "--register is an option of the nccl backend. this sweep runs on mpi"
  --backend mpi -R 1)
dl_bad_input(register_sim "--register is an option of the nccl backend. this sweep runs on sim"
  --backend sim -R 2)
dl_bad_input(placement "--placement must be out, in or both, not 'bogus'" --placement bogus)
dl_bad_input(out_unwritable "--out .*cannot create or write"
  --out ${CMAKE_CURRENT_LIST_FILE}/run)
add_test(NAME sweep_bad_inject COMMAND ${DL_SWEEP_CHECK} --np 2 --env DLCOMM_INJECT=bogus
  --expect-exit 2 --one-error-line --no-files --expect-stderr "DLCOMM_INJECT='bogus'" -- -b 8 -e 64)
set_tests_properties(sweep_bad_inject PROPERTIES LABELS "integration;usage" TIMEOUT 60)

# ---- the program's own help and version, no mpirun ----
function(dl_cli_test name code pattern)
  add_test(NAME sweep_cli_${name} COMMAND ${DL_SWEEP_CHECK} --direct --expect-exit ${code} ${pattern} ${ARGN})
  set_tests_properties(sweep_cli_${name} PROPERTIES LABELS "integration;cli" TIMEOUT 30)
endfunction()
dl_cli_test(help 0 "--expect-stdout=sweep .*measure" --sub=--help)
dl_cli_test(sweep_help 0 "--expect-stdout=--minbytes SIZE.*\\[8\\]" --sub=sweep -- --help)
# The version (git describe, or the project's), the backends, and the MPI
# it was built with and found; nccl and CUDA lines where the backend is built.
dl_cli_test(version 0
  "--expect-stdout=^dlcomm [0-9]+\\.[0-9]+\\.[0-9]+[^\n]*\nbackends: +[a-z ]*mpi[a-z ]*sim\nmpi: +built with Open MPI v[0-9.]+, found Open MPI v[0-9.]+\n"
  --sub=version)
dl_cli_test(unknown_command 2 "--expect-stderr=unknown command 'nosuchcommand'" --sub=nosuchcommand
  --one-error-line)

# ---- options that know their values: one row gives the parse, the error, --help,
# the man page and completion ----
# nccl-tests' dtype names (and the fp8 spellings) run as the types they name.
dl_sweep_test(np2_ncclt_dtypes run --np 2 --
  -c allreduce,allgather -d float,half,double,int,f8e4m3,fp8_e5m2 -b 8 -e 1K -f 8 -n 5 -w 1 -q)
# A near miss is named: values, options, profiles, backends and commands.
dl_bad_input(dtype_suggest "--datatype: unknown dtype 'flaot32' \\(did you mean 'float32'\\?\\)" -d flaot32)
dl_bad_input(option_suggest "unknown option '--placemnt' \\(did you mean '--placement'\\?\\)" --placemnt in)
dl_bad_input(profile_suggest "profile 'rign': .*\\(did you mean 'ring'\\?\\)" --backend sim -p rign)
dl_bad_input(backend_suggest "--backend must be auto, .*mpi or sim, not 'mpii' \\(did you mean 'mpi'\\?\\)"
  --backend mpii)
dl_cli_test(unknown_command_suggest 2 "--expect-stderr=unknown command 'swep' \\(did you mean 'sweep'\\?\\)"
  --sub=swep --one-error-line)
# help COMMAND is COMMAND --help.
dl_cli_test(help_command 0 "--expect-stdout=^usage: mpirun -np N dlcomm sweep .*\n(.|\n)*--minbytes SIZE"
  --sub=help -- sweep)
dl_cli_test(help_command_unknown 2 "--expect-stderr=unknown command 'swep' \\(did you mean 'sweep'\\?\\)"
  --sub=help --one-error-line -- swep)
# --help lists every value from the tables (alltoallv; every dtype the mpi backend runs).
dl_cli_test(help_lists_values 0
  "--expect-stdout=--collectives LIST .*alltoallv(.|\n)*--datatype LIST .*float32, float16, bfloat16, float64, int32, int8, uint8, int64, uint32, uint64, fp8e4m3 or fp8e5m2, or all. also float=float32"
  --sub=sweep -- --help)
# The man page says the same, and completion offers the values.
dl_cli_test(man_lists_values 0 "--expect-stdout=collectives\\\\fR \\\\fILIST\\\\fR\n[^\n]*alltoallv"
  --sub=__man -- sweep ${CMAKE_SOURCE_DIR}/docs/man/dlcomm-sweep.txt)
dl_cli_test(complete_values 0 "--expect-stdout=^float32\nfloat16\n(.|\n)*fp8e5m2\nall\n$"
  --sub=__complete -- values sweep --datatype)
# Columns line up: every option's help (-h too) and every profile's row.
add_test(NAME sweep_cli_layout COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli_layout.py ${DL_BIN})
set_tests_properties(sweep_cli_layout PROPERTIES LABELS "integration;cli" TIMEOUT 30)

# ---- --split: concurrent groups, a row per group, each checked against its own ranks ----
# MOD:2 (ranks 0,2 and 1,3) and DIV:2 (0,1 and 2,3) on 4 ranks, every
# collective the groups run side by side; nccl-tests' spellings too.
dl_sweep_test(np4_split_mod2 run --np 4 --
  --split MOD:2 -c all -r 1 -b 8 -e 64K -f 32 --budget 0.02 -q)
dl_sweep_test(np4_split_div2 run --np 4 --
  --split DIV:2 -c allreduce,allgather,broadcast,gather,scatter,alltoallv -d int32,float16 -b 8 -e 64K -f 32 -n 10 -q)
dl_sweep_test(np4_split_matrix run --np 4 --
  --split MOD:2 -c alltoallv,alltoall --matrix ${DL_A2AV_DATA}/alltoallv-5.txt -d float32,int8 -b 4K -e 4K -n 5 -q)
dl_sweep_test(np4_split_and1 run --np 4 -- --split "&1" -c allreduce,broadcast -b 1K -e 1K -n 10 -q)
dl_sweep_test(np4_split_div4 run --np 4 -- --split /4 -c allreduce,allgather -b 1K -e 1K -n 10 -q)
# A corrupt element on rank 3 shows in its group's rows only (MOD:2: group 1, place 1).
dl_sweep_test(split_corrupt_rank3 fault --np 4 --env DLCOMM_INJECT=corrupt:3 --expect-exit 1
  --wrong-rank 3 --expect-stderr "wrong elements" --
  --split MOD:2 -c allreduce,allgather,gather -b 1K -e 1K -n 5 -q)
# The sim in workers: each group models its share of the system (4 of 8 H200s).
dl_sweep_test(sim_split_mod2 run --np 4 --modelled-ranks 8 --
  --backend sim --split MOD:2 -c allreduce,allgather,broadcast,alltoallv -b 1K -e 1M -f 32 --budget 0.02 -q)
dl_bad_input(split_garbage "--split 'XOR:2': no mode" --split XOR:2)
dl_bad_input(split_zero "--split 'MOD:0': k must be at least 1" --split MOD:0)
dl_bad_input(split_value "--split 'DIV:two': the value must be a whole number" --split DIV:two)
dl_bad_input(split_divide "--split MOD:3: 3 does not divide the 2 ranks" --split MOD:3)
dl_bad_input(split_root "--root 1: there are only 1 ranks in each --split group" --split MOD:2 -r 1 -c broadcast)
dl_sweep_test(bad_split_sim_model usage --np 3 --expect-exit 2 --one-error-line --no-files
  --expect-stderr "--split: the model's 8 ranks do not make 3 equal groups" -- --backend sim --split MOD:3)
# AND:1 on 3 ranks: ranks 0 and 2 against rank 1 alone.
dl_sweep_test(bad_split_uneven usage --np 3 --expect-exit 2 --one-error-line --no-files
  --expect-stderr "--split AND:0x1: 3 ranks make 2 groups of unequal size" -- --split AND:1)
# The sim's groups side by side share each node's NICs (4 groups over 2 nodes: a quarter each).
add_test(NAME sweep_sim_split_nics
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/split_sim.py ${DL_BIN} ${DL_MPIRUN})
set_tests_properties(sweep_sim_split_nics PROPERTIES LABELS "integration;run" TIMEOUT 120)

# ---- what a person reads: header and footer, columns, nccl-tests' layout,
# a model's rows and rank count, history's default, ties (output_check.py) ----
foreach(c header columns ncclt sim history tie)
  add_test(NAME sweep_output_${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/output_check.py ${c} ${DL_BIN}
                   ${CMAKE_CURRENT_BINARY_DIR}/output-work
                   ${CMAKE_SOURCE_DIR}/tests/analysis/data/nccl-tests-2.19.6_all_reduce_h200x1.txt
                   ${DL_MPIRUN})
  set_tests_properties(sweep_output_${c} PROPERTIES LABELS "integration;output" TIMEOUT 120)
endforeach()

# ---- one idea of a host (NCCL's): DLCOMM_SHARED_GPU, NCCL_HOSTID, preflight's names ----
add_test(NAME sweep_host_identity
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/host_identity.py ${DL_BIN} ${DL_MPIRUN})
set_tests_properties(sweep_host_identity PROPERTIES LABELS "integration;run" TIMEOUT 300)
