// What the main window hands every tab: the engine's worker, the current photo, the Timings panel,
// and the status bar. See main_window.cpp (registerTabs) for how a tab is added.
#pragma once

#include <QString>
#include <functional>

namespace gpulab::gui {

class Engine;
class PhotoDocument;
class TimingsPanel;

struct TabServices {
  Engine& engine;                                   ///< submit(...) jobs to the worker thread (engine.hpp)
  PhotoDocument& photo;                             ///< the current photo as shown; changed() when it changes
  TimingsPanel& timings;                            ///< addRun(gpulab::Measurement) after every measured operation
  std::function<void(const QString&)> showMessage;  ///< a transient status-bar message
  std::function<void(const QString&)> showError;    ///< an error, in words, for the user
};

}  // namespace gpulab::gui
