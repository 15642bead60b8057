#include "lab_plot.hpp"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace gpulab::gui {

namespace {

const QColor kCpuColour(0x44, 0x44, 0x44);
const QColor kCeilingColour(0x99, 0x99, 0x99);
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                           QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b)};

/// "512", "4K", "1.5M", "2G" (powers of 1024 where exact, else decimal with SI-like suffix).
QString sizeLabel(double v) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  double value = v;
  while (value >= 1024.0 && i < 4 && std::fmod(value, 1024.0) == 0.0) {
    value /= 1024.0;
    ++i;
  }
  if (i == 0 && v >= 10000) return QString::number(v, 'g', 3);
  return QString::number(value, 'g', 4) + QLatin1String(suffixes[i]);
}

QString valueLabel(double v) { return v >= 1 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3); }

/// Tick values between lo and hi on a log axis: 1-2-5 per decade over a short range, decades over a long one.
std::vector<double> logTicks(double lo, double hi) {
  std::vector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = last - first <= 3;
  for (int d = first; d <= last; ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      if (!fine && m != 1.0) continue;
      const double v = m * std::pow(10.0, d);
      if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push_back(v);
    }
  return ticks;
}

}  // namespace

LabPlot::LabPlot(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("labPlot"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void LabPlot::setData(std::vector<lab::Record> records, std::vector<lab::Crossover> crossovers) {
  records_ = std::move(records);
  crossovers_ = std::move(crossovers);
  const QStringList present = variants();
  if (!present.contains(variant_)) variant_ = present.isEmpty() ? QString() : present.front();
  update();
}

void LabPlot::clear() { setData({}, {}); }

void LabPlot::setMode(Mode mode) {
  mode_ = mode;
  update();
}

void LabPlot::setVariant(const QString& variant) {
  variant_ = variant;
  update();
}

QStringList LabPlot::variants() const {
  QStringList list;
  for (const lab::Record& r : records_) {
    const QString v = QString::fromStdString(r.variant);
    if (!v.isEmpty() && !list.contains(v)) list.push_back(v);
  }
  return list;
}

QColor LabPlot::colourOf(const QString& impl) const {
  if (records_.empty()) return kCpuColour;
  const std::vector<std::string> names = lab::implNames(lab::parseExperiment(records_.front().experiment));
  int gpuIndex = 0;
  for (const std::string& n : names) {
    if (n.rfind("cpu", 0) == 0 && records_.front().experiment != "transfer") {
      if (QString::fromStdString(n) == impl) return kCpuColour;
      continue;
    }
    if (QString::fromStdString(n) == impl) return kPalette[gpuIndex % std::size(kPalette)];
    ++gpuIndex;
  }
  return kPalette[std::size(kPalette) - 1];
}

std::vector<LabPlot::Series> LabPlot::series() const {
  // impl -> (size -> value), in the order implementations first appear.
  std::vector<QString> order;
  std::map<QString, std::map<double, double>> solid, dashed, ceiling;
  std::map<QString, bool> gpu;
  for (const lab::Record& r : records_) {
    if (QString::fromStdString(r.variant) != variant_) continue;
    const QString impl = QString::fromStdString(r.impl);
    if (std::find(order.begin(), order.end(), impl) == order.end()) order.push_back(impl);
    gpu[impl] = r.gpu;
    if (mode_ == Mode::Time) {
      if (r.withCopies)
        dashed[impl][r.size] = r.medianMs;  // measured as a whole: replaces the sum of parts
      else {
        solid[impl][r.size] = r.medianMs;
        if (r.gpu && (r.uploadMs > 0 || r.downloadMs > 0) && !dashed[impl].count(r.size))
          dashed[impl][r.size] = r.endToEndMs();
      }
    } else if (!r.withCopies && r.rate() > 0) {
      solid[impl][r.size] = r.rate();
      if (r.ceiling > 0) ceiling[QString::fromStdString(r.ceilingName)][r.size] = r.ceiling;
    }
  }

  std::vector<Series> result;
  auto add = [&result](QString name, QColor colour, bool isDashed, const std::map<double, double>& values) {
    if (values.empty()) return;
    Series s{std::move(name), std::move(colour), isDashed, {}};
    for (const auto& [x, y] : values)
      if (x > 0 && y > 0) s.points.emplace_back(x, y);
    if (!s.points.empty()) result.push_back(std::move(s));
  };
  for (const auto& [name, values] : ceiling) add(name + tr(" (ceiling)"), kCeilingColour, true, values);
  for (const QString& impl : order) {
    const QColor colour = colourOf(impl);
    const bool hasSolid = solid.count(impl) && !solid[impl].empty();
    if (hasSolid)
      add(gpu[impl] && mode_ == Mode::Time && dashed.count(impl) ? impl + tr(" compute") : impl, colour, false,
          solid[impl]);
    if (dashed.count(impl)) add(hasSolid ? impl + tr(" with copies") : impl, colour, hasSolid, dashed[impl]);
  }
  return result;
}

std::vector<lab::Crossover> LabPlot::markedCrossovers() const {
  std::vector<lab::Crossover> marked;
  for (const lab::Crossover& c : crossovers_)
    if (QString::fromStdString(c.variant) == variant_ && !c.endToEnd && c.outcome == lab::Crossover::Outcome::At)
      marked.push_back(c);
  return marked;
}

QString LabPlot::axisLabelX() const {
  if (records_.empty()) return {};
  const std::string& e = records_.front().experiment;
  if (e == "matmul") return tr("N (N x N x N; cube root of m*n*k otherwise)");
  if (e == "transpose") return tr("N (N x N; square root of rows*cols otherwise)");
  if (e == "transfer") return tr("bytes per array");
  return tr("elements");
}

QString LabPlot::axisLabelY() const {
  if (mode_ == Mode::Time) return tr("time (ms)");
  return !records_.empty() && records_.front().experiment == "matmul" ? tr("GFLOP/s") : tr("GB/s");
}

QSize LabPlot::sizeHint() const { return {640, 420}; }
QSize LabPlot::minimumSizeHint() const { return {320, 220}; }

void LabPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const QColor text = palette().color(QPalette::Text);
  const std::vector<Series> lines = series();
  if (lines.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
               records_.empty() ? tr("Run an experiment: its times and rates are drawn here against size.")
                                : tr("Nothing to draw in this view for this variant."));
    return;
  }

  // Data range, padded by a small factor on log axes.
  double xLo = std::numeric_limits<double>::max(), xHi = 0, yLo = xLo, yHi = 0;
  std::vector<double> sizes;
  for (const Series& s : lines)
    for (const QPointF& pt : s.points) {
      xLo = std::min(xLo, pt.x());
      xHi = std::max(xHi, pt.x());
      yLo = std::min(yLo, pt.y());
      yHi = std::max(yHi, pt.y());
      if (std::find(sizes.begin(), sizes.end(), pt.x()) == sizes.end()) sizes.push_back(pt.x());
    }
  std::sort(sizes.begin(), sizes.end());
  if (xHi <= xLo) {  // one size only: give it some room
    xLo /= 2;
    xHi *= 2;
  }
  if (yHi <= yLo) {
    yLo /= 2;
    yHi *= 2;
  }
  const double lxLo = std::log10(xLo) - 0.05 * std::log10(xHi / xLo),
               lxHi = std::log10(xHi) + 0.05 * std::log10(xHi / xLo);
  const double lyLo = std::log10(yLo) - 0.08 * std::log10(yHi / yLo),
               lyHi = std::log10(yHi) + 0.08 * std::log10(yHi / yLo);

  const QFontMetrics fm(font());
  const int left = fm.horizontalAdvance(QStringLiteral("0.0001")) + fm.height() + 16;
  const QRect area(left, 12, width() - left - 16, height() - 12 - 2 * fm.height() - 18);
  if (area.width() < 40 || area.height() < 40) return;
  auto px = [&](double x) { return area.left() + (std::log10(x) - lxLo) / (lxHi - lxLo) * area.width(); };
  auto py = [&](double y) { return area.bottom() - (std::log10(y) - lyLo) / (lyHi - lyLo) * area.height(); };

  // Grid and ticks: x at the measured sizes when there are few, else 1-2-5 per decade.
  const std::vector<double> xTicks = sizes.size() <= 14 ? sizes : logTicks(std::pow(10, lxLo), std::pow(10, lxHi));
  const std::vector<double> yTicks = logTicks(std::pow(10, lyLo), std::pow(10, lyHi));
  const QColor grid = palette().color(QPalette::Mid);
  p.setPen(QPen(grid, 0.5));
  for (double x : xTicks) p.drawLine(QPointF(px(x), area.top()), QPointF(px(x), area.bottom()));
  for (double y : yTicks) p.drawLine(QPointF(area.left(), py(y)), QPointF(area.right(), py(y)));
  p.setPen(QPen(text, 1));
  p.drawRect(area);
  double lastRight = -1e9;
  for (double x : xTicks) {
    const QString label = sizeLabel(x);
    const double w = fm.horizontalAdvance(label);
    const double x0 = px(x) - w / 2;
    if (x0 < lastRight + 4) continue;  // would overlap the previous label
    p.drawText(QPointF(x0, area.bottom() + fm.ascent() + 4), label);
    lastRight = x0 + w;
  }
  for (double y : yTicks) {
    const QString label = valueLabel(y);
    p.drawText(QPointF(area.left() - fm.horizontalAdvance(label) - 4, py(y) + fm.ascent() / 2.0 - 1), label);
  }
  p.drawText(QRect(area.left(), area.bottom() + fm.height() + 8, area.width(), fm.height() + 4), Qt::AlignHCenter,
             axisLabelX());
  p.save();
  p.translate(fm.height() / 2.0 + 2, area.center().y());
  p.rotate(-90);
  p.drawText(QRect(-area.height() / 2, -fm.height() / 2, area.height(), fm.height() + 2), Qt::AlignHCenter,
             axisLabelY());
  p.restore();

  // Series.
  p.setClipRect(area.adjusted(-4, -4, 4, 4));
  for (const Series& s : lines) {
    QPen pen(s.colour, 2);
    if (s.dashed) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    QPainterPath path;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const QPointF at(px(s.points[i].x()), py(s.points[i].y()));
      if (i == 0)
        path.moveTo(at);
      else
        path.lineTo(at);
    }
    p.drawPath(path);
    p.setPen(QPen(s.colour, 1.5));
    p.setBrush(s.dashed ? palette().color(QPalette::Base) : s.colour);
    for (const QPointF& pt : s.points) p.drawEllipse(QPointF(px(pt.x()), py(pt.y())), 3, 3);
    p.setBrush(Qt::NoBrush);
  }

  // Crossovers: where the GPU (compute only) starts to win, in its colour, on the time plot.
  int row = 0;
  for (const lab::Crossover& c : mode_ == Mode::Time ? markedCrossovers() : std::vector<lab::Crossover>{}) {
    if (c.estimatedSize <= 0) continue;
    const double x = px(c.estimatedSize);
    const QColor colour = colourOf(QString::fromStdString(c.gpuImpl));
    p.setPen(QPen(colour, 1.5, Qt::DotLine));
    p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
    const QString label =
        tr("%1 wins from ~%2").arg(QString::fromStdString(c.gpuImpl), sizeLabel(std::round(c.estimatedSize)));
    p.setPen(colour);
    const double w = fm.horizontalAdvance(label);
    const double lx = x + 4 + w > area.right() ? x - 4 - w : x + 4;
    p.drawText(QPointF(lx, area.bottom() - 6 - row * (fm.height() + 2)), label);
    ++row;
  }
  p.setClipping(false);

  // Legend, top left inside the plot.
  int legendWidth = 0;
  for (const Series& s : lines) legendWidth = std::max(legendWidth, fm.horizontalAdvance(s.name));
  const QRect legend(area.left() + 8, area.top() + 8, legendWidth + 40,
                     static_cast<int>(lines.size()) * (fm.height() + 2) + 8);
  QColor back = palette().color(QPalette::Base);
  back.setAlpha(220);
  p.setPen(QPen(grid, 1));
  p.setBrush(back);
  p.drawRect(legend);
  p.setBrush(Qt::NoBrush);
  int y = legend.top() + 4;
  for (const Series& s : lines) {
    QPen pen(s.colour, 2);
    if (s.dashed) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    const double mid = y + fm.height() / 2.0;
    p.drawLine(QPointF(legend.left() + 6, mid), QPointF(legend.left() + 30, mid));
    p.setPen(text);
    p.drawText(QPointF(legend.left() + 36, y + fm.ascent()), s.name);
    y += fm.height() + 2;
  }
}

}  // namespace gpulab::gui
