// The FFT filter in three passes over memory, for f32 transforms whose sides are powers of two
// (kFusedFftMinSide..kFusedFftMaxSide): our own shared-memory FFTs instead of cuFFT's R2C, mask
// kernel and C2R.
//
//   1. rows forward   each row's real FFT (a W/2-point complex FFT of its even and odd samples, then
//                     the split into bins 0..W/2), written transposed: column kx of the half spectrum
//                     is contiguous, so pass 2 reads whole columns.
//   2. columns        each column's H-point FFT, the gain times 1/(W H) at every bin, the inverse FFT,
//                     all in shared memory: one read and one write of the half spectrum.
//   3. rows inverse   the real inverse of pass 1, back into the image's pitched rows.
//
// Each FFT is decimation in frequency with radix-16 passes (a radix-2, 4 or 8 pass last when log2 N
// is not a multiple of 4); every pass leaves the data in place, so the spectrum sits in digit-reversed
// order between the forward and the inverse passes, which mirror them (decimation in time); the row
// passes put their spectra in natural order through registers. Twiddles come from one table
// computed in double (launchFftTwiddles).
//
// The half spectrum buffer holds planes of (W/2 + 1) columns of H complex values (the transpose of
// cuFFT's layout, the same size).
#pragma once

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include "gpulab/kernels/fft_filter.cuh"
#include "gpulab/kernels/plane.cuh"

namespace gpulab::kernels {

inline constexpr int kFusedFftMinSide = 32;
inline constexpr int kFusedFftMaxSide = 8192;
/// The twiddle table: kFftBaseTwiddles values e^(-2 pi i m / 8192) (the real-FFT splits), then for
/// each sub-transform length L = 32, 64, ..., 8192 the L values e^(-2 pi i t s / L) of its radix-16
/// pass at (L - 32) + s * (L / 16) + t, so a pass's threads, consecutive in t, read consecutive
/// twiddles (one value a butterfly from a table in m made each warp's load touch 32 cache lines).
inline constexpr int kFftBaseTwiddles = kFusedFftMaxSide;
inline constexpr int kFftTwiddleCount = kFftBaseTwiddles + 2 * kFusedFftMaxSide - 32;

/// True when an fftWidth x fftHeight transform takes the fused path: both sides powers of two in
/// [kFusedFftMinSide, kFusedFftMaxSide].
bool fusedFftFilterSupports(int fftWidth, int fftHeight) noexcept;

/// Fills `table` (kFftTwiddleCount values) with the twiddles, computed in double and rounded.
void launchFftTwiddles(float2* table, cudaStream_t stream);

/// Pass 1: rows 0..H-1 of each of `planes` planes of `stack` (plane p is rows p*H .. p*H + H-1;
/// width W) into `spectrum` (planes x (W/2 + 1) x H complex). maxBits: the input's largest finite
/// |sample| as launchMaxFiniteAbs<float> leaves it, or null for input that needs no range scaling
/// (u8): the input is scaled by 2^-e on the GPU (fftRangeExponentOf), with no wait for the host.
void launchFusedRowsForward(Plane<const float> stack, int planes, float2* spectrum, const float2* twiddles,
                            const unsigned long long* maxBits, cudaStream_t stream);
/// Pass 2: every column of the half spectra of a W x H transform, filtered by `mask` and scaled by
/// `scale`, in place.
void launchFusedColumnsFilter(float2* spectrum, int fftWidth, int fftHeight, int planes, FreqMask mask, float scale,
                              const float2* twiddles, cudaStream_t stream);
/// Pass 3: the real inverse of pass 1 into `stack` (the same layout as pass 1's input), times 2^e
/// (descalePow2) when pass 1 scaled. Unnormalised: pass 2's scale carries the 1/(W H).
void launchFusedRowsInverse(const float2* spectrum, Plane<float> stack, int planes, const float2* twiddles,
                            const unsigned long long* maxBits, cudaStream_t stream);

/// The three passes' thread code run on the host, one block and one thread after another (host
/// pointers; `twiddles` from fftTwiddlesOnHost), range scaling included: what the tests check
/// without a GPU.
void runFusedFftFilterOnHost(Plane<const float> in, Plane<float> out, FreqMask mask, const float2* twiddles);
/// The twiddle table as launchFftTwiddles computes it, on the host.
void fftTwiddlesOnHost(float2* table);

}  // namespace gpulab::kernels
