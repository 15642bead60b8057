// Lab: matrix product on OpenBLAS, three hand-written CUDA kernels and cuBLAS.
#include "gpulab/lab/matmul.hpp"

#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpulab/core/buffers.hpp"
#include "gpulab/core/cpu_threads.hpp"
#include "gpulab/core/device.hpp"
#include "gpulab/core/timing.hpp"
#include "gpulab/kernels/cuda_check.hpp"
#include "gpulab/kernels/matmul.cuh"
#include "internal/cublas_support.hpp"
#include "internal/lab_detail.hpp"

namespace gpulab::lab {

// ---------------------------------------------------------------------------------------------
// cuBLAS behind RAII: failures become CudaError naming the call and cuBLAS's own words.

namespace {

using detail::cublasGemm;
using detail::CublasHandle;

void blasGemm(const float* a, const float* b, float* c, const MatmulShape& s) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a, s.k, b, s.n, 0.0f, c, s.n);
}
void blasGemm(const double* a, const double* b, double* c, const MatmulShape& s) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0, a, s.k, b, s.n, 0.0, c, s.n);
}

std::size_t count(int rows, int cols) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }

/// [-1, 1) -> [0, 1), exactly (x + 1 and the halving are exact in binary for these values).
template <class T>
void toUnit(T* data, std::size_t n) {
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) data[i] = (data[i] + T(1)) * T(0.5);
  });
}

std::string shapeText(const MatmulShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names, shapes, reference

bool isGpu(MatmulImpl impl) { return impl != MatmulImpl::CpuBlas; }

void validate(const MatmulShape& shape) {
  for (int d : {shape.m, shape.n, shape.k})
    if (d < 1 || d > kMaxMatmulDim)
      throw std::invalid_argument("matrix product " + shapeText(shape) + ": every dimension must be 1 to " +
                                  std::to_string(kMaxMatmulDim));
}

MatmulShape matmulShape(const SizePoint& point) {
  auto dim = [](std::int64_t v) { return static_cast<int>(std::min<std::int64_t>(v, kMaxMatmulDim + 1)); };
  MatmulShape shape;
  if (point.size() == 1)
    shape = {dim(point[0]), dim(point[0]), dim(point[0])};
  else if (point.size() == 3)
    shape = {dim(point[0]), dim(point[1]), dim(point[2])};
  else
    throw std::invalid_argument("matmul sizes are N (square) or MxNxK (A is MxK, B is KxN), not " +
                                std::to_string(point.size()) + " dimensions");
  for (std::size_t i = 0; i < point.size(); ++i)
    if (point[i] < 1 || point[i] > kMaxMatmulDim)
      throw std::invalid_argument("matmul size " + std::to_string(point[i]) +
                                  " is out of range: every dimension must be 1 to " + std::to_string(kMaxMatmulDim));
  return shape;
}

template <class T>
std::vector<double> matmulReference(const T* a, const T* b, const MatmulShape& s) {
  validate(s);
  std::vector<double> c(count(s.m, s.n), 0.0);
  // Rows are independent; each element is the same sum in the same order whatever the threads.
  detail::parallelFor(static_cast<std::size_t>(s.m), 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      double* cRow = c.data() + i * s.n;
      const T* aRow = a + i * s.k;
      for (int p = 0; p < s.k; ++p) {
        const double aip = static_cast<double>(aRow[p]);
        const T* bRow = b + static_cast<std::size_t>(p) * s.n;
        for (int j = 0; j < s.n; ++j) cRow[j] += aip * static_cast<double>(bRow[j]);
      }
    }
  });
  return c;
}
template std::vector<double> matmulReference<float>(const float*, const float*, const MatmulShape&);
template std::vector<double> matmulReference<double>(const double*, const double*, const MatmulShape&);

template <class T>
double relativeError(const T* c, const double* ref, std::size_t n) {
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(c[i]) - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}
template double relativeError<float>(const float*, const double*, std::size_t);
template double relativeError<double>(const double*, const double*, std::size_t);

// ---------------------------------------------------------------------------------------------
// MatmulLab

struct MatmulLab::State : detail::LabState {
  explicit State(bool hasGpu) : LabState(hasGpu) {
    if (gpu()) cublas = CublasHandle(*stream);
  }
  CublasHandle cublas;
  DeviceBuffer a, b, c;

  /// requireGpu, and a cuBLAS handle on the (new) stream after a device reset.
  void requireCublas(const std::string& what) {
    requireGpu(what);
    if (cublas.stale() || cublas.get() == nullptr) cublas = CublasHandle(*stream);
  }
  detail::HostArray hostA, hostB, hostC;  // filled once per shape for all implementations
  std::vector<double> reference;          // float64 product of the filled inputs, when checked
  MatmulInputs inputs = MatmulInputs::Symmetric;

  template <class T>
  void launch(MatmulImpl impl, const MatmulShape& s) {
    const T* da = a.as<T>();
    const T* db = b.as<T>();
    T* dc = c.as<T>();
    switch (impl) {
      case MatmulImpl::GpuNaive:
        kernels::launchMatmulNaive(da, db, dc, s.m, s.n, s.k, *stream);
        break;
      case MatmulImpl::GpuTiled:
        kernels::launchMatmulTiled(da, db, dc, s.m, s.n, s.k, *stream);
        break;
      case MatmulImpl::GpuRegBlock:
        kernels::launchMatmulRegBlock(da, db, dc, s.m, s.n, s.k, *stream);
        break;
      case MatmulImpl::Cublas:
        cublasGemm(cublas.get(), da, db, dc, s);
        break;
      case MatmulImpl::CpuBlas:
        throw std::logic_error("cpu_blas is not a GPU implementation");
    }
  }

  template <class T>
  std::vector<Record> measure(MatmulImpl impl, DType dtype, const MatmulShape& shape, const MeasureOptions& options);

  template <class T>
  void reserveDevice(const MatmulShape& s) {
    a.reserve(count(s.m, s.k) * sizeof(T));
    b.reserve(count(s.k, s.n) * sizeof(T));
    c.reserve(count(s.m, s.n) * sizeof(T));
  }
};

MatmulLab::MatmulLab() : state_(std::make_unique<State>(hasGpu())) {}

MatmulLab::~MatmulLab() = default;

int MatmulLab::blasThreads() { return openblas_get_num_threads(); }

template <class T>
void MatmulLab::multiply(MatmulImpl impl, const MatmulShape& shape, const T* a, const T* b, T* c) {
  validate(shape);
  if (!isGpu(impl)) {
    blasGemm(a, b, c, shape);
    return;
  }
  State& s = *state_;
  s.requireCublas(std::string(toString(impl)));
  s.reserveDevice<T>(shape);
  const cudaStream_t stream = s.cuStream();
  GPULAB_CUDA_CHECK(
      cudaMemcpyAsync(s.a.data(), a, count(shape.m, shape.k) * sizeof(T), cudaMemcpyHostToDevice, stream));
  GPULAB_CUDA_CHECK(
      cudaMemcpyAsync(s.b.data(), b, count(shape.k, shape.n) * sizeof(T), cudaMemcpyHostToDevice, stream));
  s.launch<T>(impl, shape);
  GPULAB_CUDA_CHECK(
      cudaMemcpyAsync(c, s.c.data(), count(shape.m, shape.n) * sizeof(T), cudaMemcpyDeviceToHost, stream));
  s.stream->synchronize();
}
template void MatmulLab::multiply<float>(MatmulImpl, const MatmulShape&, const float*, const float*, float*);
template void MatmulLab::multiply<double>(MatmulImpl, const MatmulShape&, const double*, const double*, double*);

template <class T>
std::vector<Record> MatmulLab::State::measure(MatmulImpl impl, DType dtype, const MatmulShape& shape,
                                              const MeasureOptions& options) {
  validate(shape);
  if (isGpu(impl)) requireCublas(std::string(toString(impl)));
  const std::size_t aBytes = count(shape.m, shape.k) * sizeof(T);
  const std::size_t bBytes = count(shape.k, shape.n) * sizeof(T);
  const std::size_t cBytes = count(shape.m, shape.n) * sizeof(T);
  if (needsInputs(dtype, {shape.m, shape.n, shape.k})) {
    hostA.reserve(aBytes, gpu());
    hostB.reserve(bBytes, gpu());
    hostC.reserve(cBytes, gpu());
    detail::fillRandom(hostA.as<T>(), count(shape.m, shape.k), 1);
    detail::fillRandom(hostB.as<T>(), count(shape.k, shape.n), 2);
    if (inputs == MatmulInputs::Unit) {
      toUnit(hostA.as<T>(), count(shape.m, shape.k));
      toUnit(hostB.as<T>(), count(shape.k, shape.n));
    }
    reference.clear();
  }
  const T* ha = hostA.as<T>();
  const T* hb = hostB.as<T>();
  T* hc = hostC.as<T>();

  const double size =
      shape.m == shape.n && shape.n == shape.k ? shape.m : std::cbrt(static_cast<double>(shape.m) * shape.n * shape.k);
  const Record r =
      detail::labRecord("matmul", std::string(toString(impl)), dtype, {shape.m, shape.n, shape.k}, size, isGpu(impl));
  if (r.gpu) reserveDevice<T>(shape);
  const cudaStream_t cu = cuStream();
  const detail::GpuSteps steps{
      [&] {
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(a.data(), ha, aBytes, cudaMemcpyHostToDevice, cu));
        GPULAB_CUDA_CHECK(cudaMemcpyAsync(b.data(), hb, bBytes, cudaMemcpyHostToDevice, cu));
      },
      [&] { launch<T>(impl, shape); },
      // the timed downloads leave the product in hostC
      [&] { GPULAB_CUDA_CHECK(cudaMemcpyAsync(hc, c.data(), cBytes, cudaMemcpyDeviceToHost, cu)); }};
  std::vector<Record> records = detail::measureSide(
      r, options, MatmulLab::blasThreads(), [&] { blasGemm(ha, hb, hc, shape); }, cu, steps, 0);

  if (options.check) {
    if (reference.empty()) reference = matmulReference(ha, hb, shape);
    for (Record& rec : records) rec.relativeError = relativeError(hc, reference.data(), count(shape.m, shape.n));
  }
  for (Record& rec : records) {
    rec.gflops = shape.flops() / (rec.medianMs * 1e6);
    if (!rec.gpu) rec.device = cpuLabel(MatmulLab::blasThreads());  // OpenBLAS's own pool
  }
  return records;
}

std::vector<Record> MatmulLab::measure(MatmulImpl impl, DType dtype, const MatmulShape& shape,
                                       const MeasureOptions& options) {
  return detail::byDType(dtype, [&](auto t) { return state_->measure<decltype(t)>(impl, dtype, shape, options); });
}

void MatmulLab::setInputs(MatmulInputs inputs) {
  if (inputs != state_->inputs) state_->forgetInputs();
  state_->inputs = inputs;
}

template <class T>
const T* MatmulLab::lastProduct() const {
  return state_->hostC.as<T>();
}
template const float* MatmulLab::lastProduct<float>() const;
template const double* MatmulLab::lastProduct<double>() const;

template <class T>
const T* MatmulLab::lastInput(int which) const {
  return which == 0 ? state_->hostA.as<T>() : state_->hostB.as<T>();
}
template const float* MatmulLab::lastInput<float>(int) const;
template const double* MatmulLab::lastInput<double>(int) const;

// ---------------------------------------------------------------------------------------------
// Precisions: cuBLAS on the tensor cores (tf32, bf16, f16) next to float32 and float64

std::string precisionHow(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::F64:
      return "float64 inputs, float64 accumulate (CUBLAS_COMPUTE_64F)";
    case GemmPrecision::F32:
      return "float32 inputs, float32 accumulate (CUBLAS_COMPUTE_32F, no TF32)";
    case GemmPrecision::TF32:
      return "float32 inputs rounded to TF32 on the tensor cores, float32 accumulate (CUBLAS_COMPUTE_32F_FAST_TF32)";
    case GemmPrecision::BF16:
      return "bfloat16 inputs, float32 accumulate and output (CUBLAS_COMPUTE_32F)";
    case GemmPrecision::F16:
      return "float16 inputs, float32 accumulate and output (CUBLAS_COMPUTE_32F)";
  }
  return {};
}

namespace {

struct GemmTypes {
  cudaDataType_t in;
  cudaDataType_t out;
  cublasComputeType_t compute;
  std::size_t inBytes;
  std::size_t outBytes;
};

GemmTypes gemmTypes(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::F64:
      return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8};
    case GemmPrecision::F32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4};
    case GemmPrecision::TF32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4};
    case GemmPrecision::BF16:
      return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4};
    case GemmPrecision::F16:
      return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 4};
  }
  throw std::logic_error("unknown precision");
}

/// Row-major C = A B through the column-major operand swap (see cublasGemm above), any precision.
void cublasGemmEx(cublasHandle_t handle, GemmPrecision p, const void* a, const void* b, void* c, const MatmulShape& s) {
  const GemmTypes t = gemmTypes(p);
  const double one64 = 1.0, zero64 = 0.0;
  const float one32 = 1.0f, zero32 = 0.0f;
  const bool f64 = p == GemmPrecision::F64;
  GPULAB_CUBLAS_CHECK(cublasGemmEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, f64 ? static_cast<const void*>(&one64) : &one32, b, t.in, s.n, a,
      t.in, s.k, f64 ? static_cast<const void*>(&zero64) : &zero32, c, t.out, s.n, t.compute, CUBLAS_GEMM_DEFAULT));
}

/// float32 values in the precision's input type, on the host.
void convertInputs(GemmPrecision p, const float* src, std::size_t n, void* dst) {
  detail::parallelFor(n, std::size_t{1} << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      switch (p) {
        case GemmPrecision::F64:
          static_cast<double*>(dst)[i] = src[i];
          break;
        case GemmPrecision::F32:
        case GemmPrecision::TF32:
          static_cast<float*>(dst)[i] = src[i];
          break;
        case GemmPrecision::BF16:
          static_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(src[i]);
          break;
        case GemmPrecision::F16:
          static_cast<__half*>(dst)[i] = __float2half_rn(src[i]);
          break;
      }
    }
  });
}

}  // namespace

std::vector<Record> MatmulLab::measurePrecisions(const std::vector<GemmPrecision>& precisions, const MatmulShape& shape,
                                                 const MeasureOptions& options) {
  validate(shape);
  State& st = *state_;
  st.requireCublas("the tensor-core study");
  const cudaStream_t cu = st.cuStream();
  const std::size_t na = count(shape.m, shape.k);
  const std::size_t nb = count(shape.k, shape.n);
  const std::size_t nc = count(shape.m, shape.n);
  st.forgetInputs();  // the shared host arrays are reused below

  // The inputs: float32 values, seeded; every precision starts from these.
  std::vector<float> a32(na), b32(nb);
  detail::fillRandom(a32.data(), na, 1);
  detail::fillRandom(b32.data(), nb, 2);

  // The reference: cuBLAS float64 of the same values (exact in float64), downloaded once.
  st.hostA.reserve(std::max(na, nb) * 8, true);
  st.hostC.reserve(nc * 8, true);
  st.a.reserve(na * 8);
  st.b.reserve(nb * 8);
  st.c.reserve(nc * 8);
  std::vector<double> reference(nc);
  convertInputs(GemmPrecision::F64, a32.data(), na, st.hostA.data());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(st.a.data(), st.hostA.data(), na * 8, cudaMemcpyHostToDevice, cu));
  st.stream->synchronize();
  convertInputs(GemmPrecision::F64, b32.data(), nb, st.hostA.data());
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(st.b.data(), st.hostA.data(), nb * 8, cudaMemcpyHostToDevice, cu));
  cublasGemmEx(st.cublas.get(), GemmPrecision::F64, st.a.data(), st.b.data(), st.c.data(), shape);
  GPULAB_CUDA_CHECK(cudaMemcpyAsync(reference.data(), st.c.data(), nc * 8, cudaMemcpyDeviceToHost, cu));
  st.stream->synchronize();

  const double size =
      shape.m == shape.n && shape.n == shape.k ? shape.m : std::cbrt(static_cast<double>(shape.m) * shape.n * shape.k);
  std::vector<Record> out;
  for (GemmPrecision p : precisions) {
    const GemmTypes t = gemmTypes(p);
    st.hostA.reserve(na * t.inBytes, true);
    st.hostB.reserve(nb * t.inBytes, true);
    convertInputs(p, a32.data(), na, st.hostA.data());
    convertInputs(p, b32.data(), nb, st.hostB.data());
    Record base = detail::labRecord("matmul", "cublas", DType::F32, {shape.m, shape.n, shape.k}, size, true);
    base.variant = "precision";
    base.dtype = toString(p);
    const detail::GpuSteps steps{
        [&] {
          GPULAB_CUDA_CHECK(cudaMemcpyAsync(st.a.data(), st.hostA.data(), na * t.inBytes, cudaMemcpyHostToDevice, cu));
          GPULAB_CUDA_CHECK(cudaMemcpyAsync(st.b.data(), st.hostB.data(), nb * t.inBytes, cudaMemcpyHostToDevice, cu));
        },
        [&] { cublasGemmEx(st.cublas.get(), p, st.a.data(), st.b.data(), st.c.data(), shape); },
        [&] {
          GPULAB_CUDA_CHECK(cudaMemcpyAsync(st.hostC.data(), st.c.data(), nc * t.outBytes, cudaMemcpyDeviceToHost, cu));
        },
        precisionHow(p)};
    std::vector<Record> records = detail::measureSide(base, options, 0, {}, cu, steps, 0);
    st.stream->synchronize();
    const double error = t.outBytes == 8 ? relativeError(st.hostC.as<double>(), reference.data(), nc)
                                         : relativeError(st.hostC.as<float>(), reference.data(), nc);
    for (Record& r : records) {
      r.gflops = shape.flops() / (r.medianMs * 1e6);
      r.relativeError = error;
      if (p == GemmPrecision::F64) r.note = "reference";  // the same cuBLAS float64 product: 0 by construction
    }
    out.insert(out.end(), records.begin(), records.end());
  }
  st.forgetInputs();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sweep

namespace detail {

void validateMatmul(const LabRequest& request) {
  for (const SizePoint& p : pointsOf(request)) matmulShape(p);
}

MemoryNeed matmulMemory(const LabRequest& request) {
  MemoryNeed need;
  const std::size_t element = dtypeSize(request.dtype);
  for (const SizePoint& p : pointsOf(request)) {
    const MatmulShape s = matmulShape(p);
    const std::size_t bytes = (count(s.m, s.k) + count(s.k, s.n) + count(s.m, s.n)) * element;
    const std::size_t check = request.check ? count(s.m, s.n) * sizeof(double) : 0;
    need.hostBytes = std::max(need.hostBytes, bytes + check);
    need.deviceBytes = std::max(need.deviceBytes, bytes);
  }
  return need;
}

void runMatmul(const LabRequest& request, Sweep& sweep) {
  const std::vector<std::string> impls = selectedImpls(request);
  bool anyGpu = false;
  for (const std::string& name : impls) anyGpu = anyGpu || isGpu(parseEnumOrThrow<MatmulImpl>(name));
  MatmulLab lab;
  const MeasureOptions options{request.reps, request.warmup, request.withCopies, request.check};
  for (const SizePoint& point : pointsOf(request)) {
    const MatmulShape shape = matmulShape(point);
    // cuBLAS at the same shape is the ceiling of every GPU record; measured even when not shown.
    std::vector<Record> cublasRecords;
    if (anyGpu) {
      cublasRecords = lab.measure(MatmulImpl::Cublas, request.dtype, shape, options);
      sweep.checkCancel();
    }
    const double ceiling = cublasRecords.empty() ? 0.0 : cublasRecords.front().gflops;
    for (const std::string& name : impls) {
      const MatmulImpl impl = parseEnumOrThrow<MatmulImpl>(name);
      std::vector<Record> records =
          impl == MatmulImpl::Cublas ? cublasRecords : lab.measure(impl, request.dtype, shape, options);
      for (Record& r : records) {
        if (r.gpu) {
          r.ceiling = ceiling;
          r.ceilingName = "cuBLAS";
          r.ceilingHow = "cuBLAS (float32 without TF32, float64 as is) at the same shape, measured just before";
        }
        sweep.emit(r);
      }
      sweep.stepDone();
    }
  }
}

}  // namespace detail
}  // namespace gpulab::lab
