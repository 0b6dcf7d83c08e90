#include "shell/inline_message.hpp"

#include <QEvent>
#include <QLabel>
#include <QObject>
#include <QPalette>
#include <QStringList>
#include <QVariant>
#include <QWidget>

#include <cmath>

#include "meshloom/error.hpp"

namespace meshloom::app {

namespace {

constexpr const char* kErrorProperty = "meshloom_error_text";

double luminance(const QColor& c) {
  const auto channel = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

void apply_error_style(QWidget* widget) {
  const bool error = widget->property(kErrorProperty).toBool();
  widget->setStyleSheet(error ? QStringLiteral("color: %1;").arg(error_colour(widget->palette()).name()) : QString());
}

// Re-applies a widget's error colour when its palette changes (View > Theme): the colour is chosen for the window
// colour under it, so a theme switch must choose again.
class ErrorColourFollower final : public QObject {
public:
  using QObject::QObject;

protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
      if (auto* w = qobject_cast<QWidget*>(watched); w != nullptr && w->property(kErrorProperty).toBool()) {
        const QString style = QStringLiteral("color: %1;").arg(error_colour(w->palette()).name());
        if (w->styleSheet() != style) w->setStyleSheet(style);
      }
    }
    return QObject::eventFilter(watched, event);
  }
};

}  // namespace

QLabel* make_message_label(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setVisible(false);
  return label;
}

double contrast_ratio(const QColor& a, const QColor& b) {
  const double la = luminance(a);
  const double lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor error_colour(const QPalette& palette) {
  const QColor window = palette.color(QPalette::Window);
  const bool dark = window.lightness() < 128;
  QColor c(dark ? QStringLiteral("#ff8a80") : QStringLiteral("#b00020"));
  // Towards white on a dark window, towards black on a light one, until the text reads (a few steps at most).
  for (int i = 0; i < 20 && contrast_ratio(c, window) < 4.5; ++i) c = dark ? c.lighter(110) : c.darker(115);
  return c;
}

void mark_error(QWidget* widget, bool error) {
  if (!widget->property("meshloom_error_follower").toBool()) {
    widget->installEventFilter(new ErrorColourFollower(widget));
    widget->setProperty("meshloom_error_follower", true);
  }
  widget->setProperty(kErrorProperty, error);
  apply_error_style(widget);
}

void show_message(QLabel* label, const QString& text, bool error) {
  mark_error(label, error);
  label->setText(text);
  label->setVisible(!text.isEmpty());
}

void show_message(QLabel* label, const QString& text) { show_message(label, text, true); }

QString error_text(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return capitalized(QString::fromStdString(error != nullptr ? error->message() : std::string(e.what())));
}

QString shape_text(const std::vector<std::int64_t>& shape) {
  QStringList parts;
  for (const auto size : shape) parts << QString::number(size);
  return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

QString counted(long long n, const QString& singular, const QString& plural) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? singular : plural.isEmpty() ? singular + QLatin1Char('s') : plural);
}

QString capitalized(const QString& text) {
  // Only an English word that messages open with: a message may start with a name the user chose ("fsdp already
  // exists ...", as PyTorch says it) or a field path ("tensors[0].dst = ..."), and those keep their case.
  static const QStringList kWords{
      QStringLiteral("a"),        QStringLiteral("an"),          QStringLiteral("the"),         QStringLiteral("cannot"),
      QStringLiteral("no"),       QStringLiteral("not"),         QStringLiteral("unknown"),     QStringLiteral("invalid"),
      QStringLiteral("duplicate"), QStringLiteral("size"),       QStringLiteral("sizes"),       QStringLiteral("state"),
      QStringLiteral("world"),    QStringLiteral("mesh"),        QStringLiteral("axis"),        QStringLiteral("rank"),
      QStringLiteral("shard"),    QStringLiteral("send"),        QStringLiteral("search"),      QStringLiteral("plan"),
      QStringLiteral("planning"), QStringLiteral("redistribute"), QStringLiteral("redistribution"),
      QStringLiteral("design"),   QStringLiteral("dim"),         QStringLiteral("flattened"),   QStringLiteral("coordinate"),
      QStringLiteral("layout"),   QStringLiteral("number"),      QStringLiteral("preset"),      QStringLiteral("parallelism"),
      QStringLiteral("calibration"), QStringLiteral("file"),     QStringLiteral("slicing"),     QStringLiteral("expected")};
  qsizetype end = 0;
  while (end < text.size() && text[end].isLetter()) ++end;
  const bool word = end > 0 && (end == text.size() || text[end] == QLatin1Char(' ') || text[end] == QLatin1Char(':') ||
                                text[end] == QLatin1Char(','));
  if (!word || !kWords.contains(text.left(end))) return text;
  return text.front().toUpper() + text.mid(1);
}

}  // namespace meshloom::app
