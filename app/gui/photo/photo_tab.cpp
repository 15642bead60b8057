#include "photo/photo_tab.hpp"

#include <QVBoxLayout>

#include "shell/photo_document.hpp"
#include "widgets/image_view.hpp"

namespace gpulab::gui {

PhotoTab::PhotoTab(TabServices& services, QWidget* parent)
    : QWidget(parent), services_(services), view_(new ImageView) {
  view_->setObjectName(QStringLiteral("photoView"));
  view_->setPlaceholderText(tr("No photo\n\nOpen one with File > Open (Ctrl+O), or drop an image file here."));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view_);
  connect(&services_.photo, &PhotoDocument::changed, this, &PhotoTab::photoChanged);
  photoChanged();
}

void PhotoTab::photoChanged() {
  if (services_.photo.hasPhoto())
    view_->setImage(services_.photo.current().display);
  else
    view_->clearImage();
}

}  // namespace gpulab::gui
