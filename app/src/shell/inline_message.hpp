// Inline messages: the red line under a field that says why the engine refused what was typed there. One
// look everywhere in the app, readable on light and dark palettes; hidden while there is nothing to say.
#pragma once

#include <QString>

class QLabel;
class QWidget;

namespace meshloom::app {

// A hidden, word-wrapping, selectable label for messages.
[[nodiscard]] QLabel* make_message_label(QWidget* parent);
// Shows `text` in the error colour of the label's palette; an empty text hides the label.
void show_message(QLabel* label, const QString& text);
// "color: #b00020;" on a light palette, a lighter red on a dark one: for labels that show errors.
[[nodiscard]] QString error_style(const QWidget& widget);

}  // namespace meshloom::app
