# dlcomm under a real Slurm on the netns rig (scripts/slurm-rig.sh): the
# sbatch example, and the prolog draining, breaking and passing. Root,
# namespaces and the Debian slurmctld/slurmd/slurm-client/munge packages;
# skipped with the reason elsewhere. `ctest -R slurm`.
foreach(mode sbatch drain broken healthy)
  add_test(NAME slurm_${mode} COMMAND ${CMAKE_CURRENT_LIST_DIR}/slurm_test.sh ${mode} ${DL_BIN})
  set_tests_properties(slurm_${mode} PROPERTIES LABELS "integration;slurm;rig"
                       SKIP_RETURN_CODE 77 TIMEOUT 180 RESOURCE_LOCK dlcomm_netns_rig)
endforeach()
