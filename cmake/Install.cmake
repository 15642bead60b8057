# What `cmake --install` puts under CMAKE_INSTALL_PREFIX (the GNU layout; /usr in the .deb):
#   bin/gpulab, bin/gpulab-cli
#   share/gpulab/                   the bundled photos and their credits; gpulab finds them as
#                                   <bin>/../share/gpulab (app/gui/shell/resource_paths.cpp)
#   share/applications/, share/icons/hicolor/scalable/apps/, share/metainfo/
#                                   the desktop entry, icon and AppStream data (packaging/)
#   share/doc/gpulab/               LICENSE and README.md
include(GNUInstallDirs)

# The freedesktop/AppStream id: names the desktop file, the icon and the metainfo file.
set(GPULAB_APP_ID org.gpulab.gpulab)

# cuFFT and cuBLAS come from the CUDA toolkit, which is not a Debian package and whose installer
# does not always add its library folder to ld.so.conf: the installed programs look there, in the
# folder they were linked against and in NVIDIA's default /usr/local/cuda/lib64.
set(GPULAB_INSTALL_RPATH "")
foreach(dir ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES AND NOT dir IN_LIST GPULAB_INSTALL_RPATH)
    list(APPEND GPULAB_INSTALL_RPATH ${dir})
  endif()
endforeach()

# Installs a program into bin/ with the run path above.
function(gpulab_install_program target)
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${GPULAB_INSTALL_RPATH}")
  install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
