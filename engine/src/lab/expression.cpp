// Elementwise expressions: the lexer and recursive-descent parser, the host evaluator (blocks of
// elements per node, like numexpr, on all cores) and the CUDA source generator.
#include "gpulab/lab/expression.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <optional>
#include <string>

#include "internal/lab_detail.hpp"

namespace gpulab::lab {

ExpressionError::ExpressionError(int line, int column, const std::string& message, bool multiline)
    : std::invalid_argument((multiline ? "line " + std::to_string(line) + ", column " : std::string("column ")) +
                            std::to_string(column) + ": " + message),
      line_(line),
      column_(column),
      message_(message) {}

// ---------------------------------------------------------------------------------------------
// Functions

namespace {

struct Function {
  const char* name;
  int arity;
  const char* cudaF32;
  const char* cudaF64;
};

// The order is the slot of a Call node; evaluate() below switches on it.
constexpr Function kFunctions[] = {
    {"sin", 1, "sinf", "sin"},       {"cos", 1, "cosf", "cos"},       {"tan", 1, "tanf", "tan"},
    {"asin", 1, "asinf", "asin"},    {"acos", 1, "acosf", "acos"},    {"atan", 1, "atanf", "atan"},
    {"sinh", 1, "sinhf", "sinh"},    {"cosh", 1, "coshf", "cosh"},    {"tanh", 1, "tanhf", "tanh"},
    {"asinh", 1, "asinhf", "asinh"}, {"acosh", 1, "acoshf", "acosh"}, {"atanh", 1, "atanhf", "atanh"},
    {"exp", 1, "expf", "exp"},       {"exp2", 1, "exp2f", "exp2"},    {"expm1", 1, "expm1f", "expm1"},
    {"log", 1, "logf", "log"},       {"log2", 1, "log2f", "log2"},    {"log10", 1, "log10f", "log10"},
    {"log1p", 1, "log1pf", "log1p"}, {"sqrt", 1, "sqrtf", "sqrt"},    {"cbrt", 1, "cbrtf", "cbrt"},
    {"abs", 1, "fabsf", "fabs"},     {"floor", 1, "floorf", "floor"}, {"ceil", 1, "ceilf", "ceil"},
    {"round", 1, "roundf", "round"}, {"trunc", 1, "truncf", "trunc"}, {"erf", 1, "erff", "erf"},
    {"erfc", 1, "erfcf", "erfc"},    {"pow", 2, "powf", "pow"},       {"atan2", 2, "atan2f", "atan2"},
    {"fmod", 2, "fmodf", "fmod"},    {"hypot", 2, "hypotf", "hypot"}, {"min", 2, "fminf", "fmin"},
    {"max", 2, "fmaxf", "fmax"},
};
constexpr int kFunctionCount = static_cast<int>(std::size(kFunctions));

int findFunction(std::string_view name) {
  for (int f = 0; f < kFunctionCount; ++f)
    if (name == kFunctions[f].name) return f;
  return -1;
}

template <class T>
T apply1(int f, T x) {
  switch (f) {
    case 0:
      return std::sin(x);
    case 1:
      return std::cos(x);
    case 2:
      return std::tan(x);
    case 3:
      return std::asin(x);
    case 4:
      return std::acos(x);
    case 5:
      return std::atan(x);
    case 6:
      return std::sinh(x);
    case 7:
      return std::cosh(x);
    case 8:
      return std::tanh(x);
    case 9:
      return std::asinh(x);
    case 10:
      return std::acosh(x);
    case 11:
      return std::atanh(x);
    case 12:
      return std::exp(x);
    case 13:
      return std::exp2(x);
    case 14:
      return std::expm1(x);
    case 15:
      return std::log(x);
    case 16:
      return std::log2(x);
    case 17:
      return std::log10(x);
    case 18:
      return std::log1p(x);
    case 19:
      return std::sqrt(x);
    case 20:
      return std::cbrt(x);
    case 21:
      return std::fabs(x);
    case 22:
      return std::floor(x);
    case 23:
      return std::ceil(x);
    case 24:
      return std::round(x);
    case 25:
      return std::trunc(x);
    case 26:
      return std::erf(x);
    case 27:
      return std::erfc(x);
    default:
      return x;
  }
}

template <class T>
T apply2(int f, T x, T y) {
  switch (f) {
    case 28:
      return std::pow(x, y);
    case 29:
      return std::atan2(x, y);
    case 30:
      return std::fmod(x, y);
    case 31:
      return std::hypot(x, y);
    case 32:
      return std::fmin(x, y);
    case 33:
      return std::fmax(x, y);
    default:
      return x;
  }
}

}  // namespace

const std::vector<std::string>& functionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const Function& f : kFunctions) list.emplace_back(f.name);
    return list;
  }();
  return names;
}

int functionArity(int function) { return function >= 0 && function < kFunctionCount ? kFunctions[function].arity : 0; }

// ---------------------------------------------------------------------------------------------
// Lexer

namespace {

enum class Tok {
  End,
  Newline,
  Semicolon,
  Number,
  Name,
  Plus,
  Minus,
  Star,
  Slash,
  Power,
  LParen,
  RParen,
  Comma,
  Assign
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  double value = 0;
  int line = 1;
  int column = 1;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End:
      return "the end of the text";
    case Tok::Newline:
      return "the end of the line";
    default:
      return "'" + std::string(t.text) + "'";
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text), multiline_(text.find('\n') != std::string_view::npos) {}

  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw ExpressionError(line, column, message, multiline_);
  }
  bool multiline() const noexcept { return multiline_; }

  std::vector<Token> tokens() {
    std::vector<Token> list;
    for (;;) {
      Token t = next();
      list.push_back(t);
      if (t.kind == Tok::End) return list;
    }
  }

 private:
  Token next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r')) advance();
    Token t;
    t.line = line_;
    t.column = column_;
    if (pos_ >= text_.size()) return t;
    const std::size_t start = pos_;
    const char c = text_[pos_];
    auto single = [&](Tok kind) {
      advance();
      t.kind = kind;
      t.text = text_.substr(start, 1);
      return t;
    };
    if (c == '\n') {
      advance();
      ++line_;
      column_ = 1;
      t.kind = Tok::Newline;
      t.text = text_.substr(start, 1);
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))))
      return number(t);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        advance();
      t.kind = Tok::Name;
      t.text = text_.substr(start, pos_ - start);
      return t;
    }
    switch (c) {
      case ';':
        return single(Tok::Semicolon);
      case '+':
        return single(Tok::Plus);
      case '-':
        return single(Tok::Minus);
      case '/':
        return single(Tok::Slash);
      case '^':
        return single(Tok::Power);
      case '(':
        return single(Tok::LParen);
      case ')':
        return single(Tok::RParen);
      case ',':
        return single(Tok::Comma);
      case '=':
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '=')
          fail(t.line, t.column, "'==' is not supported: expressions compute numbers, not comparisons");
        return single(Tok::Assign);
      case '*':
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
          advance();
          advance();
          t.kind = Tok::Power;
          t.text = text_.substr(start, 2);
          return t;
        }
        return single(Tok::Star);
      default:
        break;
    }
    const unsigned char byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) fail(t.line, t.column, "unexpected non-ASCII character: names and operators are ASCII");
    fail(t.line, t.column, "unexpected character '" + std::string(1, c) + "'");
  }

  Token number(Token t) {
    const std::size_t start = pos_;
    auto digits = [&] {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) advance();
    };
    digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      advance();
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      const int eColumn = column_;
      advance();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) advance();
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
        fail(t.line, eColumn, "the exponent of '" + std::string(text_.substr(start, pos_ - start)) + "' has no digits");
      digits();
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      fail(line_, column_,
           "a name cannot start right after the number '" + std::string(text_.substr(start, pos_ - start)) +
               "' (write 2*x, not 2x)");
    t.kind = Tok::Number;
    t.text = text_.substr(start, pos_ - start);
    const std::string copy(t.text);
    char* end = nullptr;
    t.value = std::strtod(copy.c_str(), &end);
    if (!std::isfinite(t.value)) fail(t.line, t.column, "the number '" + copy + "' is too large");
    return t;
  }

  void advance() {
    ++pos_;
    ++column_;
  }

  std::string_view text_;
  bool multiline_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// ---------------------------------------------------------------------------------------------
// Parser

using Kind = ElementwiseProgram::Kind;

class Parser {
 public:
  explicit Parser(std::string_view text) : lexer_(text), tokens_(lexer_.tokens()) { program_.text = text; }

  ElementwiseProgram parse() {
    skipSeparators();
    if (peek().kind == Tok::End) lexer_.fail(1, 1, "the expression is empty: write a statement like 'y = 2*x + 1'");
    while (peek().kind != Tok::End) {
      statement();
      const Token& t = peek();
      if (t.kind == Tok::End) break;
      if (t.kind != Tok::Semicolon && t.kind != Tok::Newline)
        lexer_.fail(t.line, t.column, "expected an operator, ';' or the end of the statement, found " + describe(t));
      skipSeparators();
    }
    return std::move(program_);
  }

 private:
  const Token& peek() {
    while (depth_ > 0 && tokens_[pos_].kind == Tok::Newline) ++pos_;  // a line break inside ( ) is a space
    return tokens_[pos_];
  }
  Token take() {
    Token t = peek();
    if (t.kind != Tok::End) ++pos_;
    return t;
  }
  void skipSeparators() {
    while (tokens_[pos_].kind == Tok::Semicolon || tokens_[pos_].kind == Tok::Newline) ++pos_;
  }
  [[noreturn]] void fail(const Token& t, const std::string& message) { lexer_.fail(t.line, t.column, message); }

  static bool reserved(std::string_view name) { return name == "i" || name == "n" || name == "pi"; }

  void statement() {
    const Token name = take();
    if (name.kind != Tok::Name)
      fail(name, "a statement starts with the name of an output, as in 'y = 2*x + 1'; found " + describe(name));
    const Token assign = peek();
    if (assign.kind != Tok::Assign)
      fail(assign, "expected '=' after '" + std::string(name.text) + "' (a statement looks like 'y = 2*x + 1')");
    take();
    const std::string target(name.text);
    if (reserved(target))
      fail(name, "'" + target + "' is reserved (i: the index, n: the count, pi) and cannot be assigned");
    if (findFunction(target) >= 0) fail(name, "'" + target + "' is a function and cannot be assigned");
    if (std::find(program_.outputs.begin(), program_.outputs.end(), target) != program_.outputs.end())
      fail(name, "'" + target + "' is assigned twice: give each output one statement");
    if (std::find(program_.inputs.begin(), program_.inputs.end(), target) != program_.inputs.end())
      fail(name, "'" + target + "' is read as an input before this statement assigns it");
    ElementwiseProgram::Statement s;
    s.firstNode = static_cast<int>(program_.nodes.size());
    s.root = sum();
    // Assigned only now: 'y = y + 1' reads an input y, which the check above then rejects.
    if (std::find(program_.inputs.begin(), program_.inputs.end(), target) != program_.inputs.end())
      fail(name, "'" + target + "' is read as an input by its own statement: an output cannot be both");
    s.output = static_cast<int>(program_.outputs.size());
    program_.outputs.push_back(target);
    program_.statements.push_back(s);
  }

  int add(Kind kind, const Token& at, int a = -1, int b = -1) {
    ElementwiseProgram::Node node;
    node.kind = kind;
    node.a = a;
    node.b = b;
    node.line = at.line;
    node.column = at.column;
    program_.nodes.push_back(node);
    return static_cast<int>(program_.nodes.size()) - 1;
  }

  int sum() {
    int left = product();
    for (;;) {
      const Token op = peek();
      if (op.kind != Tok::Plus && op.kind != Tok::Minus) return left;
      take();
      const int right = product();
      left = add(op.kind == Tok::Plus ? Kind::Add : Kind::Subtract, op, left, right);
    }
  }

  int product() {
    int left = unary();
    for (;;) {
      const Token op = peek();
      if (op.kind != Tok::Star && op.kind != Tok::Slash) return left;
      take();
      const int right = unary();
      left = add(op.kind == Tok::Star ? Kind::Multiply : Kind::Divide, op, left, right);
    }
  }

  int unary() {
    const Token op = peek();
    if (op.kind == Tok::Minus) {
      take();
      const int operand = unary();
      return add(Kind::Negate, op, operand);
    }
    if (op.kind == Tok::Plus) {
      take();
      return unary();
    }
    return power();
  }

  int power() {
    const int base = primary();
    const Token op = peek();
    if (op.kind != Tok::Power) return base;
    take();
    const int exponent = unary();  // right-associative, and 2**-1 is allowed
    return add(Kind::Power, op, base, exponent);
  }

  int primary() {
    const Token t = take();
    switch (t.kind) {
      case Tok::Number: {
        const int node = add(Kind::Number, t);
        program_.nodes[node].value = t.value;
        return node;
      }
      case Tok::LParen: {
        ++depth_;
        const int inner = sum();
        const Token close = peek();
        if (close.kind != Tok::RParen)
          fail(close,
               "expected ')' to close the '(' at column " + std::to_string(t.column) + ", found " + describe(close));
        take();
        --depth_;
        return inner;
      }
      case Tok::Name:
        return name(t);
      case Tok::End:
      case Tok::Newline:
      case Tok::Semicolon:
        fail(t, "expected a number, a name or '(' but the statement ends here");
      default:
        fail(t, "expected a number, a name or '(' but found " + describe(t));
    }
  }

  int name(const Token& t) {
    const std::string text(t.text);
    if (peek().kind == Tok::LParen) {
      const int f = findFunction(text);
      if (f < 0) fail(t, "unknown function '" + text + "' (known: " + functionList() + ")");
      const Token open = take();
      ++depth_;
      std::vector<int> args{sum()};
      while (peek().kind == Tok::Comma) {
        take();
        args.push_back(sum());
      }
      const Token close = peek();
      if (close.kind != Tok::RParen)
        fail(close, "expected ',' or ')' to close the '(' of " + text + " at column " + std::to_string(open.column) +
                        ", found " + describe(close));
      take();
      --depth_;
      const int arity = kFunctions[f].arity;
      if (static_cast<int>(args.size()) != arity)
        fail(t, text + " takes " + std::to_string(arity) + (arity == 1 ? " argument" : " arguments") + ", not " +
                    std::to_string(args.size()));
      const int node = add(Kind::Call, t, args[0], arity == 2 ? args[1] : -1);
      program_.nodes[node].slot = f;
      return node;
    }
    if (findFunction(text) >= 0) fail(t, "'" + text + "' is a function: call it as " + text + "(...)");
    if (text == "i") return add(Kind::Index, t);
    if (text == "n") return add(Kind::Count, t);
    if (text == "pi") {
      const int node = add(Kind::Number, t);
      program_.nodes[node].value = std::numbers::pi;
      return node;
    }
    const auto out = std::find(program_.outputs.begin(), program_.outputs.end(), text);
    if (out != program_.outputs.end()) {
      const int node = add(Kind::Output, t);
      program_.nodes[node].slot = static_cast<int>(out - program_.outputs.begin());
      return node;
    }
    auto in = std::find(program_.inputs.begin(), program_.inputs.end(), text);
    if (in == program_.inputs.end()) {
      program_.inputs.push_back(text);
      in = program_.inputs.end() - 1;
    }
    const int node = add(Kind::Input, t);
    program_.nodes[node].slot = static_cast<int>(in - program_.inputs.begin());
    return node;
  }

  static std::string functionList() {
    std::string list;
    for (const Function& f : kFunctions) list += (list.empty() ? "" : ", ") + std::string(f.name);
    return list;
  }

  Lexer lexer_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  ElementwiseProgram program_;
};

}  // namespace

ElementwiseProgram parseElementwise(std::string_view text) {
  ElementwiseProgram program = Parser(text).parse();
  // A statement that names a later output as an input is caught above; one that reads an earlier
  // output reads its value. An output that is also an input name (read before, assigned after) is
  // rejected in statement().
  return program;
}

// ---------------------------------------------------------------------------------------------
// Host evaluation

namespace {

constexpr std::size_t kBlock = 256;

template <class T>
void evaluateBlock(const ElementwiseProgram& p, const std::vector<Operand<T>>& inputs, const std::vector<T*>& outputs,
                   std::size_t begin, std::size_t count, std::size_t n, std::vector<T>& scratch) {
  T* regs = scratch.data();
  for (const ElementwiseProgram::Statement& s : p.statements) {
    for (int k = s.firstNode; k <= s.root; ++k) {
      const ElementwiseProgram::Node& node = p.nodes[static_cast<std::size_t>(k)];
      T* r = regs + static_cast<std::size_t>(k) * kBlock;
      const T* a = node.a >= 0 ? regs + static_cast<std::size_t>(node.a) * kBlock : nullptr;
      const T* b = node.b >= 0 ? regs + static_cast<std::size_t>(node.b) * kBlock : nullptr;
      switch (node.kind) {
        case Kind::Number:
          std::fill(r, r + count, static_cast<T>(node.value));
          break;
        case Kind::Input: {
          const Operand<T>& in = inputs[static_cast<std::size_t>(node.slot)];
          if (in.data)
            std::copy(in.data + begin, in.data + begin + count, r);
          else
            std::fill(r, r + count, in.value);
          break;
        }
        case Kind::Output: {
          const T* out = outputs[static_cast<std::size_t>(node.slot)];
          std::copy(out + begin, out + begin + count, r);
          break;
        }
        case Kind::Index:
          for (std::size_t j = 0; j < count; ++j) r[j] = static_cast<T>(begin + j);
          break;
        case Kind::Count:
          std::fill(r, r + count, static_cast<T>(n));
          break;
        case Kind::Negate:
          for (std::size_t j = 0; j < count; ++j) r[j] = -a[j];
          break;
        case Kind::Add:
          for (std::size_t j = 0; j < count; ++j) r[j] = a[j] + b[j];
          break;
        case Kind::Subtract:
          for (std::size_t j = 0; j < count; ++j) r[j] = a[j] - b[j];
          break;
        case Kind::Multiply:
          for (std::size_t j = 0; j < count; ++j) r[j] = a[j] * b[j];
          break;
        case Kind::Divide:
          for (std::size_t j = 0; j < count; ++j) r[j] = a[j] / b[j];
          break;
        case Kind::Power:
          for (std::size_t j = 0; j < count; ++j) r[j] = std::pow(a[j], b[j]);
          break;
        case Kind::Call:
          if (b)
            for (std::size_t j = 0; j < count; ++j) r[j] = apply2<T>(node.slot, a[j], b[j]);
          else
            for (std::size_t j = 0; j < count; ++j) r[j] = apply1<T>(node.slot, a[j]);
          break;
      }
    }
    const T* result = regs + static_cast<std::size_t>(s.root) * kBlock;
    std::copy(result, result + count, outputs[static_cast<std::size_t>(s.output)] + begin);
  }
}

}  // namespace

template <class T>
void evaluateElementwise(const ElementwiseProgram& program, const std::vector<Operand<T>>& inputs,
                         const std::vector<T*>& outputs, std::size_t n) {
  if (inputs.size() != program.inputs.size())
    throw std::invalid_argument("the expression reads " + std::to_string(program.inputs.size()) + " inputs, " +
                                std::to_string(inputs.size()) + " given");
  if (outputs.size() != program.outputs.size())
    throw std::invalid_argument("the expression writes " + std::to_string(program.outputs.size()) + " outputs, " +
                                std::to_string(outputs.size()) + " given");
  detail::parallelFor(n, std::size_t{1} << 14, [&](std::size_t begin, std::size_t end) {
    std::vector<T> scratch(program.nodes.size() * kBlock);
    for (std::size_t b = begin; b < end; b += kBlock)
      evaluateBlock(program, inputs, outputs, b, std::min(kBlock, end - b), n, scratch);
  });
}
template void evaluateElementwise<float>(const ElementwiseProgram&, const std::vector<Operand<float>>&,
                                         const std::vector<float*>&, std::size_t);
template void evaluateElementwise<double>(const ElementwiseProgram&, const std::vector<Operand<double>>&,
                                          const std::vector<double*>&, std::size_t);

std::vector<double> evaluateAt(const ElementwiseProgram& program, const std::vector<double>& inputs, double index,
                               double count) {
  if (inputs.size() != program.inputs.size())
    throw std::invalid_argument("the expression reads " + std::to_string(program.inputs.size()) + " inputs, " +
                                std::to_string(inputs.size()) + " given");
  // One element at position `index` of `count`: the index and count nodes read these.
  ElementwiseProgram p = program;
  for (ElementwiseProgram::Node& node : p.nodes) {
    if (node.kind == Kind::Index) {
      node.kind = Kind::Number;
      node.value = index;
    } else if (node.kind == Kind::Count) {
      node.kind = Kind::Number;
      node.value = count;
    }
  }
  std::vector<Operand<double>> operands;
  for (double v : inputs) operands.push_back({nullptr, v});
  std::vector<double> results(p.outputs.size());
  std::vector<double*> outputs;
  for (double& r : results) outputs.push_back(&r);
  std::vector<double> scratch(p.nodes.size() * kBlock);
  evaluateBlock(p, operands, outputs, 0, 1, 1, scratch);
  return results;
}

// ---------------------------------------------------------------------------------------------
// CUDA source

namespace {

std::string literal(double v, DType dtype) {
  char text[40];
  if (dtype == DType::F32) {
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(static_cast<float>(v)));
  } else {
    std::snprintf(text, sizeof text, "%.17g", v);
  }
  std::string s = text;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 2 -> 2.0 (a floating literal)
  return dtype == DType::F32 ? s + "f" : s;
}

std::string emit(const ElementwiseProgram& p, int k, DType dtype) {
  const ElementwiseProgram::Node& node = p.nodes[static_cast<std::size_t>(k)];
  const char* type = dtype == DType::F32 ? "float" : "double";
  auto sub = [&](int child) { return emit(p, child, dtype); };
  switch (node.kind) {
    case Kind::Number: {
      const std::string s = literal(node.value, dtype);
      return node.value < 0 ? "(" + s + ")" : s;
    }
    case Kind::Input:
      return "v_" + p.inputs[static_cast<std::size_t>(node.slot)];
    case Kind::Output:
      return "o_" + p.outputs[static_cast<std::size_t>(node.slot)];
    case Kind::Index:
      return std::string("(") + type + ")i";
    case Kind::Count:
      return std::string("(") + type + ")n";
    case Kind::Negate:
      return "(-" + sub(node.a) + ")";
    case Kind::Add:
      return "(" + sub(node.a) + " + " + sub(node.b) + ")";
    case Kind::Subtract:
      return "(" + sub(node.a) + " - " + sub(node.b) + ")";
    case Kind::Multiply:
      return "(" + sub(node.a) + " * " + sub(node.b) + ")";
    case Kind::Divide:
      return "(" + sub(node.a) + " / " + sub(node.b) + ")";
    case Kind::Power:
      return std::string(dtype == DType::F32 ? "powf" : "pow") + "(" + sub(node.a) + ", " + sub(node.b) + ")";
    case Kind::Call: {
      const Function& f = kFunctions[node.slot];
      std::string call = std::string(dtype == DType::F32 ? f.cudaF32 : f.cudaF64) + "(" + sub(node.a);
      if (f.arity == 2) call += ", " + sub(node.b);
      return call + ")";
    }
  }
  return {};
}

std::string commentSafe(std::string text) {
  for (std::size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) text.replace(at, 2, "* /");
  return text;
}

}  // namespace

std::string elementwiseSource(const ElementwiseProgram& p, DType dtype) {
  const std::string type = dtype == DType::F32 ? "float" : "double";
  std::string src = "/* gpulab elementwise kernel (" + std::string(toString(dtype)) + ")\n" + commentSafe(p.text) +
                    "\n*/\nextern \"C\" __global__ void " + kElementwiseKernelName + "(";
  for (const std::string& in : p.inputs) src += "const " + type + "* __restrict__ in_" + in + ", ";
  for (const std::string& out : p.outputs) src += type + "* __restrict__ out_" + out + ", ";
  src += "unsigned long long n) {\n";
  src += "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n";
  src +=
      "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) "
      "{\n";
  for (const std::string& in : p.inputs) src += "    const " + type + " v_" + in + " = in_" + in + "[i];\n";
  for (const ElementwiseProgram::Statement& s : p.statements) {
    const std::string& out = p.outputs[static_cast<std::size_t>(s.output)];
    src += "    const " + type + " o_" + out + " = " + emit(p, s.root, dtype) + ";\n";
    src += "    out_" + out + "[i] = o_" + out + ";\n";
  }
  src += "  }\n}\n";
  return src;
}

}  // namespace gpulab::lab
