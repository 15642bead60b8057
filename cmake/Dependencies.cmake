# Every dependency comes from Debian 12 packages (scripts/install-deps.sh), except the CUDA toolkit.
find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)

# Debian's libopencv-core-dev and libopencv-imgproc-dev ship headers and libraries but no CMake
# config (that lives in the libopencv-dev meta package, which drags in Qt 5, VTK, GDAL, ...).
find_path(OpenCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
foreach(module core imgproc)
  find_library(OpenCV_${module}_LIBRARY opencv_${module} REQUIRED)
  add_library(OpenCV::${module} SHARED IMPORTED)
  set_target_properties(OpenCV::${module} PROPERTIES
    IMPORTED_LOCATION "${OpenCV_${module}_LIBRARY}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${OpenCV_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenCV_INCLUDE_DIR}")
endforeach()
set_property(TARGET OpenCV::imgproc APPEND PROPERTY INTERFACE_LINK_LIBRARIES OpenCV::core)

# stb_image / stb_image_write: header-only; the implementation is compiled in engine/src/io/stb_impl.cpp
# with our own limits (STBI_MAX_DIMENSIONS) and only the formats we read.
find_path(STB_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb REQUIRED)
add_library(stb::headers INTERFACE IMPORTED)
set_target_properties(stb::headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${STB_INCLUDE_DIR}" INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${STB_INCLUDE_DIR}")

# OpenBLAS (libopenblas-dev) for the lab's CPU matrix product: cblas_sgemm/dgemm on all cores, the
# BLAS NumPy uses. Debian's openblas.pc points at the pthread build and at its own cblas.h.
find_package(PkgConfig REQUIRED)
pkg_check_modules(OpenBLAS REQUIRED IMPORTED_TARGET openblas)

# MPFR (libmpfr-dev) for the deep zoomer's big floats: reference orbits, Newton's method, the
# brute-force oracle of the tests. Used by engine .cpp files only (engine/src/internal/mpfr_real.hpp).
pkg_check_modules(MPFR REQUIRED IMPORTED_TARGET mpfr gmp)

# Image codecs (engine/src/io/codec_*.cpp): libjpeg-turbo's TurboJPEG API (libturbojpeg0-dev),
# libspng (libspng-dev), libtiff (libtiff-dev); zlib for PNG's CRC-32.
pkg_check_modules(TurboJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
pkg_check_modules(JPEG REQUIRED IMPORTED_TARGET libjpeg)  # its libjpeg API decodes (warnings as errors)
pkg_check_modules(SPNG REQUIRED IMPORTED_TARGET spng)
pkg_check_modules(TIFF REQUIRED IMPORTED_TARGET libtiff-4)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)

if(GPULAB_BUILD_GUI)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets)
endif()
if(GPULAB_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
