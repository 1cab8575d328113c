#pragma once
// Colours of callscope's views: states, severities, and one stable colour per
// source instance. Chosen to read on light and dark palettes alike.
#include <QColor>
#include <QString>

#include <string_view>

namespace callscope {

QColor stateColor(std::string_view state); // record, caller and attempt words
QColor severityColor(std::string_view severity);
QColor instanceColor(const QString& instance); // stable per name
QString qs(std::string_view text);             // std::string_view -> QString (UTF-8)

// Data from tables and messages on its way to a widget, HTML, SVG or PDF
// (SPEC §8): shownText is the visible form (models/visible_text.h: control,
// bidi and invalid bytes as escapes), htmlText that form escaped for markup.
// Widgets that show data are plain text; a tooltip, which Qt would guess to be
// rich text, gets plainTip.
QString shownText(std::string_view text);
QString htmlText(std::string_view text);
QString plainTip(const QString& plain);

} // namespace callscope
