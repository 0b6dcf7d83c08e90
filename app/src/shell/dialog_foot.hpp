// DialogFoot: the foot of a dialog that checks what is typed as it is typed (EditDialog, TensorDialog): a preview
// line of what OK would do, an inline error naming the bad value, and OK (enabled only while the input is valid) and
// Cancel. OK accepts the dialog only then; a bad input keeps it open with what was typed.
#pragma once

#include <QString>

class QDialog;
class QDialogButtonBox;
class QFormLayout;
class QLabel;

namespace meshloom::app {

class DialogFoot {
public:
  // Adds the preview, the error and the buttons as the last rows of `form`, and connects the buttons to `dialog`.
  DialogFoot(QDialog* dialog, QFormLayout* form);

  // What the input makes: the preview when valid (OK enabled), else the error (OK disabled).
  void show(const QString& preview, const QString& error, bool valid);
  [[nodiscard]] QString preview() const;
  [[nodiscard]] QString error() const;
  [[nodiscard]] bool can_accept() const;

private:
  QLabel* preview_ = nullptr;
  QLabel* error_ = nullptr;
  QDialogButtonBox* buttons_ = nullptr;
};

}  // namespace meshloom::app
