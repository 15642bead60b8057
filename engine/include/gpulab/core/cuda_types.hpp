// The CUDA handle types the engine's public API names, declared exactly as the CUDA runtime
// declares them (driver_types.h), so front ends can hold a stream without including any CUDA header.
#pragma once

struct CUstream_st;
struct CUevent_st;
typedef struct CUstream_st* cudaStream_t;  // NOLINT(modernize-use-using): the runtime's own spelling
typedef struct CUevent_st* cudaEvent_t;    // NOLINT(modernize-use-using)
