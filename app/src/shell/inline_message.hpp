// Inline messages: the red line under a field that says why the engine refused what was typed there. One
// look everywhere in the app, readable on light and dark palettes (at least 4.5:1 against the window, WCAG AA),
// following theme changes; hidden while there is nothing to say.
#pragma once

#include <QColor>
#include <QString>

#include <cstdint>
#include <vector>

#include <exception>

class QLabel;
class QPalette;
class QWidget;

namespace meshloom::app {

// A hidden, word-wrapping, selectable label for messages.
[[nodiscard]] QLabel* make_message_label(QWidget* parent);
// Shows `text` in the error colour; an empty text hides the label.
void show_message(QLabel* label, const QString& text);
// Shows `text` as an error (the error colour) or as plain text (the palette's own); empty hides the label.
void show_message(QLabel* label, const QString& text, bool error);
// Draws `widget`'s text in the error colour (or its palette's own when !error), and keeps doing so when the palette
// or theme changes.
void mark_error(QWidget* widget, bool error);
// The red for error text on `palette`: #b00020 on light windows, #ff8a80 on dark ones, darkened or lightened until
// its contrast with the window colour is at least 4.5:1.
[[nodiscard]] QColor error_colour(const QPalette& palette);
// WCAG 2 contrast ratio of two colours, from 1 (equal luminance) to 21 (black on white).
[[nodiscard]] double contrast_ratio(const QColor& a, const QColor& b);
// What the app shows for an exception: the engine's message without its kind ("ValueError: " and the like are for
// scripts, not for people), capitalized. Example: Error(ValueError, "size 0 of axis tp ...") -> "Size 0 of axis tp ...".
[[nodiscard]] QString error_text(const std::exception& e);
// "the calibration ..." -> "The calibration ...": messages from the engine start lower case. Only English words
// that messages open with are capitalized: a message that starts with a field path or a name keeps it
// ("tensors[0].dst = ...", "fsdp already exists ...").
[[nodiscard]] QString capitalized(const QString& text);
// A count and its noun, singular for one: counted(1, "state") is "1 state", counted(9, "state") "9 states";
// `plural` for nouns that do not take an s ("1 entry", "2 entries").
[[nodiscard]] QString counted(long long n, const QString& singular, const QString& plural = QString());
// A tensor's shape as the app writes it everywhere: "[1024, 512]" ("[]" for a 0-D tensor).
[[nodiscard]] QString shape_text(const std::vector<std::int64_t>& shape);

}  // namespace meshloom::app
