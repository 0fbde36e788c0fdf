# Runs one example and checks its output (used by the examples' CTest tests):
#
#   cmake -DPROGRAM=<exe> [-DARGS=a|b|c] -DEXPECT=<regex>[|<regex>…]
#         [-DSTATUS=<n>] [-DEXPECT_ERR=<regex>[|<regex>…]] -P run_example.cmake
#
# ARGS, EXPECT and EXPECT_ERR are lists separated by '|'. The test passes when
# the program exits with status STATUS (default 0), its standard output
# matches every regex in EXPECT (each regex is one physical fact the example
# states and checks) and its standard error every regex in EXPECT_ERR.
if(NOT PROGRAM OR NOT DEFINED EXPECT)
  message(FATAL_ERROR "run_example.cmake needs -DPROGRAM=… and -DEXPECT=…")
endif()
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
message("${out}")
if(err)
  message("stderr:\n${err}")
endif()
if(NOT DEFINED STATUS OR STATUS STREQUAL "")
  set(STATUS 0)
endif()
if(NOT rc STREQUAL "${STATUS}")
  message(FATAL_ERROR "${PROGRAM} exited with status ${rc} (expected ${STATUS})")
endif()
string(REPLACE "|" ";" expectations "${EXPECT}")
foreach(regex IN LISTS expectations)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "the output of ${PROGRAM} does not match '${regex}'")
  endif()
endforeach()
string(REPLACE "|" ";" expectations "${EXPECT_ERR}")
foreach(regex IN LISTS expectations)
  if(NOT err MATCHES "${regex}")
    message(FATAL_ERROR "the standard error of ${PROGRAM} does not match '${regex}'")
  endif()
endforeach()
