# How the integration and interop suites (conformance, deploy, cluster, ...)
# register their CTest tests, so that each sets the same properties the same way. Included from
# tests/CMakeLists.txt before the suites' directories are added.

# framegate_add_test(<name> COMMAND <command...> ENVIRONMENT <VAR=value...> TIMEOUT <seconds>
#                    LABELS <label...> [WORKING_DIRECTORY <dir>])
# The test runs in the calling directory's source folder, where
# `python3 -m unittest <module>` finds its module, unless WORKING_DIRECTORY
# says otherwise.
function(framegate_add_test name)
  cmake_parse_arguments(arg "" "TIMEOUT;WORKING_DIRECTORY" "COMMAND;ENVIRONMENT;LABELS" ${ARGN})
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_COMMAND OR NOT arg_ENVIRONMENT OR NOT arg_TIMEOUT OR NOT arg_LABELS)
    message(FATAL_ERROR "framegate_add_test(${name}): needs COMMAND, ENVIRONMENT, TIMEOUT and LABELS, and "
                        "nothing else but WORKING_DIRECTORY (got: ${ARGN})")
  endif()
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${arg_COMMAND} WORKING_DIRECTORY ${arg_WORKING_DIRECTORY})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "${arg_ENVIRONMENT}"
    TIMEOUT ${arg_TIMEOUT}
    LABELS "${arg_LABELS}")
endfunction()

# framegate_add_node_test(<name> <script> <framegate_add_test options but COMMAND...>)
# A node:test file next to the calling CMakeLists.txt, its cases run one
# after another (--test-concurrency=1), each with the cluster it starts.
function(framegate_add_node_test name script)
  framegate_add_test(${name} COMMAND node --test --test-concurrency=1 ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${ARGN})
endfunction()

# The environment that tells a test where the gateway and worker binaries are.
set(FRAMEGATE_CLUSTER_TEST_ENV
    "FRAMEGATE_GATEWAY_BIN=$<TARGET_FILE:framegate-gateway>;FRAMEGATE_WORKER_BIN=$<TARGET_FILE:framegate-worker>")
