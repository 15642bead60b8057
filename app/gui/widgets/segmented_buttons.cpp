#include "widgets/segmented_buttons.hpp"

#include <QToolButton>

namespace gpulab::gui {

QToolButton* makeToggle(const QString& text, const QString& tip) {
  auto* b = new QToolButton;
  b->setText(text);
  b->setToolTip(tip);
  b->setCheckable(true);
  b->setToolButtonStyle(Qt::ToolButtonTextOnly);
  return b;
}

QString segmentedStyle() {
  return QStringLiteral(
      "QToolButton { padding: 3px 10px; border: 1px solid palette(light); border-radius: 0px;"
      "  background: palette(button); color: palette(button-text); }"
      "QToolButton:hover:!checked:enabled { background: palette(midlight); }"
      "QToolButton:checked { background: palette(highlight); border-color: palette(highlight);"
      "  color: palette(highlighted-text); }"
      "QToolButton:disabled { color: palette(placeholder-text); background: palette(window); }"
      "QToolButton[segment=\"first\"] { border-top-left-radius: 4px; border-bottom-left-radius: 4px; }"
      "QToolButton[segment=\"last\"] { border-top-right-radius: 4px; border-bottom-right-radius: 4px; }");
}

}  // namespace gpulab::gui
