#include "views/palette.h"

#include "models/visible_text.h"

#include <QHash>
#include <QHeaderView>
#include <QProxyStyle>
#include <QStyleOptionHeader>
#include <QTextDocument>

namespace callscope {

QString qs(std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

QString shownText(std::string_view text) {
    return qs(visibleText(text));
}

QString htmlText(std::string_view text) {
    return shownText(text).toHtmlEscaped();
}

QString plainTip(const QString& plain) {
    return plain.isEmpty() ? plain : Qt::convertFromPlainText(plain, Qt::WhiteSpaceNormal);
}

namespace {

class SortArrowStyle : public QProxyStyle {
public:
    using QProxyStyle::QProxyStyle;
    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget) const override {
        if (element == PE_IndicatorHeaderArrow) {
            if (const auto* h = qstyleoption_cast<const QStyleOptionHeader*>(option)) {
                QStyleOptionHeader flipped(*h);
                if (h->sortIndicator == QStyleOptionHeader::SortDown)
                    flipped.sortIndicator = QStyleOptionHeader::SortUp;
                else if (h->sortIndicator == QStyleOptionHeader::SortUp)
                    flipped.sortIndicator = QStyleOptionHeader::SortDown;
                QProxyStyle::drawPrimitive(element, &flipped, painter, widget);
                return;
            }
        }
        QProxyStyle::drawPrimitive(element, option, painter, widget);
    }
};

} // namespace

int sortArrowFor(Qt::SortOrder order) {
    // QHeaderView: ascending -> SortDown; flipped by SortArrowStyle.
    return order == Qt::AscendingOrder ? QStyleOptionHeader::SortUp : QStyleOptionHeader::SortDown;
}

void fixSortArrows(QHeaderView* header) {
    // No base style: it follows the application's (themes switch it).
    auto* style = new SortArrowStyle;
    style->setParent(header);
    header->setStyle(style);
}

QColor stateColor(std::string_view s) {
    if (s == "PROCESSING" || s == "AWAITING_RESPONSE" || s == "IN_PROGRESS")
        return QColor(0x3d, 0x8e, 0xd9); // blue: work under way
    if (s == "SUCCESS" || s == "CONFIRMED_SUCCESS" || s == "REPLAYED")
        return QColor(0x2e, 0xa0, 0x4f); // green
    if (s == "FAILED" || s == "CONFIRMED_FAILED" || s == "DIGEST_CONFLICT")
        return QColor(0xd1, 0x3b, 0x3b); // red
    if (s == "EXPIRED" || s == "ABSENT")
        return QColor(0x8a, 0x8f, 0x98); // grey
    if (s == "TIMEOUT_UNKNOWN")
        return QColor(0xe0, 0x8a, 0x1e); // amber: result unknown
    if (s == "AWAITING_RECEIPT")
        return QColor(0xc9, 0xa2, 0x27);
    if (s == "ESCALATED")
        return QColor(0x9b, 0x4d, 0xca); // violet: a human must look
    if (s == "INITIATED")
        return QColor(0x7f, 0xa7, 0xc9);
    if (s == "EXECUTED")
        return QColor(0x1f, 0x6f, 0xb5);
    if (s == "REOCCUPIED")
        return QColor(0xb5, 0x5d, 0x1f);
    return QColor(0x9e, 0x9e, 0x9e);
}

QColor severityColor(std::string_view s) {
    if (s == "critical")
        return QColor(0xd1, 0x3b, 0x3b);
    if (s == "warning")
        return QColor(0xe0, 0x8a, 0x1e);
    return QColor(0x3d, 0x8e, 0xd9);
}

QColor kindColor(std::size_t kind) {
    // Kelly's and Tableau's distinct hues, ordered so that kinds listed next
    // to each other differ most; mid lightness reads on light and dark.
    static const QColor palette[13] = {
        QColor(0xd6, 0x27, 0x28), // stuck_processing: red
        QColor(0x1f, 0x77, 0xb4), // digest_conflict: blue
        QColor(0xff, 0x7f, 0x0e), // duplicate_caller: orange
        QColor(0x94, 0x67, 0xbd), // key_rotation: violet
        QColor(0x2c, 0xa0, 0x2c), // concurrent_execution: green
        QColor(0x8c, 0x56, 0x4b), // expired_replay: brown
        QColor(0xe3, 0x77, 0xc2), // receipt_missing: pink
        QColor(0x17, 0xbe, 0xcf), // state_mismatch: cyan
        QColor(0xbc, 0xbd, 0x22), // receipt_regression: olive
        QColor(0x7f, 0x7f, 0x7f), // caller_stuck: grey
        QColor(0x6b, 0x6e, 0xcf), // orphan_receipt: periwinkle
        QColor(0xff, 0xbb, 0x00), // (next kind): amber
        QColor(0x00, 0x80, 0x80), // (next kind): teal
    };
    return palette[kind % 13];
}

QColor instanceColor(const QString& instance) {
    // A qualitative palette picked by a stable hash of the name (FNV-1a), so
    // an instance keeps its colour across views, runs and reports.
    static const QColor palette[] = {
        QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
        QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2),
        QColor(0x17, 0xbe, 0xcf), QColor(0xbc, 0xbd, 0x22), QColor(0x7f, 0x7f, 0x7f),
        QColor(0xd6, 0x27, 0x28), QColor(0x39, 0x3b, 0x79), QColor(0x63, 0x79, 0x39)};
    std::uint32_t h = 0x811C9DC5u;
    for (const char c : instance.toUtf8()) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x01000193u;
    }
    h ^= h >> 15; // the last character (instance numbers) must move the index
    return palette[h % (sizeof palette / sizeof palette[0])];
}

} // namespace callscope
