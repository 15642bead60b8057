#include "shell/fault_restart.hpp"

#include <QAbstractButton>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>

#include "gpulab/core/relaunch.hpp"

namespace gpulab::gui {

namespace {

constexpr int kFormatVersion = 1;

}  // namespace

bool restartOnFaultWithoutAsking() { return qEnvironmentVariable("GPULAB_RESTART_ON_FAULT") == QLatin1String("1"); }

QString writeRestoreState(const RestoreState& state, const QString& path) {
  QJsonObject doc{{QStringLiteral("version"), kFormatVersion},
                  {QStringLiteral("fault"), state.fault},
                  {QStringLiteral("photo"), state.photo},
                  {QStringLiteral("photoName"), state.photoName},
                  {QStringLiteral("photoEdited"), state.photoEdited},
                  {QStringLiteral("tab"), state.tab},
                  {QStringLiteral("filtersOperation"), state.filtersOperation},
                  {QStringLiteral("mandelbrotCenterX"), state.mandelbrotCenterX},
                  {QStringLiteral("mandelbrotCenterY"), state.mandelbrotCenterY},
                  {QStringLiteral("mandelbrotWidth"), state.mandelbrotWidth},
                  {QStringLiteral("geometry"), QString::fromLatin1(state.geometry.toBase64())},
                  {QStringLiteral("problems"), QJsonArray::fromStringList(state.problems)}};
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(doc).toJson()) < 0 || !file.commit())
    return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
  return {};
}

std::optional<RestoreState> readRestoreState(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    *error = QStringLiteral("cannot read %1: %2").arg(path, file.errorString());
    return std::nullopt;
  }
  QJsonParseError parse{};
  const QJsonDocument json = QJsonDocument::fromJson(file.readAll(), &parse);
  if (parse.error != QJsonParseError::NoError || !json.isObject()) {
    *error = QStringLiteral("%1 is not a gpulab restore file: %2").arg(path, parse.errorString());
    return std::nullopt;
  }
  const QJsonObject doc = json.object();
  if (doc.value(QStringLiteral("version")).toInt() != kFormatVersion) {
    *error = QStringLiteral("%1 is a restore file of another gpulab version").arg(path);
    return std::nullopt;
  }
  RestoreState state;
  auto text = [&doc](const char* key) { return doc.value(QLatin1String(key)).toString(); };
  state.fault = text("fault");
  state.photo = text("photo");
  state.photoName = text("photoName");
  state.photoEdited = doc.value(QStringLiteral("photoEdited")).toBool();
  state.tab = text("tab");
  state.filtersOperation = text("filtersOperation");
  state.mandelbrotCenterX = text("mandelbrotCenterX");
  state.mandelbrotCenterY = text("mandelbrotCenterY");
  state.mandelbrotWidth = text("mandelbrotWidth");
  state.geometry = QByteArray::fromBase64(text("geometry").toLatin1());
  for (const QJsonValue& problem : doc.value(QStringLiteral("problems")).toArray())
    state.problems.append(problem.toString());
  return state;
}

QString restoredSummary(const RestoreState& state, int restart, const QString& photoPlace) {
  QStringList kept;
  if (!state.photoName.isEmpty())
    kept << (state.photoEdited ? QStringLiteral("the edited photo %1 (from a lossless copy)").arg(state.photoName)
                               : QStringLiteral("the photo %1").arg(state.photoName));
  if (!state.tab.isEmpty()) kept << QStringLiteral("the %1 tab").arg(state.tab);
  if (!state.filtersOperation.isEmpty()) kept << QStringLiteral("operation %1").arg(state.filtersOperation);
  if (!state.mandelbrotWidth.isEmpty()) kept << QStringLiteral("the Mandelbrot view");
  QString keptText = kept.isEmpty() ? QStringLiteral("nothing") : kept.join(QStringLiteral(", "));
  if (kept.size() > 1) {
    const qsizetype last = keptText.lastIndexOf(QStringLiteral(", "));
    keptText.replace(last, 2, QStringLiteral(" and "));
  }
  QString summary = QStringLiteral(
                        "gpulab restarted after a GPU fault (%1) and restored %2; lost: the "
                        "undo history, results on screen, timings")
                        .arg(QString::fromStdString(gpulab::describeRestart(restart)), keptText);
  if (!photoPlace.isEmpty())
    summary.replace(QStringLiteral("; lost: "), QStringLiteral("; ") + photoPlace + QStringLiteral("; lost: "));
  for (const QString& problem : state.problems) summary += QStringLiteral("; ") + problem;
  if (!state.fault.isEmpty()) summary += QStringLiteral(". The fault: ") + state.fault;
  return summary;
}

QMessageBox* createGpuLostDialog(const QString& message, QWidget* parent) {
  auto* box = new QMessageBox(parent);
  box->setObjectName(QStringLiteral("gpuLostDialog"));
  box->setIcon(QMessageBox::Warning);
  box->setWindowTitle(QObject::tr("The GPU faulted"));
  box->setText(QObject::tr("gpulab lost the GPU: only a restart of gpulab brings it back."));
  box->setInformativeText(
      message + QStringLiteral("\n\n") +
      QObject::tr("Restart gpulab now to get the GPU back: your photo, the tab, the Filters operation and the "
                  "Mandelbrot view are kept; the undo history and the results on screen are not.\n"
                  "Or continue on the CPU: everything stays as it is, and the GPU comes back the next time "
                  "gpulab starts."));
  QPushButton* restart =
      box->addButton(QObject::tr("&Restart gpulab now (your photo, the tab and the Mandelbrot view are kept)"),
                     QMessageBox::AcceptRole);
  restart->setObjectName(QStringLiteral("restartButton"));
  QPushButton* cpu = box->addButton(QObject::tr("&Continue on the CPU"), QMessageBox::RejectRole);
  cpu->setObjectName(QStringLiteral("continueOnCpuButton"));
  box->setDefaultButton(restart);
  box->setEscapeButton(cpu);
  box->setAttribute(Qt::WA_DeleteOnClose);
  return box;
}

QString faultClause(const QString& message) {
  QString clause = message.section(QLatin1Char(';'), 0, 0).trimmed();
  if (!clause.isEmpty()) clause[0] = clause[0].toUpper();
  return clause;
}

}  // namespace gpulab::gui
