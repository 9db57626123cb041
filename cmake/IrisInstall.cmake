# Installing iris-lua like any CMake project (issue 27): `cmake --install build --prefix P` puts under P
#   bin/iris-lua                         the binary (it carries its device header, kernels, Lua and labs)
#   lib/libirislua.a                     the embeddable host: every layer's objects in one archive
#   include/iris/host.hpp                its interface (iris::Host)
#   lib/cmake/IrisLua/                   the CMake package: find_package(IrisLua) gives IrisLua::host
# and CPack makes a Debian package of the same files (cpack -G DEB in the build folder).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(iris_layers GLOBAL PROPERTY IRIS_LAYER_TARGETS)
set(iris_layer_objects "")
foreach(layer IN LISTS iris_layers)
  list(APPEND iris_layer_objects $<TARGET_OBJECTS:${layer}>)
endforeach()
add_library(irislua STATIC ${iris_layer_objects})
set_target_properties(irislua PROPERTIES ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)

# What a program that embeds the host links besides the archive: the layers' own dependencies, as the
# files and flags this build found (MPI and Threads are found again by the package, as imported targets).
set(IRIS_HOST_LINK ${LUAJIT_LIBRARY} ${IRIS_BOOST_CONTEXT_LIBRARY})
if(IRIS_HAVE_LIBEDIT)
  list(APPEND IRIS_HOST_LINK ${LIBEDIT_LINK})
endif()
list(APPEND IRIS_HOST_LINK ${CMAKE_DL_LIBS} m rt)

install(TARGETS iris-lua RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS irislua ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/iris/host.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iris)

set(IRIS_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/IrisLua)
set(IRIS_HOST_ARCHIVE ${CMAKE_INSTALL_LIBDIR}/libirislua.a)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/IrisLuaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/IrisLuaConfig.cmake INSTALL_DESTINATION ${IRIS_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR IRIS_HOST_ARCHIVE)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/IrisLuaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/IrisLuaConfig.cmake ${PROJECT_BINARY_DIR}/package/IrisLuaConfigVersion.cmake
  DESTINATION ${IRIS_PACKAGE_DIR})

# The Debian package: the same files under /usr. Its dependencies are the Debian packages of the
# libraries the binary loads (dpkg-shlibdeps finds them), and Open MPI for the launcher.
set(CPACK_PACKAGE_NAME iris-lua)
set(CPACK_PACKAGE_VENDOR "iris-lua")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Lua scripts that program several GPUs as one (symmetric heap, run-time compiled kernels)")
set(CPACK_PACKAGE_CONTACT "iris-lua developers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin, g++")
include(CPack)
