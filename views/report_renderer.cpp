#include "views/report_renderer.h"

#include "views/call_html.h"
#include "views/palette.h"
#include "views/timeline_painter.h"

#include <QBuffer>
#include <QDateTime>
#include <QFile>
#include <QPainter>
#include <QPalette>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextDocument>
#include <QTextOption>

#include <cerrno>
#include <cstring>

#ifdef Q_OS_UNIX
#include <sys/stat.h>
#endif

namespace callscope {
namespace {

QString esc(const std::string& s) {
    return htmlText(s);
}
QString when(EpochMillis t) {
    return t == kNoTime ? QStringLiteral("\u2014") : qs(formatIsoMillis(t));
}

QString localTime(EpochMillis t) {
    return QDateTime::fromMSecsSinceEpoch(t).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss t"));
}

// A light palette for print, whatever the desktop's theme.
QPalette printPalette() {
    QPalette p;
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::Mid, QColor(0xbb, 0xbb, 0xbb));
    p.setColor(QPalette::Base, Qt::white);
    return p;
}

TimeAxis fitted(const CallTimeline& t, double width) {
    TimeAxis a;
    a.width = width;
    EpochMillis to = t.from;
    for (const TimelineEntry& e : t.entries)
        to = std::max({to, e.at, e.until});
    if (t.from != kNoTime)
        a.fit(t.from, to);
    return a;
}

QSet<QString> outlinedOf(const ReportCall& c) {
    return c.anomalies.empty() ? QSet<QString>{}
                               : evidenceKeys(c.anomalies.front().evidence, c.timeline.callId);
}

constexpr double kTimelineHeight = 200;

// ---- shared HTML fragments (the PDF lays them out with QTextDocument) ----

QString summaryHtml(const Report& r) {
    QString h = QStringLiteral("<h1>") + esc(r.title) + QStringLiteral("</h1><table class=meta>");
    h += QStringLiteral("<tr><td>Window</td><td>") + when(r.from) + QStringLiteral(" \u2013 ") +
         when(r.to) + QStringLiteral("</td></tr>");
    h += QStringLiteral("<tr><td>Generated</td><td>") + when(r.generatedAt) + QStringLiteral(" (") +
         localTime(r.generatedAt) + QStringLiteral(")</td></tr>");
    for (const auto& s : r.sources)
        h += QStringLiteral("<tr><td>Source</td><td>") + esc(s) + QStringLiteral("</td></tr>");
    h += QStringLiteral("<tr><td>Payloads</td><td>") +
         (r.payloadsIncluded ? QStringLiteral("included") : QStringLiteral("redacted")) +
         QStringLiteral("</td></tr></table>");
    h += QStringLiteral(
        "<h2>Anomalies by kind</h2><table class=grid><tr><th>kind</th><th>critical</th>"
        "<th>warning</th><th>info</th></tr>");
    const auto counts = r.countsByKind();
    if (counts.empty())
        h += QStringLiteral("<tr><td colspan=4>none</td></tr>");
    for (const auto& [kind, c] : counts)
        h += QStringLiteral("<tr><td>") + esc(kind) + QStringLiteral("</td><td>") +
             QString::number(c[2]) + QStringLiteral("</td><td>") + QString::number(c[1]) +
             QStringLiteral("</td><td>") + QString::number(c[0]) + QStringLiteral("</td></tr>");
    return h + QStringLiteral("</table>");
}

QString anomalyRowsHtml(const std::vector<Anomaly>& list, std::size_t from, std::size_t to,
                        bool head) {
    QString h;
    if (head)
        h += QStringLiteral("<h2>Anomaly table</h2>");
    h += QStringLiteral(
        "<table class=grid><tr><th>severity</th><th>kind</th><th>state</th>"
        "<th>callIds</th><th>instances</th><th>first event</th><th>summary</th></tr>");
    for (std::size_t i = from; i < to && i < list.size(); ++i) {
        const Anomaly& a = list[i];
        QStringList ids, inst;
        for (const auto& id : a.callIds)
            ids << esc(id);
        for (const auto& x : a.instances)
            inst << esc(x);
        h += QStringLiteral("<tr><td style=\"color:") + severityColor(toString(a.severity)).name() +
             QStringLiteral("\"><b>") + qs(toString(a.severity)) +
             QStringLiteral("</b></td><td style=\"white-space:nowrap\">") + qs(toString(a.kind)) +
             QStringLiteral("</td><td>") +
             (a.open ? QStringLiteral("open") : QStringLiteral("resolved")) +
             QStringLiteral("</td><td>") + ids.join(QStringLiteral("<br>")) +
             QStringLiteral("</td><td>") + inst.join(QStringLiteral("<br>")) +
             QStringLiteral("</td><td>") + when(a.firstEventAt) + QStringLiteral("</td><td>") +
             esc(a.summary) + QStringLiteral("</td></tr>");
    }
    return h + QStringLiteral("</table>");
}

QString callHeadHtml(const ReportCall& c) {
    const CallTimeline& t = c.timeline;
    QString h = QStringLiteral("<h2>callId ") + esc(t.callId) + QStringLiteral("</h2>");
    if (!t.bizNo.empty())
        h += QStringLiteral("<p>bizNo ") + esc(t.bizNo) + QStringLiteral("</p>");
    return h + diagnosisHtml(c.diagnosis, CallHtmlStyle{true, {}});
}

QString reportTablesHtml(const ReportCall& c) {
    return callTablesHtml(c.timeline, c.diagnosis, &c.resultSnapshot, CallHtmlStyle{true, {}});
}

const char* kPrintCss =
    "h1{font-size:16pt;} h2{font-size:13pt;margin-top:8px;} h3{font-size:10pt;margin-top:6px;}"
    "table.grid{border-collapse:collapse;} table.grid td, table.grid th{border:1px solid #bbb;"
    "padding:2px 4px;font-size:7.5pt;} th{background:#eee;text-align:left;} "
    ".digest{font-size:6.5pt;}"
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

    void html(const QString& html, bool keepWhole = true) {
        QTextDocument doc;
        doc.setDefaultStyleSheet(QString::fromUtf8(kPrintCss));
        QTextOption opt;
        opt.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere); // long callIds wrap
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

    void timeline(const ReportCall& c) {
        if (m_y + kTimelineHeight > m_body.bottom())
            newPage();
        const QRectF area(m_body.left(), m_y, m_body.width(), kTimelineHeight);
        const TimelineLayout layout = TimelineLayout::forRect(area);
        QFont f = m_font;
        f.setPointSizeF(7);
        m_painter.setFont(f);
        paintTimeline(m_painter, layout, c.timeline, fitted(c.timeline, layout.serverLane.width()),
                      outlinedOf(c), printPalette());
        m_y += kTimelineHeight + 4;
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
        m_painter.drawText(QRectF(m_page.left(), m_page.top(), m_page.width(), 16),
                           Qt::AlignLeft | Qt::AlignVCenter,
                           shownText(m_report.title) + QStringLiteral(" \u2014 window ") +
                               when(m_report.from) + QStringLiteral(" \u2013 ") +
                               when(m_report.to));
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

} // namespace

QString timelineSvg(const CallTimeline& t, const QSet<QString>& outlined, double width) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(QSize(int(width), int(kTimelineHeight)));
    svg.setViewBox(QRect(0, 0, int(width), int(kTimelineHeight)));
    // No setTitle: Qt 6.4 writes the title into <title> unescaped (fixed only in
    // 6.5), and a callId is whatever a producer put in a message. It is set below.
    {
        QPainter p(&svg);
        const TimelineLayout layout = TimelineLayout::forRect(QRectF(0, 0, width, kTimelineHeight));
        paintTimeline(p, layout, t, fitted(t, layout.serverLane.width()), outlined, printPalette());
    }
    QString s = QString::fromUtf8(buffer.data());
    // Inline in HTML: no XML prolog or doctype.
    const int at = s.indexOf(QStringLiteral("<svg"));
    if (at > 0)
        s = s.mid(at);
    // The title goes first inside <svg ...>, escaped.
    const int open = s.indexOf(QLatin1Char('>'), s.indexOf(QStringLiteral("<svg")));
    if (open >= 0)
        s.insert(open + 1, QStringLiteral("\n<title>timeline of ") + esc(t.callId) +
                               QStringLiteral("</title>"));
    return s;
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
    flow.html(summaryHtml(r));
    constexpr std::size_t kRowsPerBlock = 10; // a block fits a page and moves whole
    for (std::size_t i = 0; i < r.anomalies.size() || i == 0; i += kRowsPerBlock) {
        flow.html(anomalyRowsHtml(r.anomalies, i, i + kRowsPerBlock, i == 0));
        if (r.anomalies.empty())
            break;
    }
    for (std::size_t k = 0; k < r.calls.size(); ++k) {
        if (progress && !progress(int(k), int(r.calls.size()))) {
            error = QStringLiteral("cancelled");
            return false;
        }
        flow.newPage();
        flow.html(callHeadHtml(r.calls[k]));
        flow.timeline(r.calls[k]);
        flow.html(reportTablesHtml(r.calls[k]), false);
    }
    return true;
}

QByteArray reportHtml(const Report& r, QString& error, const ReportProgress& progress) {
    QString h =
        QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>") +
        esc(r.title) +
        QStringLiteral(
            "</title><style>body{font-family:sans-serif;margin:24px;max-width:1200px;}") +
        QString::fromUtf8(kPrintCss) +
        QStringLiteral(
            " section.call{border-top:2px solid #888;margin-top:24px;} "
            "h2{word-break:break-all;} td{word-break:break-word;} svg{max-width:100%;height:auto;}"
            "</style></head><body>");
    h += summaryHtml(r) + anomalyRowsHtml(r.anomalies, 0, r.anomalies.size(), true);
    for (std::size_t k = 0; k < r.calls.size(); ++k) {
        if (progress && !progress(int(k), int(r.calls.size()))) {
            error = QStringLiteral("cancelled");
            return {};
        }
        const ReportCall& c = r.calls[k];
        h += QStringLiteral("<section class=\"call\" id=\"") + esc(c.timeline.callId) +
             QStringLiteral("\">") + callHeadHtml(c) +
             timelineSvg(c.timeline, outlinedOf(c), 1000) + reportTablesHtml(c) +
             QStringLiteral("</section>");
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

} // namespace callscope
