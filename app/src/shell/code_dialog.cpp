#include "shell/code_dialog.hpp"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <utility>

namespace meshloom::app {

CodeDialog::CodeDialog(const QString& title, const QString& code, std::function<bool()> save, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(title);
  resize(760, 520);
  text_ = new QPlainTextEdit(code, this);
  text_->setReadOnly(true);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  copy_ = buttons->addButton(tr("&Copy"), QDialogButtonBox::ActionRole);
  copy_->setToolTip(tr("Copy the code to the clipboard"));
  QPushButton* save_button = buttons->addButton(tr("&Save..."), QDialogButtonBox::ActionRole);
  save_button->setToolTip(tr("Write the code to a .py file"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(text_, 1);
  layout->addWidget(buttons);
  connect(copy_, &QPushButton::clicked, this, &CodeDialog::copy);
  connect(save_button, &QPushButton::clicked, this, [this, save = std::move(save)] {
    if (save && save()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString CodeDialog::code() const { return text_->toPlainText(); }

void CodeDialog::copy() {
  QApplication::clipboard()->setText(code());
  copy_->setText(tr("Copied"));
  QTimer::singleShot(1500, copy_, [this] { copy_->setText(tr("&Copy")); });
}

}  // namespace meshloom::app
