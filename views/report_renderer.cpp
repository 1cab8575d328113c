#include "views/report_renderer.h"

#include "models/domain.h"
#include "views/call_html.h"
#include "views/clock.h"
#include "views/palette.h"
#include "views/timeline_painter.h"

#include <QBuffer>
#include <QDateTime>
#include <QFile>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QTextOption>
#include <QTimeZone>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>

#ifdef Q_OS_UNIX
#include <sys/stat.h>
#endif

namespace callscope {
namespace {

QString esc(const std::string& s) {
    return htmlText(s);
}
// Every time in a PDF or HTML report is in the display zone (views/clock.h),
// which the header names; JSON reports stay ISO UTC.
QString when(EpochMillis t, TimeDetail detail = TimeDetail::Millis) {
    return displayDateTime(t, detail);
}

// A time in a table: its cell never wraps (QTextDocument honours nowrap on a
// cell, not on a span, by keeping the column at least as wide as the time).
QString timeCell(EpochMillis t) {
    return QStringLiteral("<td class=\"nw\">") + when(t) + QStringLiteral("</td>");
}

// The zone the report's times are in, as the header names it: one label, or
// each one when a daylight-saving change falls within the report.
QString zoneNames(const Report& r) {
    QStringList names;
    for (const EpochMillis t : {r.from, r.to, r.generatedAt})
        if (t != kNoTime && !names.contains(zoneLabel(t)))
            names << zoneLabel(t);
    if (names.isEmpty())
        names << zoneLabel();
    return names.join(QStringLiteral(" / "));
}

// A redacted payload's note names the way to include payloads on the surface
// the report came from: a GUI user has no command line to add a flag to.
bool fromGui(const Report& r) {
    return r.surface == "gui";
}
QString redactedNote(const Report& r) {
    return fromGui(r) ? QStringLiteral(
                            "[redacted \u2014 choose \u201cInclude payloads\u201d when exporting "
                            "to show it]")
                      : QString::fromUtf8(kRedacted);
}
QString payloadsSummary(const Report& r) {
    if (r.payloadsIncluded)
        return QStringLiteral("included");
    return fromGui(r) ? QStringLiteral("redacted (choose \u201cInclude payloads\u201d when "
                                       "exporting to include them)")
                      : QStringLiteral("redacted (run with --include-payloads to include them)");
}

// A light palette for print, whatever the desktop's theme.
QPalette printPalette() {
    QPalette p;
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::Mid, QColor(0xbb, 0xbb, 0xbb));
    p.setColor(QPalette::Base, Qt::white);
    return p;
}

QSet<QString> outlinedOf(const ReportCall& c) {
    return c.anomalies.empty() ? QSet<QString>{}
                               : evidenceKeys(c.anomalies.front().evidence, c.timeline.callId);
}

constexpr double kTimelineHeight = 200;

// ---- tokens that must not wrap: callIds, digests (times: timeCell) ----

enum class Token : std::uint8_t {
    Cell,    // a callId in a table
    Digest,  // a request digest
    Heading, // the callId of a section heading
    Line     // a value in running text (bizNo)
};

// Elides `s` to at most `chars` characters in the middle (both ends of an id
// tell ids apart), never splitting a surrogate pair.
QString elideChars(const QString& s, qsizetype chars) {
    if (s.size() <= chars)
        return s;
    qsizetype head = chars / 2;
    qsizetype tail = s.size() - (chars - 1 - head);
    if (head > 0 && s.at(head - 1).isHighSurrogate())
        --head;
    if (tail < s.size() && s.at(tail).isLowSurrogate())
        ++tail;
    return s.left(head) + QChar(u'\u2026') + s.mid(tail);
}

// Writes a token from data escaped, and elided when it is too long to sit on
// one line: in HTML by characters, the whole value in a title attribute; in
// the PDF by its measured width (QTextDocument, left alone, would break it
// anywhere to fit a column, and has no tooltips). The enclosing cell or span
// carries class "nw" so the token never wraps.
class TokenWriter {
public:
    TokenWriter() = default;                         // HTML
    TokenWriter(const QFont& base, double bodyWidth) // PDF, sizes as in kPrintCss
        : m_pdf(true), m_base(base), m_body(bodyWidth) {}
    bool pdf() const { return m_pdf; }

    QString operator()(std::string_view data, Token kind) const {
        const QString shown = shownText(data);
        if (m_pdf) {
            QFont f = m_base;
            double budget = 170;
            switch (kind) {
            case Token::Cell:
                f.setPointSizeF(7.5);
                break;
            case Token::Digest:
                f.setPointSizeF(6.5);
                budget = 420;
                break;
            case Token::Heading:
                f.setPointSizeF(13);
                f.setBold(true);
                budget = m_body - 90; // after "callId "
                break;
            case Token::Line:
                f.setPointSizeF(9);
                budget = m_body - 60;
                break;
            }
            // QTextDocument lays out in the default resolution (it is given no
            // paint device): measure in the same.
            const QFontMetricsF fm(f);
            const QString fitted = fm.horizontalAdvance(shown) <= budget
                                       ? shown
                                       : fm.elidedText(shown, Qt::ElideMiddle, budget);
            return fitted.toHtmlEscaped();
        }
        const qsizetype chars = kind == Token::Cell ? 48 : kind == Token::Digest ? 80 : 96;
        const QString fitted = elideChars(shown, chars);
        if (fitted.size() == shown.size())
            return shown.toHtmlEscaped();
        return QStringLiteral("<span title=\"") + shown.toHtmlEscaped() + QStringLiteral("\">") +
               fitted.toHtmlEscaped() + QStringLiteral("</span>");
    }

private:
    bool m_pdf = false;
    QFont m_base;
    double m_body = 0;
};

// ---- the legend: band colours and marker shapes, once per report ----
// (the painter's own: views/timeline_painter.h paintFullKey)

QFont legendFont(QFont base) {
    base.setPixelSize(9); // the size of the timelines' text, whatever the device
    return base;
}

// ---- shared HTML fragments (the PDF lays them out with QTextDocument) ----

QString summaryHtml(const Report& r) {
    QString h = QStringLiteral("<h1>") + esc(r.title) + QStringLiteral("</h1><p class=\"zone\">") +
                QStringLiteral("Times in ") + zoneNames(r) +
                QStringLiteral("</p><table class=meta>");
    h += QStringLiteral("<tr><td>Window</td><td><span class=\"nw\">") + when(r.from) +
         QStringLiteral("</span> \u2013 <span class=\"nw\">") + when(r.to) +
         QStringLiteral("</span></td></tr>");
    h += QStringLiteral("<tr><td>Generated</td><td><span class=\"nw\">") +
         when(r.generatedAt, TimeDetail::Seconds) + QStringLiteral("</span></td></tr>");
    for (const auto& s : r.sources)
        h += QStringLiteral("<tr><td>Source</td><td>") + esc(s) + QStringLiteral("</td></tr>");
    h += QStringLiteral("<tr><td>Payloads</td><td>") + payloadsSummary(r) +
         QStringLiteral("</td></tr></table>");
    h += QStringLiteral(
        "<h2>Anomalies by kind</h2><table class=grid><tr><th>kind</th><th>critical</th>"
        "<th>warning</th><th>info</th></tr>");
    const auto counts = r.countsByKind();
    if (counts.empty())
        h += QStringLiteral("<tr><td colspan=4>none</td></tr>");
    for (const auto& [kind, c] : counts)
        h += QStringLiteral("<tr><td class=\"nw\">") + esc(kind) + QStringLiteral("</td><td>") +
             QString::number(c[2]) + QStringLiteral("</td><td>") + QString::number(c[1]) +
             QStringLiteral("</td><td>") + QString::number(c[0]) + QStringLiteral("</td></tr>");
    return h + QStringLiteral("</table>");
}

// In the PDF each summary has a row of its own under its anomaly: beside
// six columns that never wrap, QTextDocument would leave it a sliver and break
// its words (and the short ones beside it) anywhere.
QString anomalyRowsHtml(const std::vector<Anomaly>& list, EpochMillis now, std::size_t from,
                        std::size_t to, bool head, const TokenWriter& token) {
    const bool summaryBelow = token.pdf();
    QString h;
    if (head)
        h += QStringLiteral("<h2>Anomaly table</h2>");
    h += QStringLiteral("<table class=grid><tr><th>severity</th><th>kind</th><th>state</th>"
                        "<th>callIds</th><th>instances</th><th>first event</th>") +
         (summaryBelow ? QString() : QStringLiteral("<th>summary</th>")) + QStringLiteral("</tr>");
    for (std::size_t i = from; i < to && i < list.size(); ++i) {
        const Anomaly& a = list[i];
        QStringList ids, inst;
        for (const auto& id : a.callIds)
            ids << token(id, Token::Cell);
        for (const auto& x : a.instances)
            inst << esc(x);
        h += QStringLiteral("<tr><td class=\"nw\" style=\"color:") +
             severityColor(toString(a.severity)).name() + QStringLiteral("\"><b>") +
             qs(toString(a.severity)) + QStringLiteral("</b></td><td class=\"nw\">") +
             qs(toString(a.kind)) + QStringLiteral("</td><td class=\"nw\">") +
             (a.open ? QStringLiteral("open") : QStringLiteral("resolved")) +
             QStringLiteral("</td><td class=\"nw\">") + ids.join(QStringLiteral("<br>")) +
             QStringLiteral("</td><td>") + inst.join(QStringLiteral("<br>")) +
             QStringLiteral("</td>") + timeCell(a.firstEventAt);
        if (summaryBelow)
            h += QStringLiteral("</tr><tr><td colspan=6>") + liveSummary(a, now).toHtmlEscaped() +
                 QStringLiteral("</td></tr>");
        else
            h += QStringLiteral("<td>") + liveSummary(a, now).toHtmlEscaped() +
                 QStringLiteral("</td></tr>");
    }
    return h + QStringLiteral("</table>");
}

QString callHeadHtml(const ReportCall& c, const TokenWriter& token) {
    const CallTimeline& t = c.timeline;
    QString h = QStringLiteral("<h2 class=\"nw\">callId ") + token(t.callId, Token::Heading) +
                QStringLiteral("</h2>");
    if (!t.bizNo.empty())
        h += QStringLiteral("<p>bizNo <span class=\"nw\">") + token(t.bizNo, Token::Line) +
             QStringLiteral("</span></p>");
    CallHtmlStyle style;
    style.print = true;
    style.callId = [&token](const std::string& id) -> QString {
        return QStringLiteral("<span class=\"nw\">") + token(id, Token::Cell) +
               QStringLiteral("</span>");
    };
    return h + diagnosisHtml(c.diagnosis, style);
}

// Every state band of both lanes with its start and length, under the
// timeline: the painter labels a band only when its name fits inside it, so
// a short state would otherwise be a sliver without a name.
QString statesHtml(const CallTimeline& t) {
    EpochMillis lo = kNoTime, hi = kNoTime;
    for (const StateBand& b : t.bands) {
        if (b.from == kNoTime)
            continue;
        lo = lo == kNoTime ? b.from : std::min(lo, b.from);
        hi = std::max(hi, b.from);
    }
    // The time of day is enough when the call's bands start within one day.
    const bool oneDay =
        lo == kNoTime || displayDateTime(lo).left(10) == displayDateTime(hi).left(10);
    QString h;
    for (const Lane lane : {Lane::ServerRecord, Lane::CallerView}) {
        QStringList parts;
        for (const StateBand& b : t.bands) {
            if (b.lane != lane)
                continue;
            QString part = QStringLiteral("<span class=\"nw\">") + esc(b.state) + QLatin1Char(' ') +
                           (oneDay ? displayTimeOfDay(b.from) : displayDateTime(b.from));
            if (b.from != kNoTime && b.to != kNoTime && b.to >= b.from)
                part += QStringLiteral(" (") + humanDuration(b.to - b.from) + QLatin1Char(')');
            part += QStringLiteral("</span>");
            parts << part;
        }
        if (parts.isEmpty())
            continue;
        h += QStringLiteral("<p class=\"states\"><b>") +
             (lane == Lane::ServerRecord ? QStringLiteral("server record")
                                         : QStringLiteral("caller view")) +
             QStringLiteral(":</b> ") + parts.join(QStringLiteral(" \u2192 ")) +
             QStringLiteral("</p>");
    }
    return h;
}

// The call's evidence, server record and lanes (views/call_html.cpp), in the
// report's terms: times in cells that never wrap, callIds and digests that
// never wrap (elided when too long), and a redaction note that fits the surface.
QString reportTablesHtml(const Report& r, const ReportCall& c, const TokenWriter& token) {
    CallHtmlStyle style;
    style.print = true;
    style.timeCell = timeCell;
    style.callIdCell = [&token](const std::string& id) -> QString {
        return QStringLiteral("<td class=\"nw\">") + token(id, Token::Cell) +
               QStringLiteral("</td>");
    };
    style.digest = [&token](const std::string& digest) -> QString {
        return QStringLiteral("<td class=\"nw\"><span class=digest>") +
               token(digest, Token::Digest) + QStringLiteral("</span></td>");
    };
    const QString snapshot =
        c.resultSnapshot == kRedacted
            ? QStringLiteral("<i>") + redactedNote(r).toHtmlEscaped() + QStringLiteral("</i>")
            : QStringLiteral("<tt>") + esc(c.resultSnapshot) + QStringLiteral("</tt>");
    return callTablesHtml(c.timeline, c.diagnosis, &snapshot, style);
}

// "nw" (no wrap) is set on cells, headings and spans: QTextDocument honours it
// on a cell or block by keeping it on one line, and on a span by joining its
// words with no-break spaces.
const char* kPrintCss =
    "h1{font-size:16pt;} h2{font-size:13pt;margin-top:8px;} h3{font-size:10pt;margin-top:6px;}"
    "table.grid{border-collapse:collapse;} table.grid td, table.grid th{border:1px solid #bbb;"
    "padding:2px 4px;font-size:7.5pt;} th{background:#eee;text-align:left;white-space:nowrap;} "
    ".digest{font-size:6.5pt;}"
    "td.nw, th.nw, h2.nw, span.nw, p.nw{white-space:nowrap;}"
    "p.states{font-size:7.5pt;margin-top:0px;margin-bottom:2px;}"
    "table.meta td{padding:1px 6px;font-size:9pt;} p, li{font-size:9pt;}";

// ---- PDF: blocks laid out down the page, a header and page numbers ----

class PdfFlow {
public:
    PdfFlow(QPdfWriter& writer, const Report& r)
        : m_writer(writer), m_report(r), m_painter(&writer) {
        m_painter.setRenderHint(QPainter::Antialiasing);
        // No shaping, so no ligatures: "ff" and "fl" in callIds and kinds stay
        // separate letters, and the PDF's text can be searched and copied.
        m_font = m_painter.font();
        m_font.setStyleStrategy(QFont::PreferNoShaping);
        m_painter.setFont(m_font);
        m_page = QRectF(QPointF(0, 0), QSizeF(writer.width(), writer.height()));
        m_body = m_page.adjusted(0, 28, 0, -24);
        m_y = m_body.top();
        decorate();
    }
    bool ok() const { return m_painter.isActive(); }
    TokenWriter tokens() const { return TokenWriter(m_font, m_body.width()); }

    void html(const QString& html, bool keepWhole = true) {
        QTextDocument doc;
        doc.setDefaultStyleSheet(QString::fromUtf8(kPrintCss));
        QTextOption opt;
        // Free text (summaries, events, sources) may hold a word longer than a
        // column: it breaks anywhere rather than running off the page. Times,
        // callIds and digests sit in "nw" cells, sized to fit, and never do.
        opt.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
        doc.setDefaultTextOption(opt);
        doc.setDocumentMargin(0);
        doc.setDefaultFont(m_font);
        doc.setTextWidth(m_body.width());
        doc.setHtml(html);
        const double h = doc.size().height();
        if (keepWhole && m_y + h > m_body.bottom() && m_y > m_body.top())
            newPage();
        // A block taller than what is left goes on over pages, a slice each.
        for (double done = 0; done < h;) {
            if (m_y >= m_body.bottom() - 20)
                newPage();
            const double slice = std::min(h - done, m_body.bottom() - m_y);
            m_painter.save();
            m_painter.translate(m_body.left(), m_y - done);
            doc.drawContents(&m_painter, QRectF(0, done, m_body.width(), slice));
            m_painter.restore();
            done += slice;
            m_y += slice;
        }
        m_y += 6;
    }

    // The legend with its heading, kept on one page.
    void legend() {
        const QFont f = legendFont(m_font);
        const double height = fullKeyHeight(f, m_body.width());
        if (m_y + height + 50 > m_body.bottom() && m_y > m_body.top()) // with its heading
            newPage();
        html(QStringLiteral("<h2>Legend</h2>"));
        paintFullKey(m_painter, QRectF(m_body.left(), m_y, m_body.width(), height), f,
                     printPalette());
        m_y += height + 6;
    }

    void timeline(const ReportCall& c) {
        if (m_y + kTimelineHeight > m_body.bottom())
            newPage();
        const QRectF area(m_body.left(), m_y, m_body.width(), kTimelineHeight);
        const TimelineLayout layout = TimelineLayout::forRect(area);
        QFont f = m_font;
        f.setPointSizeF(7);
        m_painter.setFont(f);
        paintTimeline(m_painter, layout, c.timeline,
                      fittedAxis(c.timeline, layout.serverLane.width()), outlinedOf(c),
                      printPalette());
        m_painter.setFont(m_font);
        m_y += kTimelineHeight + 4;
    }

    // The call's group on one axis, kept on one page.
    void group(const CallGroup& g) {
        const double height = GroupTimelineLayout::heightFor(g.members.size());
        if (m_y + height > m_body.bottom())
            newPage();
        QFont f = m_font;
        f.setPointSizeF(7);
        m_painter.setFont(f);
        const QRectF area(m_body.left(), m_y, m_body.width(), height);
        paintGroupTimeline(m_painter, area, g,
                           fittedGroupAxis(g, area.width() - GroupTimelineLayout::kLabelWidth - 8),
                           printPalette());
        m_painter.setFont(m_font);
        m_y += height + 4;
    }

    void newPage() {
        m_writer.newPage();
        ++m_pageNumber;
        m_y = m_body.top();
        decorate();
    }

private:
    void decorate() {
        QFont f = m_font;
        f.setPointSizeF(7);
        m_painter.save();
        m_painter.setFont(f);
        m_painter.setPen(QColor(0x55, 0x55, 0x55));
        const QString window = when(m_report.from) + QStringLiteral(" \u2013 ") +
                               when(m_report.to) + QStringLiteral(" (") + zoneNames(m_report) +
                               QLatin1Char(')');
        const QRectF line(m_page.left(), m_page.top(), m_page.width(), 16);
        // The window and zone stay whole at the right; a long title gives way.
        const double windowWidth = m_painter.fontMetrics().horizontalAdvance(window) + 4;
        m_painter.drawText(line, Qt::AlignRight | Qt::AlignVCenter, window);
        m_painter.drawText(QRectF(line.left(), line.top(),
                                  std::max(0.0, line.width() - windowWidth - 12), line.height()),
                           Qt::AlignLeft | Qt::AlignVCenter,
                           m_painter.fontMetrics().elidedText(
                               shownText(m_report.title), Qt::ElideRight,
                               int(std::max(0.0, line.width() - windowWidth - 12))));
        m_painter.drawLine(QPointF(m_page.left(), m_page.top() + 18),
                           QPointF(m_page.right(), m_page.top() + 18));
        m_painter.drawText(QRectF(m_page.left(), m_page.bottom() - 14, m_page.width(), 14),
                           Qt::AlignCenter,
                           QStringLiteral("page ") + QString::number(m_pageNumber));
        m_painter.restore();
    }

    QPdfWriter& m_writer;
    const Report& m_report;
    QPainter m_painter;
    QFont m_font;
    QRectF m_page, m_body;
    double m_y = 0;
    int m_pageNumber = 1;
};

// An inline SVG element of `size` painted by `paint`, with an escaped title.
QString inlineSvg(const QSize& size, const QString& escapedTitle,
                  const std::function<void(QPainter&)>& paint) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    // No setTitle: Qt 6.4 writes the title into <title> unescaped (fixed only in
    // 6.5), and a callId is whatever a producer put in a message. It is set below.
    {
        QPainter p(&svg);
        paint(p);
    }
    QString s = QString::fromUtf8(buffer.data());
    // Inline in HTML: no XML prolog or doctype.
    const int at = s.indexOf(QStringLiteral("<svg"));
    if (at > 0)
        s = s.mid(at);
    // The title goes first inside <svg ...>, escaped.
    const int open = s.indexOf(QLatin1Char('>'), s.indexOf(QStringLiteral("<svg")));
    if (open >= 0)
        s.insert(open + 1, QStringLiteral("\n<title>") + escapedTitle + QStringLiteral("</title>"));
    return s;
}

QString legendSvg(double width) {
    const QFont f = legendFont(QFont());
    const double height = fullKeyHeight(f, width - 8);
    return inlineSvg(
        QSize(int(width), int(std::ceil(height))), QStringLiteral("legend of the timelines"),
        [&](QPainter& p) { paintFullKey(p, QRectF(4, 0, width - 8, height), f, printPalette()); });
}

} // namespace

QString timelineSvg(const CallTimeline& t, const QSet<QString>& outlined, double width) {
    return inlineSvg(QSize(int(width), int(kTimelineHeight)),
                     QStringLiteral("timeline of ") + esc(t.callId), [&](QPainter& p) {
                         const TimelineLayout layout =
                             TimelineLayout::forRect(QRectF(0, 0, width, kTimelineHeight));
                         paintTimeline(p, layout, t, fittedAxis(t, layout.serverLane.width()),
                                       outlined, printPalette());
                     });
}

QString groupSvg(const CallGroup& g, double width) {
    const double height = GroupTimelineLayout::heightFor(g.members.size());
    return inlineSvg(
        QSize(int(width), int(height)), esc(groupTitle(g).toStdString()), [&](QPainter& p) {
            paintGroupTimeline(p, QRectF(0, 0, width, height), g,
                               fittedGroupAxis(g, width - GroupTimelineLayout::kLabelWidth - 8),
                               printPalette());
        });
}

namespace {

bool paintPdf(const Report& r, QIODevice* device, QString& error, const ReportProgress& progress) {
    QPdfWriter writer(device);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(14, 12, 14, 12), QPageLayout::Millimeter);
    writer.setResolution(96); // painter units close to screen pixels; output stays vector
    writer.setTitle(shownText(r.title));
    writer.setCreator(QStringLiteral("callscope"));
    PdfFlow flow(writer, r);
    if (!flow.ok()) {
        error = QStringLiteral("cannot paint the PDF");
        return false;
    }
    const TokenWriter token = flow.tokens();
    flow.html(summaryHtml(r));
    constexpr std::size_t kRowsPerBlock = 10; // a block fits a page and moves whole
    for (std::size_t i = 0; i < r.anomalies.size() || i == 0; i += kRowsPerBlock) {
        flow.html(anomalyRowsHtml(r.anomalies, r.generatedAt, i, i + kRowsPerBlock, i == 0, token));
        if (r.anomalies.empty())
            break;
    }
    if (!r.calls.empty())
        flow.legend(); // once, before the first call's timeline
    for (std::size_t k = 0; k < r.calls.size(); ++k) {
        if (progress && !progress(int(k), int(r.calls.size()))) {
            error = QStringLiteral("cancelled");
            return false;
        }
        flow.newPage();
        flow.html(callHeadHtml(r.calls[k], token));
        flow.timeline(r.calls[k]);
        if (r.calls[k].drawsGroup)
            flow.group(r.calls[k].group);
        flow.html(statesHtml(r.calls[k].timeline));
        flow.html(reportTablesHtml(r, r.calls[k], token), false);
    }
    return true;
}

QByteArray reportHtml(const Report& r, QString& error, const ReportProgress& progress) {
    const TokenWriter token;
    QString h =
        QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>") +
        esc(r.title) +
        QStringLiteral(
            "</title><style>body{font-family:sans-serif;margin:24px;max-width:1200px;}") +
        QString::fromUtf8(kPrintCss) +
        QStringLiteral(
            " section.call{border-top:2px solid #888;margin-top:24px;} "
            "td{word-break:break-word;} td.nw{word-break:normal;} svg{max-width:100%;height:auto;}"
            "</style></head><body>");
    h += summaryHtml(r) +
         anomalyRowsHtml(r.anomalies, r.generatedAt, 0, r.anomalies.size(), true, token);
    if (!r.calls.empty())
        h += QStringLiteral("<section class=\"legend\"><h2>Legend</h2>") + legendSvg(1000) +
             QStringLiteral("</section>");
    for (std::size_t k = 0; k < r.calls.size(); ++k) {
        if (progress && !progress(int(k), int(r.calls.size()))) {
            error = QStringLiteral("cancelled");
            return {};
        }
        const ReportCall& c = r.calls[k];
        h += QStringLiteral("<section class=\"call\" id=\"") + esc(c.timeline.callId) +
             QStringLiteral("\">") + callHeadHtml(c, token) +
             timelineSvg(c.timeline, outlinedOf(c), 1000) +
             (c.drawsGroup ? groupSvg(c.group, 1000) : QString()) + statesHtml(c.timeline) +
             reportTablesHtml(r, c, token) + QStringLiteral("</section>");
    }
    h += QStringLiteral("</body></html>\n");
    return h.toUtf8();
}

} // namespace

bool writeReport(const Report& r, const QString& path, QString& error,
                 const ReportProgress& progress) {
    // Written beside the target and renamed into place only when complete: a
    // failure or a cancel never leaves half a report under the name.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        error = QStringLiteral("cannot write ") + path + QStringLiteral(": ") + file.errorString();
        return false;
    }
#ifdef Q_OS_UNIX
    // Business data (result snapshots) is for the owner only, from the first
    // byte: the file being written is made private before anything is in it.
    if (r.payloadsIncluded && ::fchmod(file.handle(), S_IRUSR | S_IWUSR) != 0) {
        error = QStringLiteral("cannot make ") + path + QStringLiteral(" private: ") +
                QString::fromLocal8Bit(std::strerror(errno));
        file.cancelWriting();
        return false;
    }
#endif
    bool ok = false;
    if (path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) {
        ok = paintPdf(r, &file, error, progress);
    } else {
        const QByteArray bytes = path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive)
                                     ? QByteArray::fromStdString(reportJson(r) + '\n')
                                     : reportHtml(r, error, progress);
        ok = error.isEmpty() && file.write(bytes) == bytes.size();
    }
    if (!ok) {
        if (error.isEmpty())
            error =
                QStringLiteral("cannot write ") + path + QStringLiteral(": ") + file.errorString();
        file.cancelWriting();
        return false;
    }
    if (!file.commit()) {
        error = QStringLiteral("cannot write ") + path + QStringLiteral(": ") + file.errorString();
        return false;
    }
    return true;
}

namespace {

// Only [A-Za-z0-9._-], anything else (each code point) '_'.
QString fileSafe(const QString& text, qsizetype maxChars) {
    QString safe;
    for (const char32_t c : text.toUcs4()) {
        if (safe.size() >= maxChars)
            break;
        const bool keep = (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') ||
                          (c >= U'0' && c <= U'9') || c == U'.' || c == U'_' || c == U'-';
        safe += keep ? QChar(char16_t(c)) : QChar(u'_');
    }
    return safe;
}

} // namespace

QString defaultReportName(const QString& scope, EpochMillis at, const QString& extension) {
    QString name = fileSafe(scope, 60);
    // Not hidden, and never "." or "..".
    for (qsizetype i = 0; i < name.size() && name.at(i) == QLatin1Char('.'); ++i)
        name[i] = QLatin1Char('_');
    if (name.isEmpty())
        name = QStringLiteral("report");
    QString ext = extension;
    while (ext.startsWith(QLatin1Char('.')))
        ext.remove(0, 1);
    ext = fileSafe(ext, 16);
    const QString stamp =
        QDateTime::fromMSecsSinceEpoch(at == kNoTime ? nowMillis() : at, QTimeZone::utc())
            .toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
    QString file = QStringLiteral("callscope-") + name + QLatin1Char('-') + stamp;
    if (!ext.isEmpty())
        file += QLatin1Char('.') + ext;
    return file;
}

} // namespace callscope
