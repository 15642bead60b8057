// A plain-text code editor: a monospaced QPlainTextEdit with line numbers in a margin, and marks for
// diagnostics (the line tinted, the column underlined, the message as the line's tooltip). Used by the
// Lab's custom-kernel panel for expressions and CUDA sources.
#pragma once

#include <QPlainTextEdit>
#include <QString>
#include <vector>

namespace gpulab::gui {

class CodeEditor : public QPlainTextEdit {
  Q_OBJECT

 public:
  /// One mark: 1-based line and column (column 0: the whole line), and its message.
  struct Mark {
    int line = 0;
    int column = 0;
    QString message;
    bool error = true;  ///< false: a warning (a paler tint)
  };

  explicit CodeEditor(QWidget* parent = nullptr);

  /// Shows these marks (replacing any before); marks outside the text are ignored.
  void setMarks(std::vector<Mark> marks);
  void clearMarks() { setMarks({}); }
  const std::vector<Mark>& marks() const noexcept { return marks_; }
  /// Puts the cursor at a 1-based line and column and shows it.
  void goTo(int line, int column);

  /// Width of the line-number margin, in pixels.
  int lineNumberWidth() const;

 protected:
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;  // tooltips of marked lines

 private:
  class Margin;
  friend class Margin;
  void paintMargin(QPaintEvent* event);
  void updateMargin(const QRect& rect, int dy);
  void applyMarks();

  Margin* margin_;
  std::vector<Mark> marks_;
};

}  // namespace gpulab::gui
