# dlcomm's version: one string for `dlcomm version`, run.json and the .deb,
# so it must be a valid Debian version with no "-" (which Debian reads as a
# revision). From git describe of the source tree:
#   a release tag T (v0.2.0 or 0.2.0), built as it is     T
#   N commits after it                                    T+N.gHASH
#   before the first tag                                  PROJECT~N.gHASH
#     (N: every commit; "~" sorts below the release PROJECT itself)
#   a modified tree                                       ... .dirty
# Outside git: the project's version. Also runs as a script, for the tests:
#   cmake -DSOURCE=DIR -DPROJECT=0.1.0 -P packaging/version.cmake
function(dl_git source out)
  find_program(DL_GIT git)
  execute_process(COMMAND ${DL_GIT} ${ARGN} WORKING_DIRECTORY ${source}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT DL_GIT OR NOT rc EQUAL 0)
    set(text "")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(dl_version_from_git out source project)
  set(version "${project}")
  set(sep "+")
  dl_git(${source} describe describe --tags --long --dirty --match "*[0-9]*")
  if(NOT describe) # no tag yet: count every commit
    set(sep "~")
    dl_git(${source} count rev-list --count HEAD)
    dl_git(${source} hash describe --always --abbrev=7 --dirty)
    if(count AND hash)
      set(describe "${project}-${count}-g${hash}")
    endif()
  endif()
  if(describe MATCHES "^v?([0-9][0-9A-Za-z.+~]*)-([0-9]+)-g([0-9a-f]+)(-dirty)?$")
    set(version "${CMAKE_MATCH_1}")
    if(NOT (CMAKE_MATCH_2 EQUAL 0 AND sep STREQUAL "+")) # not a tag built as it is
      string(APPEND version "${sep}${CMAKE_MATCH_2}.g${CMAKE_MATCH_3}")
    endif()
    if(CMAKE_MATCH_4)
      string(APPEND version ".dirty")
    endif()
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND SOURCE)
  dl_version_from_git(v "${SOURCE}" "${PROJECT}")
  message("${v}")
endif()
