# CPack: `cpack -G DEB` in the build folder (scripts/package.sh does the whole thing) makes
# gpulab_<version>_<arch>.deb from the install rules (cmake/Install.cmake), for Debian 12.
#
# Depends lists the Debian 12 packages of the runtime libraries by hand rather than through
# CPACK_DEBIAN_PACKAGE_SHLIBDEPS: cuFFT and cuBLAS come from NVIDIA's CUDA toolkit, which is no
# Debian package (dpkg-shlibdeps finds no package for them, or NVIDIA's own repository names that
# the package should not require), and Qt's platform and SVG plugins are loaded at run time, so
# dpkg-shlibdeps cannot see them. scripts/package.sh checks the list against dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME gpulab)
set(CPACK_PACKAGE_VENDOR "the gpulab authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU image processing with CPU timings side by side")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "the gpulab authors")
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
# The body under the summary line; CPack indents it and turns the empty line into " .".
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "gpulab (the Qt 6 desktop application) and gpulab-cli run box blur, Sobel, 2D
convolution and FFT filtering on the GPU with CUDA, and the same operations on
the CPU with OpenCV, timing both; a Mandelbrot explorer zooms to any depth and
a lab measures matrix products, transposes, transfers and reductions.

The GPU paths need an NVIDIA driver and the CUDA toolkit ${CUDAToolkit_VERSION_MAJOR} (cuFFT, cuBLAS),
installed from NVIDIA: the toolkit is not a Debian package and is therefore
not listed in Depends. Without a GPU the CPU paths keep working.")
set(GPULAB_DEB_DEPENDS
  "libc6 (>= 2.35)" "libgcc-s1 (>= 4.0)" "libstdc++6 (>= 11)"
  "libopencv-core406 (>= 4.6.0+dfsg)" "libopencv-imgproc406 (>= 4.6.0+dfsg)" libopenblas0 "libmpfr6 (>= 3.1.3)")
if(GPULAB_BUILD_GUI)
  list(APPEND GPULAB_DEB_DEPENDS
    "libqt6core6 (>= 6.4.0)" "libqt6gui6 (>= 6.1.2)" "libqt6widgets6 (>= 6.4.0)" qt6-qpa-plugins libqt6svg6)
endif()
list(JOIN GPULAB_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

set(CPACK_GENERATOR DEB)
include(CPack)
