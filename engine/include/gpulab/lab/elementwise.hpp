// Lab experiment: elementwise operations over n elements of float or double.
//   x*x+2*y   out = x*x + 2*y
//   a*x+y     out = a*x + y with a = kAxpyA
// cpu: a plain loop over stripes on all cores (OpenCV's TBB pool), compiled without FMA contraction;
// gpu: a grid-stride kernel with 16-byte loads. Both round each product and sum on its own, so the
// results are identical bit for bit. Three arrays move per call: the ceiling is the DRAM copy
// bandwidth (deviceCopyCeiling); sizes whose three arrays fit in L2 are noted "in L2".
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "gpulab/core/enum_names.hpp"
#include "gpulab/lab/lab.hpp"

namespace gpulab::lab {

enum class ElementwiseOp { SquarePlusTwice, Axpy };

constexpr double kAxpyA = 2.5;
constexpr std::size_t kMaxVectorElements = std::size_t{1} << 36;

constexpr EnumText enumText(ElementwiseOp) { return {"elementwise operation", "x*x+2*y|a*x+y"}; }

/// The obvious loop on one core: the tests' oracle. `a` is used by Axpy only.
template <class T>
void elementwiseReference(ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n);

class ElementwiseLab : public LabBase {
 public:
  ElementwiseLab();  ///< GPU resources only when a CUDA device exists
  ~ElementwiseLab();

  /// Blocking, host pointers; on the GPU: upload x and y, compute, download out. `out` must not
  /// overlap x or y. Throws std::invalid_argument for n == 0 or above kMaxVectorElements.
  template <class T>
  void run(Target target, ElementwiseOp op, T a, const T* x, const T* y, T* out, std::size_t n);

  /// Times one side on seeded random input: GB/s counts 3 n elements (x, y read, out written).
  std::vector<Record> measure(Target target, ElementwiseOp op, DType dtype, std::size_t n,
                              const MeasureOptions& options);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpulab::lab
