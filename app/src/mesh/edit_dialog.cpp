#include "mesh/edit_dialog.hpp"

#include <QFormLayout>
#include <QLineEdit>
#include <QStringList>

#include <utility>

#include "document/design_document.hpp"
#include "shell/dialog_foot.hpp"

namespace meshloom::app {

EditDialog::EditDialog(const QString& title, const std::vector<std::vector<QString>>& fields, Design before, Check check,
                       QWidget* parent)
    : QDialog(parent), before_(std::move(before)), check_(std::move(check)) {
  setWindowTitle(title);
  setMinimumWidth(480);  // room for the fields' hints and a preview line
  auto* form = new QFormLayout(this);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (const auto& f : fields) {
    auto* edit = new QLineEdit(f.size() > 1 ? f[1] : QString(), this);
    if (f.size() > 2) edit->setPlaceholderText(f[2]);
    form->addRow(f.at(0), edit);
    fields_.push_back(edit);
    connect(edit, &QLineEdit::textChanged, this, &EditDialog::update);
  }
  foot_ = std::make_unique<DialogFoot>(this, form);
  update();
}

std::vector<QString> EditDialog::texts() const {
  std::vector<QString> out;
  for (const QLineEdit* f : fields_) out.push_back(f->text());
  return out;
}

EditDialog::~EditDialog() = default;

QString EditDialog::preview() const { return foot_->preview(); }
QString EditDialog::error() const { return foot_->error(); }
bool EditDialog::can_accept() const { return foot_->can_accept(); }

QString EditDialog::describe(const Design& before, const Design& after) {
  QStringList axes;
  for (std::size_t a = 0; a < after.mesh.shape.size(); ++a) {
    axes << QStringLiteral("%1 %2").arg(QString::fromStdString(after.mesh.names[a])).arg(after.mesh.shape[a]);
  }
  return tr("Mesh (%1)").arg(axes.join(QStringLiteral(", "))) + DesignDocument::side_effects(before, after);
}

void EditDialog::update() {
  const Outcome o = check_(texts());
  foot_->show(!o.design ? QString() : o.preview.isEmpty() ? describe(before_, *o.design) : o.preview, o.error,
              o.design.has_value());
}

}  // namespace meshloom::app
