#pragma once
// An item delegate for tables redrawn many times a second (the anomaly table
// at 20 Hz with tens of thousands of rows): each cell's text is elided and
// laid out once, kept as QStaticText by (text, width), and drawn from there.
// The style still draws everything else (background, selection, focus,
// decoration), so a cell looks as QStyledItemDelegate draws it. Texts it does
// not handle (several lines, right-to-left, wrapping) go to the base class.
#include <QFont>
#include <QHash>
#include <QStaticText>
#include <QStyledItemDelegate>

namespace callscope {

class CachedTextDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;

    // Laid-out texts held (bounded), for tests.
    qsizetype cachedTexts() const { return m_cache.size(); }

private:
    const QStaticText& laidOut(const QString& text, const QFont& font, int width,
                               Qt::TextElideMode mode) const;

    mutable QHash<QString, QStaticText> m_cache; // key: width, mode and text
    mutable QFont m_font;
};

} // namespace callscope
