// The "Photo" tab: the current photo with zoom and pan.
#pragma once

#include <QWidget>

#include "shell/tab_services.hpp"

namespace gpulab::gui {

class ImageView;

class PhotoTab : public QWidget {
  Q_OBJECT

 public:
  explicit PhotoTab(TabServices& services, QWidget* parent = nullptr);
  ImageView& view() noexcept { return *view_; }

 private:
  void photoChanged();

  TabServices& services_;
  ImageView* view_;
};

}  // namespace gpulab::gui
