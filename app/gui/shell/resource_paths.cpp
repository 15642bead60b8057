#include "shell/resource_paths.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStringList>

namespace gpulab::gui {

QStringList resourceSearchPath() {
  QStringList dirs;
  const QString fromEnv = qEnvironmentVariable("GPULAB_RESOURCES");
  if (!fromEnv.isEmpty()) dirs << fromEnv;
  if (QCoreApplication::instance() != nullptr)
    dirs << QDir(QCoreApplication::applicationDirPath()).absoluteFilePath(QStringLiteral("../share/gpulab"));
  dirs << QStringLiteral(GPULAB_RESOURCE_DIR);
  return dirs;
}

QString resourceDirectory() {
  for (const QString& dir : resourceSearchPath())
    if (QFileInfo(dir).isDir()) return QDir(dir).canonicalPath();
  return {};
}

QString bundledPhoto() {
  for (const QString& dir : resourceSearchPath()) {
    const QFileInfo photo(QDir(dir).filePath(QStringLiteral("photos/coffee.png")));
    if (photo.isFile()) return photo.canonicalFilePath();
  }
  return {};
}

QIcon applicationIcon() { return QIcon(QStringLiteral(":/gpulab/icons/gpulab.svg")); }

}  // namespace gpulab::gui
