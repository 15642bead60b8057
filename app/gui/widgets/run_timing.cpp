#include "widgets/run_timing.hpp"

#include <cmath>

namespace gpulab::gui {

QString formatMs(double ms) {
  if (!std::isfinite(ms)) return QStringLiteral("-");
  if (ms >= 100) return QString::number(ms, 'f', 0) + QStringLiteral(" ms");
  if (ms >= 10) return QString::number(ms, 'f', 1) + QStringLiteral(" ms");
  if (ms >= 1) return QString::number(ms, 'f', 2) + QStringLiteral(" ms");
  return QString::number(ms, 'g', 3) + QStringLiteral(" ms");
}

QString formatSpeedup(double ratio) {
  const int decimals = ratio >= 100 ? 0 : ratio >= 10 ? 1 : 2;
  return QString::number(ratio, 'f', decimals) + QStringLiteral("x");
}

}  // namespace gpulab::gui
