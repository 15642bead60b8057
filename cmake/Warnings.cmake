# Per-target warnings and CUDA flags; nothing goes into the global CMAKE_*_FLAGS.
function(gpulab_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra>)
  if(GPULAB_DEBUG_SYNC)
    target_compile_definitions(${target} PRIVATE GPULAB_DEBUG_SYNC=1)
  endif()
endfunction()
