#include "mesh/preset_dialog.hpp"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>

#include <exception>

#include "shell/inline_message.hpp"
#include "meshloom/presets/presets.hpp"

namespace meshloom::app {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// The base name of a registry entry: "olmo_core[:fsdp|:ddp|:hsdp]" -> "olmo_core".
QString base_name(const std::string& entry) {
  const QString e = q(entry);
  const auto cut = e.indexOf(QRegularExpression(QStringLiteral("[\\[:]")));
  return cut < 0 ? e : e.left(cut);
}

struct Example {
  const char* argument;
  const char* degrees;
};

// A sensible starting point per preset, so the preview shows a mesh at once.
Example example_for(const QString& base) {
  if (base == QLatin1String("torchtitan")) return {"", "world_size=64, dp_replicate=2, cp=2, tp=8"};
  if (base == QLatin1String("olmo_core")) return {"hsdp", "world_size=32, num_replicas=2, cp=2"};
  if (base == QLatin1String("megatron")) return {"tp-cp-ep-dp-pp", "world_size=64, tp=8, pp=2"};
  if (base == QLatin1String("jax")) return {"data,model", "data=4, model=2"};
  if (base == QLatin1String("jax_hybrid")) return {"data,model", "data=1, model=8, dcn_data=4"};
  return {"", ""};
}

}  // namespace

bool parse_degrees(const QString& text, std::map<std::string, std::int64_t>* degrees, QString* error) {
  degrees->clear();
  for (const QString& token : text.split(QRegularExpression(QStringLiteral("[\\s,;]+")), Qt::SkipEmptyParts)) {
    const auto eq = token.indexOf(QLatin1Char('='));
    bool ok = false;
    const qlonglong value = eq > 0 ? token.mid(eq + 1).toLongLong(&ok) : 0;
    if (eq <= 0 || !ok) {
      *error = QObject::tr("degree \"%1\": write key=value with an integer value, e.g. tp=8").arg(token);
      return false;
    }
    const std::string key = token.left(eq).toStdString();
    if (degrees->count(key) != 0) {
      *error = QObject::tr("degree \"%1\" is given twice").arg(q(key));
      return false;
    }
    (*degrees)[key] = value;
  }
  return true;
}

std::optional<MeshSpec> build_request(const PresetRequest& request, QString* error) {
  try {
    return build_preset(request.name, request.degrees);
  } catch (const std::exception& e) {
    if (error) *error = error_text(e);
    return std::nullopt;
  }
}

QString describe_mesh(const MeshSpec& mesh) {
  QStringList axes;
  for (std::size_t i = 0; i < mesh.shape.size(); ++i) axes << QStringLiteral("%1=%2").arg(q(mesh.names[i])).arg(mesh.shape[i]);
  QString text = QStringLiteral("(%1)").arg(axes.join(QStringLiteral(", ")));
  std::int64_t size = 1;
  bool overflow = false;
  for (auto s : mesh.shape) overflow = overflow || __builtin_mul_overflow(size, s, &size);
  text += overflow ? QObject::tr(", more ranks than an int64 holds") : QObject::tr(", %1 ranks").arg(size);
  if (!mesh.flattened.empty()) {
    QStringList flat;
    for (const auto& f : mesh.flattened) flat << q(f.name);
    text += QObject::tr("; flattened %1").arg(flat.join(QStringLiteral(", ")));
  }
  return text;
}

PresetDialog::PresetDialog(const QString& preset, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Mesh from a preset"));
  preset_ = new QComboBox(this);
  for (const auto& info : list_presets()) {
    preset_->addItem(base_name(info.name), q(info.name));
    preset_->setItemData(preset_->count() - 1, q(info.description), Qt::ToolTipRole);
  }
  description_ = new QLabel(this);
  description_->setWordWrap(true);
  argument_ = new QLineEdit(this);
  argument_label_ = new QLabel(tr("&Argument"), this);
  argument_label_->setBuddy(argument_);
  degrees_ = new QLineEdit(this);
  degrees_->setToolTip(tr("key=value pairs separated by commas, e.g. world_size=64, tp=8"));
  accepted_ = new QLabel(this);
  accepted_->setWordWrap(true);
  preview_ = new QLabel(this);
  preview_->setWordWrap(true);
  preview_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);

  auto* form = new QFormLayout(this);
  form->addRow(tr("&Preset"), preset_);
  form->addRow(QString(), description_);
  form->addRow(argument_label_, argument_);
  form->addRow(tr("&Degrees"), degrees_);
  form->addRow(QString(), accepted_);
  form->addRow(tr("Mesh"), preview_);
  form->addRow(buttons_);

  connect(preset_, &QComboBox::currentIndexChanged, this, &PresetDialog::preset_changed);
  connect(argument_, &QLineEdit::textChanged, this, &PresetDialog::update_preview);
  connect(degrees_, &QLineEdit::textChanged, this, &PresetDialog::update_preview);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

  const int found = preset_->findText(preset);
  preset_->setCurrentIndex(found >= 0 ? found : 0);
  preset_changed();
  resize(560, sizeHint().height());
}

void PresetDialog::preset_changed() {
  const std::string entry = preset_->currentData().toString().toStdString();
  const QString base = preset_->currentText();
  for (const auto& info : list_presets()) {
    if (info.name != entry) continue;
    description_->setText(q(info.description));
    QStringList keys;
    for (const auto& k : info.degrees) keys << q(k);
    accepted_->setText(keys.isEmpty() ? tr("No degrees.")
                                      : tr("Accepted: %1 (* required)").arg(keys.join(QStringLiteral(", "))));
  }
  const bool takes_argument = q(entry).contains(QLatin1Char(':'));
  argument_->setVisible(takes_argument);
  argument_label_->setVisible(takes_argument);
  if (base == QLatin1String("megatron")) argument_->setToolTip(tr("The order string, first name fastest (tp-cp-ep-dp-pp)"));
  if (base == QLatin1String("olmo_core")) argument_->setToolTip(tr("Data parallel type: fsdp, ddp or hsdp"));
  if (base.startsWith(QLatin1String("jax"))) argument_->setToolTip(tr("The axis names, comma separated"));
  const Example ex = example_for(base);
  set_fields(QString::fromLatin1(ex.argument), QString::fromLatin1(ex.degrees));
}

void PresetDialog::set_fields(const QString& argument, const QString& degrees) {
  const QSignalBlocker a(argument_), d(degrees_);
  argument_->setText(argument);
  degrees_->setText(degrees);
  update_preview();
}

PresetRequest PresetDialog::request() const {
  PresetRequest r;
  r.name = preset_->currentText().toStdString();
  if (!argument_->isHidden()) {
    const QString arg = argument_->text().trimmed();
    if (!arg.isEmpty()) r.name += ":" + arg.toStdString();
  }
  QString ignored;
  (void)parse_degrees(degrees_->text(), &r.degrees, &ignored);
  return r;
}

void PresetDialog::update_preview() {
  mesh_.reset();
  QString error;
  std::map<std::string, std::int64_t> degrees;
  if (parse_degrees(degrees_->text(), &degrees, &error)) {
    PresetRequest r = request();
    r.degrees = std::move(degrees);
    mesh_ = build_request(r, &error);
  }
  mark_error(preview_, !mesh_);
  preview_->setText(mesh_ ? describe_mesh(*mesh_) : error);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(mesh_.has_value());
}

QString PresetDialog::preview() const { return preview_->text(); }

}  // namespace meshloom::app
