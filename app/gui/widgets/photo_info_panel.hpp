// The Photo dock: what the current photo is (file, size, channels, sample type), where it lives
// (host memory, and whether it is resident on the GPU with its upload time), and how it is shown.
#pragma once

#include <QWidget>

class QFormLayout;
class QLabel;

namespace gpulab::gui {

class PhotoDocument;

class PhotoInfoPanel : public QWidget {
  Q_OBJECT

 public:
  explicit PhotoInfoPanel(PhotoDocument& photo, QWidget* parent = nullptr);

 private:
  void photoChanged();

  PhotoDocument& photo_;
  QFormLayout* form_;
  QLabel* empty_;
  QLabel* file_;
  QLabel* size_;
  QLabel* samples_;
  QLabel* host_;
  QLabel* gpu_;
  QLabel* display_;
};

}  // namespace gpulab::gui
