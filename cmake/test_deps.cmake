# test_deps.cmake - what the test suite and the benchmarks need beyond the
# product's build packages, checked in one place so that WH_BUILD_TESTS=AUTO
# (CMakeLists.txt) can leave them out on a machine that has only the build
# packages and say why.  scripts/deps.sh's test_pkgs installs all of it;
# tests/fresh-machine proves that a configure without them succeeds.

# wh_test_deps(<out>): <out> is TRUE when tests/ and bench/ are to be
# configured.  WH_BUILD_TESTS=ON fails the configure when something is missing.
function(wh_test_deps out)
  if(NOT WH_BUILD_TESTS STREQUAL "AUTO" AND NOT WH_BUILD_TESTS)
    message(STATUS "Tests and benchmarks: not configured (WH_BUILD_TESTS=${WH_BUILD_TESTS})")
    set(${out} FALSE PARENT_SCOPE)
    return()
  endif()
  set(missing "")
  pkg_check_modules(CMOCKA QUIET IMPORTED_TARGET cmocka)
  if(NOT CMOCKA_FOUND)
    list(APPEND missing "cmocka (libcmocka-dev)")
  endif()
  # The test scripts use Debian's python3-yaml and python3-jsonpatch, installed
  # for /usr/bin/python3, whatever other python3 is on PATH.
  if(EXISTS /usr/bin/python3 AND NOT Python3_EXECUTABLE)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python for the test scripts")
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(NOT Python3_Interpreter_FOUND)
    list(APPEND missing "python3")
  else()
    foreach(mod yaml jsonpatch)
      execute_process(COMMAND ${Python3_EXECUTABLE} -c "import ${mod}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(NOT rc EQUAL 0)
        list(APPEND missing "the Python module ${mod} (python3-${mod})")
      endif()
    endforeach()
  endif()
  foreach(prog curl nghttp)
    find_program(WH_TEST_${prog} ${prog})
    if(NOT WH_TEST_${prog})
      list(APPEND missing "${prog}")
    endif()
  endforeach()
  if(missing STREQUAL "")
    set(${out} TRUE PARENT_SCOPE)
    return()
  endif()
  list(JOIN missing ", " what)
  if(WH_BUILD_TESTS STREQUAL "AUTO")
    message(WARNING "Tests and benchmarks: not configured, missing ${what}. "
                    "webhookd and webhookctl build as usual; `scripts/deps.sh test` installs what the tests need.")
    set(${out} FALSE PARENT_SCOPE)
  else()
    message(FATAL_ERROR "WH_BUILD_TESTS=${WH_BUILD_TESTS} but the tests need ${what}: run `scripts/deps.sh test`")
  endif()
endfunction()
