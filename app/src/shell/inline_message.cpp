#include "shell/inline_message.hpp"

#include <QLabel>
#include <QPalette>
#include <QWidget>

namespace meshloom::app {

QLabel* make_message_label(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setVisible(false);
  return label;
}

QString error_style(const QWidget& widget) {
  const bool dark = widget.palette().color(QPalette::Window).lightness() < 128;
  return QStringLiteral("color: %1;").arg(dark ? QStringLiteral("#ff8a80") : QStringLiteral("#b00020"));
}

void show_message(QLabel* label, const QString& text) {
  label->setStyleSheet(error_style(*label));
  label->setText(text);
  label->setVisible(!text.isEmpty());
}

}  // namespace meshloom::app
