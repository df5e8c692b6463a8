# Installation for other projects: the libraries, the header, a pkg-config
# file and a CMake package (find_package(lazytensor) gives the imported
# targets lazytensor::lazytensor, shared, and lazytensor::lazytensor_static).
# `make install` runs this with PREFIX (default /usr/local) and DESTDIR.
include(CMakePackageConfigHelpers)

set(LT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lazytensor)
set_target_properties(lazytensor_static PROPERTIES EXPORT_NAME lazytensor_static)
install(TARGETS lazytensor lazytensor_static EXPORT lazytensorTargets)
install(FILES ${CMAKE_SOURCE_DIR}/include/lazytensor.h TYPE INCLUDE)
install(EXPORT lazytensorTargets NAMESPACE lazytensor:: DESTINATION ${LT_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/lazytensorConfig.cmake.in
  ${CMAKE_BINARY_DIR}/lazytensorConfig.cmake INSTALL_DESTINATION ${LT_CMAKE_DIR})
# 0.x: a new minor version may change the API
write_basic_package_version_file(${CMAKE_BINARY_DIR}/lazytensorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/lazytensorConfig.cmake ${CMAKE_BINARY_DIR}/lazytensorConfigVersion.cmake
        DESTINATION ${LT_CMAKE_DIR})

# lazytensor.pc is written when it is installed, so that its prefix is the
# one installed to (`cmake --install --prefix` may differ from the
# configured one). The static library's dependencies go to Libs.private:
# OpenBLAS's pthreads build by its own folder, with an RPATH to it (the
# default libopenblas.so.0 may be another build, see CMakeLists.txt).
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(LT_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(LT_PC_${dir} "\\\${prefix}/${CMAKE_INSTALL_${dir}}") # ${prefix} in the file
  endif()
endforeach()
string(REGEX REPLACE "/$" "" LT_PC_OPENBLAS_LIBDIR "${OPENBLAS_PTHREAD_LIBRARY_DIRS}")
list(JOIN LT_SAN_FLAGS " " LT_PC_SAN_FLAGS)
set(LT_PC_DNNL_LIBS "")
if(LT_DNNL_LIB AND LT_GOMP_LIB)
  set(LT_PC_DNNL_LIBS "-ldnnl -lgomp ")
endif()
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(LT_PC_LIBDIR \"${LT_PC_LIBDIR}\")
  set(LT_PC_INCLUDEDIR \"${LT_PC_INCLUDEDIR}\")
  set(LT_PC_OPENBLAS_LIBDIR \"${LT_PC_OPENBLAS_LIBDIR}\")
  set(LT_PC_SAN_FLAGS \"${LT_PC_SAN_FLAGS}\")
  set(LT_PC_DNNL_LIBS \"${LT_PC_DNNL_LIBS}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/cmake/lazytensor.pc.in\" \"${CMAKE_BINARY_DIR}/lazytensor.pc\" @ONLY)
  file(INSTALL \"${CMAKE_BINARY_DIR}/lazytensor.pc\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
")
