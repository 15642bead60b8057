#include "widgets/timing_bars.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace gpulab::gui {
namespace {

constexpr int kMargin = 10;
constexpr int kRowHeight = 20;
constexpr int kRowGap = 7;

// The same hues in light and dark themes: CPU warm, GPU parts cool, compute in the GPU's green.
const QColor kCpu(0xE0, 0x7B, 0x39);
const QColor kUpload(0x4A, 0x90, 0xD9);
const QColor kCompute(0x76, 0xB9, 0x00);
const QColor kDownload(0x8E, 0x6B, 0xD8);
const QColor kTotal(0x2F, 0xA3, 0x8F);

double niceCeiling(double v) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(v)));
  for (double step : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (step * magnitude >= v * (1 - 1e-9)) return step * magnitude;
  return 10 * magnitude;
}

QString tickLabel(double ms) {
  if (ms >= 1 || ms == 0) return QString::number(ms, 'g', 6);
  return QString::number(ms, 'g', 2);
}

// Maps milliseconds to 0..1 along the axis.
struct Axis {
  bool log = false;
  double lo = 0;
  double hi = 1;
  double at(double ms) const {
    if (!log) return std::clamp(ms / hi, 0.0, 1.0);
    return std::clamp((std::log10(std::max(ms, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)), 0.0, 1.0);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      for (double v = std::pow(10.0, std::ceil(std::log10(lo))); v <= hi * 1.0001; v *= 10) t.push_back(v);
    } else {
      const double step = niceCeiling(hi / 5);
      for (double v = 0; v <= hi * 1.0001; v += step) t.push_back(v);
    }
    return t;
  }
};

}  // namespace

TimingBars::TimingBars(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  setAttribute(Qt::WA_OpaquePaintEvent, false);
}

void TimingBars::setRun(const RunTiming& run) {
  run_ = run;
  const auto all = bars();
  double lo = 0, hi = 0;
  for (const Bar& b : all)
    if (b.ms > 0) {
      lo = lo == 0 ? b.ms : std::min(lo, b.ms);
      hi = std::max(hi, b.ms);
    }
  logarithmic_ = lo > 0 && hi / lo > kLogThreshold;
  updateGeometry();
  update();
}

void TimingBars::clear() {
  run_.reset();
  logarithmic_ = false;
  update();
}

std::vector<TimingBars::Bar> TimingBars::bars() const {
  std::vector<Bar> out;
  if (!run_) return out;
  const gpulab::Measurement& m = run_->measurement;
  if (const auto cpu = cpuMs(m)) {
    const int threads = m.cpu->threads;
    out.push_back({threads == 1  ? tr("CPU, 1 thread")
                   : threads > 1 ? tr("CPU, %1 threads").arg(threads)
                                 : tr("CPU"),
                   *cpu, kCpu});
  }
  const auto upload = uploadMs(m), compute = computeMs(m), download = downloadMs(m);
  // Transfers say how the host image was held: pinned (copied straight) or pageable (staged).
  const QString memory = m.gpu && !m.gpu->hostMemory.empty()
                             ? QStringLiteral(" (%1)").arg(QString::fromStdString(m.gpu->hostMemory))
                             : QString();
  if (upload) out.push_back({tr("GPU upload") + memory, *upload, kUpload});
  if (compute) out.push_back({tr("GPU compute"), *compute, kCompute});
  if (download) out.push_back({tr("GPU download") + memory, *download, kDownload});
  const int gpuParts = int(upload.has_value()) + int(compute.has_value()) + int(download.has_value());
  if (gpuParts > 1) out.push_back({tr("GPU end to end"), *gpuTotalMs(m), kTotal});
  return out;
}

QSize TimingBars::sizeHint() const {
  const QFontMetrics fm(font());
  const int rows = std::max<int>(3, static_cast<int>(bars().size()));
  // Title, bars, tick labels, verdict and its detail.
  return {460, 2 * kMargin + fm.height() + 10 + rows * (kRowHeight + kRowGap) + fm.height() + 8 + 2 * fm.height() + 6};
}

QSize TimingBars::minimumSizeHint() const { return {300, sizeHint().height()}; }

void TimingBars::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QPalette& pal = palette();
  const QFontMetrics fm(font());
  const QColor text = pal.color(QPalette::WindowText);
  QColor faint = text;
  faint.setAlphaF(0.55f);
  QColor grid = text;
  grid.setAlphaF(0.12f);

  QRect area = rect().adjusted(kMargin, kMargin, -kMargin, -kMargin);
  if (!run_) {
    p.setPen(faint);
    p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
               tr("No runs yet.\nCPU and GPU timings of every operation appear here, side by side."));
    return;
  }

  // Title: operation, then the image it ran on.
  const gpulab::Measurement& m = run_->measurement;
  const QString title = operationText(m);
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(text);
  const QFontMetrics bfm(bold);
  const QString shownTitle = bfm.elidedText(title, Qt::ElideRight, area.width());
  p.drawText(area.left(), area.top() + bfm.ascent(), shownTitle);
  const int titleWidth = bfm.horizontalAdvance(shownTitle);
  p.setFont(font());
  p.setPen(faint);
  p.drawText(area.left() + titleWidth + 10, area.top() + bfm.ascent(),
             fm.elidedText(imageText(m), Qt::ElideRight, std::max(0, area.width() - titleWidth - 10)));
  int y = area.top() + bfm.height() + 10;

  const auto all = bars();
  int labelWidth = 0;
  for (const Bar& b : all) labelWidth = std::max(labelWidth, fm.horizontalAdvance(b.label));
  labelWidth += 12;
  const int valueWidth = fm.horizontalAdvance(QStringLiteral("00000 ms")) + 10;
  const int barLeft = area.left() + labelWidth;
  const int barWidth = std::max(20, area.right() - valueWidth - barLeft);

  Axis axis;
  axis.log = logarithmic_;
  double lo = 0, hi = 0;
  for (const Bar& b : all)
    if (b.ms > 0) {
      lo = lo == 0 ? b.ms : std::min(lo, b.ms);
      hi = std::max(hi, b.ms);
    }
  if (hi <= 0) hi = 1;
  if (axis.log) {
    // The axis starts 0.4 decades below the smallest value, so its bar has a readable length, and
    // ends a little above the largest; the decades inside get ticks.
    axis.lo = lo / 2.5;
    axis.hi = hi * 1.15;
  } else {
    axis.hi = niceCeiling(hi);
  }

  const int barsTop = y;
  const int barsBottom = y + static_cast<int>(all.size()) * (kRowHeight + kRowGap) - kRowGap;
  // Grid and tick labels.
  const auto ticks = axis.ticks();
  for (double t : ticks) {
    const int x = barLeft + static_cast<int>(std::lround(axis.at(t) * barWidth));
    p.setPen(QPen(grid, 1));
    p.drawLine(x, barsTop - 3, x, barsBottom + 3);
    p.setPen(faint);
    const QString label = tickLabel(t);
    const int w = fm.horizontalAdvance(label);
    p.drawText(std::clamp(x - w / 2, barLeft - w / 2, area.right() - w), barsBottom + 4 + fm.ascent(), label);
  }
  p.setPen(faint);
  const QString unit = axis.log ? tr("ms, log scale") : tr("ms");
  p.drawText(area.left(), barsBottom + 4 + fm.ascent(), unit);

  for (const Bar& b : all) {
    p.setPen(text);
    p.drawText(area.left(), y + (kRowHeight + fm.ascent() - fm.descent()) / 2, b.label);
    const int length = std::max(2, static_cast<int>(std::lround(axis.at(b.ms) * barWidth)));
    QPainterPath path;
    path.addRoundedRect(QRectF(barLeft, y + 1, length, kRowHeight - 2), 3, 3);
    p.fillPath(path, b.colour);
    p.setPen(text);
    p.drawText(barLeft + length + 6, y + (kRowHeight + fm.ascent() - fm.descent()) / 2, formatMs(b.ms));
    y += kRowHeight + kRowGap;
  }

  // The verdict, in words: compute alone, then end to end when copies were timed.
  QString verdict, detail;
  QColor verdictColour = text;
  if (const auto speedup = m.speedup()) {
    if (*speedup >= 1) {
      verdict = tr("GPU compute %1 faster than the CPU").arg(formatSpeedup(*speedup));
      verdictColour = kCompute.darker(pal.color(QPalette::Window).lightness() > 128 ? 130 : 90);
    } else {
      verdict = tr("CPU %1 faster than GPU compute").arg(formatSpeedup(1 / *speedup));
      verdictColour = kCpu;
    }
    if (const auto e2e = m.speedupEndToEnd(); e2e && gpuTotalMs(m) != computeMs(m))
      detail = *e2e >= 1 ? tr("End to end, with the copies: GPU %1 faster").arg(formatSpeedup(*e2e))
                         : tr("End to end, with the copies: CPU %1 faster").arg(formatSpeedup(1 / *e2e));
  } else if (!m.cpu && m.gpu && !computeMs(m)) {
    detail = tr("A transfer alone: no compute to compare");
  }
  int lineY = barsBottom + 4 + fm.height() + 8 + bfm.ascent();
  if (!verdict.isEmpty()) {
    p.setFont(bold);
    p.setPen(verdictColour);
    p.drawText(area.left(), lineY, bfm.elidedText(verdict, Qt::ElideRight, area.width()));
    lineY += bfm.height() + 2;
  }
  if (!detail.isEmpty()) {
    p.setFont(font());
    p.setPen(faint);
    p.drawText(area.left(), lineY, fm.elidedText(detail, Qt::ElideRight, area.width()));
  }
}

}  // namespace gpulab::gui
