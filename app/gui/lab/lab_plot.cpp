#include "lab/lab_plot.hpp"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace gpulab::gui {

namespace {

const QColor kCeilingColour(0x99, 0x99, 0x99);
const QColor kPalette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                           QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b)};

/// Counts of elements or bytes: "512", "4K", "64M" where a power of 1024 divides them, "8059",
/// "1.5M" otherwise. Matrix sides (`binary` false) stay plain numbers: "1024", "4096".
QString sizeLabel(double v, bool binary) {
  if (!binary || v < 1024) return QString::number(std::round(v), 'f', 0);
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  double value = v;
  while (value >= 1024.0 && i < 4 && std::fmod(value, 1024.0) == 0.0) {
    value /= 1024.0;
    ++i;
  }
  if (i > 0) return QString::number(value, 'g', 4) + QLatin1String(suffixes[i]);
  if (v < 1e6) return QString::number(std::round(v), 'f', 0);
  for (value = v; value >= 1024.0 && i < 4; value /= 1024.0) ++i;
  return QString::number(value, 'g', 3) + QLatin1String(suffixes[i]);
}

QString valueLabel(double v) { return v >= 1 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3); }

/// Tick values between lo and hi on a log axis: 1-2-5 per decade over a short range, decades over a long one.
std::vector<double> logTicks(double lo, double hi) {
  const int first = static_cast<int>(std::floor(std::log10(lo)));
  const int last = static_cast<int>(std::ceil(std::log10(hi)));
  auto with = [&](std::initializer_list<double> mantissas) {
    std::vector<double> ticks;
    for (int d = first; d <= last; ++d)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, d);
        if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push_back(v);
      }
    return ticks;
  };
  if (last - first > 3) return with({1.0});
  std::vector<double> ticks = with({1.0, 2.0, 5.0});
  if (ticks.size() < 3) ticks = with({1.0, 2.0, 3.0, 5.0, 7.0});  // less than a decade shown
  if (ticks.size() < 3) ticks = with({1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0});
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
  // The CPU in the text's grey, readable on a light or a dark base.
  QColor cpu = palette().color(QPalette::Text);
  cpu.setAlpha(200);
  if (records_.empty()) return cpu;
  const std::vector<std::string> names = lab::implNames(parseEnumOrThrow<lab::Experiment>(records_.front().experiment));
  int gpuIndex = 0;
  for (const std::string& n : names) {
    if (n.rfind("cpu", 0) == 0 && records_.front().experiment != "transfer") {
      if (QString::fromStdString(n) == impl) return cpu;
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
  std::map<QString, QString> cpuDevice;  // "CPU (16 threads)": the CPU lines say how many threads
  for (const lab::Record& r : records_) {
    if (QString::fromStdString(r.variant) != variant_) continue;
    const QString impl = QString::fromStdString(r.impl);
    if (std::find(order.begin(), order.end(), impl) == order.end()) order.push_back(impl);
    gpu[impl] = r.gpu;
    if (!r.gpu && !r.device.empty()) cpuDevice[impl] = QString::fromStdString(r.device);
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
  auto add = [&result](QString name, QString legend, QColor colour, bool isDashed,
                       const std::map<double, double>& values) {
    if (values.empty()) return;
    Series s{std::move(name), std::move(colour), isDashed, {}, std::move(legend)};
    for (const auto& [x, y] : values)
      if (x > 0 && y > 0) s.points.emplace_back(x, y);
    if (!s.points.empty()) result.push_back(std::move(s));
  };
  for (const auto& [name, values] : ceiling) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
    const QString legend = lo->second == hi->second
                               ? tr("%1 ceiling: %2 %3").arg(name, valueLabel(hi->second), axisLabelY())
                               : tr("%1 ceiling").arg(name);
    add(name + tr(" (ceiling)"), legend, kCeilingColour, true, values);
  }
  for (const QString& impl : order) {
    const QColor colour = colourOf(impl);
    const bool hasSolid = solid.count(impl) && !solid[impl].empty();
    const QString legend = cpuDevice.count(impl) ? impl + QStringLiteral(", ") + cpuDevice[impl] : impl;
    if (hasSolid)
      add(gpu[impl] && mode_ == Mode::Time && dashed.count(impl) ? impl + tr(" compute") : impl, legend, colour, false,
          solid[impl]);
    if (dashed.count(impl))
      add(hasSolid ? impl + tr(" with copies") : impl, hasSolid ? QString() : impl, colour, hasSolid, dashed[impl]);
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

double LabPlot::inL2UpTo() const {
  if (mode_ != Mode::Rate) return 0;
  double lastInL2 = 0;
  for (const lab::Record& r : records_)
    if (QString::fromStdString(r.variant) == variant_ && r.gpu && !r.withCopies && r.note == lab::kInL2Note)
      lastInL2 = std::max(lastInL2, r.size);
  if (lastInL2 <= 0) return 0;
  double next = 0;
  for (const lab::Record& r : records_)
    if (QString::fromStdString(r.variant) == variant_ && r.size > lastInL2 && (next == 0 || r.size < next))
      next = r.size;
  return next > 0 ? std::sqrt(lastInL2 * next) : lastInL2;
}

QString LabPlot::title() const {
  if (mode_ == Mode::Time) return tr("Time against size (log-log)");
  QString ceiling;
  for (const lab::Record& r : records_)
    if (QString::fromStdString(r.variant) == variant_ && r.ceiling > 0) {
      ceiling = QString::fromStdString(r.ceilingName);
      break;
    }
  return ceiling.isEmpty() ? tr("%1 against size (log-log)").arg(axisLabelY())
                           : tr("%1 against the %2 ceiling (log-log)").arg(axisLabelY(), ceiling);
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

namespace {
constexpr int kLegendSwatch = 26;  // line sample
constexpr int kLegendGap = 16;     // between entries

int legendEntryWidth(const QFontMetrics& fm, const QString& name) {
  return kLegendSwatch + 6 + fm.horizontalAdvance(name) + kLegendGap;
}
}  // namespace

std::vector<LabPlot::Series> LabPlot::legendEntries(const std::vector<Series>& lines) const {
  std::vector<Series> entries;
  bool withCopies = false;
  for (const Series& s : lines) {
    if (s.legend.isEmpty()) {
      withCopies = true;
      continue;
    }
    entries.push_back({s.legend, s.colour, s.dashed, {}, s.legend});
  }
  if (withCopies)
    entries.push_back({tr("dashed: with copies (upload + compute + download)"),
                       palette().color(QPalette::PlaceholderText),
                       true,
                       {},
                       {}});
  return entries;
}

int LabPlot::legendRows(const std::vector<Series>& entries, int width) const {
  const QFontMetrics fm(font());
  int rows = entries.empty() ? 0 : 1;
  int x = 0;
  for (const Series& s : entries) {
    const int w = legendEntryWidth(fm, s.name);
    if (x > 0 && x + w > width) {
      ++rows;
      x = 0;
    }
    x += w;
  }
  return rows;
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
    p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
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

  // Layout, top to bottom: title, plot area, tick labels, x-axis label, legend.
  const QFontMetrics fm(font());
  const int line = fm.height();
  const int left = fm.horizontalAdvance(QStringLiteral("0.0001")) + line + 16;
  const int right = 16;
  const std::vector<Series> legend = legendEntries(lines);
  const int legendHeight = legendRows(legend, width() - left - right) * (line + 4);
  const int top = line + 14;
  const QRect area(left, top, width() - left - right, height() - top - 2 * line - 18 - legendHeight - 6);
  if (area.width() < 40 || area.height() < 40) return;
  auto px = [&](double x) { return area.left() + (std::log10(x) - lxLo) / (lxHi - lxLo) * area.width(); };
  auto py = [&](double y) { return area.bottom() - (std::log10(y) - lyLo) / (lyHi - lyLo) * area.height(); };

  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(text);
  p.drawText(QRect(area.left(), 4, area.width(), line + 4), Qt::AlignLeft | Qt::AlignVCenter,
             QFontMetrics(bold).elidedText(title(), Qt::ElideRight, area.width()));
  p.setFont(font());

  // Sizes whose working set fits in L2, shaded: their rates are not DRAM rates.
  if (const double edge = inL2UpTo(); edge > 0) {
    const double x1 = std::min<double>(px(edge), area.right());
    if (x1 > area.left()) {
      QColor shade = palette().color(QPalette::Highlight);
      shade.setAlpha(40);
      const QRectF band(area.left(), area.top(), x1 - area.left(), area.height());
      p.fillRect(band, shade);
      const QString label = tr("fits in L2");
      if (fm.horizontalAdvance(label) + 8 < band.width()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(band.adjusted(0, 4, 0, 0), Qt::AlignHCenter | Qt::AlignTop, label);
      }
    }
  }

  // Grid and ticks: x at the measured sizes (labels that would overlap are left out), y 1-2-5.
  const bool binary = records_.front().experiment != "matmul" && records_.front().experiment != "transpose";
  const std::vector<double> xTicks = sizes.size() <= 64 ? sizes : logTicks(std::pow(10, lxLo), std::pow(10, lxHi));
  const std::vector<double> yTicks = logTicks(std::pow(10, lyLo), std::pow(10, lyHi));
  const QColor grid = palette().color(QPalette::Mid);
  p.setPen(QPen(grid, 0.5));
  for (double x : xTicks) p.drawLine(QPointF(px(x), area.top()), QPointF(px(x), area.bottom()));
  for (double y : yTicks) p.drawLine(QPointF(area.left(), py(y)), QPointF(area.right(), py(y)));
  p.setPen(QPen(text, 1));
  p.drawRect(area);
  double lastRight = -1e9;
  for (double x : xTicks) {
    const QString label = sizeLabel(x, binary);
    const double w = fm.horizontalAdvance(label);
    const double x0 = std::clamp(px(x) - w / 2, 0.0, width() - w);
    if (x0 < lastRight + 4) continue;  // would overlap the previous label
    p.drawText(QPointF(x0, area.bottom() + fm.ascent() + 4), label);
    lastRight = x0 + w;
  }
  for (double y : yTicks) {
    const QString label = valueLabel(y);
    p.drawText(QPointF(area.left() - fm.horizontalAdvance(label) - 4, py(y) + fm.ascent() / 2.0 - 1), label);
  }
  p.drawText(QRect(area.left(), area.bottom() + line + 8, area.width(), line + 4), Qt::AlignHCenter, axisLabelX());
  p.save();
  p.translate(line / 2.0 + 2, area.center().y());
  p.rotate(-90);
  p.drawText(QRect(-area.height() / 2, -line / 2, area.height(), line + 2), Qt::AlignHCenter, axisLabelY());
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
        tr("%1 wins from ~%2").arg(QString::fromStdString(c.gpuImpl), sizeLabel(std::round(c.estimatedSize), binary));
    const double w = fm.horizontalAdvance(label);
    const double lx = x + 4 + w > area.right() ? x - 4 - w : x + 4;
    const QRectF box(lx - 2, area.bottom() - 6 - (row + 1) * (line + 2), w + 4, line + 2);
    QColor back = palette().color(QPalette::Base);
    back.setAlpha(200);
    p.fillRect(box, back);
    p.setPen(colour);
    p.drawText(box, Qt::AlignCenter, label);
    ++row;
  }
  p.setClipping(false);

  // Legend under the axes, entries flowing left to right.
  int lx = area.left();
  int ly = area.bottom() + 2 * line + 18;
  for (const Series& s : legend) {
    const int w = legendEntryWidth(fm, s.name);
    if (lx > area.left() && lx + w > area.left() + area.width()) {
      lx = area.left();
      ly += line + 4;
    }
    QPen pen(s.colour, 2);
    if (s.dashed) pen.setStyle(Qt::DashLine);
    p.setPen(pen);
    const double mid = ly + line / 2.0;
    p.drawLine(QPointF(lx, mid), QPointF(lx + kLegendSwatch, mid));
    p.setPen(QPen(s.colour, 1.5));
    p.setBrush(s.dashed ? palette().color(QPalette::Base) : s.colour);
    p.drawEllipse(QPointF(lx + kLegendSwatch / 2.0, mid), 3, 3);
    p.setBrush(Qt::NoBrush);
    p.setPen(text);
    p.drawText(QPointF(lx + kLegendSwatch + 6, ly + fm.ascent()), s.name);
    lx += w;
  }
}

}  // namespace gpulab::gui
