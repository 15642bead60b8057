#include "widgets/run_timing.hpp"

#include <QObject>
#include <cmath>

namespace gpulab::gui {

std::optional<double> uploadMs(const gpulab::Measurement& m) {
  if (!m.gpu || !m.gpu->upload) return std::nullopt;
  return m.gpu->upload->medianMs;
}

std::optional<double> computeMs(const gpulab::Measurement& m) {
  if (!m.gpu || m.gpu->compute.reps <= 0) return std::nullopt;
  return m.gpu->compute.medianMs;
}

std::optional<double> downloadMs(const gpulab::Measurement& m) {
  if (!m.gpu || !m.gpu->download) return std::nullopt;
  return m.gpu->download->medianMs;
}

std::optional<double> gpuTotalMs(const gpulab::Measurement& m) {
  if (!m.gpu) return std::nullopt;
  return m.gpu->endToEndMs();
}

std::optional<double> cpuMs(const gpulab::Measurement& m) {
  if (!m.cpu) return std::nullopt;
  return m.cpu->time.medianMs;
}

namespace {

/// What the sides took, when that is not what was asked for: "fft", "GPU fft, CPU direct"; empty otherwise.
QString methodChoice(const gpulab::Measurement& m) {
  const std::string gpu = m.gpu && computeMs(m) ? m.gpu->methodUsed : std::string();
  const std::string cpu = m.cpu ? m.cpu->methodUsed : std::string();
  const bool gpuDiffers = !gpu.empty() && gpu != m.method;
  const bool cpuDiffers = !cpu.empty() && cpu != m.method;
  if (!gpuDiffers && !cpuDiffers) return {};
  if (!gpu.empty() && !cpu.empty() && gpu != cpu)
    return QObject::tr("GPU %1, CPU %2").arg(QString::fromStdString(gpu), QString::fromStdString(cpu));
  return QString::fromStdString(gpuDiffers ? gpu : cpu);
}

}  // namespace

QString operationText(const gpulab::Measurement& m) {
  QString description = QString::fromStdString(m.description);
  const QString name = QString::fromStdString(m.operation);
  if (description.isEmpty())
    description = name;
  else if (!name.isEmpty() && !description.startsWith(name))
    description = name + QLatin1Char(' ') + description;
  const QString choice = methodChoice(m);
  return choice.isEmpty() ? description : QStringLiteral("%1 → %2").arg(description, choice);
}

QString methodText(const gpulab::Measurement& m) {
  const QString asked = QString::fromStdString(m.method);
  const QString choice = methodChoice(m);
  return choice.isEmpty() ? asked : QStringLiteral("%1 → %2").arg(asked, choice);
}

QString imageText(const gpulab::Measurement& m) {
  if (m.input) return QString::fromStdString(gpulab::describe(*m.input));
  return QStringLiteral("%1x%2").arg(m.output.width).arg(m.output.height);
}

QString rateText(const gpulab::Measurement& m, bool brief) {
  const std::optional<double> rate = m.gpuRate();
  if (!rate) return {};
  const QString unit = QString::fromUtf8(gpulab::rateUnit(m.workUnit));
  const QString value = QString::number(*rate, 'g', 3) + QLatin1Char(' ') + unit;
  const std::optional<double> percent = m.percentOfCeiling();
  if (!percent || !m.ceiling) return value;
  const QString share = QString::number(*percent, 'f', *percent < 10 ? 1 : 0);
  if (brief) return QObject::tr("%1% (%2)").arg(share, value);  // the share first: it survives eliding
  return QObject::tr("%1 (%2% of %3)").arg(value, share, QString::fromStdString(m.ceiling->name));
}

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
