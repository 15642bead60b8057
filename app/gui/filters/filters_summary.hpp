// The words the Filters tab shows for a run: the summary under the controls (what ran, the medians
// side by side, how they were measured, how far the GPU's result is from the CPU's), built from the
// harness's record alone, and the sentence form of the engine's messages.
#pragma once

#include <QString>

#include "filters/filters_worker.hpp"

namespace gpulab::gui {

struct SummaryOptions {
  bool showMethod = false;    ///< the operation offers a choice of method: say which one each side took
  bool noCudaDevice = false;  ///< there is no GPU at all: say so where its rows would be
};

/// Rich text: a title, a table of medians and a dimmed paragraph of notes.
QString runSummaryHtml(const FilterRun& run, const SummaryOptions& options);

/// The details behind the summary, as plain lines for its tooltip: the device, why each side took its
/// method (Operation::methodNote: the GPU path, the cost model), the rates against the ceiling.
QString runDetailsText(const FilterRun& run);

/// "box r=3 reflect: GPU 0.12 ms, CPU 4.1 ms", for the status bar.
QString runStatusLine(const FilterRun& run);

/// The engine's messages are lower-case clauses; the user reads a sentence: capitalised, with a full stop.
QString sentence(QString text);

}  // namespace gpulab::gui
