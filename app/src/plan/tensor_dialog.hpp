// TensorDialog: the Add tensor form of the Redistribution dock, on EditDialog's pattern: name, shape, dtype, source
// and target state. Every change dry-runs the engine's add_tensor on the design and shows under the fields either
// the tensor it would add ("Adds w: [1024, 512] float32 (2 MiB), RR → RR") or why the engine refuses it; OK is
// enabled only for a tensor the engine takes, so a bad input keeps the dialog open with everything typed.
//
// Also the shape reader the dock and the dialog share: "1024, 512" typed, "[1024, 512]" shown (shape_text, in
// shell/inline_message.hpp).
#pragma once

#include <QDialog>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "meshloom/design/design.hpp"

class QComboBox;
class QLineEdit;

namespace meshloom::app {

class DialogFoot;

// Reads a shape typed as sizes separated by commas or spaces: "1024, 512", "[1024, 512]", "1024 x 512"; "" or "[]"
// is a scalar (no dims). False, with *error naming the text and the token, for a token that is not a whole number:
// shape "1024, x": "x" is not a whole number. Sizes are not checked here: the engine names a size < 1
// ("shape[1] = 0: dims must be >= 1").
bool parse_shape(const QString& text, std::vector<std::int64_t>* shape, QString* error);
// Fills a combo box with the engine's dtypes, "float32 (4 bytes)", each with its name ("float32") as item data.
void add_dtype_items(QComboBox* box);

class TensorDialog : public QDialog {
  Q_OBJECT

public:
  // `before`: the design the tensor is added to; `initial`: what the fields start with.
  TensorDialog(Design before, const DesignTensor& initial, QWidget* parent = nullptr);
  ~TensorDialog() override;

  [[nodiscard]] QLineEdit* name_field() const noexcept { return name_; }
  [[nodiscard]] QLineEdit* shape_field() const noexcept { return shape_; }
  [[nodiscard]] QComboBox* dtype_box() const noexcept { return dtype_; }
  [[nodiscard]] QLineEdit* source_field() const noexcept { return src_; }
  [[nodiscard]] QLineEdit* target_field() const noexcept { return dst_; }

  // The tensor the fields describe when the engine takes it; nullopt otherwise (error() says why).
  [[nodiscard]] std::optional<DesignTensor> tensor() const;
  // What the dialog says under the fields: the tensor it would add, or why it is refused.
  [[nodiscard]] QString preview() const;
  [[nodiscard]] QString error() const;
  [[nodiscard]] bool can_accept() const;

private:
  struct Outcome {
    std::optional<DesignTensor> tensor;
    QString error;
  };
  [[nodiscard]] Outcome check() const;
  void update();

  Design before_;
  QLineEdit* name_ = nullptr;
  QLineEdit* shape_ = nullptr;
  QComboBox* dtype_ = nullptr;
  QLineEdit* src_ = nullptr;
  QLineEdit* dst_ = nullptr;
  std::unique_ptr<DialogFoot> foot_;  // the preview, the error, OK and Cancel
};

}  // namespace meshloom::app
