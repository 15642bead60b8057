// Elementwise expressions for the custom-kernel lab, the C++ side of CuPy's ElementwiseKernel:
//
//   y = sin(x) * 2 + sqrt(abs(x))
//   r = hypot(a, b); t = atan2(b, a)        (statements separated by ';' or new lines)
//
// A recursive-descent parser turns the text into a program of statements `name = expression`. Names
// that are assigned are the outputs (in the order of their first assignment); every other name is an
// input (in the order of first use). An output may be read by a later statement, never before it is
// assigned. Reserved names: `i` (the element's index), `n` (the element count), `pi`, and the
// functions below (called with parentheses).
//
// Grammar, lowest precedence first:
//   program   := statement { (';' | newline) statement } [';']
//   statement := name '=' sum
//   sum       := product { ('+' | '-') product }
//   product   := unary { ('*' | '/') unary }
//   unary     := ('-' | '+') unary | power
//   power     := primary [ ('**' | '^') unary ]           right-associative: 2**3**2 = 2**9, -x**2 = -(x**2)
//   primary   := number | name | function '(' sum { ',' sum } ')' | '(' sum ')'
// Numbers: 3, 3.25, .5, 1e-3, 2.5E+4. Functions of one argument: sin cos tan asin acos atan sinh cosh
// tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p sqrt cbrt abs floor ceil round trunc erf
// erfc; of two: pow atan2 fmod hypot min max.
//
// A syntax or naming mistake throws ExpressionError (a std::invalid_argument) carrying the 1-based
// line and column of the offending character: "column 12: expected ')' to close the '(' at column 5".
//
// The same program is evaluated on the host (evaluateElementwise: the custom-kernel lab's CPU check,
// in the element type, on all cores) and turned into a self-contained CUDA source for NVRTC
// (elementwiseSource: no #include, float functions for f32).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/lab/lab.hpp"  // DType

namespace gpulab::lab {

class ExpressionError : public std::invalid_argument {
 public:
  /// `line` and `column` are 1-based; `message` has no position in it.
  ExpressionError(int line, int column, const std::string& message, bool multiline);
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  const std::string& message() const noexcept { return message_; }

 private:
  int line_;
  int column_;
  std::string message_;
};

/// A parsed program. Nodes are stored children first, so evaluating them in index order is valid.
struct ElementwiseProgram {
  enum class Kind { Number, Input, Output, Index, Count, Negate, Add, Subtract, Multiply, Divide, Power, Call };
  struct Node {
    Kind kind = Kind::Number;
    double value = 0;  ///< Number
    int slot = -1;     ///< Input / Output: index into inputs / outputs; Call: index into functionNames()
    int a = -1;        ///< first operand (node index)
    int b = -1;        ///< second operand, for binary operators and two-argument functions
    int line = 1;
    int column = 1;
  };
  struct Statement {
    int output = 0;     ///< index into outputs
    int firstNode = 0;  ///< the statement's nodes are [firstNode, root]
    int root = 0;
  };

  std::string text;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Node> nodes;
  std::vector<Statement> statements;
};

/// Parses `text`. Throws ExpressionError.
ElementwiseProgram parseElementwise(std::string_view text);

/// The functions an expression may call, and how many arguments each takes (1 or 2).
const std::vector<std::string>& functionNames();
int functionArity(int function);

/// One input of the host evaluation: an array of n elements, or (data == nullptr) one value for all.
template <class T>
struct Operand {
  const T* data = nullptr;
  T value = 0;
};

/// Evaluates the program over n elements in the element type T (float or double), on all cores:
/// `inputs[k]` feeds program.inputs[k], `outputs[k]` receives program.outputs[k]. Throws
/// std::invalid_argument when the counts do not match the program.
template <class T>
void evaluateElementwise(const ElementwiseProgram& program, const std::vector<Operand<T>>& inputs,
                         const std::vector<T*>& outputs, std::size_t n);

/// The outputs at one point (double precision; i = index, n = count): for tests and quick checks.
std::vector<double> evaluateAt(const ElementwiseProgram& program, const std::vector<double>& inputs, double index = 0,
                               double count = 1);

/// Name of the kernel elementwiseSource emits.
inline constexpr const char* kElementwiseKernelName = "gpulab_elementwise";

/// A self-contained CUDA source (no #include) for NVRTC: extern "C" __global__ gpulab_elementwise(
/// const T* in_<input>..., T* out_<output>..., unsigned long long n), a grid-stride loop evaluating the
/// statements in T (f32: sinf, sqrtf, fabsf, 2.0f literals; f64: sin, sqrt, fabs, full-precision
/// literals).
std::string elementwiseSource(const ElementwiseProgram& program, DType dtype);

}  // namespace gpulab::lab
