# dlcomm as users install it: cmake --install to a prefix, the .deb (its
# fields and contents, lintian, then dpkg -i, run, purge), the version
# scheme, and an out-of-tree build. Each runs the
# installed program from another working directory. ctest names start with
# install_ (ctest -R install); label install, and slow for the two that
# build (the out-of-tree build, the package).
string(REPLACE ";" " " dl_mpirun_line "${DL_MPIRUN}")
set(DL_INSTALL_ENV "DL_MPIRUN=${dl_mpirun_line}" "DL_BUILD=${CMAKE_BINARY_DIR}"
    "DL_SOURCE=${CMAKE_SOURCE_DIR}" "DL_CMAKE=${CMAKE_COMMAND}" "DL_CPACK=${CMAKE_CPACK_COMMAND}")
foreach(t prefix deb lintian outoftree package version)
  add_test(NAME install_${t} COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/${t}_test.sh)
  set_tests_properties(install_${t} PROPERTIES LABELS install TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${DL_INSTALL_ENV}")
endforeach()
set_tests_properties(install_deb install_outoftree PROPERTIES LABELS "install;slow")
# The package and the prefix install write into the build folder and /usr.
set_tests_properties(install_deb install_lintian install_prefix install_package
                     PROPERTIES RESOURCE_LOCK dlcomm_install)
