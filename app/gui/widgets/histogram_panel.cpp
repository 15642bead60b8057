#include "widgets/histogram_panel.hpp"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "widgets/run_timing.hpp"

namespace gpulab::gui {

// ---------------------------------------------------------------------------------------------
// ChannelPlot

ChannelPlot::ChannelPlot(Style style, QWidget* parent) : QWidget(parent), style_(style) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QColor ChannelPlot::channelColour(int c, int n) {
  if (n == 1) return QColor(0xD0, 0xD3, 0xD8);
  if (n == 2) return c == 0 ? QColor(0xD0, 0xD3, 0xD8) : QColor(0x9E, 0x9E, 0x9E);
  switch (c) {
    case 0:
      return QColor(0xEF, 0x53, 0x50);
    case 1:
      return QColor(0x66, 0xBB, 0x6A);
    case 2:
      return QColor(0x42, 0xA5, 0xF5);
    default:
      return QColor(0xBD, 0xBD, 0xBD);
  }
}

void ChannelPlot::setSeries(std::vector<std::vector<double>> values, const QString& xFrom, const QString& xTo) {
  values_ = std::move(values);
  xFrom_ = xFrom;
  xTo_ = xTo;
  update();
}

void ChannelPlot::setSecondary(std::vector<std::vector<double>> values) {
  secondary_ = std::move(values);
  update();
}

void ChannelPlot::clear() {
  values_.clear();
  secondary_.clear();
  update();
}

void ChannelPlot::setTitle(const QString& title) {
  title_ = title;
  update();
}

void ChannelPlot::setLogScale(bool on) {
  log_ = on;
  update();
}

void ChannelPlot::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics metrics(font());
  const QRectF frame = QRectF(rect()).adjusted(4, metrics.height() + 4, -4, -metrics.height() - 4);
  p.fillRect(frame, palette().color(QPalette::Base));
  p.setPen(palette().color(QPalette::Mid));
  p.drawRect(frame);
  p.setPen(palette().color(QPalette::WindowText));
  p.drawText(QRectF(4, 0, width() - 8, metrics.height() + 2), Qt::AlignLeft | Qt::AlignVCenter, title_);
  if (values_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(frame, Qt::AlignCenter,
               style_ == Style::Profile ? tr("Draw a line (Line tool, or Ctrl+drag)") : tr("No data"));
    return;
  }
  p.setPen(palette().color(QPalette::PlaceholderText));
  p.drawText(QRectF(4, frame.bottom() + 2, width() / 2.0, metrics.height()), Qt::AlignLeft, xFrom_);
  p.drawText(QRectF(width() / 2.0, frame.bottom() + 2, width() / 2.0 - 4, metrics.height()), Qt::AlignRight, xTo_);

  // The y range: counts from 0 (histograms), or the profiles' own range. A linear histogram is scaled
  // to its inner bins: the end bins hold every clipped black or white sample and would flatten the
  // rest; they run off the top instead.
  double lo = 0, hi = 0;
  bool first = true;
  const bool clipEnds = style_ == Style::Histogram && !log_;
  for (const auto* set : {&values_, &secondary_})
    for (const auto& v : *set)
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double x = v[i];
        if (!std::isfinite(x)) continue;
        if (clipEnds && v.size() > 4 && (i == 0 || i + 1 == v.size())) continue;
        const double y = log_ && style_ == Style::Histogram ? std::log10(1.0 + x) : x;
        if (first) lo = hi = y;
        lo = std::min(lo, y);
        hi = std::max(hi, y);
        first = false;
      }
  if (style_ == Style::Histogram) lo = 0;
  if (hi <= lo) hi = lo + 1;
  const QRectF area = frame.adjusted(1, 3, -1, -1);
  auto toY = [&](double v) {
    const double y = log_ && style_ == Style::Histogram ? std::log10(1.0 + std::max(0.0, v)) : v;
    return std::max(area.top() - 2, area.bottom() - (y - lo) / (hi - lo) * area.height());
  };
  auto draw = [&](const std::vector<std::vector<double>>& set, bool dashed) {
    const int n = static_cast<int>(set.size());
    for (int c = 0; c < n; ++c) {
      const std::vector<double>& v = set[c];
      if (v.empty()) continue;
      const double step =
          v.size() > 1 ? area.width() / static_cast<double>(v.size() - (style_ == Style::Histogram ? 0 : 1)) : 0.0;
      QPainterPath path;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double x = area.left() + step * static_cast<double>(i) + (style_ == Style::Histogram ? step / 2 : 0);
        const double y = std::isfinite(v[i]) ? toY(v[i]) : area.bottom();
        if (i == 0)
          path.moveTo(x, y);
        else
          path.lineTo(x, y);
      }
      QColor colour = channelColour(c, n);
      if (style_ == Style::Histogram && !dashed) {
        QPainterPath fill = path;
        fill.lineTo(area.left() + step * static_cast<double>(v.size() - 1) + step / 2, area.bottom());
        fill.lineTo(area.left() + step / 2, area.bottom());
        fill.closeSubpath();
        QColor translucent = colour;
        translucent.setAlpha(n == 1 ? 110 : 60);
        p.fillPath(fill, translucent);
      }
      p.setPen(QPen(colour, dashed ? 1.2 : 1.4, dashed ? Qt::DashLine : Qt::SolidLine));
      p.setBrush(Qt::NoBrush);
      p.drawPath(path);
    }
  };
  draw(values_, false);
  draw(secondary_, true);
  if (style_ == Style::Profile) {  // the value range, at the right of the title row
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRectF(4, 0, width() - 8, metrics.height() + 2), Qt::AlignRight | Qt::AlignVCenter,
               QStringLiteral("%1 .. %2").arg(QString::number(lo, 'g', 4), QString::number(hi, 'g', 4)));
  }
}

// ---------------------------------------------------------------------------------------------
// HistogramPanel

HistogramPanel::HistogramPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("histogramPanel"));
  photoPlot_ = new ChannelPlot(ChannelPlot::Style::Histogram);
  photoPlot_->setObjectName(QStringLiteral("histogramPhoto"));
  photoPlot_->setTitle(tr("Photo"));
  resultPlot_ = new ChannelPlot(ChannelPlot::Style::Histogram);
  resultPlot_->setObjectName(QStringLiteral("histogramResult"));
  resultPlot_->setTitle(tr("Result"));
  profilePlot_ = new ChannelPlot(ChannelPlot::Style::Profile);
  profilePlot_->setObjectName(QStringLiteral("lineProfile"));
  profilePlot_->setTitle(tr("Profile: photo solid, result dashed"));
  photoTime_ = new QLabel;
  resultTime_ = new QLabel;
  for (QLabel* l : {photoTime_, resultTime_}) {
    l->setEnabled(false);  // secondary text
    l->setWordWrap(true);
  }
  log_ = new QCheckBox(tr("Log scale"));
  log_->setObjectName(QStringLiteral("histogramLog"));
  log_->setToolTip(tr("Counts on a logarithmic scale: small bins become visible"));
  autoLevels_ = new QPushButton(tr("Auto levels"));
  autoLevels_->setObjectName(QStringLiteral("histogramAutoLevels"));
  autoLevels_->setToolTip(
      tr("Stretch each channel between its 0.5% and 99.5% percentiles (the auto-levels "
         "filter, GPU and CPU)"));

  auto* bar = new QHBoxLayout;
  bar->addWidget(log_);
  bar->addStretch(1);
  bar->addWidget(autoLevels_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 6);
  layout->setSpacing(2);
  layout->addLayout(bar);
  layout->addWidget(photoPlot_, 2);
  layout->addWidget(photoTime_);
  layout->addWidget(resultPlot_, 2);
  layout->addWidget(resultTime_);
  layout->addWidget(profilePlot_, 2);

  connect(log_, &QCheckBox::toggled, this, &HistogramPanel::setLogScale);
  connect(autoLevels_, &QPushButton::clicked, this, &HistogramPanel::autoLevelsRequested);
  setPhoto(std::nullopt);
  setResult(std::nullopt);
}

void HistogramPanel::setLogScale(bool on) {
  log_->setChecked(on);
  photoPlot_->setLogScale(on);
  resultPlot_->setLogScale(on);
}

bool HistogramPanel::logScale() const noexcept { return log_->isChecked(); }

std::vector<std::vector<double>> HistogramPanel::curves(const gpulab::Histogram& h) {
  std::vector<std::vector<double>> out(h.channels);
  for (int c = 0; c < h.channels; ++c) {
    out[c].resize(h.bins);
    for (int b = 0; b < h.bins; ++b) out[c][b] = h.at(c, b);
  }
  return out;
}

QString HistogramPanel::timeText(const std::optional<Entry>& e) {
  if (!e) return {};
  QStringList parts;
  if (e->gpuMs) parts << tr("GPU %1").arg(formatMs(*e->gpuMs));
  if (e->cpuMs) parts << tr("CPU (OpenCV, %1 threads) %2").arg(e->cpuThreads).arg(formatMs(*e->cpuMs));
  QString text = parts.join(QStringLiteral(" · "));
  if (!e->gpuMs && !e->gpuNote.isEmpty()) text += QStringLiteral(" · ") + e->gpuNote;
  return text;
}

void HistogramPanel::setPhoto(const std::optional<Entry>& e) {
  if (!e) {
    photoPlot_->clear();
  } else {
    const auto& h = e->histogram;
    photoPlot_->setSeries(curves(h), QString::number(h.channels ? h.lo[0] : 0, 'g', 4),
                          QString::number(h.channels ? h.hi[0] : 0, 'g', 4));
  }
  photoTime_->setText(timeText(e));
  photoTime_->setVisible(e.has_value());
}

void HistogramPanel::setResult(const std::optional<Entry>& e) {
  if (!e) {
    resultPlot_->clear();
    resultPlot_->setTitle(tr("Result (apply a filter)"));
  } else {
    const auto& h = e->histogram;
    resultPlot_->setTitle(tr("Result"));
    resultPlot_->setSeries(curves(h), QString::number(h.channels ? h.lo[0] : 0, 'g', 4),
                           QString::number(h.channels ? h.hi[0] : 0, 'g', 4));
  }
  resultTime_->setText(timeText(e));
  resultTime_->setVisible(e.has_value());
}

void HistogramPanel::setProfiles(const std::optional<gpulab::LineProfile>& photo,
                                 const std::optional<gpulab::LineProfile>& result) {
  if (!photo) {
    profilePlot_->clear();
    return;
  }
  profilePlot_->setSeries(photo->values, QStringLiteral("(%1, %2)").arg(photo->xs.front()).arg(photo->ys.front()),
                          QStringLiteral("(%1, %2)").arg(photo->xs.back()).arg(photo->ys.back()));
  profilePlot_->setSecondary(result ? result->values : std::vector<std::vector<double>>{});
}

QString HistogramPanel::photoTimeText() const { return photoTime_->text(); }
QString HistogramPanel::resultTimeText() const { return resultTime_->text(); }

}  // namespace gpulab::gui
