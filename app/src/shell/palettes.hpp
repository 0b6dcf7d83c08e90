// The palettes of the app's themes (View > Theme), and of paper: a handout page is drawn in the light one whatever
// the window's theme.
#pragma once

#include <QPalette>

namespace meshloom::app {

// Fusion's light palette as Qt 6.4 defines it (window #efefef, base white, text black, highlight #308cc6), fixed
// here: from Qt 6.5 Fusion's standard palette follows the system's colour scheme and is dark under a dark desktop.
[[nodiscard]] QPalette light_palette();
// The dark theme: a dark grey window (#2b2d31), a darker base (#1f2124) and light grey text (#e6e6e6).
[[nodiscard]] QPalette dark_palette();

}  // namespace meshloom::app
