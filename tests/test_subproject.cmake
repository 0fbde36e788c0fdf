# plume as a subproject, without installing (CTest test subproject_fetchcontent):
# configures examples/use_with_fetchcontent with FETCHCONTENT_SOURCE_DIR_PLUME
# pointing at this source tree (FetchContent then adds it with
# add_subdirectory and downloads nothing), builds plume's library and the
# controller inside that project, and runs the controller.
#
# Variables (-D): PLUME_SOURCE_DIR, WORK_DIR, GENERATOR, CXX_COMPILER,
# LAUNCHER (optional).
cmake_minimum_required(VERSION 3.22)

foreach(var PLUME_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "test_subproject.cmake: -D${var}=… is required")
  endif()
endforeach()

function(run what)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP stop "%s")
  math(EXPR seconds "${stop} - ${start}")
  message("---- ${what} (${seconds} s)")
  if(NOT rc STREQUAL "0")
    message("${out}\n${err}")
    message(FATAL_ERROR "${what} failed (status ${rc})")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(args -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
         "-DFETCHCONTENT_SOURCE_DIR_PLUME=${PLUME_SOURCE_DIR}")
if(LAUNCHER)
  list(APPEND args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run("configure examples/use_with_fetchcontent" "${CMAKE_COMMAND}"
    -S "${PLUME_SOURCE_DIR}/examples/use_with_fetchcontent" -B "${WORK_DIR}" ${args})
run("build plume and the controller as one project" "${CMAKE_COMMAND}" --build "${WORK_DIR}" -j2)
find_program(exe controller PATHS "${WORK_DIR}" "${WORK_DIR}/Release" NO_DEFAULT_PATH)
run("run the controller" "${exe}")
message("${output}")
if(NOT output MATCHES "standing: yes")
  message(FATAL_ERROR "the controller did not report 'standing: yes'")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
