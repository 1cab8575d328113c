#pragma once
// The application's theme: the desktop's own (System), or callscope's light or
// dark palette on the Fusion style. The choice is remembered in QSettings.
#include <QString>

namespace callscope {

enum class Theme { System, Light, Dark };

// Applies the remembered theme; call once after the QApplication exists.
void initTheme();
// Applies `theme` now and remembers it.
void applyTheme(Theme theme);
Theme currentTheme();
// True when the application's window colour is dark (charts follow it).
bool isDarkPalette();

} // namespace callscope
