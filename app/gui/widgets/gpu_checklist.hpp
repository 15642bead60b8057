// The GPUs a piece of work may be split over (a Mandelbrot still's rows, a folder's images): a
// checkbox per device. The device the app computes on is checked by default, at least one stays
// checked, a machine with one GPU shows it checked and disabled (with a tooltip saying why), and one
// with none says in a line what runs the work instead.
//
//   GpuChoices gpus = listGpus();                          // on the worker: queries CUDA
//   auto* list = new GpuCheckList(gpus, "batch", why, tr("No GPU: the CPU runs the batch."));
//   options.devices = list->checked();                     // sorted device indices
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

class QCheckBox;

namespace gpulab::gui {

/// The machine's GPUs as the check lists show them, read on the worker: one label per device
/// ("GPU 0 (NVIDIA H100 80GB HBM3)"), empty without a GPU, and the device the app computes on.
struct GpuChoices {
  QStringList labels;
  int selected = 0;
};
/// Queries CUDA: call it on the worker thread, never on the GUI's.
GpuChoices listGpus();

class GpuCheckList : public QWidget {
  Q_OBJECT

 public:
  /// Object names: `<prefix>Gpus` for the list, `<prefix>Gpu<i>` for device i's box, `<prefix>NoGpu`
  /// for the line shown without a GPU and `<prefix>GpuNote` for the hint shown with several.
  /// `why` is every box's tooltip (what checking several does); `noGpu` the line without a GPU;
  /// `note` the quiet hint under several boxes (none when empty).
  GpuCheckList(const GpuChoices& gpus, const QString& prefix, const QString& why, const QString& noGpu,
               const QString& note = {}, QWidget* parent = nullptr);

  /// The checked devices, sorted; empty without a GPU.
  std::vector<int> checked() const;

 private:
  QList<QCheckBox*> boxes_;
};

}  // namespace gpulab::gui
