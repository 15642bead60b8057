// The kernel editor of the Filters tab, the control of every Kernel parameter: a table of coefficients
// (1..63 a side for the direct method, up to 255 for fft and auto: setMaxSide; odd or even,
// non-square), presets that fill it (Gaussian with sigma and size, sharpen, emboss, Laplacian, motion
// blur with length and angle, box) and a Normalise button. The convolution's other options (correlate,
// output size) are parameters of their own, with their own controls.
//
// Editing a cell or the size turns the preset to "Custom". Every change emits changed(); problems
// (a cell that is not a number, normalising a kernel that sums to 0) come out as message().
#pragma once

#include <QWidget>

#include "filters/filters_presets.hpp"
#include "gpulab/filters/filter.hpp"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QTableWidgetItem;

namespace gpulab::gui {

class KernelEditor : public QWidget {
  Q_OBJECT

 public:
  explicit KernelEditor(QWidget* parent = nullptr);

  const gpulab::Kernel2D& kernel() const noexcept { return kernel_; }
  /// Shows `kernel` and marks it Custom. Throws std::invalid_argument for a side outside
  /// 1..maxSide() or a value count that does not match the size.
  void setKernel(const gpulab::Kernel2D& kernel);

  /// The largest side the size boxes and presets offer: kMaxEditorKernelSize (the default) or up to
  /// kMaxEditorFftKernelSize (editorKernelLimit of the method). Lowering it below the kernel's size
  /// refits the kernel (a preset is recomputed with its size clamped, a custom kernel cropped about
  /// its centre) and says so in a message().
  void setMaxSide(int side);
  int maxSide() const noexcept { return maxSide_; }

  KernelPreset preset() const;
  /// Selects a preset as the combo box does (fills the table with its current parameters).
  void selectPreset(KernelPreset preset);
  void setGaussian(double sigma, int size);
  void setMotionBlur(int length, double angleDegrees);

  /// Divides every coefficient by their sum. False, with a message(), when the sum is 0.
  bool normalise();
  double sum() const;

 signals:
  void changed();
  void message(const QString& text);

 private:
  void buildUi();
  void presetChanged();
  void sizeChanged();
  void cellChanged(QTableWidgetItem* item);
  /// Fills the table (and the size boxes) from kernel_.
  void showKernel();
  void becomeCustom();

  gpulab::Kernel2D kernel_;
  int maxSide_ = kMaxEditorKernelSize;
  bool updating_ = false;  // the table and spin boxes are being filled from kernel_

  QComboBox* preset_ = nullptr;
  QStackedWidget* presetParams_ = nullptr;
  QDoubleSpinBox* sigma_ = nullptr;
  QSpinBox* gaussianSize_ = nullptr;
  QSpinBox* motionLength_ = nullptr;
  QDoubleSpinBox* motionAngle_ = nullptr;
  QSpinBox* width_ = nullptr;
  QSpinBox* height_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* sum_ = nullptr;
  QPushButton* normalise_ = nullptr;
};

}  // namespace gpulab::gui
