# The pkg-config file plume.pc, installed to <libdir>/pkgconfig.
#
# - Relocatable: prefix is found from the .pc file's own location
#   (${pcfiledir}), so the installed tree can be moved.
# - A static libplume (the default) needs its dependencies on every link line,
#   so they are in Requires; a shared one needs only its public dependency
#   (Eigen, through the headers) there and the others in Requires.private.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(PLUME_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(PLUME_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PLUME_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _plume_up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  set(PLUME_PC_PREFIX "\${pcfiledir}/${_plume_up}")
endif()
if(BUILD_SHARED_LIBS)
  set(PLUME_PC_REQUIRES "eigen3")
  set(PLUME_PC_REQUIRES_PRIVATE "urdfdom tinyxml2 assimp qhull_r sleef")
else()
  set(PLUME_PC_REQUIRES "eigen3 urdfdom tinyxml2 assimp qhull_r sleef")
  set(PLUME_PC_REQUIRES_PRIVATE "")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/plume.pc.in ${PROJECT_BINARY_DIR}/plume.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/plume.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
