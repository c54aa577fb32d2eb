# Helpers shared by every directory.
#
# sriovdra_library(NAME SOURCES ... DEPS ...): one library per lib/ directory, with lib/ as the
# include root ("kube/client.h").
function(sriovdra_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/lib)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# The tests that need no control plane (labels unit and host), built together by
# `cmake --build B --target unit_and_host_tests` (scripts/test.sh --sanitize).
add_custom_target(unit_and_host_tests)

# sriovdra_test(NAME SOURCES ... DEPS ... LABELS unit|integration [TIMEOUT s]): one Catch2
# binary = one ctest test, so an integration binary starts one control plane for all its cases.
function(sriovdra_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} sriovdra_test_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name} --durations yes)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  # 77: some checks could not run here (tests/support/skip.h); ctest reports the test skipped.
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    SKIP_RETURN_CODE 77)
  if("unit" IN_LIST ARG_LABELS OR "host" IN_LIST ARG_LABELS)
    add_dependencies(unit_and_host_tests ${name})
  endif()
endfunction()
