#include "views/drilldown_view.h"

#include "models/visible_text.h"
#include "views/call_html.h"
#include "views/palette.h"
#include "views/timeline_painter.h"
#include "views/timeline_widget.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace callscope {
namespace {

QString esc(const std::string& s) {
    return htmlText(s);
}

// A link that opens a callId: the id itself, percent-encoded, whatever it holds.
QString callLink(const std::string& id) {
    return QStringLiteral("<a href=\"call:") +
           QString::fromLatin1(QUrl::toPercentEncoding(qs(id))) + QStringLiteral("\">") + esc(id) +
           QStringLiteral("</a> ");
}
QString when(EpochMillis t) {
    return t == kNoTime ? QStringLiteral("\u2014") : qs(formatIsoMillis(t));
}

} // namespace

DrilldownView::DrilldownView(QWidget* parent)
    : QWidget(parent), m_search(new QLineEdit(this)), m_go(new QPushButton(tr("Open"), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)), m_progress(new QProgressBar(this)),
      m_title(new QLabel(this)), m_anomaly(new QComboBox(this)),
      m_timeline(new TimelineWidget(this)), m_details(new QTextBrowser(this)) {
    m_search->setPlaceholderText(tr("callId or bizNo"));
    m_search->setClearButtonEnabled(true);
    m_progress->setRange(0, 0); // busy: a cold read has no known length
    m_progress->setMaximumWidth(120);
    m_progress->hide();
    m_cancel->hide();
    auto* copy = new QPushButton(tr("Copy callId"), this);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Call:"), this));
    bar->addWidget(m_search, 1);
    bar->addWidget(m_go);
    bar->addWidget(m_progress);
    bar->addWidget(m_cancel);
    bar->addWidget(copy);
    QFont tf = m_title->font();
    tf.setBold(true);
    tf.setPointSizeF(tf.pointSizeF() * 1.2);
    m_title->setFont(tf);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setTextFormat(Qt::PlainText); // it shows callIds: data, never markup
    auto* outline = new QHBoxLayout;
    outline->addWidget(m_title, 1);
    outline->addWidget(new QLabel(tr("Outline evidence of:"), this));
    outline->addWidget(m_anomaly);
    m_details->setOpenLinks(false);
    auto* split = m_splitter = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("drilldownSplitter"));
    split->addWidget(m_timeline);
    split->addWidget(m_details);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setSizes({250, 600});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(outline);
    layout->addWidget(split, 1);

    // The box shows a looked-up id in its visible form; unedited, it still
    // means the raw id (which may hold control characters).
    const auto typed = [this] {
        lookup(m_search->text() == m_queryShown ? m_query : m_search->text());
    };
    connect(m_search, &QLineEdit::returnPressed, this, typed);
    connect(m_go, &QPushButton::clicked, this, typed);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        ++m_generation; // the answer of the cancelled lookup is dropped
        emit cancelRequested();
        setBusy(false);
        m_title->setText(tr("Cancelled"));
    });
    // A callId with control characters is copied as shown: pasted into a
    // terminal, the raw bytes would act (a newline runs what follows it).
    connect(copy, &QPushButton::clicked, this, [this] {
        const std::string id = m_callId.toStdString();
        QApplication::clipboard()->setText(needsVisibleEscape(id) ? shownText(id) : m_callId);
    });
    connect(m_details, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == QLatin1String("call"))
            lookup(url.path(QUrl::FullyDecoded));
    });
    connect(m_anomaly, &QComboBox::currentIndexChanged, this, [this](int i) {
        QSet<QString> keys;
        if (i > 0 && static_cast<std::size_t>(i - 1) < m_anomalies.size())
            keys = evidenceKeys(m_anomalies[static_cast<std::size_t>(i - 1)].evidence,
                                m_callId.toStdString());
        m_timeline->setTimeline(m_current, keys);
    });
}

void DrilldownView::focusSearch() {
    m_search->setFocus();
    m_search->selectAll();
}

void DrilldownView::setBusy(bool busy) {
    m_progress->setVisible(busy);
    m_cancel->setVisible(busy);
    m_go->setEnabled(!busy);
}

void DrilldownView::lookup(const QString& query) {
    const QString q = query.trimmed();
    if (q.isEmpty())
        return;
    m_query = q;
    m_queryShown = shownText(q.toStdString());
    m_search->setText(m_queryShown);
    setBusy(true);
    m_title->setText(tr("Looking up %1\u2026").arg(m_queryShown));
    emit callRequested(q, ++m_generation);
}

void DrilldownView::showDetail(const CallDetail& d) {
    if (d.generation != m_generation)
        return; // superseded by a later lookup
    setBusy(false);
    if (!d.found) {
        m_title->setText(shownText(d.message));
        m_timeline->clear();
        m_details->clear();
        return;
    }
    m_callId = qs(d.timeline.callId);
    emit callShown(m_callId);
    m_current = d.timeline;
    m_anomalies = d.anomalies;
    m_title->setText(shownText(d.timeline.callId) +
                     (d.timeline.bizNo.empty()
                          ? QString()
                          : QStringLiteral("   bizNo ") + shownText(d.timeline.bizNo)));
    m_anomaly->blockSignals(true);
    m_anomaly->clear();
    m_anomaly->addItem(tr("(none)"));
    for (const Anomaly& a : d.anomalies)
        m_anomaly->addItem(qs(toString(a.kind)) + QStringLiteral(" \u2014 ") +
                           qs(toString(a.severity)));
    m_anomaly->setCurrentIndex(d.anomalies.empty() ? 0 : 1);
    m_anomaly->blockSignals(false);
    m_timeline->setTimeline(d.timeline,
                            d.anomalies.empty()
                                ? QSet<QString>{}
                                : evidenceKeys(d.anomalies.front().evidence, d.timeline.callId));
    m_details->setHtml(detailsHtml(d));
}

QString DrilldownView::detailsHtml(const CallDetail& d) const {
    CallHtmlStyle style;
    style.callId = [](const std::string& id) { return callLink(id); };
    QString h = diagnosisHtml(d.diagnosis, style); // starts "Diagnosis: verdict"
    if (d.otherMatches.size() > 1) {
        h += QStringLiteral("<p>This bizNo names several callIds: ");
        for (const auto& id : d.otherMatches)
            h += callLink(id);
        h += QStringLiteral("</p>");
    }
    h += QStringLiteral("<h3>Anomalies</h3>");
    if (d.anomalies.empty())
        h += QStringLiteral("<p>none</p>");
    for (const Anomaly& a : d.anomalies)
        h += QStringLiteral("<p><span style=\"color:") +
             severityColor(toString(a.severity)).name() + QStringLiteral("\"><b>[") +
             qs(toString(a.severity)) + QStringLiteral("] ") + qs(toString(a.kind)) +
             QStringLiteral("</b></span> ") + (a.open ? QString() : QStringLiteral("(resolved) ")) +
             esc(a.summary) + QStringLiteral("</p>");
    h += callTablesHtml(d.timeline, d.diagnosis, nullptr, style);
    if (!d.message.empty())
        h += QStringLiteral("<p><i>") + esc(d.message) + QStringLiteral("</i></p>");
    return h;
}

} // namespace callscope
