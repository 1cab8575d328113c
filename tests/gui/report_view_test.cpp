// Incident reports as written for people (issue 15, point 7), offscreen: one
// legend per report, times, callIds and digests that never wrap, the
// redaction note of the surface the report came from, every time in the zone
// the header names, every state listed even when its band is too narrow to
// label, and default file names that are safe whatever the callId.
#include "models/report.h"
#include "views/clock.h"
#include "views/report_renderer.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <time.h>

using namespace callscope;

namespace {

// 2026-12-03 22:52:24.521 UTC: 17:52:24.521 in New York (UTC−05:00).
constexpr EpochMillis T = 1'796'338'344'521;

// The display zone for one test, put back afterwards (TZ too).
class DisplayZoneScope {
public:
    explicit DisplayZoneScope(DisplayZone zone, const char* tz = nullptr)
        : m_zone(displayZone()), m_hadTz(qEnvironmentVariableIsSet("TZ")), m_tz(qgetenv("TZ")) {
        if (tz) {
            qputenv("TZ", tz);
            ::tzset();
        }
        setDisplayZone(zone);
    }
    ~DisplayZoneScope() {
        if (m_hadTz)
            qputenv("TZ", m_tz);
        else
            qunsetenv("TZ");
        ::tzset();
        setDisplayZone(m_zone);
    }
    DisplayZoneScope(const DisplayZoneScope&) = delete;
    DisplayZoneScope& operator=(const DisplayZoneScope&) = delete;

private:
    DisplayZone m_zone;
    bool m_hadTz;
    QByteArray m_tz;
};

// A call that lives a minute: PROCESSING for 272 ms and INITIATED for 1 ms
// are slivers on its timeline, too narrow for their names.
CallTimeline minuteLongCall(const std::string& callId) {
    CallTimeline t;
    t.callId = callId;
    t.bizNo = "ORD-1";
    t.record.present = true;
    t.record.status = "SUCCESS";
    t.record.digest = std::string(64, 'a');
    t.record.firstSource = "api-1";
    t.record.lockVersion = 1;
    t.record.createdAt = T;
    t.record.updatedAt = T + 272;
    t.record.expireAt = T + 86'400'000;
    const auto add = [&](EpochMillis at, Lane lane, const char* state, const char* instance,
                         const char* text) -> TimelineEntry& {
        TimelineEntry e;
        e.at = at;
        e.lane = lane;
        e.state = state;
        e.instance = instance;
        e.digest = t.record.digest;
        e.text = text;
        t.entries.push_back(e);
        return t.entries.back();
    };
    add(T - 100, Lane::CallerView, "INITIATED", "api-1", "caller INITIATED");
    add(T - 99, Lane::CallerView, "AWAITING_RESPONSE", "api-1", "caller AWAITING_RESPONSE");
    add(T, Lane::ServerRecord, "PROCESSING", "api-1", "record PROCESSING");
    add(T, Lane::Attempt, "EXECUTED", "api-1", "attempt EXECUTED from api-1").until = T + 272;
    add(T + 272, Lane::ServerRecord, "SUCCESS", "api-1", "record SUCCESS");
    add(T + 300, Lane::Receipt, "SUCCESS", "pay-1", "receipt v2 SUCCESS").number = 2;
    add(T + 60'000, Lane::CallerView, "CONFIRMED_SUCCESS", "api-1", "caller CONFIRMED_SUCCESS");
    t.bands = {{Lane::ServerRecord, "ABSENT", T - 100, T},
               {Lane::ServerRecord, "PROCESSING", T, T + 272},
               {Lane::ServerRecord, "SUCCESS", T + 272, T + 60'500},
               {Lane::CallerView, "INITIATED", T - 100, T - 99},
               {Lane::CallerView, "AWAITING_RESPONSE", T - 99, T + 60'000},
               {Lane::CallerView, "CONFIRMED_SUCCESS", T + 60'000, T + 60'500}};
    t.from = T - 100;
    t.to = T + 60'500;
    return t;
}

// A callId no one should trust: markup, a quote, and too long for a cell.
const std::string kHostileId = "<b>" + std::string(100, 'x') + "\"end";

Report sampleReport(const std::string& surface = "cli") {
    Report r;
    r.from = T - 100;
    r.to = T + 60'500;
    r.generatedAt = T + 120'000;
    r.sources = {"PostgreSQL host=db dbname=orders user=ro"};
    r.surface = surface;
    Anomaly a;
    a.id = 1;
    a.kind = AnomalyKind::StateMismatch;
    a.severity = Severity::Warning;
    a.callIds = {"c-report-1", kHostileId};
    a.instances = {"api-1"};
    a.firstEventAt = T;
    a.detectedAt = T + 1000;
    a.summary = "caller and server disagree";
    a.evidence = {{"c-report-1", T, "record PROCESSING"}};
    r.anomalies = {a};
    for (const std::string& id : {std::string("c-report-1"), kHostileId}) {
        ReportCall c;
        c.timeline = minuteLongCall(id);
        c.diagnosis.verdict = "Executed once; the caller confirmed it";
        c.diagnosis.evidence = {{id, T, "attempt EXECUTED from api-1"}};
        c.anomalies = {a};
        c.resultSnapshot = kRedacted;
        r.calls.push_back(std::move(c));
    }
    return r;
}

// Temporary files go into the build tree, never elsewhere.
QString tempTemplate() {
    return QCoreApplication::applicationDirPath() + QStringLiteral("/report-view-XXXXXX");
}

QString writeHtml(const Report& r) {
    QTemporaryDir dir(tempTemplate());
    EXPECT_TRUE(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("report.html"));
    QString error;
    EXPECT_TRUE(writeReport(r, path, error)) << error.toStdString();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

// The text of the first element that starts with `open`, up to `close`.
QString between(const QString& html, const QString& open, const QString& close) {
    const qsizetype a = html.indexOf(open);
    if (a < 0)
        return {};
    const qsizetype b = html.indexOf(close, a);
    return b < 0 ? html.mid(a) : html.mid(a, b - a + close.size());
}

} // namespace

TEST(ReportView, DefaultNameIsFileSafeAndStampedInUtc) {
    const QString stamp = QStringLiteral("20261203T225224Z");
    EXPECT_EQ(defaultReportName(QStringLiteral("../a b/<x>"), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-___a_b__x_-") + stamp + QStringLiteral(".pdf"));
    EXPECT_EQ(defaultReportName(QStringLiteral("window"), T, QStringLiteral("html")),
              QStringLiteral("callscope-window-") + stamp + QStringLiteral(".html"));
    EXPECT_EQ(defaultReportName(QStringLiteral("anomalies"), T, QStringLiteral(".json")),
              QStringLiteral("callscope-anomalies-") + stamp + QStringLiteral(".json"));
    EXPECT_EQ(defaultReportName(QStringLiteral("cid-7.A_b-9"), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-cid-7.A_b-9-") + stamp + QStringLiteral(".pdf"));
    EXPECT_EQ(defaultReportName(QString(), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-report-") + stamp + QStringLiteral(".pdf"));
    EXPECT_EQ(defaultReportName(QStringLiteral(".."), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-__-") + stamp + QStringLiteral(".pdf"));
    EXPECT_EQ(defaultReportName(QStringLiteral(".hidden"), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-_hidden-") + stamp + QStringLiteral(".pdf"));
    // One '_' per character, whatever its encoding (ü, €, an emoji, a newline).
    EXPECT_EQ(
        defaultReportName(QStringLiteral("\u00fc\u20ac\U0001F600\n"), T, QStringLiteral("pdf")),
        QStringLiteral("callscope-____-") + stamp + QStringLiteral(".pdf"));
    const QString longName =
        defaultReportName(QString(200, QLatin1Char('c')), T, QStringLiteral("pdf"));
    EXPECT_EQ(longName, QStringLiteral("callscope-") + QString(60, QLatin1Char('c')) +
                            QLatin1Char('-') + stamp + QStringLiteral(".pdf"));
    const QRegularExpression safe(
        QStringLiteral("^callscope-[A-Za-z0-9_-][A-Za-z0-9._-]{0,59}-\\d{8}T\\d{6}Z\\.pdf$"));
    for (const QString& scope :
         {QStringLiteral("../../etc/passwd"), QStringLiteral("a\\b:c*d?e\"f|g"),
          QStringLiteral("\u202egnp.exe"), QStringLiteral(" "), QString(300, QLatin1Char('/'))}) {
        const QString name = defaultReportName(scope, T, QStringLiteral("pdf"));
        EXPECT_TRUE(safe.match(name).hasMatch()) << name.toStdString();
    }
    // The stamp is UTC whatever the display zone.
    const DisplayZoneScope local(DisplayZone::Local, "America/New_York");
    EXPECT_EQ(defaultReportName(QStringLiteral("window"), T, QStringLiteral("pdf")),
              QStringLiteral("callscope-window-") + stamp + QStringLiteral(".pdf"));
}

TEST(ReportView, HtmlHasOneLegendOfBandColoursAndMarkerShapes) {
    const QString html = writeHtml(sampleReport());
    EXPECT_EQ(html.count(QStringLiteral("<section class=\"legend\">")), 1); // two calls, one legend
    const QString legend =
        between(html, QStringLiteral("<section class=\"legend\">"), QStringLiteral("</section>"));
    ASSERT_FALSE(legend.isEmpty());
    EXPECT_LT(html.indexOf(QStringLiteral("<section class=\"legend\">")),
              html.indexOf(QStringLiteral("<section class=\"call\"")));
    EXPECT_TRUE(legend.contains(QStringLiteral("<svg")));
    for (const char* word : {"server record",
                             "caller view",
                             "ABSENT",
                             "PROCESSING",
                             "SUCCESS",
                             "FAILED",
                             "EXPIRED",
                             "INITIATED",
                             "AWAITING_RESPONSE",
                             "TIMEOUT_UNKNOWN",
                             "AWAITING_RECEIPT",
                             "CONFIRMED_SUCCESS",
                             "CONFIRMED_FAILED",
                             "ESCALATED",
                             "executed",
                             "in progress",
                             "replayed",
                             "digest conflict",
                             "reoccupied",
                             "execution time",
                             "receipt",
                             "duplicate",
                             "out of order",
                             "evidence",
                             "now"})
        EXPECT_TRUE(legend.contains(QLatin1String(word))) << word;
    // The marker shapes are drawn (the receipt triangle is a path).
    EXPECT_TRUE(legend.contains(QStringLiteral("<path")));
    // A report without calls has no timelines, so no legend.
    Report none = sampleReport();
    none.calls.clear();
    EXPECT_FALSE(writeHtml(none).contains(QStringLiteral("class=\"legend\"")));
}

TEST(ReportView, TimesCallIdsAndDigestsNeverWrapAndLongIdsAreElided) {
    const DisplayZoneScope utc(DisplayZone::Utc);
    const QString html = writeHtml(sampleReport());
    const QString cell = QStringLiteral("<td class=\"nw\">");
    EXPECT_TRUE(
        html.contains(QStringLiteral("td.nw, th.nw, h2.nw, span.nw, p.nw{white-space:nowrap;}")));
    // Times: the anomaly's first event, the record's times, each lane's events.
    for (const QString& time :
         {QStringLiteral("2026-12-03 22:52:24.521"), QStringLiteral("2026-12-03 22:52:24.793"),
          QStringLiteral("2026-12-03 22:52:24.421"), QStringLiteral("2026-12-03 22:53:24.521"),
          QStringLiteral("2026-12-04 22:52:24.521")})
        EXPECT_TRUE(html.contains(cell + time + QStringLiteral("</td>"))) << time.toStdString();
    EXPECT_FALSE(html.contains(QStringLiteral("<td>2026-12-03")));
    // The window in the header, each end whole.
    EXPECT_TRUE(html.contains(QStringLiteral("<span class=\"nw\">2026-12-03 22:52:24.421</span>")));
    // A short callId whole in a cell that does not wrap.
    EXPECT_TRUE(html.contains(cell + QStringLiteral("c-report-1")));
    // The digest whole, not wrapping.
    EXPECT_TRUE(html.contains(QStringLiteral("<td class=\"nw\"><span class=digest>") +
                              QString(64, QLatin1Char('a')) + QStringLiteral("</span></td>")));
    // A long, hostile callId: elided in the middle, the whole (escaped) in the title.
    const QString full =
        QStringLiteral("&lt;b&gt;") + QString(100, QLatin1Char('x')) + QStringLiteral("&quot;end");
    EXPECT_TRUE(html.contains(QStringLiteral("<span title=\"") + full + QStringLiteral("\">")));
    EXPECT_TRUE(html.contains(QStringLiteral("&lt;b&gt;xxxx")));
    EXPECT_TRUE(html.contains(QStringLiteral("x\u2026x")));
    EXPECT_FALSE(html.contains(QStringLiteral("<b>xxx")));
    EXPECT_FALSE(html.contains(QStringLiteral("x\"end")));
    // Cells hold it elided: never the 100 x's in the text of a cell.
    EXPECT_FALSE(html.contains(QStringLiteral(">&lt;b&gt;") + QString(100, QLatin1Char('x'))));
    // The heading of its section: elided too, on one line.
    EXPECT_TRUE(html.contains(QStringLiteral("<h2 class=\"nw\">callId <span title=\"") + full));
}

TEST(ReportView, RedactionNoteNamesTheSurfacesWayToIncludePayloads) {
    const QString gui = writeHtml(sampleReport("gui"));
    EXPECT_TRUE(gui.contains(QStringLiteral(
        "redacted \u2014 choose \u201cInclude payloads\u201d when exporting to show it")));
    EXPECT_FALSE(gui.contains(QStringLiteral("--include-payloads")));
    const QString cli = writeHtml(sampleReport("cli"));
    EXPECT_TRUE(cli.contains(QString::fromUtf8(kRedacted).toHtmlEscaped()));
    EXPECT_FALSE(cli.contains(QStringLiteral("\u201cInclude payloads\u201d")));
    // Anything but "gui" is the command line's.
    EXPECT_TRUE(writeHtml(sampleReport("")).contains(QStringLiteral("--include-payloads")));
    // The stored value, and so JSON, stay kRedacted on both surfaces.
    EXPECT_NE(reportJson(sampleReport("gui")).find(kRedacted), std::string::npos);
    // With payloads the payload shows, and no note.
    Report full = sampleReport("gui");
    full.payloadsIncluded = true;
    for (ReportCall& c : full.calls)
        c.resultSnapshot = R"({"iban":"DE89 3704"})";
    const QString shown = writeHtml(full);
    EXPECT_TRUE(shown.contains(QStringLiteral("DE89 3704")));
    EXPECT_FALSE(shown.contains(QStringLiteral("Include payloads")));
}

TEST(ReportView, TimesAreInTheZoneTheHeaderNames) {
    const DisplayZoneScope local(DisplayZone::Local, "America/New_York");
    const QString html = writeHtml(sampleReport());
    EXPECT_TRUE(html.contains(QStringLiteral("Times in UTC\u221205:00")))
        << html.left(2000).toStdString();
    EXPECT_TRUE(html.contains(QStringLiteral("<td class=\"nw\">2026-12-03 17:52:24.521</td>")));
    EXPECT_TRUE(html.contains(QStringLiteral("2026-12-03 17:54:24<"))); // generated, seconds
    EXPECT_TRUE(html.contains(QStringLiteral("PROCESSING 17:52:24.521")));
    // Nothing in UTC, ISO or not.
    EXPECT_FALSE(html.contains(QStringLiteral("22:52:24.521")));
    EXPECT_FALSE(html.contains(QStringLiteral("T22:52")));
    // And in UTC, the header says so.
    const DisplayZoneScope utc(DisplayZone::Utc);
    const QString inUtc = writeHtml(sampleReport());
    EXPECT_TRUE(inUtc.contains(QStringLiteral("Times in UTC<")));
    EXPECT_TRUE(inUtc.contains(QStringLiteral("<td class=\"nw\">2026-12-03 22:52:24.521</td>")));
}

TEST(ReportView, EveryStateIsListedWithItsTimeEvenWhenItsBandIsTooNarrowToLabel) {
    const DisplayZoneScope utc(DisplayZone::Utc);
    const QString html = writeHtml(sampleReport());
    const QString section =
        between(html, QStringLiteral("<section class=\"call\""), QStringLiteral("</section>"));
    const QString server =
        between(section, QStringLiteral("<p class=\"states\"><b>server record:</b>"),
                QStringLiteral("</p>"));
    const QString caller = between(
        section, QStringLiteral("<p class=\"states\"><b>caller view:</b>"), QStringLiteral("</p>"));
    ASSERT_FALSE(server.isEmpty()) << section.toStdString();
    ASSERT_FALSE(caller.isEmpty()) << section.toStdString();
    // 272 ms and 1 ms of a minute: slivers on the timeline, named here.
    EXPECT_TRUE(server.contains(
        QStringLiteral("<span class=\"nw\">PROCESSING 22:52:24.521 (272 ms)</span>")))
        << server.toStdString();
    EXPECT_TRUE(
        caller.contains(QStringLiteral("<span class=\"nw\">INITIATED 22:52:24.421 (1 ms)</span>")))
        << caller.toStdString();
    // Every band of both lanes, in order.
    const qsizetype absent = server.indexOf(QStringLiteral("ABSENT 22:52:24.421"));
    const qsizetype processing = server.indexOf(QStringLiteral("PROCESSING 22:52:24.521"));
    const qsizetype success = server.indexOf(QStringLiteral("SUCCESS 22:52:24.793"));
    EXPECT_TRUE(absent >= 0 && absent < processing && processing < success) << server.toStdString();
    const qsizetype awaiting = caller.indexOf(QStringLiteral("AWAITING_RESPONSE 22:52:24.422"));
    const qsizetype confirmed = caller.indexOf(QStringLiteral("CONFIRMED_SUCCESS 22:53:24.521"));
    EXPECT_TRUE(awaiting > 0 && awaiting < confirmed) << caller.toStdString();
}

TEST(ReportView, PdfIsWrittenForBothSurfacesWithHostileData) {
    QTemporaryDir dir(tempTemplate());
    ASSERT_TRUE(dir.isValid());
    for (const char* surface : {"cli", "gui"}) {
        const QString path =
            dir.filePath(QStringLiteral("report-%1.pdf").arg(QLatin1String(surface)));
        QString error;
        ASSERT_TRUE(writeReport(sampleReport(surface), path, error)) << error.toStdString();
        QFile f(path);
        ASSERT_TRUE(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        EXPECT_GT(bytes.size(), 2000);
        EXPECT_TRUE(bytes.startsWith("%PDF-"));
        EXPECT_TRUE(bytes.trimmed().endsWith("%%EOF"));
    }
    // Kept for a look beside the screenshots (CALLSCOPE_SCREENSHOTS or screenshots/).
    QString shots = qEnvironmentVariable("CALLSCOPE_SCREENSHOTS");
    if (shots.isEmpty())
        shots = QCoreApplication::applicationDirPath() + QStringLiteral("/screenshots");
    QDir().mkpath(shots);
    QFile::remove(shots + QStringLiteral("/report-view.pdf"));
    EXPECT_TRUE(QFile::copy(dir.filePath(QStringLiteral("report-gui.pdf")),
                            shots + QStringLiteral("/report-view.pdf")));
}
