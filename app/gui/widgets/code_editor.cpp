#include "widgets/code_editor.hpp"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QPainter>
#include <QTextBlock>
#include <QToolTip>

namespace gpulab::gui {

class CodeEditor::Margin : public QWidget {
 public:
  explicit Margin(CodeEditor* editor) : QWidget(editor), editor_(editor) {}
  QSize sizeHint() const override { return {editor_->lineNumberWidth(), 0}; }

 protected:
  void paintEvent(QPaintEvent* event) override { editor_->paintMargin(event); }

 private:
  CodeEditor* editor_;
};

CodeEditor::CodeEditor(QWidget* parent) : QPlainTextEdit(parent), margin_(new Margin(this)) {
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTabStopDistance(fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
  connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { setViewportMargins(lineNumberWidth(), 0, 0, 0); });
  connect(this, &QPlainTextEdit::updateRequest, this, &CodeEditor::updateMargin);
  // An edit makes the marks stale: they belong to the text that was compiled.
  connect(this, &QPlainTextEdit::textChanged, this, [this] {
    if (!marks_.empty()) clearMarks();
  });
  setViewportMargins(lineNumberWidth(), 0, 0, 0);
}

int CodeEditor::lineNumberWidth() const {
  int digits = 1;
  for (int max = std::max(1, blockCount()); max >= 10; max /= 10) ++digits;
  return 10 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 2);
}

void CodeEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  const QRect r = contentsRect();
  margin_->setGeometry(QRect(r.left(), r.top(), lineNumberWidth(), r.height()));
}

void CodeEditor::updateMargin(const QRect& rect, int dy) {
  if (dy != 0)
    margin_->scroll(0, dy);
  else
    margin_->update(0, rect.y(), margin_->width(), rect.height());
}

void CodeEditor::paintMargin(QPaintEvent* event) {
  QPainter painter(margin_);
  painter.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  const int height = fontMetrics().height();
  while (block.isValid() && top <= event->rect().bottom()) {
    if (block.isVisible()) {
      const int line = block.blockNumber() + 1;
      bool marked = false, error = false;
      for (const Mark& m : marks_)
        if (m.line == line) {
          marked = true;
          error = error || m.error;
        }
      painter.setPen(marked ? (error ? QColor(0xc0, 0x39, 0x2b) : QColor(0xb9, 0x77, 0x0e))
                            : palette().color(QPalette::PlaceholderText));
      QFont font = painter.font();
      font.setBold(marked);
      painter.setFont(font);
      painter.drawText(0, top, margin_->width() - 5, height, Qt::AlignRight, QString::number(line));
    }
    top += qRound(blockBoundingRect(block).height());
    block = block.next();
  }
}

void CodeEditor::setMarks(std::vector<Mark> marks) {
  marks_ = std::move(marks);
  applyMarks();
  margin_->update();
}

void CodeEditor::applyMarks() {
  QList<QTextEdit::ExtraSelection> selections;
  for (const Mark& m : marks_) {
    const QTextBlock block = document()->findBlockByNumber(m.line - 1);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection line;
    line.format.setBackground(m.error ? QColor(0xc0, 0x39, 0x2b, 40) : QColor(0xf3, 0x9c, 0x12, 40));
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = QTextCursor(block);
    selections << line;
    if (m.column > 0 && m.column <= block.length()) {
      QTextEdit::ExtraSelection at;
      at.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
      at.format.setUnderlineColor(m.error ? QColor(0xc0, 0x39, 0x2b) : QColor(0xb9, 0x77, 0x0e));
      at.format.setBackground(m.error ? QColor(0xc0, 0x39, 0x2b, 90) : QColor(0xf3, 0x9c, 0x12, 90));
      QTextCursor cursor(block);
      cursor.setPosition(block.position() + m.column - 1);
      cursor.movePosition(QTextCursor::NextCharacter, QTextCursor::KeepAnchor);
      at.cursor = cursor;
      selections << at;
    }
  }
  setExtraSelections(selections);
}

void CodeEditor::goTo(int line, int column) {
  const QTextBlock block = document()->findBlockByNumber(std::max(0, line - 1));
  if (!block.isValid()) return;
  QTextCursor cursor(block);
  cursor.setPosition(block.position() + std::clamp(column - 1, 0, std::max(0, block.length() - 1)));
  setTextCursor(cursor);
  centerCursor();
  setFocus();
}

bool CodeEditor::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QPoint inViewport = viewport()->mapFromGlobal(help->globalPos());
    const int line = cursorForPosition(inViewport).blockNumber() + 1;
    QStringList messages;
    for (const Mark& m : marks_)
      if (m.line == line) messages << m.message;
    if (!messages.isEmpty()) {
      QToolTip::showText(help->globalPos(), messages.join(QLatin1Char('\n')), this);
      return true;
    }
    QToolTip::hideText();
  }
  return QPlainTextEdit::event(event);
}

}  // namespace gpulab::gui
