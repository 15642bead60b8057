# What `--version` prints: the project version and the `git describe` of the source tree, taken at
# every build (not only at configure), so a binary names the commit it was built from. Outside a
# git checkout (a source tarball) the describe is empty and --version prints the project version.
#
#   gpulab_use_build_version(<target>)   lets <target> #include "gpulab_build_version.hpp", which
#                                        defines GPULAB_VERSION_STRING, e.g. "0.1.0 (git 1a2b3c4)"
#
# The header is rewritten only when its text changes (file(CONFIGURE)), so an unchanged tree
# recompiles nothing; include it from as few files as possible (the programs' main.cpp).
set(GPULAB_BUILD_VERSION_DIR ${PROJECT_BINARY_DIR}/generated)
set(GPULAB_BUILD_VERSION_HEADER ${GPULAB_BUILD_VERSION_DIR}/gpulab_build_version.hpp)

add_custom_target(gpulab_build_version
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT=${GPULAB_BUILD_VERSION_HEADER}
          -DPROJECT_VERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_DIR}/WriteBuildVersion.cmake
  BYPRODUCTS ${GPULAB_BUILD_VERSION_HEADER}
  COMMENT "Reading the git describe for --version"
  VERBATIM)

function(gpulab_use_build_version target)
  add_dependencies(${target} gpulab_build_version)
  target_include_directories(${target} PRIVATE ${GPULAB_BUILD_VERSION_DIR})
endfunction()
