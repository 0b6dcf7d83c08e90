#include "shell/dialog_foot.hpp"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>

#include "shell/inline_message.hpp"

namespace meshloom::app {

DialogFoot::DialogFoot(QDialog* dialog, QFormLayout* form) {
  preview_ = new QLabel(dialog);
  preview_->setWordWrap(true);
  preview_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_ = make_message_label(dialog);
  form->addRow(preview_);
  form->addRow(error_);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
  form->addRow(buttons_);
  QObject::connect(buttons_, &QDialogButtonBox::accepted, dialog, [this, dialog] {
    if (can_accept()) dialog->accept();
  });
  QObject::connect(buttons_, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
}

void DialogFoot::show(const QString& preview, const QString& error, bool valid) {
  preview_->setText(valid ? preview : QString());
  show_message(error_, valid ? QString() : error);
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(valid);
}

QString DialogFoot::preview() const { return preview_->text(); }
QString DialogFoot::error() const { return error_->text(); }
bool DialogFoot::can_accept() const { return buttons_->button(QDialogButtonBox::Ok)->isEnabled(); }

}  // namespace meshloom::app
