// One control per registered parameter, generated from its description (gpulab/filters/registry.hpp):
//
//   Integer  slider and spin box        Number  spin box           Choice  combo box
//   Flag     check box                  Kernel  the kernel editor with its presets
//
// Each holds its value as the registry's text (what OperationInfo::make reads), says when it changes,
// and wears the presentation the Filters tab gives it (filters/param_presentation.hpp): label, tooltip,
// the words for choices, a dimmed hint line under it.
#pragma once

#include <QObject>
#include <QString>
#include <memory>
#include <string>

#include "filters/param_presentation.hpp"
#include "gpulab/filters/registry.hpp"

class QHBoxLayout;
class QLabel;
class QWidget;

namespace gpulab::gui {

class KernelEditor;

class ParamControl : public QObject {
  Q_OBJECT

 public:
  const gpulab::ParamInfo& info() const noexcept { return info_; }
  const ParamPresentation& presentation() const noexcept { return presentation_; }
  /// What goes into the form: the control's row, with the hint line under it when there is one.
  QWidget* widget() const noexcept { return widget_; }
  /// Check boxes and the kernel editor take the whole width of the form; the others sit beside a label.
  virtual bool spansRow() const { return false; }
  /// Puts `other` on this control's row, after it (a value that only matters with one of its choices).
  void addBeside(QWidget* other);

  /// The value as the registry's text: "7", "0.25", "reflect", "true", a kernel as text rows.
  virtual std::string value() const = 0;
  /// Sets the value from the registry's text, as the user would. Throws std::invalid_argument with one
  /// sentence when it does not fit the control (not a number, out of range, not one of the choices).
  virtual void setValue(const std::string& text) = 0;
  /// The kernel editor of a Kernel parameter; nullptr for the others.
  virtual KernelEditor* kernelEditor() noexcept { return nullptr; }

 signals:
  void changed();
  /// A problem the control found itself (a kernel cell that is not a number), in one sentence.
  void message(const QString& text);

 protected:
  ParamControl(gpulab::ParamInfo info, ParamPresentation presentation);
  /// The row the control's widgets go into.
  QHBoxLayout& row() noexcept { return *row_; }
  /// Shows the hint for the current value (call after every change).
  void updateHint();
  /// The first value: the presentation's, else the registry's default.
  std::string initialValue() const;
  /// Puts `editor` on the row (with `stretch`), named after the parameter of `operation` and wearing
  /// the presentation's tooltip.
  void place(QWidget* editor, const gpulab::OperationInfo& operation, int stretch = 1);
  /// Sets the first value, when there is one, and shows its hint (call once the control is built).
  void showInitialValue();
  /// Every `signal` of `editor` updates the hint and says the value changed.
  template <class Editor, class Signal>
  void reportChanges(Editor* editor, Signal signal) {
    connect(editor, signal, this, [this] {
      updateHint();
      emit changed();
    });
  }

 private:
  gpulab::ParamInfo info_;
  ParamPresentation presentation_;
  QWidget* widget_ = nullptr;
  QHBoxLayout* row_ = nullptr;
  QLabel* hint_ = nullptr;
};

/// The control for `param` of `operation`; its widget carries the object name
/// "filterParam_<operation>_<param>" (a slider "..._slider"), for tests and scripts.
std::unique_ptr<ParamControl> makeParamControl(const gpulab::OperationInfo& operation, const gpulab::ParamInfo& param);

}  // namespace gpulab::gui
