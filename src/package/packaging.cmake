# CPack: `cpack -G DEB` and `cpack -G TGZ` in the build directory (scripts/package) make accel_<version>_<arch>.deb,
# installing under /usr, and a .tar.gz of the same tree (bin/, lib/, libexec/accel/, include/, the CMake package).
set(CPACK_PACKAGE_NAME accel)
set(CPACK_PACKAGE_VENDOR accel)
set(CPACK_PACKAGE_CONTACT "accel maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "GPU library runtime and text-embedding engine: the accel CLI and server, libaccel and its C++ headers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The package's dependencies are read off its binaries by dpkg-shlibdeps (dpkg-dev): the Debian packages that own
# OpenBLAS, FFTW, spdlog, PCRE2... The CUDA toolkit's libraries are not Debian's, so a CUDA build's .deb states
# none of them; it expects the toolkit (and a driver) installed as the README says.
# OpenBLAS by name: its OpenMP build is the one accel links (by path, in its own directory), where shlibdeps would
# accept any of Debian's three.
set(CPACK_DEBIAN_PACKAGE_DEPENDS libopenblas0-openmp)
if(ACCEL_HAVE_CUDA)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
# The .deb installs under /usr; the .tar.gz is relocatable (paths relative to where it is unpacked).
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack_per_generator.cmake)
include(CPack)
