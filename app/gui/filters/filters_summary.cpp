#include "filters/filters_summary.hpp"

#include <QObject>
#include <QStringList>

#include "widgets/run_timing.hpp"

namespace gpulab::gui {
namespace {

QString html(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

constexpr double kShownPrepareMs = 0.05;  // below that there was nothing to prepare

/// "median of 10 runs after 2 warm-ups", "one run after a warm-up".
QString howMeasured(int reps, int warmups) {
  QString how = reps > 1 ? QObject::tr("median of %1 runs").arg(reps) : QObject::tr("one run");
  if (warmups == 1) how += QObject::tr(" after a warm-up");
  if (warmups > 1) how += QObject::tr(" after %1 warm-ups").arg(warmups);
  return how;
}

}  // namespace

QString runSummaryHtml(const FilterRun& run, const SummaryOptions& options) {
  const gpulab::Measurement& m = run.record;
  QString text = QStringLiteral("<b>%1</b><br>%2 &rarr; %3<table cellspacing='0' cellpadding='1' width='100%'>")
                     .arg(html(m.description), html(m.input ? gpulab::describe(*m.input) : std::string()),
                          html(gpulab::describe(m.output)));
  auto row = [&text](const QString& what, const QString& value) {
    text += QStringLiteral("<tr><td>%1</td><td align='right'><b>%2</b></td></tr>").arg(what, value);
  };
  if (options.showMethod) row(QObject::tr("Method"), methodText(m).toHtmlEscaped());

  // The notes: per side, how it was measured and the one-time work left out (the details are in
  // runDetailsText, the summary's tooltip).
  QStringList gpuNotes, cpuNotes, notes;
  const std::optional<double> compute = computeMs(m);
  if (compute) {
    row(QObject::tr("GPU compute"), formatMs(*compute));
    row(QObject::tr("GPU end-to-end"), formatMs(*gpuTotalMs(m)));
    gpuNotes << howMeasured(m.gpu->compute.reps, m.gpu->warmup);
    if (m.gpu->prepareMs >= kShownPrepareMs)
      gpuNotes << QObject::tr(
                      "%1 of one-time work (cost model calibration, FFT plans) before timing, not in the numbers")
                      .arg(formatMs(m.gpu->prepareMs));
    const std::optional<double> upload = uploadMs(m), download = downloadMs(m);
    const QString downloadText =
        download ? QObject::tr("download %1 (median of %2)").arg(formatMs(*download)).arg(m.gpu->download->reps)
                 : QObject::tr("no download");
    notes << (upload ? QObject::tr("End-to-end: upload %1 (once per photo) + compute + %2.")
                           .arg(formatMs(*upload), downloadText)
                     : QObject::tr("End-to-end: compute + %1 (the upload was not measured).").arg(downloadText));
    if (!m.gpu->hostMemory.empty())
      notes << QObject::tr("Transfers from %1 host memory (pinned: copied straight; pageable: through staging).")
                   .arg(QString::fromStdString(m.gpu->hostMemory));
  } else if (options.noCudaDevice) {
    row(QObject::tr("GPU"), QObject::tr("no CUDA device"));
  }
  if (const std::optional<double> cpu = cpuMs(m)) {
    row(QObject::tr("CPU (%1, %n threads)", nullptr, m.cpu->threads).arg(QString::fromStdString(m.cpu->implementation)),
        formatMs(*cpu));
    cpuNotes << howMeasured(m.cpu->time.reps, m.cpu->warmup);
    if (m.cpu->prepareMs >= kShownPrepareMs)
      cpuNotes
          << QObject::tr("%1 of one-time work (cost model calibration) before timing").arg(formatMs(m.cpu->prepareMs));
  }
  if (const auto speedup = m.speedup(), e2e = m.speedupEndToEnd(); speedup && e2e)
    row(QObject::tr("Speedup"),
        QObject::tr("%1 compute, %2 end-to-end").arg(formatSpeedup(*speedup), formatSpeedup(*e2e)));
  if (run.gpu && run.cpu) {
    if (!m.maxAbsDiff)
      row(QObject::tr("CPU vs GPU"), QObject::tr("different shapes"));
    else
      row(QObject::tr("max |CPU &minus; GPU|"),
          *m.maxAbsDiff == 0 ? QObject::tr("0 (identical)") : QString::number(*m.maxAbsDiff, 'g', 3));
  }
  text += QStringLiteral("</table>");

  if (!gpuNotes.isEmpty()) notes.prepend(QObject::tr("GPU: %1.").arg(gpuNotes.join(QStringLiteral("; "))));
  if (!cpuNotes.isEmpty()) notes << QObject::tr("CPU: %1.").arg(cpuNotes.join(QStringLiteral("; ")));
  if (!m.gpuSkipped.empty() && m.gpuSkipped != "not asked for")
    notes << QObject::tr("GPU not used: %1.").arg(html(m.gpuSkipped));
  if (!run.displayNote.isEmpty()) notes << sentence(run.displayNote.toHtmlEscaped());
  if (!notes.isEmpty())
    text += QStringLiteral("<p style='color:#9a9ea6'><small>%1</small></p>").arg(notes.join(QLatin1Char(' ')));
  return text;
}

QString runDetailsText(const FilterRun& run) {
  const gpulab::Measurement& m = run.record;
  QStringList lines;
  if (m.gpu) lines << QObject::tr("GPU: %1").arg(QString::fromStdString(m.gpu->deviceName));
  if (!run.gpuMethodNote.isEmpty()) lines << QObject::tr("GPU method: %1").arg(run.gpuMethodNote);
  if (!run.cpuMethodNote.isEmpty()) lines << QObject::tr("CPU method: %1").arg(run.cpuMethodNote);
  if (const QString rate = rateText(m); !rate.isEmpty()) {
    lines << QObject::tr("GPU rate on the least traffic the operation must move: %1").arg(rate);
    if (m.ceiling)
      lines << QObject::tr("%1: %2").arg(QString::fromStdString(m.ceiling->name),
                                         QString::fromStdString(m.ceiling->how));
  }
  if (const auto cpuRate = m.cpuRate())
    lines << QObject::tr("CPU rate: %1 %2")
                 .arg(QString::number(*cpuRate, 'g', 3), QString::fromUtf8(gpulab::rateUnit(m.workUnit)));
  return lines.join(QLatin1Char('\n'));
}

QString runStatusLine(const FilterRun& run) {
  const gpulab::Measurement& m = run.record;
  QStringList parts;
  if (const auto compute = computeMs(m)) parts << QObject::tr("GPU %1").arg(formatMs(*compute));
  if (const auto cpu = cpuMs(m)) parts << QObject::tr("CPU %1").arg(formatMs(*cpu));
  if (!run.nonFiniteNote.isEmpty()) parts << QObject::tr("non-finite: %1").arg(run.nonFiniteNote);
  return QStringLiteral("%1: %2").arg(operationText(m), parts.join(QStringLiteral(", ")));
}

QString sentence(QString text) {
  text = text.trimmed();
  if (text.isEmpty()) return text;
  text[0] = text[0].toUpper();
  if (!text.endsWith(QLatin1Char('.')) && !text.endsWith(QLatin1Char('?')) && !text.endsWith(QLatin1Char('!')))
    text += QLatin1Char('.');
  return text;
}

}  // namespace gpulab::gui
