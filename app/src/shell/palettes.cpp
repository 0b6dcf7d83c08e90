#include "shell/palettes.hpp"

#include <QColor>

namespace meshloom::app {

QPalette light_palette() {
  const QColor window(0xef, 0xef, 0xef);
  const QColor text(Qt::black);
  const QColor disabled_text(0xbe, 0xbe, 0xbe);
  QPalette p(text, window, QColor(Qt::white), QColor(0x9f, 0x9f, 0x9f), QColor(0xb8, 0xb8, 0xb8), text,
             QColor(Qt::white), QColor(Qt::white), window);
  p.setColor(QPalette::Midlight, QColor(0xca, 0xca, 0xca));
  p.setColor(QPalette::Shadow, QColor(0x76, 0x76, 0x76));
  p.setColor(QPalette::Highlight, QColor(0x30, 0x8c, 0xc6));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x00, 0x00, 0xff));
  p.setColor(QPalette::LinkVisited, QColor(0xff, 0x00, 0xff));
  p.setColor(QPalette::AlternateBase, QColor(0xf7, 0xf7, 0xf7));
  p.setColor(QPalette::ToolTipBase, QColor(0xff, 0xff, 0xdc));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(0, 0, 0, 0x80));
  for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::Dark}) {
    p.setColor(QPalette::Disabled, role, disabled_text);
  }
  p.setColor(QPalette::Disabled, QPalette::Base, window);
  p.setColor(QPalette::Disabled, QPalette::Shadow, QColor(0xb1, 0xb1, 0xb1));
  p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x91, 0x91, 0x91));
  return p;
}

QPalette dark_palette() {
  QPalette p;
  const QColor window(0x2b, 0x2d, 0x31);
  const QColor base(0x1f, 0x21, 0x24);
  const QColor text(0xe6, 0xe6, 0xe6);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x2f, 0x32, 0x37));
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x6e, 0x6e));
  p.setColor(QPalette::Mid, QColor(0x55, 0x58, 0x5e));
  p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
  p.setColor(QPalette::Highlight, QColor(0x3d, 0x8e, 0xe6));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
  p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, QColor(0x80, 0x80, 0x80));
  }
  return p;
}

}  // namespace meshloom::app
