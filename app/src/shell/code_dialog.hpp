// CodeDialog: File > Export > PyTorch / JAX code shows the code first, read-only and monospaced, with Copy (to the
// clipboard, for a notebook) and Save... (a .py file, written atomically by the caller's save function).
#pragma once

#include <QDialog>
#include <QString>

#include <functional>

class QPlainTextEdit;
class QPushButton;

namespace meshloom::app {

class CodeDialog : public QDialog {
  Q_OBJECT

public:
  // `save` asks for a file and writes the code there; it returns false when nothing was written (cancelled or
  // refused: it says why itself).
  CodeDialog(const QString& title, const QString& code, std::function<bool()> save, QWidget* parent = nullptr);

  [[nodiscard]] QString code() const;
  // Puts the code on the clipboard; the button says "Copied" for a moment.
  void copy();
  [[nodiscard]] QPushButton* copy_button() const noexcept { return copy_; }

private:
  QPlainTextEdit* text_ = nullptr;
  QPushButton* copy_ = nullptr;
};

}  // namespace meshloom::app
