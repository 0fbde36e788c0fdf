# Runs README.md's ```python block with the built package, from the
# repository root, so that the Python quick start a user copies works.
file(READ "${README}" readme)
string(FIND "${readme}" "```python\n" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${README} has no ```python block")
endif()
math(EXPR start "${start} + 10")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "```" stop)
string(SUBSTRING "${rest}" 0 ${stop} block)
file(WRITE "${OUT}" "${block}")
execute_process(COMMAND ${PYTHON} ${OUT} WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^finished \\[0\\.451")
  message(FATAL_ERROR "README's Python block failed (${rc}): ${out} ${err}")
endif()
message(STATUS "README Python block: ${out}")
