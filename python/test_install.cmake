# cmake --install into a staging DESTDIR with prefix /usr/local, then: the
# package sits in a directory that Debian's python3 has on sys.path for that
# prefix, and it imports and computes from there.
file(REMOVE_RECURSE ${WORK_DIR})
set(ENV{DESTDIR} ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix /usr/local
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${err}")
endif()
set(site ${WORK_DIR}/usr/local/${PY_DIR})
if(NOT EXISTS ${site}/plume/__init__.py)
  message(FATAL_ERROR "no plume/__init__.py under ${site}")
endif()
execute_process(COMMAND ${PYTHON} -c "import sys; print('/usr/local/${PY_DIR}' in sys.path)"
                OUTPUT_VARIABLE on_path OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT on_path STREQUAL "True")
  message(FATAL_ERROR "${PYTHON} does not search /usr/local/${PY_DIR}")
endif()
set(ENV{PYTHONPATH} ${site})
execute_process(COMMAND ${PYTHON} -c
  "import plume, os; m = plume.load_urdf('${CMAKE_CURRENT_LIST_DIR}/../models/pendulum.urdf'); print(os.path.dirname(plume.__file__), m.nv)"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${WORK_DIR})
if(NOT rc EQUAL 0 OR NOT out MATCHES "${site}/plume 1")
  message(FATAL_ERROR "the installed package does not import: ${out} ${err}")
endif()
message(STATUS "installed package: ${out}")
