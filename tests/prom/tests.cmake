# prom: a real Prometheus scraping a real node_exporter that reads a sweep's
# .prom file; the example rules under promtool; the dashboard's expressions.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(DL_PROM_MON ${CMAKE_SOURCE_DIR}/scripts/monitoring)
add_test(NAME prom_live
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_live.py ${DL_BIN}
                 ${CMAKE_CURRENT_BINARY_DIR}/prom-live-work ${DL_MPIRUN})
set_tests_properties(prom_live PROPERTIES LABELS "prom;integration" TIMEOUT 90
                     SKIP_RETURN_CODE 77)
add_test(NAME prom_rules COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/prom_rules.sh ${DL_PROM_MON})
set_tests_properties(prom_rules PROPERTIES LABELS prom TIMEOUT 60 SKIP_RETURN_CODE 77)
add_test(NAME prom_dashboard
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_dashboard.py
                 ${DL_PROM_MON}/dlcomm-dashboard.json ${DL_PROM_MON}/dlcomm-rules.yml
                 ${CMAKE_SOURCE_DIR}/src/analysis/prom.c ${CMAKE_SOURCE_DIR}/src/preflight/metrics.c
                 ${CMAKE_SOURCE_DIR}/src/cmd_watch.c)
set_tests_properties(prom_dashboard PROPERTIES LABELS prom TIMEOUT 60)
# preflight --prometheus: the verdict per host, scraped (local: 2 ranks, a
# corrupt rank; rig: 3 namespace hosts, one slow, root only).
add_test(NAME prom_preflight_live
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_preflight.py local ${DL_BIN}
                 ${CMAKE_CURRENT_BINARY_DIR}/prom-preflight-work ${DL_MPIRUN})
set_tests_properties(prom_preflight_live PROPERTIES LABELS "prom;integration" TIMEOUT 120
                     SKIP_RETURN_CODE 77)
add_test(NAME prom_preflight_rig
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_preflight.py rig ${DL_BIN}
                 ${CMAKE_CURRENT_BINARY_DIR}/prom-preflight-rig-work)
set_tests_properties(prom_preflight_rig PROPERTIES LABELS "prom;integration;rig" TIMEOUT 150
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK dlcomm_netns_rig)
# dlcomm watch: three scheduled runs into one series on 2 ranks, scraped; and
# the systemd units as installed, under systemd-analyze verify.
add_test(NAME prom_watch
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_watch.py ${DL_BIN}
                 ${CMAKE_CURRENT_BINARY_DIR}/prom-watch-work ${DL_MPIRUN})
set_tests_properties(prom_watch PROPERTIES LABELS "prom;watch;integration" TIMEOUT 180
                     SKIP_RETURN_CODE 77)
add_test(NAME prom_watch_units
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/prom_watch_units.py ${CMAKE_COMMAND}
                 ${CMAKE_BINARY_DIR} ${DL_MPIRUN})
set_tests_properties(prom_watch_units PROPERTIES LABELS "prom;watch;install" TIMEOUT 120
                     RESOURCE_LOCK dlcomm_install
                     SKIP_RETURN_CODE 77)
