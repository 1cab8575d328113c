#include "views/palette.h"

#include "models/visible_text.h"

#include <QHash>
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
