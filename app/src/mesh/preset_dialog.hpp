// PresetDialog: builds a mesh from a framework preset (the engine's build_preset: torchtitan, OLMo-core,
// Megatron order strings, JAX, JAX hybrid, Llama 3 405B). The preset's argument (order string, names, DP
// type) and its degrees ("world_size=64, tp=8") are typed in; a preview shows the mesh the engine builds or,
// inline, the framework's own error. OK is enabled only while the preview is a mesh.
#pragma once

#include <QDialog>

#include <map>
#include <optional>
#include <string>

#include "meshloom/mesh/mesh_spec.hpp"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace meshloom::app {

struct PresetRequest {
  std::string name;                              // what build_preset takes, e.g. "megatron:tp-pp-dp"
  std::map<std::string, std::int64_t> degrees;  // e.g. world_size=16, tp=2
};

// Parses "world_size=64, tp=8" (separators: commas or spaces). False with a message naming the bad token.
[[nodiscard]] bool parse_degrees(const QString& text, std::map<std::string, std::int64_t>* degrees, QString* error);
// The engine's mesh for a request, or the framework's error text in *error.
[[nodiscard]] std::optional<MeshSpec> build_request(const PresetRequest& request, QString* error);
// One line: "(pp=2, dp_shard=4, tp=8); flattened dp, dp_shard_cp".
[[nodiscard]] QString describe_mesh(const MeshSpec& mesh);

class PresetDialog : public QDialog {
  Q_OBJECT

public:
  // `preset`: the base name to preselect (torchtitan, olmo_core, megatron, jax, jax_hybrid, llama3_405b, ...).
  explicit PresetDialog(const QString& preset, QWidget* parent = nullptr);

  [[nodiscard]] PresetRequest request() const;
  [[nodiscard]] const std::optional<MeshSpec>& mesh() const noexcept { return mesh_; }
  // The preview line or the error shown.
  [[nodiscard]] QString preview() const;
  void set_fields(const QString& argument, const QString& degrees);

private:
  void preset_changed();
  void update_preview();

  QComboBox* preset_ = nullptr;
  QLabel* description_ = nullptr;
  QLineEdit* argument_ = nullptr;
  QLabel* argument_label_ = nullptr;
  QLineEdit* degrees_ = nullptr;
  QLabel* accepted_ = nullptr;
  QLabel* preview_ = nullptr;
  QDialogButtonBox* buttons_ = nullptr;
  std::optional<MeshSpec> mesh_;
};

}  // namespace meshloom::app
