#include "mesh/typing_delegate.hpp"

#include <QMetaProperty>
#include <QVariant>
#include <QWidget>

namespace meshloom::app {

namespace {

constexpr const char* kFilled = "meshloom_filled";  // the value this delegate last put in the editor

QVariant user_value(const QWidget* editor) {
  const QMetaProperty user = editor->metaObject()->userProperty();
  return user.isValid() ? user.read(editor) : QVariant();
}

}  // namespace

void TypingDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  const QVariant filled = editor->property(kFilled);
  if (filled.isValid() && user_value(editor) != filled) return;  // the user's typing: kept
  QStyledItemDelegate::setEditorData(editor, index);
  editor->setProperty(kFilled, user_value(editor));
}

}  // namespace meshloom::app
