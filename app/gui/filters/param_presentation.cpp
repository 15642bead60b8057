#include "filters/param_presentation.hpp"

#include <QObject>
#include <string>

#include "filters/filters_presets.hpp"
#include "gpulab/filters/conv2d.hpp"

namespace gpulab::gui {
namespace {

constexpr int kFirstBoxRadius = 5;  // the registry requires a radius; the tab starts with this one

QString plainLabel(const std::string& name) {
  QString label = QString::fromStdString(name);
  label.replace(QLatin1Char('-'), QLatin1Char(' '));
  if (!label.isEmpty()) label[0] = label[0].toUpper();
  return label;
}

QString methodHint(const std::string& method) {
  if (method == "direct")
    return QObject::tr("Tiled GPU kernel; OpenCV filter2D on the CPU. Kernels up to %1x%1 here.")
        .arg(kMaxEditorKernelSize);
  if (method == "fft")
    return QObject::tr(
               "cuFFT on the GPU, cv::dft on the CPU; the direct result to float rounding. Kernels up to %1x%1.")
        .arg(kMaxEditorFftKernelSize);
  if (method == "separable")
    return QObject::tr(
        "A kernel of rank 1 to 3 (found by an SVD) as 1-D passes in one fused GPU kernel; cv::sepFilter2D on the "
        "CPU. Other kernels are refused with this method.");
  if (method == "auto")
    return QObject::tr(
               "Per run, the fastest of direct, FFT and separable (rank 1-3 kernels) by a cost model calibrated once "
               "per device, outside the timings. Kernels up to %1x%1; above %2, always FFT.")
        .arg(kMaxEditorFftKernelSize)
        .arg(gpulab::Conv2D::kMaxKernelSize);
  return {};
}

}  // namespace

ParamPresentation presentationOf(const gpulab::OperationInfo& operation, const gpulab::ParamInfo& param) {
  ParamPresentation p;
  p.label = plainLabel(param.name);
  p.tooltip = QString::fromStdString(param.help);
  const std::string& op = operation.name;
  const std::string& name = param.name;

  // Shared by every filter that takes a border.
  if (name == "border") {
    p.group = QObject::tr("Border");
    p.choiceLabels = {{"reflect101", QObject::tr("reflect101 (default)")},
                      {"reflect", QObject::tr("reflect (SciPy symm)")}};
    p.tooltip = QObject::tr(
        "What the filter sees beyond the photo's edges:\n"
        "reflect101  dcb|abcd|cba\nreflect  cba|abc|cba\nreplicate  aaa|abc|ccc\n"
        "wrap  bcd|abcd|abc\nconstant  vvv|abc|vvv");
  } else if (name == "border-value") {
    p.group = QObject::tr("Border");
    p.label = QObject::tr("Value");
    p.tooltip = QObject::tr("The constant, in sample units (0..255 for 8-bit photos)");
  } else if (op == "box" && name == "radius") {
    p.initialValue = std::to_string(kFirstBoxRadius);
    p.sliderMaximum = 512;
    p.tooltip = QObject::tr(
                    "0 (the photo unchanged) to %1; a window larger than the photo averages across it, with the "
                    "border mode deciding what lies beyond")
                    .arg(static_cast<int>(param.maximum));
    p.hint = [](const std::string& value) {
      const int r = QString::fromStdString(value).toInt();
      return r == 0 ? QObject::tr("Window 1x1: the photo unchanged") : QObject::tr("Window %1x%1").arg(2 * r + 1);
    };
  } else if (op == "box" && name == "path") {
    p.label = QObject::tr("GPU path");
    p.choiceLabels = {{"auto", QObject::tr("auto (the fastest that fits)")},
                      {"ring", QObject::tr("ring (shared-memory window)")},
                      {"stream", QObject::tr("stream (running sums)")},
                      {"sat", QObject::tr("summed-area table")},
                      {"fused", QObject::tr("fused (one warp per strip, sums in registers)")},
                      {"direct", QObject::tr("direct (3x3 and 5x5 windows)")},
                      {"sweep", QObject::tr("sweep (column sums in registers, rows in shared memory)")}};
  } else if (op == "sobel" && name == "component") {
    p.choiceLabels = {{"mag", QObject::tr("Magnitude")},
                      {"x", QObject::tr("x gradient (dx)")},
                      {"y", QObject::tr("y gradient (dy)")},
                      {"dir", QObject::tr("Direction (atan2)")}};
  } else if (op == "conv" && name == "correlate") {
    p.label = QObject::tr("Correlate (as OpenCV filter2D)");
    p.tooltip = QObject::tr(
        "Off: true convolution, the kernel flipped (scipy.signal.convolve2d).\n"
        "On: correlation, the kernel as written, anchored at its centre.");
  } else if (op == "conv" && name == "mode") {
    p.label = QObject::tr("Output");
    p.tooltip = QObject::tr("Output size, as scipy.signal.convolve2d");
    p.choiceLabels = {{"same", QObject::tr("same (W x H)")},
                      {"full", QObject::tr("full (W+kw-1 x H+kh-1)")},
                      {"valid", QObject::tr("valid (W-kw+1 x H-kh+1)")}};
  } else if (op == "conv" && name == "method") {
    p.tooltip = QObject::tr("How the convolution is computed; every method gives the same result to float rounding");
    p.choiceLabels = {{"direct", QObject::tr("Direct")},
                      {"fft", QObject::tr("FFT")},
                      {"separable", QObject::tr("Separable")},
                      {"auto", QObject::tr("Auto")}};
    p.hint = methodHint;
  }
  return p;
}

QString operationNote(const gpulab::OperationInfo& operation) {
  if (operation.name == "sobel")
    return QObject::tr(
        "3x3. Colour goes to luminance first; the result has one channel. On 8-bit photos the direction is a "
        "circular code (0 right, 64 down).");
  return {};
}

}  // namespace gpulab::gui
