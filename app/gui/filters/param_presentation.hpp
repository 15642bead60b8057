// How the Filters tab dresses the parameters of the operations it knows well: labels, the words for
// a choice's values, a line under a control that follows its value, a starting value where the
// registry has none. Everything else comes from the registry's ParamInfo alone (the name as the
// label, the help as the tooltip, the values as they are spelled), so a newly registered operation
// appears with plain controls and needs nothing here.
#pragma once

#include <QString>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpulab/filters/registry.hpp"

namespace gpulab::gui {

struct ParamPresentation {
  QString label;    ///< the form's label (a check box's text); default: the name, capitalised
  QString tooltip;  ///< default: ParamInfo::help
  std::vector<std::pair<std::string, QString>> choiceLabels;  ///< Choice: value -> what the menu says
  std::string initialValue;  ///< the control's first value when the registry gives no default
  int sliderMaximum = 0;     ///< Integer: where the slider ends (the spin box goes on); 0: min(maximum, minimum + 512)
  std::function<QString(const std::string& value)> hint;  ///< a dimmed line under the control, from its value
  QString group;  ///< "Border": shown in the Border box under the filter's own parameters; empty: the Filter box
};

/// The presentation of `param` of `operation`.
ParamPresentation presentationOf(const gpulab::OperationInfo& operation, const gpulab::ParamInfo& param);

/// A dimmed sentence under an operation's controls ("3x3. Colour goes to luminance first..."), or empty.
QString operationNote(const gpulab::OperationInfo& operation);

}  // namespace gpulab::gui
