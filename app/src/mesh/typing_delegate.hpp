// TypingDelegate: a cell editor that keeps what the user typed while the model changes under it.
//
// A view refills every open editor from the model on each dataChanged that covers its cell (Qt's
// QAbstractItemView::dataChanged calls setEditorData). The axes table emits one for every design edit, and an edit
// can arrive while a cell is being edited (an undo from the toolbar, whose buttons take no focus): the typing was
// thrown away. This delegate fills an editor from the model only while the editor still shows what it was last
// filled with; once the user has changed it, the typing stays until it is committed or the editor is closed.
// Generic over editors: the value compared is the editor's user property (QLineEdit's text, QSpinBox's value).
#pragma once

#include <QStyledItemDelegate>

namespace meshloom::app {

class TypingDelegate : public QStyledItemDelegate {
  Q_OBJECT

public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
};

}  // namespace meshloom::app
