#include "widgets/segmented_buttons.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <iterator>

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

QHBoxLayout* layOutSegmented(QWidget* holder, const QString& caption, std::initializer_list<QToolButton*> buttons) {
  holder->setStyleSheet(segmentedStyle());
  auto* row = new QHBoxLayout(holder);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(0);
  row->addWidget(new QLabel(caption));
  row->addSpacing(8);
  for (QToolButton* button : buttons) row->addWidget(button);
  if (buttons.size() > 0) {
    (*buttons.begin())->setProperty("segment", QStringLiteral("first"));
    (*std::prev(buttons.end()))->setProperty("segment", QStringLiteral("last"));
  }
  return row;
}

}  // namespace gpulab::gui
