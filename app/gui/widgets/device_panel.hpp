// The Device dock: the GPU the engine uses (name, compute capability, SMs, memory in use), or
// "no CUDA device: CPU only" with the reason, and the CPU threads the baselines use. Two pickers
// choose them for the whole app: the GPU (every device of the machine, gpulab::selectDevice through
// WorkerContext::selectDevice) and the CPU threads (one, a few, or all cores: gpulab::setCpuThreads).
// Every query and change runs on the engine's worker thread; memory is refreshed every 2 s. Below
// them, the largest image a file may hold (gpulab::setImageLimits: pixels a side and in all), kept
// with QSettings when the window persists its settings.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QFormLayout;
class QLabel;
class QProgressBar;
class QSpinBox;
class QTimer;

namespace gpulab::gui {

class Engine;
class WorkerContext;

/// What the panel shows, captured on the worker thread.
struct DeviceSnapshot {
  bool gpu = false;
  QString name;
  QString computeCapability;
  int multiprocessors = 0;
  qint64 totalBytes = 0;
  qint64 freeBytes = 0;
  int memoryBusWidthBits = 0;
  int l2CacheBytes = 0;
  QString runtimeVersion;  ///< "13.0"
  QString driverVersion;   ///< "13.0", or "none"
  QString status;          ///< why CPU only; empty with a GPU
  int cpuThreads = 0;
  int cpuCores = 0;
  QStringList devices;     ///< "GPU 0: NVIDIA H100 80GB HBM3", one per device of the machine
  int selectedDevice = 0;  ///< the one in use

  /// Runs on the worker thread (a job body).
  static DeviceSnapshot capture(WorkerContext& ctx);
};

/// "1.23 GiB", "512 MiB".
QString formatBytes(qint64 bytes);

class DevicePanel : public QWidget {
  Q_OBJECT

 public:
  explicit DevicePanel(Engine& engine, QWidget* parent = nullptr);

  static constexpr int kRefreshMs = 2000;

  /// The latest snapshot; `valid()` is false until the first one arrived.
  const DeviceSnapshot& snapshot() const noexcept { return snapshot_; }
  bool valid() const noexcept { return valid_; }
  /// A one-line summary for the status bar: "NVIDIA H100 80GB HBM3" or "CPU only".
  QString summary() const;
  /// Shows `snapshot` (what refresh() does with the worker's answer) and emits refreshed().
  void display(const DeviceSnapshot& snapshot);

 public slots:
  void refresh();
  /// Computes on GPU `index` from now on (a worker job; refreshed() follows, or the reason shows).
  void selectDevice(int index);
  /// The CPU baselines' threads from now on: 0 for all cores, else a count.
  void setCpuThreads(int threads);
  /// The largest image loading accepts from now on (both values clamped to gpulab's maximum); saved
  /// in QSettings (limits/maxImageSide, limits/maxImagePixels) when persisting.
  void setImageLimits(int maxSide, int maxPixels);
  /// Reads the saved limits (when there are any) and applies them, and from then on saves what the
  /// user sets. Without a call, the panel shows and sets the limits for this session only.
  void persistImageLimits();

 signals:
  void refreshed();

 private:
  void showError(const QString& message);

  Engine& engine_;
  QTimer* timer_;
  DeviceSnapshot snapshot_;
  bool valid_ = false;

  QLabel* headline_;
  QLabel* detail_;
  QFormLayout* form_;
  QLabel* capability_;
  QLabel* multiprocessors_;
  QLabel* memoryText_;
  QProgressBar* memoryBar_;
  QLabel* cuda_;
  QLabel* cpu_;
  QComboBox* devicePicker_;
  QComboBox* threadsPicker_;
  QSpinBox* maxSide_;
  QSpinBox* maxPixels_;
  bool persistLimits_ = false;
};

}  // namespace gpulab::gui
