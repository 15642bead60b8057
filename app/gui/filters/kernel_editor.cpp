#include "filters/kernel_editor.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "widgets/control_builders.hpp"

namespace gpulab::gui {
namespace {

constexpr int kCellWidth = 54;
constexpr int kCellHeight = 22;
constexpr int kVisibleRows = 6;
constexpr int kStretchColumns = 5;  // up to this many columns fill the table's width

// Short enough for a cell: "5", "-0.25", "0.0113", "3.1e-5".
QString formatCoefficient(double v) {
  if (v == 0) return QStringLiteral("0");
  if (v == std::round(v) && std::abs(v) < 1e6) return QString::number(static_cast<long long>(v));
  const double a = std::abs(v);
  if (a >= 1e-3 && a < 1e4) {
    const int decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(a))), 0, 4);
    QString text = QString::number(v, 'f', decimals);
    while (text.endsWith(QLatin1Char('0'))) text.chop(1);
    if (text.endsWith(QLatin1Char('.'))) text.chop(1);
    return text;
  }
  // Mantissa with one decimal and a bare exponent: 3.1e-5.
  const int exponent = static_cast<int>(std::floor(std::log10(a)));
  const double mantissa = v / std::pow(10.0, exponent);
  return QStringLiteral("%1e%2").arg(QString::number(mantissa, 'f', 1)).arg(exponent);
}

// Cells hold doubles; they are edited as text (C locale, scientific notation allowed) and shown short.
class CoefficientDelegate : public QStyledItemDelegate {
 public:
  CoefficientDelegate(std::function<void(const QString&)> reject, QObject* parent)
      : QStyledItemDelegate(parent), reject_(std::move(reject)) {}

  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const override {
    auto* edit = new QLineEdit(parent);
    auto* validator = new QDoubleValidator(edit);
    validator->setLocale(QLocale::c());
    validator->setNotation(QDoubleValidator::ScientificNotation);
    edit->setValidator(validator);
    edit->setFrame(false);
    return edit;
  }
  void setEditorData(QWidget* editor, const QModelIndex& index) const override {
    static_cast<QLineEdit*>(editor)->setText(QString::number(index.data(Qt::EditRole).toDouble(), 'g', 12));
  }
  void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override {
    const QString text = static_cast<QLineEdit*>(editor)->text().trimmed();
    bool ok = false;
    const double v = QLocale::c().toDouble(text, &ok);
    if (!ok || !std::isfinite(v)) {
      reject_(QObject::tr("'%1' is not a number: the coefficient stays %2.")
                  .arg(text, formatCoefficient(index.data(Qt::EditRole).toDouble())));
      return;
    }
    model->setData(index, v, Qt::EditRole);
  }
  QString displayText(const QVariant& value, const QLocale&) const override {
    return formatCoefficient(value.toDouble());
  }

 private:
  std::function<void(const QString&)> reject_;
};

// Positive coefficients tinted blue, negative red, by magnitude relative to the largest.
QColor cellColour(double v, double largest) {
  if (v == 0 || largest <= 0) return {};
  const int alpha = 30 + static_cast<int>(std::lround(150 * std::min(1.0, std::abs(v) / largest)));
  return v > 0 ? QColor(70, 130, 230, alpha) : QColor(230, 90, 70, alpha);
}

/// `k` on a w x h grid, centred: growing adds zeros around it, shrinking crops about its centre.
gpulab::Kernel2D resizedCentred(const gpulab::Kernel2D& k, int w, int h) {
  gpulab::Kernel2D resized{w, h, std::vector<double>(static_cast<std::size_t>(w) * h, 0.0)};
  const int dx = (w - k.width) / 2, dy = (h - k.height) / 2;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int sx = x - dx, sy = y - dy;
      if (sx >= 0 && sy >= 0 && sx < k.width && sy < k.height)
        resized.values[static_cast<std::size_t>(y) * w + x] = k.at(sx, sy);
    }
  return resized;
}

QLabel* hint(const QString& text) {
  auto* label = new QLabel(text);
  label->setWordWrap(true);
  label->setEnabled(false);  // the palette's dimmed text
  return label;
}

}  // namespace

KernelEditor::KernelEditor(QWidget* parent) : QWidget(parent) {
  buildUi();
  selectPreset(KernelPreset::Gaussian);
}

void KernelEditor::buildUi() {
  preset_ = named(new QComboBox, "kernelPreset",
                  tr("Fill the table with a well-known kernel; editing a cell makes it Custom"));
  addItems<KernelPreset>(preset_, {{tr("Custom"), KernelPreset::Custom},
                                   {tr("Gaussian"), KernelPreset::Gaussian},
                                   {tr("Sharpen"), KernelPreset::Sharpen},
                                   {tr("Emboss"), KernelPreset::Emboss},
                                   {tr("Laplacian"), KernelPreset::Laplacian},
                                   {tr("Motion blur"), KernelPreset::MotionBlur},
                                   {tr("Box"), KernelPreset::Box}});

  // One page of parameters per preset, in the combo's order.
  presetParams_ = new QStackedWidget;
  presetParams_->addWidget(hint(tr("Edit the cells, or pick a preset.")));

  sigma_ = named(decimalSpinBox(0.1, 40.0, 0.1, 2, 1.5), "gaussianSigma");
  sigma_->setPrefix(QStringLiteral("σ "));
  gaussianSize_ = new QSpinBox;
  gaussianSize_->setObjectName(QStringLiteral("gaussianSize"));
  gaussianSize_->setRange(0, maxSide_);
  gaussianSize_->setSpecialValueText(tr("size: auto (±3σ)"));
  gaussianSize_->setPrefix(tr("size "));
  gaussianSize_->setToolTip(tr("Kernel side; auto holds ±3σ (odd, at most %1)").arg(maxSide_));
  presetParams_->addWidget(rowWidget({sigma_, gaussianSize_}, gaussianSize_));

  presetParams_->addWidget(hint(tr("5 at the centre, -1 at the four neighbours.")));
  presetParams_->addWidget(hint(tr("Relief lit from the top left; sums to 1.")));
  presetParams_->addWidget(hint(tr("Second derivative; sums to 0 (edges on gray).")));

  motionLength_ = new QSpinBox;
  motionLength_->setObjectName(QStringLiteral("motionLength"));
  motionLength_->setRange(1, maxSide_);
  motionLength_->setValue(9);
  motionLength_->setPrefix(tr("length "));
  motionLength_->setSuffix(tr(" px"));
  motionAngle_ = named(decimalSpinBox(-180, 180, 15, 0, 0), "motionAngle",
                       tr("Counter-clockwise from the x axis, as seen on screen"));
  motionAngle_->setWrapping(true);
  motionAngle_->setSuffix(QStringLiteral("°"));
  presetParams_->addWidget(rowWidget({motionLength_, motionAngle_}, motionLength_));

  presetParams_->addWidget(hint(tr("The mean over the width x height below.")));

  width_ = new QSpinBox;
  width_->setObjectName(QStringLiteral("kernelWidth"));
  height_ = new QSpinBox;
  height_->setObjectName(QStringLiteral("kernelHeight"));
  for (QSpinBox* box : {width_, height_}) {
    box->setRange(1, maxSide_);
    box->setToolTip(tr("1 to %1, odd or even").arg(maxSide_));
  }
  auto* sizeRow = new QHBoxLayout;
  sizeRow->addWidget(width_, 1);
  sizeRow->addWidget(new QLabel(QStringLiteral("×")));
  sizeRow->addWidget(height_, 1);

  table_ = new QTableWidget;
  table_->setObjectName(QStringLiteral("kernelTable"));
  table_->horizontalHeader()->setVisible(false);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setMinimumSectionSize(20);
  table_->verticalHeader()->setMinimumSectionSize(16);
  table_->horizontalHeader()->setDefaultSectionSize(kCellWidth);
  table_->verticalHeader()->setDefaultSectionSize(kCellHeight);
  table_->setItemDelegate(new CoefficientDelegate([this](const QString& text) { emit message(text); }, table_));
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
  table_->setTextElideMode(Qt::ElideNone);
  table_->setToolTip(tr("Coefficients, row by row; double-click or type to edit"));
  QFont small = table_->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  table_->setFont(small);

  sum_ = new QLabel;
  sum_->setObjectName(QStringLiteral("kernelSum"));
  normalise_ = new QPushButton(tr("Normalise"));
  normalise_->setToolTip(tr("Divide every coefficient by their sum, so flat areas keep their brightness"));
  auto* sumRow = new QHBoxLayout;
  sumRow->addWidget(sum_, 1);
  sumRow->addWidget(normalise_);

  auto* form = new QFormLayout;
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Preset"), preset_);
  form->addRow(QString(), presetParams_);
  form->addRow(tr("Size"), sizeRow);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(form);
  layout->addWidget(table_);
  layout->addLayout(sumRow);

  preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  preset_->setMinimumContentsLength(8);
  connect(preset_, &QComboBox::currentIndexChanged, this, &KernelEditor::presetChanged);
  connect(sigma_, &QDoubleSpinBox::valueChanged, this, &KernelEditor::presetChanged);
  connect(gaussianSize_, &QSpinBox::valueChanged, this, &KernelEditor::presetChanged);
  connect(motionLength_, &QSpinBox::valueChanged, this, &KernelEditor::presetChanged);
  connect(motionAngle_, &QDoubleSpinBox::valueChanged, this, &KernelEditor::presetChanged);
  connect(width_, &QSpinBox::valueChanged, this, &KernelEditor::sizeChanged);
  connect(height_, &QSpinBox::valueChanged, this, &KernelEditor::sizeChanged);
  connect(table_, &QTableWidget::itemChanged, this, &KernelEditor::cellChanged);
  connect(normalise_, &QPushButton::clicked, this, &KernelEditor::normalise);
}

// ---------------------------------------------------------------------------------------------
// Presets

KernelPreset KernelEditor::preset() const { return static_cast<KernelPreset>(preset_->currentData().toInt()); }

void KernelEditor::selectPreset(KernelPreset preset) {
  const int index = preset_->findData(static_cast<int>(preset));
  if (index == preset_->currentIndex())
    presetChanged();
  else
    preset_->setCurrentIndex(index);
}

void KernelEditor::setGaussian(double sigma, int size) {
  {
    const QSignalBlocker a(sigma_), b(gaussianSize_);
    sigma_->setValue(sigma);
    gaussianSize_->setValue(size);
  }
  selectPreset(KernelPreset::Gaussian);
}

void KernelEditor::setMotionBlur(int length, double angleDegrees) {
  {
    const QSignalBlocker a(motionLength_), b(motionAngle_);
    motionLength_->setValue(length);
    motionAngle_->setValue(angleDegrees);
  }
  selectPreset(KernelPreset::MotionBlur);
}

void KernelEditor::presetChanged() {
  if (updating_) return;
  const KernelPreset p = preset();
  presetParams_->setCurrentIndex(preset_->currentIndex());
  switch (p) {
    case KernelPreset::Custom:
      return;  // the table stays as it is
    case KernelPreset::Gaussian: {
      const int size =
          gaussianSize_->value() == 0 ? gaussianSizeFor(sigma_->value(), maxSide_) : gaussianSize_->value();
      kernel_ = gaussianKernel(sigma_->value(), size);
      break;
    }
    case KernelPreset::Sharpen:
      kernel_ = sharpenKernel();
      break;
    case KernelPreset::Emboss:
      kernel_ = embossKernel();
      break;
    case KernelPreset::Laplacian:
      kernel_ = laplacianKernel();
      break;
    case KernelPreset::MotionBlur:
      kernel_ = motionBlurKernel(motionLength_->value(), motionAngle_->value());
      break;
    case KernelPreset::Box:
      kernel_ = boxKernel(width_->value(), height_->value());
      break;
  }
  showKernel();
  emit changed();
}

void KernelEditor::becomeCustom() {
  if (preset() == KernelPreset::Custom) return;
  const QSignalBlocker block(preset_);
  preset_->setCurrentIndex(preset_->findData(static_cast<int>(KernelPreset::Custom)));
  presetParams_->setCurrentIndex(preset_->currentIndex());
}

// ---------------------------------------------------------------------------------------------
// The table

void KernelEditor::setKernel(const gpulab::Kernel2D& kernel) {
  if (kernel.width < 1 || kernel.height < 1 || kernel.width > maxSide_ || kernel.height > maxSide_)
    throw std::invalid_argument(
        "a kernel of " + std::to_string(kernel.width) + "x" + std::to_string(kernel.height) +
        " does not fit the editor: each side must be 1.." + std::to_string(maxSide_) +
        (maxSide_ < kMaxEditorFftKernelSize
             ? " with the direct method (fft and auto take up to " + std::to_string(kMaxEditorFftKernelSize) + ")"
             : std::string()));
  if (kernel.values.size() != static_cast<std::size_t>(kernel.width) * kernel.height)
    throw std::invalid_argument("the kernel's " + std::to_string(kernel.values.size()) +
                                " values do not match its size " + std::to_string(kernel.width) + "x" +
                                std::to_string(kernel.height));
  kernel_ = kernel;
  becomeCustom();
  showKernel();
  emit changed();
}

void KernelEditor::setMaxSide(int side) {
  side = std::clamp(side, 1, kMaxEditorFftKernelSize);
  if (side == maxSide_) return;
  maxSide_ = side;
  const int oldWidth = kernel_.width, oldHeight = kernel_.height;
  {
    // The ranges clamp the values they hold; the kernel follows below, once.
    const QSignalBlocker a(gaussianSize_), b(motionLength_), c(width_), d(height_);
    gaussianSize_->setMaximum(side);
    gaussianSize_->setToolTip(tr("Kernel side; auto holds ±3σ (odd, at most %1)").arg(side));
    motionLength_->setMaximum(side);
    for (QSpinBox* box : {width_, height_}) {
      box->setMaximum(side);
      box->setToolTip(tr("1 to %1, odd or even").arg(side));
    }
  }
  if (preset() == KernelPreset::Custom) {
    if (oldWidth <= side && oldHeight <= side) return;
    kernel_ = resizedCentred(kernel_, std::min(oldWidth, side), std::min(oldHeight, side));
    showKernel();
    emit changed();
  } else {
    presetChanged();  // recomputed within the new limit (an auto-sized Gaussian may grow, too)
  }
  if (oldWidth > side || oldHeight > side)
    emit message(tr("This method takes kernels up to %1x%1 here: the %2x%3 kernel is now %4x%5.")
                     .arg(side)
                     .arg(oldWidth)
                     .arg(oldHeight)
                     .arg(kernel_.width)
                     .arg(kernel_.height));
}

void KernelEditor::sizeChanged() {
  if (updating_) return;
  const int w = width_->value(), h = height_->value();
  if (preset() == KernelPreset::Box) {
    kernel_ = boxKernel(w, h);
  } else {
    // Keep the coefficients centred: a 3x3 grown to 5x5 gains a ring of zeros.
    kernel_ = resizedCentred(kernel_, w, h);
    becomeCustom();
  }
  showKernel();
  emit changed();
}

void KernelEditor::cellChanged(QTableWidgetItem* item) {
  if (updating_) return;
  const std::size_t i = static_cast<std::size_t>(item->row()) * kernel_.width + item->column();
  if (i >= kernel_.values.size()) return;
  kernel_.values[i] = item->data(Qt::EditRole).toDouble();
  becomeCustom();
  showKernel();  // colours and the sum follow
  emit changed();
}

void KernelEditor::showKernel() {
  updating_ = true;
  {
    const QSignalBlocker a(width_), b(height_);
    width_->setValue(kernel_.width);
    height_->setValue(kernel_.height);
  }
  if (table_->columnCount() != kernel_.width) table_->setColumnCount(kernel_.width);
  if (table_->rowCount() != kernel_.height) table_->setRowCount(kernel_.height);
  // Narrow kernels fill the width; wider ones scroll sideways. The table is as tall as its rows, up
  // to kVisibleRows, so the panel's scroll area does not squeeze it.
  const bool fits = kernel_.width <= kStretchColumns;
  table_->horizontalHeader()->setSectionResizeMode(fits ? QHeaderView::Stretch : QHeaderView::Fixed);
  const int scrollBar = fits ? 0 : table_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, table_);
  table_->setFixedHeight(std::min(kernel_.height, kVisibleRows) * kCellHeight + 2 * table_->frameWidth() + scrollBar);
  double largest = 0;
  for (double v : kernel_.values) largest = std::max(largest, std::abs(v));
  for (int y = 0; y < kernel_.height; ++y)
    for (int x = 0; x < kernel_.width; ++x) {
      QTableWidgetItem* item = table_->item(y, x);
      if (item == nullptr) {
        item = new QTableWidgetItem;
        item->setTextAlignment(Qt::AlignCenter);
        table_->setItem(y, x, item);
      }
      const double v = kernel_.at(x, y);
      item->setData(Qt::EditRole, v);
      item->setData(Qt::BackgroundRole, cellColour(v, largest));
      item->setToolTip(QString::number(v, 'g', 12));
    }
  sum_->setText(tr("%1x%2, sum %3").arg(kernel_.width).arg(kernel_.height).arg(QString::number(sum(), 'g', 6)));
  updating_ = false;
}

double KernelEditor::sum() const {
  double s = 0;
  for (double v : kernel_.values) s += v;
  return s;
}

bool KernelEditor::normalise() {
  const double s = sum();
  double largest = 0;
  for (double v : kernel_.values) largest = std::max(largest, std::abs(v));
  if (largest == 0 || std::abs(s) <= 1e-12 * largest) {
    emit message(
        tr("The coefficients sum to 0 (an edge detector, like the Laplacian): there is nothing to "
           "normalise by."));
    return false;
  }
  for (double& v : kernel_.values) v /= s;
  becomeCustom();
  showKernel();
  emit changed();
  return true;
}

}  // namespace gpulab::gui
