# preflight: unit tests of its arithmetic, real mpirun runs on this host, and
# the multi-host netns rig (root only; skipped with a message elsewhere).
foreach(t unit gpu gpucopy)
  add_executable(preflight_${t} ${CMAKE_CURRENT_LIST_DIR}/test_preflight_${t}.c)
  target_link_libraries(preflight_${t} PRIVATE dlcore PkgConfig::CMOCKA)
  add_test(NAME preflight_${t} COMMAND preflight_${t})
  set_tests_properties(preflight_${t} PROPERTIES LABELS unit TIMEOUT 60)
endforeach()
target_compile_definitions(preflight_gpucopy PRIVATE DL_SOURCE_DIR="${CMAKE_SOURCE_DIR}")

# Each judges figures measured over TCP between namespaces on this host's
# cores: RUN_SERIAL keeps any other test off them meanwhile (beside a busy test
# under ctest -j2 a healthy pair once read 0.03 GB/s and was named).
foreach(mode healthy throttled link simslow plansim)
  add_test(NAME preflight_rig_${mode}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/rig_test.sh ${DL_BIN} 4 ${mode})
  set_tests_properties(preflight_rig_${mode} PROPERTIES LABELS "integration;rig"
                       SKIP_RETURN_CODE 77 TIMEOUT 150 RESOURCE_LOCK dlcomm_netns_rig RUN_SERIAL TRUE)
endforeach()
# --quick with its default sizes, 3 hosts, one at 100 Mbit/s: sized figures
# keep it under 60 s (it took 150 s with fixed byte counts).
add_test(NAME preflight_rig_quick100
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/rig_test.sh ${DL_BIN} 3 quick100)
set_tests_properties(preflight_rig_quick100 PROPERTIES LABELS "integration;rig"
                     SKIP_RETURN_CODE 77 TIMEOUT 150 RESOURCE_LOCK dlcomm_netns_rig RUN_SERIAL TRUE)

# The adaptive planner on real ranks: 8 hosts, one at 100 Mbit/s and one link at
# 200 Mbit/s at once; both named and nothing else. A rig of its own (pfq,
# 10.213.80) so it never shares names or a subnet with the cases above.
add_test(NAME preflight_rig_plan
         COMMAND ${CMAKE_COMMAND} -E env DLRIG_PREFIX=pfq DLRIG_NET=10.213.80
                 ${CMAKE_CURRENT_LIST_DIR}/rig_test.sh ${DL_BIN} 8 plan)
set_tests_properties(preflight_rig_plan PROPERTIES LABELS "integration;rig"
                     SKIP_RETURN_CODE 77 TIMEOUT 200 RESOURCE_LOCK dlcomm_netns_rig RUN_SERIAL TRUE)

foreach(mode pass straggler corrupt baseline usage broke numa topo)
  add_test(NAME preflight_local_${mode}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/local_test.sh ${mode} ${DL_BIN} ${DL_MPIRUN})
  set_tests_properties(preflight_local_${mode} PROPERTIES LABELS integration TIMEOUT 120)
endforeach()
# The slow rank's recheck judges lateness against the other three ranks: beside
# a busy test on a 2-core host they are late too, and it read "not confirmed:
# noise" (twice under ctest -j2 on 2026-12-05). The healthy run asserts that
# no rank is named, the same judgement the other way round (it failed once
# under ctest -j2, later on 2026-12-05, and passed alone). Both run alone.
set_tests_properties(preflight_local_straggler preflight_local_pass PROPERTIES RUN_SERIAL TRUE)

add_test(NAME preflight_scripts_syntax
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/scripts_test.sh syntax ${CMAKE_SOURCE_DIR}/scripts)
set_tests_properties(preflight_scripts_syntax PROPERTIES LABELS integration TIMEOUT 120)

add_test(NAME preflight_topo_paths
         COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/topo_paths.py ${DL_BIN})
set_tests_properties(preflight_topo_paths PROPERTIES LABELS integration TIMEOUT 60)

# The adaptive planner on small modelled fleets (--fleet, no MPI): each fault
# kind named and nothing else, a healthy fleet names nothing, a fault too small
# for the noise is inconclusive (never a pass), bad input exit 2.
foreach(case none node link rail flap three three-nodes inconclusive usage)
  add_test(NAME preflight_fleet_${case}
           COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/fleet_test.py ${DL_BIN} ${case})
  set_tests_properties(preflight_fleet_${case} PROPERTIES LABELS "integration;fleet" TIMEOUT 60)
endforeach()
