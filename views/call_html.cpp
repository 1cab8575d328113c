#include "views/call_html.h"

#include "views/clock.h"
#include "views/palette.h"

namespace callscope {
namespace {

QString esc(const std::string& s) {
    return htmlText(s);
}
// In the display zone, named: "2024-05-20 10:13:20.008 UTC".
QString when(EpochMillis t) {
    return t == kNoTime
               ? QStringLiteral("\u2014")
               : QStringLiteral("<span style=\"white-space:nowrap\">") + displayDateTime(t) +
                     QLatin1Char(' ') + zoneLabel(t) + QStringLiteral("</span>");
}

QString tableStart(const CallHtmlStyle& style) {
    return style.print ? QStringLiteral("<table class=grid>")
                       : QStringLiteral("<table cellspacing=0 cellpadding=2>");
}

// A header row, in reports only.
QString header(const CallHtmlStyle& style, std::initializer_list<const char*> names) {
    if (!style.print)
        return {};
    QString h = QStringLiteral("<tr>");
    for (const char* n : names)
        h += QStringLiteral("<th>") + QString::fromUtf8(n) + QStringLiteral("</th>");
    return h + QStringLiteral("</tr>");
}

QString none(int columns) {
    return QStringLiteral("<tr><td colspan=%1>none</td></tr>").arg(columns);
}

} // namespace

QString diagnosisHtml(const Diagnosis& d, const CallHtmlStyle& style) {
    QString h = QStringLiteral("<p><b>Diagnosis:</b> ") + esc(d.verdict) +
                QStringLiteral(" <i>(cause: ") + esc(std::string(toString(d.cause))) +
                QStringLiteral(")</i></p><ol>");
    for (const DiagnosisStep& s : d.steps)
        h += QStringLiteral("<li>") + esc(s.question) + QStringLiteral(" ") +
             (s.decisive ? QStringLiteral("<b>") + esc(s.answer) + QStringLiteral("</b> (decisive)")
                         : esc(s.answer)) +
             QStringLiteral("</li>");
    h += QStringLiteral("</ol>");
    if (!d.siblingCallIds.empty()) {
        QStringList ids;
        for (const std::string& id : d.siblingCallIds)
            ids << (style.callId ? style.callId(id) : esc(id));
        h += QStringLiteral("<p>Sibling callIds (the same request under another key): ") +
             ids.join(QStringLiteral(", ")) + QStringLiteral("</p>");
    }
    return h;
}

QString callTablesHtml(const CallTimeline& t, const Diagnosis& d, const QString* resultSnapshotHtml,
                       const CallHtmlStyle& style) {
    const auto timeCell = [&](EpochMillis at) {
        return style.timeCell
                   ? style.timeCell(at)
                   : QStringLiteral("<td><tt>") + when(at) + QStringLiteral("</tt></td>");
    };
    QString h = QStringLiteral("<h3>Evidence</h3>") + tableStart(style) +
                header(style, {"time", "callId", "event"});
    if (d.evidence.empty())
        h += none(3);
    for (const Evidence& e : d.evidence)
        h += QStringLiteral("<tr>") + timeCell(e.at) +
             (style.callIdCell
                  ? style.callIdCell(e.callId)
                  : QString(QStringLiteral("<td>") + esc(e.callId) + QStringLiteral("</td>"))) +
             QStringLiteral("<td>") + esc(e.what) + QStringLiteral("</td></tr>");
    h += QStringLiteral("</table><h3>Server record</h3>");
    if (!t.record.present) {
        h += QStringLiteral("<p>no record</p>");
    } else {
        // `cell` is the whole <td>: times bring their own.
        const auto row = [&](const char* name, const QString& cell) {
            h += QStringLiteral("<tr><td>") + QString::fromUtf8(name) + QStringLiteral("</td>") +
                 cell + QStringLiteral("</tr>");
        };
        const auto plain = [](const QString& html) -> QString {
            return QStringLiteral("<td>") + html + QStringLiteral("</td>");
        };
        h += tableStart(style);
        row("status", plain(QStringLiteral("<b>") + esc(t.record.status) + QStringLiteral("</b>")));
        row("request digest", style.digest ? style.digest(t.record.digest)
                                           : plain(QStringLiteral("<tt>") + esc(t.record.digest) +
                                                   QStringLiteral("</tt>")));
        row("first source", plain(esc(t.record.firstSource)));
        row("lock_version", plain(QString::number(t.record.lockVersion)));
        row("created", timeCell(t.record.createdAt));
        row("updated", timeCell(t.record.updatedAt));
        row("expires", timeCell(t.record.expireAt));
        if (resultSnapshotHtml)
            row("result_snapshot", plain(*resultSnapshotHtml));
        h += QStringLiteral("</table>");
    }
    const auto lane = [&](const char* title, Lane l) {
        h += QStringLiteral("<h3>") + QString::fromUtf8(title) + QStringLiteral("</h3>") +
             tableStart(style) + header(style, {"time", "event"});
        int n = 0;
        for (const TimelineEntry& e : t.entries)
            if (e.lane == l) {
                ++n;
                h += QStringLiteral("<tr>") + timeCell(e.at) + QStringLiteral("<td>") +
                     esc(e.text) + QStringLiteral("</td></tr>");
            }
        if (!n)
            h += none(2);
        h += QStringLiteral("</table>");
    };
    lane("Attempts", Lane::Attempt);
    lane("Receipts", Lane::Receipt);
    lane("Caller events", Lane::CallerView);
    return h;
}

} // namespace callscope
