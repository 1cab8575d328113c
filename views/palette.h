#pragma once
// Colours of callscope's views: states, severities, and one stable colour per
// source instance. Chosen to read on light and dark palettes alike.
#include <QColor>
#include <QString>

#include <cstddef>
#include <string_view>

class QHeaderView;

namespace callscope {

QColor stateColor(std::string_view state); // record, caller and attempt words
QColor severityColor(std::string_view severity);
QColor instanceColor(const QString& instance); // stable per name
// One fixed colour per anomaly kind (index in kAnomalyKindNames), the same in
// every chart, legend and table; thirteen distinguishable hues, room for the
// kinds to come.
QColor kindColor(std::size_t kind);
QString qs(std::string_view text); // std::string_view -> QString (UTF-8)

// Data from tables and messages on its way to a widget, HTML, SVG or PDF
// (SPEC §8): shownText is the visible form (models/visible_text.h: control,
// bidi and invalid bytes as escapes), htmlText that form escaped for markup.
// Widgets that show data are plain text; a tooltip, which Qt would guess to be
// rich text, gets plainTip.
QString shownText(std::string_view text);
QString htmlText(std::string_view text);
QString plainTip(const QString& plain);

// QHeaderView hands styles SortDown for an ascending column (the arrow then
// points against the order shown): the arrows of this header point the way
// the values grow — up for ascending, down for descending.
void fixSortArrows(QHeaderView* header);
int sortArrowFor(Qt::SortOrder order); // the QStyleOptionHeader::SortIndicator drawn

} // namespace callscope
