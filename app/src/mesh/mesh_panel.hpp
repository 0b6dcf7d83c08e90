// MeshPanel: the mesh designer. The design's name, world and devices per host; the axes table (AxesModel) with
// add, remove, move, flatten and unflatten; a message under the field at fault when the engine refuses an
// edit (never a dialog storm). It is a view: every change is one of the engine's design edits, run through
// the document as one undoable command.
#pragma once

#include <QWidget>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshloom/design/design.hpp"

class QAction;
class QLabel;
class QPlainTextEdit;
class QLineEdit;
class QSpinBox;
class QTableView;

namespace meshloom::app {

class AxesModel;
class DesignDocument;
class EditDialog;

class MeshPanel : public QWidget {
  Q_OBJECT

public:
  MeshPanel(DesignDocument* doc, AxesModel* axes, QWidget* parent = nullptr);

  // The panel's actions (also in the Mesh menu), with shortcuts and tooltips.
  [[nodiscard]] QList<QAction*> actions_for_menu() const;

  // The operations behind the actions, without dialogs (the actions ask for names and sizes first). Each
  // returns false and shows the engine's message inline when the edit is refused.
  bool add_axis(const std::string& name, std::int64_t size);  // after the current row (at the end when none)
  bool remove_current();                                     // the selected axis or flattened axis
  bool move_current(int delta);                              // -1 outer, +1 inner
  bool flatten_picked(const QString& name);                  // the ticked axes; empty name: PyTorch's default
  bool unflatten_current(const QString& sizes, const QString& names);  // "2, 4" and "dp_replicate, dp_shard"
  bool set_world(std::int64_t world);
  bool set_devices_per_host(std::int64_t devices);
  bool set_design_name(const QString& name);
  // The design's description (empty: none), shown under its name: what a preset or the file says it is for.
  bool set_description(const QString& text);

  // Applies what is typed but not yet committed (a name being edited, a number not yet entered), as saving,
  // exporting and closing must see it.
  void commit_pending();

  void select_axis(const std::string& name);
  [[nodiscard]] std::string current_axis() const;  // "" when no row is selected
  [[nodiscard]] QTableView* table() const noexcept { return table_; }
  // The panel's width that shows every column of the axes table for the design as it is, without scrolling across
  // (with or without a vertical scroll bar).
  [[nodiscard]] int width_for_table() const;
  // The inline message currently shown (empty when none): field is "name", "world", "devices", "axes".
  [[nodiscard]] QString message(const QString& field) const;
  // The Add axis and Unflatten dialogs, not yet shown (the actions exec them): fields validated by the engine as
  // they are typed, with a preview of the edit. The unflatten dialog is null when no mesh axis is selected.
  [[nodiscard]] std::unique_ptr<EditDialog> make_add_dialog();
  [[nodiscard]] std::unique_ptr<EditDialog> make_unflatten_dialog();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;  // the description commits on focus out

private:
  // The name's or the description's typing, as one edit (commit_pending, leaving the field).
  void commit_name();
  void commit_description();
  void sync_fields();
  void update_actions();
  // Runs one edit of a form field; on refusal shows the message under it and puts the design's value back.
  bool edit_field(QLabel* message, const QString& text, const std::function<Design(const Design&)>& edit);
  void clear_messages();
  [[nodiscard]] std::size_t insert_index() const;  // where Add axis inserts: after the current row, else at the end
  void add_dialog();
  void flatten_dialog();
  void unflatten_dialog();

  DesignDocument* doc_;
  AxesModel* axes_;
  QLineEdit* name_ = nullptr;
  QSpinBox* world_ = nullptr;
  QSpinBox* devices_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* name_message_ = nullptr;
  QPlainTextEdit* description_ = nullptr;  // committed when it loses focus
  // The design's description as last put into description_, and the text the widget then held: QPlainTextEdit
  // turns "\r\n" and a non-breaking space into "\n" and a space, so the box differs from the design's text even
  // untouched, and only a change from what it was given is the user's edit.
  QString description_given_;
  QString description_shown_;
  QLabel* description_message_ = nullptr;
  QLabel* world_message_ = nullptr;
  QLabel* devices_message_ = nullptr;
  QLabel* axes_message_ = nullptr;
  QAction* add_ = nullptr;
  QAction* remove_ = nullptr;
  QAction* up_ = nullptr;
  QAction* down_ = nullptr;
  QAction* flatten_ = nullptr;
  QAction* unflatten_ = nullptr;
  QAction* clear_picks_ = nullptr;
  int row_before_reset_ = -1;
  QString axis_before_reset_;  // the selected axis' name before a model reset
};

// Parses "2, 4" / "2x4" / "2 4" into sizes; ValueError-style message naming the bad token otherwise.
[[nodiscard]] bool parse_sizes(const QString& text, std::vector<std::int64_t>* sizes, QString* error);
// Parses "a, b" / "a b" into names (the engine checks the names themselves).
[[nodiscard]] std::vector<std::string> parse_names(const QString& text);

}  // namespace meshloom::app
