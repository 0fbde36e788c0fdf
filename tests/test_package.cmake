# The installed package, end to end (CTest test package_install_and_consume):
#
# 1. `cmake --install` the already-built tree into WORK_DIR/install, then move
#    the prefix elsewhere (WORK_DIR/moved): the package must be relocatable;
# 2. check the layout, and run the installed `plume` program;
# 3. configure, build and run examples/link_from_controller against the moved
#    prefix with find_package(plume) — it must find plume's models through
#    plume_MODELS_DIR and keep the quadruped standing;
# 4. compile and run tests/test_package.cpp with the flags of `pkg-config
#    plume` (when pkg-config is installed).
#
# Variables (-D): PLUME_SOURCE_DIR, PLUME_BINARY_DIR, WORK_DIR, GENERATOR,
# CXX_COMPILER, LAUNCHER (optional), LIBDIR, BINDIR, INCLUDEDIR, DATADIR,
# CONFIG (for multi-config generators), SANITIZE (ON when plume was built
# with the sanitizers: the consumers then link with them too).
cmake_minimum_required(VERSION 3.22)

foreach(var PLUME_SOURCE_DIR PLUME_BINARY_DIR WORK_DIR GENERATOR CXX_COMPILER LIBDIR BINDIR INCLUDEDIR DATADIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "test_package.cmake: -D${var}=… is required")
  endif()
endforeach()

# run(<what> COMMAND …): runs a command, prints its output, fails on a non-zero status.
function(run what)
  cmake_parse_arguments(PARSE_ARGV 1 X "" "OUTPUT;WORKING_DIRECTORY" "COMMAND")
  if(NOT X_WORKING_DIRECTORY)
    set(X_WORKING_DIRECTORY "${WORK_DIR}")
  endif()
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${X_COMMAND} WORKING_DIRECTORY "${X_WORKING_DIRECTORY}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP stop "%s")
  math(EXPR seconds "${stop} - ${start}")
  message("---- ${what} (${seconds} s)")
  if(NOT rc STREQUAL "0")
    message("${out}\n${err}")
    message(FATAL_ERROR "${what} failed (status ${rc}): ${X_COMMAND}")
  endif()
  if(X_OUTPUT)
    set(${X_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

set(prefix "${WORK_DIR}/install")
set(moved "${WORK_DIR}/moved")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---- 1. install and move ----------------------------------------------------------
set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run("install to ${prefix}" COMMAND "${CMAKE_COMMAND}" --install "${PLUME_BINARY_DIR}" --prefix "${prefix}" ${config_args})
file(RENAME "${prefix}" "${moved}")

# ---- 2. layout --------------------------------------------------------------------
set(expected
  "${INCLUDEDIR}/plume/plume.hpp"
  "${INCLUDEDIR}/plume/version.hpp"
  "${INCLUDEDIR}/plume/sim/simulator.hpp"
  "${LIBDIR}/cmake/plume/plumeConfig.cmake"
  "${LIBDIR}/cmake/plume/plumeConfigVersion.cmake"
  "${LIBDIR}/cmake/plume/plumeTargets.cmake"
  "${LIBDIR}/pkgconfig/plume.pc"
  "${DATADIR}/plume/models/quadruped.urdf"
  "${DATADIR}/plume/models/worlds/bouncing_ball.xml")
foreach(file IN LISTS expected)
  if(NOT EXISTS "${moved}/${file}")
    message(FATAL_ERROR "the installed tree lacks ${file}")
  endif()
endforeach()
file(GLOB libraries "${moved}/${LIBDIR}/libplume.*")
if(NOT libraries)
  message(FATAL_ERROR "the installed tree lacks ${LIBDIR}/libplume.a (or .so)")
endif()
if(EXISTS "${moved}/${BINDIR}/plume")
  run("installed plume program" COMMAND "${moved}/${BINDIR}/plume" info
      "${moved}/${DATADIR}/plume/models/quadruped.urdf" --root free OUTPUT info)
  if(NOT info MATCHES "nv")
    message(FATAL_ERROR "plume info printed no model:\n${info}")
  endif()
else()
  message("---- no plume program installed (PLUME_BUILD_APPS=OFF)")
endif()

# ---- 3. a CMake consumer ------------------------------------------------------------
set(consumer_args
  -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=${moved}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(LAUNCHER)
  list(APPEND consumer_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
set(sanitize_flags)
if(SANITIZE)
  set(sanitize_flags -fsanitize=address,undefined)
  list(APPEND consumer_args "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
run("configure examples/link_from_controller"
    COMMAND "${CMAKE_COMMAND}" -S "${PLUME_SOURCE_DIR}/examples/link_from_controller"
            -B "${WORK_DIR}/consumer" ${consumer_args})
run("build examples/link_from_controller" COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer" -j2)
find_program(exe link_from_controller PATHS "${WORK_DIR}/consumer" "${WORK_DIR}/consumer/Release" NO_DEFAULT_PATH)
run("run link_from_controller (models from the moved prefix)" COMMAND "${exe}" OUTPUT out)
message("${out}")
if(NOT out MATCHES "standing: yes")
  message(FATAL_ERROR "link_from_controller did not report 'standing: yes'")
endif()

# ---- 4. a pkg-config consumer ---------------------------------------------------------
find_program(PKG_CONFIG_EXECUTABLE pkg-config)
if(PKG_CONFIG_EXECUTABLE)
  set(ENV{PKG_CONFIG_PATH} "${moved}/${LIBDIR}/pkgconfig")
  run("pkg-config --cflags --libs plume" COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags --libs plume OUTPUT flags)
  string(STRIP "${flags}" flags)
  message("${flags}")
  string(FIND "${flags}" "-I${moved}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pkg-config does not point into the moved prefix: ${flags}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(compile "${CXX_COMPILER}")
  if(LAUNCHER)
    set(compile "${LAUNCHER}" "${CXX_COMPILER}")
  endif()
  run("compile tests/test_package.cpp with pkg-config's flags"
      COMMAND ${compile} -std=c++17 -O1 ${sanitize_flags} "${PLUME_SOURCE_DIR}/tests/test_package.cpp"
              -o "${WORK_DIR}/pkgconfig_consumer" ${flags})
  # pkg-config gives no run path: a shared libplume is found through LD_LIBRARY_PATH.
  run("run the pkg-config consumer" COMMAND "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${moved}/${LIBDIR}"
      "${WORK_DIR}/pkgconfig_consumer"
      "${moved}/${DATADIR}/plume/models/pendulum.urdf" OUTPUT out)
  message("${out}")
else()
  message("---- pkg-config not found: the pkg-config consumer is skipped")
endif()

file(REMOVE_RECURSE "${WORK_DIR}/moved" "${WORK_DIR}/consumer")
message("---- the installed package works")
