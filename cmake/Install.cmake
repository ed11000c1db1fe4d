# Install rules: the public headers, the layer archives, a CMake package (find_package(simplecpp)
# gives simplecpp::simplecpp) and a pkg-config file.
#
# One archive per layer, as built: the exported targets carry the link order (simplecpp -> graph
# -> kernels -> quant -> core) to CMake consumers and simplecpp.pc lists it for the others, so
# nothing has to merge archives (which CMake cannot do portably).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SIMPLECPP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/simplecpp)
set(SIMPLECPP_LAYER_TARGETS simplecpp simplecpp_graph simplecpp_kernels simplecpp_quant simplecpp_core)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/simplecpp/include/simplecpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS ${SIMPLECPP_LAYER_TARGETS} EXPORT simplecpp-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET simplecpp_cli)
  install(TARGETS simplecpp_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# The shared C API library for run-time loaders (bindings/python); not part of the CMake package.
if(TARGET simplecpp_c)
  install(TARGETS simplecpp_c LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(EXPORT simplecpp-targets NAMESPACE simplecpp:: DESTINATION ${SIMPLECPP_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/simplecpp-config.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/simplecpp-config.cmake INSTALL_DESTINATION ${SIMPLECPP_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/simplecpp-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/simplecpp-config.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/simplecpp-config-version.cmake
        DESTINATION ${SIMPLECPP_INSTALL_CMAKEDIR})

# pkg-config: prefix is found from the .pc file's own folder (${pcfiledir}), so the file is right
# for any `cmake --install --prefix` and after the installed tree is moved.
file(RELATIVE_PATH SIMPLECPP_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SIMPLECPP_PC_TO_PREFIX "${SIMPLECPP_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/simplecpp.pc.in ${CMAKE_CURRENT_BINARY_DIR}/simplecpp.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/simplecpp.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
