// The study guide's array examples on the GPU: linspace made on the device (no upload), sums and
// maxima accumulated in the element type (as NumPy and CuPy do for float32), and reductions along
// an axis of a row-major matrix with a row normalisation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpulab::kernels {

/// out[i] = start + i * (stop - start) / (n - 1), computed in double and rounded to T, out[n-1] =
/// stop exactly (numpy.linspace with endpoint=True); n == 1 gives start.
template <class T>
void launchLinspace(T* out, std::size_t n, double start, double stop, cudaStream_t stream);

/// The transcendental expressions of the guides, elementwise in T (the device's sin, cos, exp,
/// sqrt: within a few ulps of the correctly rounded value).
enum class CourseExpression {
  SinSqrt,  ///< 2*sin(x) + sqrt(|x|)   (the Numba/CuPy guide's example)
  ExpSin    ///< exp(-x) * sin(y)
};
template <class T>
void launchCourseExpression(CourseExpression e, const T* x, const T* y, T* out, std::size_t n, cudaStream_t stream);

/// Upper bound of the partial results launchSumMaxInType writes (its `partials` holds 2x this).
constexpr int kInTypeMaxPartials = 1024;

/// result[0] = sum of x, result[1] = max of x, both accumulated in T: per-thread grid-stride sums,
/// then a tree within each block, then one block over the block partials. `partials` holds
/// 2 * kInTypeMaxPartials values of T.
template <class T>
void launchSumMaxInType(const T* x, std::size_t n, T* partials, T* result, cudaStream_t stream);

/// out[r] = sum of row r (axis 1), accumulated in double, rounded to T. One block per row.
template <class T>
void launchRowSums(const T* x, int rows, int cols, T* out, cudaStream_t stream);

/// out[c] = sum of column c (axis 0), accumulated in double, rounded to T. One thread per column,
/// neighbouring threads on neighbouring columns (coalesced).
template <class T>
void launchColumnSums(const T* x, int rows, int cols, T* out, cudaStream_t stream);

/// out[r][c] = x[r][c] / s_r in double, rounded to T, where s_r is the row's sum (l2 false) or its
/// Euclidean norm (l2 true), accumulated in double. One block per row. out may not overlap x.
template <class T>
void launchRowNormalize(const T* x, int rows, int cols, bool l2, T* out, cudaStream_t stream);

}  // namespace gpulab::kernels
