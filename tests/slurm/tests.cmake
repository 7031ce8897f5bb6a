# dlcomm under a real Slurm on the netns rig (scripts/slurm-rig.sh): the
# sbatch example, and the prolog draining, breaking and passing. Root,
# namespaces and the Debian slurmctld/slurmd/slurm-client/munge packages;
# skipped with the reason elsewhere. `ctest -R slurm` (or -L slurm).
foreach(t sbatch:sbatch prolog_drain:drain prolog_broken:broken prolog_healthy:healthy)
  string(REPLACE ":" ";" t ${t})
  list(GET t 0 name)
  list(GET t 1 mode)
  add_test(NAME slurm_${name} COMMAND ${CMAKE_CURRENT_LIST_DIR}/slurm_test.sh ${mode} ${DL_BIN})
  set_tests_properties(slurm_${name} PROPERTIES LABELS "integration;slurm;rig"
                       SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK dlcomm_netns_rig)
endforeach()
# The drain waits for a requeue and two prologs (about 45 s).
set_tests_properties(slurm_prolog_drain PROPERTIES LABELS "integration;slurm;rig;slow")
