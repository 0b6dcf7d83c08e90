// EditDialog: a small form for one design edit (Add axis, Unflatten axis, Rename tensor) that never loses what was typed. Every
// keystroke dry-runs the edit on the current design (a pure engine function) and shows either what it would do
// (the new mesh, the world, side effects) or why the engine refuses it, under the fields; OK is enabled only for
// an edit the engine takes, so a bad input keeps the dialog open with its text.
#pragma once

#include <QDialog>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "meshloom/design/design.hpp"

class QLineEdit;

namespace meshloom::app {

class DialogFoot;

class EditDialog : public QDialog {
  Q_OBJECT

public:
  // The edit a set of field texts stands for: the design it makes, or an error naming the bad value; `preview`, when
  // given, is what the dialog says of the design instead of describe() (an edit of something other than the mesh).
  struct Outcome {
    std::optional<Design> design;
    QString error;
    QString preview{};  // {design, error} leaves it empty
  };
  using Check = std::function<Outcome(const std::vector<QString>& texts)>;

  // `fields`: (label, initial text, placeholder) per line edit; `before`: the design the edit starts from.
  EditDialog(const QString& title, const std::vector<std::vector<QString>>& fields, Design before, Check check,
             QWidget* parent = nullptr);
  ~EditDialog() override;

  [[nodiscard]] QLineEdit* field(std::size_t i) const { return fields_.at(i); }
  [[nodiscard]] std::vector<QString> texts() const;
  // What the dialog says under the fields: the preview of the edit, or why it is refused.
  [[nodiscard]] QString preview() const;
  [[nodiscard]] QString error() const;
  [[nodiscard]] bool can_accept() const;

  // What a design edit changes, in one line for a preview: "mesh (dp 2, tp 4, cp 2), world 8 → 16".
  [[nodiscard]] static QString describe(const Design& before, const Design& after);

private:
  void update();

  Design before_;
  Check check_;
  std::vector<QLineEdit*> fields_;
  std::unique_ptr<DialogFoot> foot_;  // the preview, the error, OK and Cancel
};

}  // namespace meshloom::app
