# Finds nvcc before project() enables CUDA: it is often not on PATH (/usr/local/cuda/bin).
# Without it the configure stops with one line saying what to install.
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(GPULAB_NVCC nvcc
    HINTS ENV CUDA_PATH ENV CUDA_HOME
    PATHS /usr/local/cuda /usr/local/cuda-13.0 /usr/local/cuda-12 /opt/cuda
    PATH_SUFFIXES bin)
  if(NOT GPULAB_NVCC)
    message(FATAL_ERROR "gpulab needs the CUDA toolkit (nvcc): install CUDA 12 or 13 from NVIDIA "
                        "(https://developer.nvidia.com/cuda-downloads) so that /usr/local/cuda/bin/nvcc exists.")
  endif()
  set(CMAKE_CUDA_COMPILER "${GPULAB_NVCC}" CACHE FILEPATH "CUDA compiler")
endif()
