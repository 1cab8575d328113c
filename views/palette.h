#pragma once
// Colours of callscope's views: states, severities, and one stable colour per
// source instance. Chosen to read on light and dark palettes alike.
#include <QColor>
#include <QString>

#include <string_view>

namespace callscope {

QColor stateColor(std::string_view state);     // record, caller and attempt words
QColor severityColor(std::string_view severity);
QColor instanceColor(const QString& instance); // stable per name
QString qs(std::string_view text);              // std::string_view -> QString (UTF-8)

} // namespace callscope
