// DesignDocument: the open design, its built mesh, its file and its undo history. Every change goes through
// edit(), which runs one of the engine's design edits (meshloom/design/edit.hpp) and pushes the result as one
// QUndoCommand; undo and redo swap whole Design values, so the history can never drift from the engine's
// rules. The document also keeps an autosave copy while it has unsaved changes (see autosave.hpp).
#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <optional>

#include "meshloom/design/design.hpp"
#include "meshloom/mesh/device_mesh.hpp"

class QUndoStack;

namespace meshloom::app {

// The file `design`'s calibration names, absolute and cleaned (a relative one from the folder of `design_path`): the
// same for the design saved in different folders. As written when relative and the design has no file yet; nullopt
// without one. Example: "cal/../c.json" of /runs/d.meshloom.json is "/runs/c.json".
[[nodiscard]] std::optional<std::string> calibration_file(const Design& design, const QString& design_path);
// `design` (of the file `design_path`) with its calibration named so (calibration_file), for a design that leaves
// its folder behind (an untitled copy) or is compared with itself saved elsewhere.
[[nodiscard]] Design with_absolute_calibration(Design design, const QString& design_path);

class DesignDocument : public QObject {
  Q_OBJECT

public:
  explicit DesignDocument(QObject* parent = nullptr);

  [[nodiscard]] const Design& design() const noexcept { return design_; }
  // The design's root mesh, built by the engine (build_mesh over the design's world).
  [[nodiscard]] const DeviceMesh& mesh() const noexcept { return mesh_; }
  // The file the document was opened from or saved to, absolute; empty for a new design.
  [[nodiscard]] const QString& path() const noexcept { return path_; }
  // The file name, or "untitled" for a new design ("untitled (from default.meshloom.json)" for a copy).
  [[nodiscard]] QString display_name() const;
  [[nodiscard]] bool is_modified() const;
  [[nodiscard]] QUndoStack* undo_stack() const noexcept { return undo_; }

  // A new design (world 8 on one host, one axis "dp" of 8), clean, with an empty history.
  void new_design();
  // Opens a design file: the document changes only when it loads. Returns false with the engine's message
  // (which names the file) in *error.
  bool open(const QString& path, QString* error);
  // Opens a design file as an untitled copy (a bundled example, a template): saving asks for a new file, so the
  // original is never written over. A relative calibration path is made absolute (the copy has no folder).
  // display_name() is "untitled (from <file name>)". Returns false with the engine's message in *error.
  bool open_copy(const QString& path, QString* error);
  // Shows `design` as if it had been opened from `path` (empty: untitled); clears the history. When
  // `modified`, the document starts with unsaved changes (a recovered autosave).
  void reset(Design design, const QString& path, bool modified = false);
  // Saves atomically to `path` (the engine's save_design) and makes it the document's path. Into another folder, a
  // calibration named relative to the old one is named from the new one (relative where it lies inside, absolute
  // otherwise), in the file and in the undo history. Returns false with the cause in *error; the file and the
  // document are unchanged then.
  bool save(const QString& path, QString* error);

  // Applies one edit: `edit` maps the current design to the next (an engine function from design/edit.hpp);
  // the result is pushed as one undoable command named `text`. An edit that throws changes nothing and
  // returns false with the engine's message in *error; an edit that changes nothing pushes nothing and
  // returns true.
  // The undo entry says the edit's side effects after `text`: "Resize tp to 3; world 8 → 12, devices per host 8 → 4"
  // (side_effects), and edited() carries the same words for the status bar.
  bool edit(const QString& text, const std::function<Design(const Design&)>& edit, QString* error);
  // What an edit changed besides what it was asked for: the world and the devices per host (tensor edits name
  // their tensor, and what follows it, in their own text); "; world 8 → 12, devices per host 8 → 4", or empty.
  [[nodiscard]] static QString side_effects(const Design& before, const Design& after);

signals:
  void design_changed();              // design() and mesh() hold a new value
  void path_changed(const QString&);  // after open, save as, new
  void document_replaced();           // another design took the document's place (new, open, reset), not a save
  void edited(const QString& text);   // an edit was applied: its undo text, side effects included
  void modified_changed(bool modified);

private:
  friend class DesignEditCommand;
  void set_design(Design design);  // what the undo commands call

  Design design_;
  DeviceMesh mesh_;
  QString path_;
  QString template_;  // the file an untitled copy was opened from (open_copy); empty otherwise
  QUndoStack* undo_;
  bool resetting_ = false;
};

}  // namespace meshloom::app
