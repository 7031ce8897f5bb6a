# The Debian package: `cpack -G DEB` in a build folder (or the package
# target). Depends names the Debian packages of the runtime libraries
# dlcomm links (Debian 12 names): Open MPI (and mpirun, which every
# measurement needs), cJSON, hwloc. The nccl backend's NCCL and CUDA runtime
# are named as the build found them: the package dpkg says owns each library,
# or, for a library no package owns (NVIDIA's tarball or runfile under
# /usr/local), nothing, and the description says which files the host needs.
# Why not dpkg-shlibdeps: it stops at the first library no package owns,
# which is how CUDA is installed on most GPU hosts; why not a second
# dlcomm-nccl package: the backend is linked into the one program, so a
# split would mean two programs or a plug-in loader for one library.
set(CPACK_PACKAGE_NAME dlcomm)
# The package's version is dlcomm's own (`dlcomm version`), which the
# top-level CMakeLists.txt makes valid for Debian.
set(CPACK_PACKAGE_VERSION ${DL_VERSION})
set(CPACK_PACKAGE_CONTACT "dlcomm maintainers <dlcomm@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "collective-communication benchmark and cluster health tool")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# No Homepage field: dlcomm has no public page to name.
# Completion is installed for bash-completion to load; dlcomm runs without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")

set(dl_deps "libc6 (>= 2.34), libopenmpi3, openmpi-bin, libcjson1, libhwloc15")
set(dl_desc "dlcomm measures all-reduce, all-gather, broadcast and the other
collectives distributed training depends on, over MPI, NCCL or a model of
a system, checks every result, and checks hosts before a job.")
if(DL_NCCL)
  find_library(DL_CUDART_SO cudart HINTS ${CUDAToolkit_LIBRARY_DIR})
  foreach(lib ${NCCL_LIBRARY} ${DL_CUDART_SO})
    get_filename_component(real ${lib} REALPATH)
    execute_process(COMMAND dpkg-query -S ${real} OUTPUT_VARIABLE owner
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND owner MATCHES "^([^:, ]+)")
      string(APPEND dl_deps ", ${CMAKE_MATCH_1}")
    else()
      string(APPEND dl_desc "\n.\nThe nccl backend was linked against a library no Debian package\nprovides; the host needs it (or the same soname) on the loader's path:\n${real}")
    endif()
  endforeach()
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${dl_deps}")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${dl_desc}")
set(CPACK_PACKAGE_DESCRIPTION "${dl_desc}")

# What Debian policy asks of every package: a copyright file and a changelog
# (changelog.gz: a native package, its version has no Debian revision).
set(dl_doc ${CMAKE_BINARY_DIR}/packaging/doc)
file(MAKE_DIRECTORY ${dl_doc})
string(TIMESTAMP dl_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${dl_doc}/changelog
  "dlcomm (${DL_VERSION}) unstable; urgency=medium\n\n"
  "  * Built by cpack from dlcomm ${DL_VERSION}.\n\n"
  " -- ${CPACK_PACKAGE_CONTACT}  ${dl_date}\n")
add_custom_command(OUTPUT ${dl_doc}/changelog.gz
  COMMAND ${GZIP_EXECUTABLE} -9nf -k ${dl_doc}/changelog
  DEPENDS ${dl_doc}/changelog VERBATIM)
add_custom_target(dlcomm_changelog ALL DEPENDS ${dl_doc}/changelog.gz)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${dl_doc}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
include(CPack)
