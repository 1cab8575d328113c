#include "views/cached_text_delegate.h"

#include <QApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QStyle>

namespace callscope {
namespace {

// Enough for every cell of a few screens of a table; past it, start again.
constexpr qsizetype kMaxCached = 8192;

bool oneLine(const QString& text) {
    for (const QChar c : text)
        if (c == QLatin1Char('\n') || c == QLatin1Char('\r') || c == QChar::LineSeparator ||
            c == QChar::ParagraphSeparator || c == QLatin1Char('\t'))
            return false;
    return true;
}

} // namespace

const QStaticText& CachedTextDelegate::laidOut(const QString& text, const QFont& font, int width,
                                               Qt::TextElideMode mode) const {
    if (font != m_font) {
        m_cache.clear();
        m_font = font;
    }
    QString key = QString::number(width) + QLatin1Char(':') + QString::number(int(mode)) +
                  QLatin1Char(':') + text;
    if (const auto it = m_cache.constFind(key); it != m_cache.cend())
        return *it;
    if (m_cache.size() >= kMaxCached)
        m_cache.clear();
    QStaticText st(QFontMetrics(font).elidedText(text, mode, width));
    st.setTextFormat(Qt::PlainText); // table texts come from messages and rows: never markup
    st.setPerformanceHint(QStaticText::AggressiveCaching);
    st.prepare(QTransform(), font);
    return *m_cache.insert(std::move(key), std::move(st));
}

void CachedTextDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                               const QModelIndex& index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    if (opt.text.isEmpty() || (opt.features & QStyleOptionViewItem::WrapText) ||
        opt.direction != Qt::LeftToRight || opt.text.isRightToLeft() || !oneLine(opt.text) ||
        (opt.state & QStyle::State_Editing)) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const QWidget* widget = opt.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();
    const QString text = opt.text;
    // The text's rect does not depend on the text when drawing (the style
    // gives it the cell's rest), but the style lays the text out to find
    // out: a one-letter stand-in spares that.
    opt.text = QStringLiteral("x");
    const QRect textRect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget);
    opt.text.clear(); // the style draws the cell without its text
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    // As QCommonStyle draws an item's text: the focus margin each side, the
    // pen of the cell's state, one line aligned as the model asks.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect r = textRect.adjusted(margin, 0, -margin, 0);
    if (r.width() <= 0)
        return;
    const QStaticText& st = laidOut(text, opt.font, r.width(), opt.textElideMode);
    QPalette::ColorGroup group =
        opt.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled;
    if (group == QPalette::Normal && !(opt.state & QStyle::State_Active))
        group = QPalette::Inactive;
    const QSizeF size = st.size();
    const Qt::Alignment align = opt.displayAlignment;
    qreal x = r.left();
    if (align & Qt::AlignRight)
        x = r.right() + 1 - size.width();
    else if (align & Qt::AlignHCenter)
        x = r.left() + (r.width() - size.width()) / 2;
    // Whole pixels vertically, as QStyle::alignedRect places the text's line.
    const int lineHeight = qRound(QFontMetricsF(opt.font).height());
    int y = r.top() + (r.height() - lineHeight) / 2;
    if (align & Qt::AlignTop)
        y = r.top();
    else if (align & Qt::AlignBottom)
        y = r.bottom() + 1 - lineHeight;
    painter->save();
    painter->setClipRect(opt.rect);
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(
        group, opt.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
    painter->drawStaticText(QPointF(x, y), st);
    painter->restore();
}

} // namespace callscope
