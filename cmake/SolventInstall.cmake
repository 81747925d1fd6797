# pkg-config file and CMake package configuration for installed Solvent.
include(CMakePackageConfigHelpers)

set(SV_PC_LIBS_PRIVATE "")
foreach(lib ${SV_LAPACKE_LIBRARY} ${SV_OPENBLAS_LIBRARY} ${SV_AMD_LIBRARY} ${SV_SSCONFIG_LIBRARY} ${SV_CJSON_LIBRARY})
  string(APPEND SV_PC_LIBS_PRIVATE " ${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/solvent.pc.in ${PROJECT_BINARY_DIR}/solvent.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/solvent.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT SolventTargets NAMESPACE Solvent:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Solvent)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SolventConfig.cmake.in
  ${PROJECT_BINARY_DIR}/SolventConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Solvent)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SolventConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/SolventConfig.cmake ${PROJECT_BINARY_DIR}/SolventConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Solvent)
