// The current photo as the GUI thread knows it: what to show and where it came from. The pixels the
// engine works on stay on the worker (WorkerContext::photo(), devicePhoto()); this is their picture.
#pragma once

#include <QObject>

#include "shell/worker_context.hpp"

namespace gpulab::gui {

class PhotoDocument : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  bool hasPhoto() const noexcept { return current_.generation != 0; }
  const PhotoUpdate& current() const noexcept { return current_; }
  /// The file name of the source, "coffee.png"; empty without a photo.
  QString displayName() const;
  /// The photo stays resident on the GPU, uploaded once when it was set: a record of an operation that
  /// ran from it (its GPU side, no upload of its own, the photo's shape as input) gets that upload, so
  /// its end-to-end time counts the copy a person pays once per photo.
  void addResidentUpload(gpulab::Measurement& record) const;

 public slots:
  void set(const gpulab::gui::PhotoUpdate& update);

 signals:
  void changed();

 private:
  PhotoUpdate current_;
};

}  // namespace gpulab::gui
