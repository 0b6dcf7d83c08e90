#include "mesh/edit_dialog.hpp"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStringList>

#include <utility>

#include "document/design_document.hpp"
#include "shell/inline_message.hpp"

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
  preview_ = new QLabel(this);
  preview_->setWordWrap(true);
  preview_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_ = make_message_label(this);
  form->addRow(preview_);
  form->addRow(error_);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  form->addRow(buttons_);
  connect(buttons_, &QDialogButtonBox::accepted, this, [this] {
    if (can_accept()) accept();
  });
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  update();
}

std::vector<QString> EditDialog::texts() const {
  std::vector<QString> out;
  for (const QLineEdit* f : fields_) out.push_back(f->text());
  return out;
}

QString EditDialog::preview() const { return preview_->text(); }
QString EditDialog::error() const { return error_->text(); }
bool EditDialog::can_accept() const { return buttons_->button(QDialogButtonBox::Ok)->isEnabled(); }

QString EditDialog::describe(const Design& before, const Design& after) {
  QStringList axes;
  for (std::size_t a = 0; a < after.mesh.shape.size(); ++a) {
    axes << QStringLiteral("%1 %2").arg(QString::fromStdString(after.mesh.names[a])).arg(after.mesh.shape[a]);
  }
  return tr("Mesh (%1)").arg(axes.join(QStringLiteral(", "))) + DesignDocument::side_effects(before, after);
}

void EditDialog::update() {
  const Outcome o = check_(texts());
  preview_->setText(!o.design ? QString() : o.preview.isEmpty() ? describe(before_, *o.design) : o.preview);
  show_message(error_, o.design ? QString() : o.error);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(o.design.has_value());
}

}  // namespace meshloom::app
