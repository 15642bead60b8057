#include "shell/photo_document.hpp"

#include <QFileInfo>

namespace gpulab::gui {

QString PhotoDocument::displayName() const {
  if (!hasPhoto()) return {};
  const QFileInfo info(current_.source);
  return info.exists() ? info.fileName() : current_.source;
}

void PhotoDocument::set(const PhotoUpdate& update) {
  current_ = update;
  emit changed();
}

}  // namespace gpulab::gui
