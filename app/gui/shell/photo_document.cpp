#include "shell/photo_document.hpp"

#include <QFileInfo>

namespace gpulab::gui {

QString PhotoDocument::displayName() const {
  if (!hasPhoto()) return {};
  const QFileInfo info(current_.source);
  return info.exists() ? info.fileName() : current_.source;
}

void PhotoDocument::addResidentUpload(gpulab::Measurement& record) const {
  const std::optional<gpulab::Measurement>& upload = current_.upload;
  if (!record.gpu || record.gpu->upload || !record.input || !upload || !upload->gpu || !upload->gpu->upload) return;
  if (!upload->input || !(*upload->input == *record.input)) return;
  record.gpu->upload = upload->gpu->upload;
}

void PhotoDocument::set(const PhotoUpdate& update) {
  current_ = update;
  emit changed();
}

}  // namespace gpulab::gui
