// Where the bundled resources (sample photos, palettes, icons) are at run time.
#pragma once

#include <QIcon>
#include <QString>

namespace gpulab::gui {

/// The first existing directory among, in order: $GPULAB_RESOURCES, <executable dir>/../share/gpulab
/// (an installed gpulab), and the source tree's resources/ compiled in as GPULAB_RESOURCE_DIR.
/// Empty when none exists.
QString resourceDirectory();

/// The photo gpulab opens at start (resources/photos/coffee.png); empty when it cannot be found.
QString bundledPhoto();

/// Every place resourceDirectory() looks, in order, for messages that say where it looked.
QStringList resourceSearchPath();

/// gpulab's icon (resources/icons/gpulab.svg, compiled in), for the windows. Drawn by Qt's SVG
/// icon engine (Debian's libqt6svg6): without it the icon is empty and windows show the default.
QIcon applicationIcon();

}  // namespace gpulab::gui
