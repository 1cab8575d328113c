#include "views/drilldown_view.h"

#include "models/visible_text.h"
#include "views/call_html.h"
#include "views/clock.h"
#include "views/group_timeline_widget.h"
#include "views/palette.h"
#include "views/timeline_painter.h"
#include "views/timeline_widget.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QShortcut>
#include <QSplitter>
#include <QTextBrowser>
#include <QToolButton>
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
// A time of this view's own texts, in the display zone, named.
QString when(EpochMillis t) {
    return t == kNoTime ? QStringLiteral("\u2014")
                        : displayDateTime(t) + QLatin1Char(' ') + zoneLabel(t);
}

constexpr int kHistoryLimit = 100;

} // namespace

DrilldownView::DrilldownView(QWidget* parent)
    : QWidget(parent), m_backButton(new QToolButton(this)), m_forwardButton(new QToolButton(this)),
      m_backKey(new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Left), this)),
      m_forwardKey(new QShortcut(QKeySequence(Qt::ALT | Qt::Key_Right), this)),
      m_search(new QLineEdit(this)), m_go(new QPushButton(tr("Open"), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)), m_progress(new QProgressBar(this)),
      m_title(new QLabel(this)), m_anomaly(new QComboBox(this)),
      m_timeline(new TimelineWidget(this)), m_group(new GroupTimelineWidget(this)),
      m_compare(new QPushButton(tr("Compare with\u2026"), this)),
      m_details(new QTextBrowser(this)) {
    m_search->setPlaceholderText(tr("callId or bizNo"));
    m_search->setClearButtonEnabled(true);
    m_progress->setRange(0, 0); // busy: a cold read has no known length
    m_progress->setMaximumWidth(120);
    m_progress->hide();
    m_cancel->hide();
    auto* copy = new QPushButton(tr("Copy callId"), this);
    m_backButton->setArrowType(Qt::LeftArrow);
    m_forwardButton->setArrowType(Qt::RightArrow);
    m_backButton->setAccessibleName(tr("Back"));
    m_forwardButton->setAccessibleName(tr("Forward"));
    for (QToolButton* b : {m_backButton, m_forwardButton}) {
        b->setAutoRaise(true);
        b->setFocusPolicy(Qt::NoFocus); // Alt+Left/Right stay with the widget in focus
    }
    connect(m_backButton, &QToolButton::clicked, this, &DrilldownView::back);
    connect(m_forwardButton, &QToolButton::clicked, this, &DrilldownView::forward);
    // Within the drill-down only: elsewhere Alt+Left/Right mean what those views say.
    m_backKey->setContext(Qt::WidgetWithChildrenShortcut);
    m_forwardKey->setContext(Qt::WidgetWithChildrenShortcut);
    connect(m_backKey, &QShortcut::activated, this, &DrilldownView::back);
    connect(m_forwardKey, &QShortcut::activated, this, &DrilldownView::forward);
    updateHistoryButtons();
    auto* bar = new QHBoxLayout;
    bar->setSpacing(4);
    bar->addWidget(m_backButton);
    bar->addWidget(m_forwardButton);
    bar->addWidget(new QLabel(tr("Call:"), this));
    bar->addWidget(m_search, 1);
    bar->addWidget(m_go);
    bar->addWidget(m_progress);
    bar->addWidget(m_cancel);
    bar->addWidget(copy);
    bar->addWidget(m_compare);
    m_compare->setToolTip(tr("Draw other callIds on this call's time axis"));
    m_compare->setEnabled(false);
    connect(m_compare, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, tr("Compare with"),
            tr("callIds to draw beside %1 (separated by spaces or commas):")
                .arg(m_titleId.toHtmlEscaped()), // the label may take it for markup
            QLineEdit::Normal, QString(), &ok);
        if (ok)
            compareWith(
                text.split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts));
    });
    m_group->hide();
    connect(m_group, &GroupTimelineWidget::callActivated, this, &DrilldownView::lookup);
    QFont tf = m_title->font();
    tf.setBold(true);
    tf.setPointSizeF(tf.pointSizeF() * 1.2);
    m_title->setFont(tf);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setTextFormat(Qt::PlainText); // it shows callIds: data, never markup
    // The title takes what is left and elides (full text in its tooltip); the
    // anomaly choice is as wide as its longest entry, never clipped.
    m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_title->setMinimumWidth(80);
    m_title->installEventFilter(this);
    m_anomaly->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_anomaly->setMinimumContentsLength(8);
    m_anomaly->setToolTip(tr("Outline the evidence of this anomaly on the timeline"));
    auto* outline = new QHBoxLayout;
    outline->addWidget(m_title, 1);
    outline->addWidget(new QLabel(tr("Outline evidence of:"), this));
    outline->addWidget(m_anomaly);
    m_details->setOpenLinks(false);
    auto* split = m_splitter = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("drilldownSplitter"));
    split->addWidget(m_timeline);
    split->addWidget(m_group);
    split->addWidget(m_details);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 0);
    split->setStretchFactor(2, 1);
    split->setSizes({280, 200, 600});
    // The mouse's back/forward buttons anywhere in the drill-down.
    m_timeline->installEventFilter(this);
    m_details->viewport()->installEventFilter(this);
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
        setTitle(tr("Cancelled"));
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
    startLookup(query, false);
}

void DrilldownView::startLookup(const QString& query, bool fromHistory) {
    const QString q = query.trimmed();
    if (q.isEmpty())
        return;
    m_query = q;
    m_queryShown = shownText(q.toStdString());
    m_search->setText(m_queryShown);
    setBusy(true);
    setTitle(tr("Looking up %1\u2026").arg(m_queryShown));
    const std::uint64_t generation = ++m_generation;
    m_historyGeneration = fromHistory ? generation : 0; // set before a synchronous answer
    emit callRequested(q, generation);
}

void DrilldownView::showDetail(const CallDetail& d) {
    if (d.generation != m_generation)
        return; // superseded by a later lookup
    setBusy(false);
    if (!d.found) {
        setTitle(shownText(d.message));
        m_timeline->clear();
        m_group->setGroup({});
        m_group->hide();
        m_compare->setEnabled(false);
        m_details->clear();
        return;
    }
    m_compare->setEnabled(true);
    m_group->setGroup(d.group);
    m_group->setVisible(!d.group.empty());
    if (!d.group.empty()) { // the group as tall as it needs, the details take the rest
        QList<int> sizes = m_splitter->sizes();
        const int want = m_group->sizeHint().height();
        if (sizes.size() == 3 && sizes[1] != want) {
            sizes[2] = std::max(100, sizes[2] + sizes[1] - want);
            sizes[1] = want;
            m_splitter->setSizes(sizes);
        }
    }
    m_callId = qs(d.timeline.callId);
    if (d.generation != m_historyGeneration)
        pushHistory(m_callId);
    emit callShown(m_callId);
    m_current = d.timeline;
    m_anomalies = d.anomalies;
    QString tip;
    if (d.timeline.record.present)
        tip = tr("record %1: created %2, updated %3")
                  .arg(qs(d.timeline.record.status), when(d.timeline.record.createdAt),
                       when(d.timeline.record.updatedAt));
    m_titleId = shownText(d.timeline.callId);
    setTitle(m_titleId + (d.timeline.bizNo.empty()
                              ? QString()
                              : QStringLiteral("   bizNo ") + shownText(d.timeline.bizNo)),
             tip);
    m_anomaly->blockSignals(true);
    m_anomaly->clear();
    m_anomaly->addItem(tr("(none)"));
    for (const Anomaly& a : d.anomalies) {
        m_anomaly->addItem(qs(toString(a.kind)) + QStringLiteral(" \u2014 ") +
                           qs(toString(a.severity)));
        m_anomaly->setItemData(m_anomaly->count() - 1, plainTip(liveSummary(a, nowMillis())),
                               Qt::ToolTipRole);
    }
    m_anomaly->setCurrentIndex(d.anomalies.empty() ? 0 : 1);
    m_anomaly->blockSignals(false);
    m_timeline->setTimeline(d.timeline,
                            d.anomalies.empty()
                                ? QSet<QString>{}
                                : evidenceKeys(d.anomalies.front().evidence, d.timeline.callId));
    m_details->setHtml(detailsHtml(d));
}

void DrilldownView::compareWith(const QStringList& others) {
    if (m_callId.isEmpty() || others.isEmpty())
        return;
    QStringList parts;
    for (const QString& o : others)
        if (o.trimmed() != m_callId && !o.trimmed().isEmpty())
            parts << o.trimmed();
    m_historyGeneration = m_generation + 1; // the same call: not a new history entry
    m_generation++;
    setBusy(true);
    emit compareRequested(m_callId, parts, m_generation);
}

// --- History ---------------------------------------------------------------

void DrilldownView::pushHistory(const QString& callId) {
    if (m_historyIndex >= 0 && m_history.value(m_historyIndex) == callId)
        return; // the same call again (a refresh): no new step
    while (m_history.size() > m_historyIndex + 1)
        m_history.removeLast(); // a new branch drops what was ahead
    m_history.append(callId);
    while (m_history.size() > kHistoryLimit)
        m_history.removeFirst();
    m_historyIndex = int(m_history.size()) - 1;
    updateHistoryButtons();
    emit historyChanged();
}

void DrilldownView::goTo(int index) {
    if (index < 0 || index >= m_history.size() || index == m_historyIndex)
        return;
    m_historyIndex = index;
    updateHistoryButtons();
    emit historyChanged();
    startLookup(m_history.at(index), true);
}

void DrilldownView::setHistoryShortcutsEnabled(bool enabled) {
    m_backKey->setEnabled(enabled);
    m_forwardKey->setEnabled(enabled);
}

void DrilldownView::back() {
    if (canGoBack())
        goTo(m_historyIndex - 1);
}

void DrilldownView::forward() {
    if (canGoForward())
        goTo(m_historyIndex + 1);
}

void DrilldownView::updateHistoryButtons() {
    m_backButton->setEnabled(canGoBack());
    m_forwardButton->setEnabled(canGoForward());
    // Tooltips are rich text to Qt: the callId they name is data, made plain.
    m_backButton->setToolTip(
        plainTip(canGoBack() ? tr("Back to %1 (Alt+Left)")
                                   .arg(shownText(m_history.at(m_historyIndex - 1).toStdString()))
                             : tr("Back (Alt+Left)")));
    m_forwardButton->setToolTip(plainTip(
        canGoForward() ? tr("Forward to %1 (Alt+Right)")
                             .arg(shownText(m_history.at(m_historyIndex + 1).toStdString()))
                       : tr("Forward (Alt+Right)")));
}

void DrilldownView::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::BackButton) {
        back();
        return;
    }
    if (e->button() == Qt::ForwardButton) {
        forward();
        return;
    }
    QWidget::mousePressEvent(e);
}

bool DrilldownView::eventFilter(QObject* watched, QEvent* e) {
    if (watched == m_title && (e->type() == QEvent::Resize || e->type() == QEvent::Show)) {
        elideTitle();
        return false;
    }
    if (e->type() == QEvent::MouseButtonPress &&
        (watched == m_timeline || watched == m_details->viewport())) {
        const auto button = static_cast<QMouseEvent*>(e)->button();
        if (button == Qt::BackButton || button == Qt::ForwardButton) {
            button == Qt::BackButton ? back() : forward();
            return true;
        }
    }
    return QWidget::eventFilter(watched, e);
}

// --- Title -----------------------------------------------------------------

void DrilldownView::setTitle(const QString& text, const QString& tip) {
    m_titleText = text;
    m_titleTip = tip;
    if (!text.startsWith(m_titleId) || m_titleId.isEmpty())
        m_titleId.clear();
    elideTitle();
}

// Short of space, the bizNo gives way first, then the callId's end; the
// tooltip always has the whole title.
void DrilldownView::elideTitle() {
    const int width = m_title->contentsRect().width();
    QString shown = m_titleText;
    const QFontMetrics fm(m_title->font());
    if (m_title->isVisible() && width > 0 && fm.horizontalAdvance(m_titleText) > width) {
        if (!m_titleId.isEmpty() && fm.horizontalAdvance(m_titleId) <= width)
            shown = m_titleId + fm.elidedText(m_titleText.mid(m_titleId.size()), Qt::ElideRight,
                                              width - fm.horizontalAdvance(m_titleId));
        else
            shown = fm.elidedText(m_titleText, Qt::ElideRight, width);
    }
    if (m_title->text() != shown)
        m_title->setText(shown);
    QString tip = shown != m_titleText ? m_titleText : QString();
    if (!m_titleTip.isEmpty())
        tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) + m_titleTip;
    m_title->setToolTip(plainTip(tip));
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
             liveSummary(a, nowMillis()).toHtmlEscaped() + QStringLiteral("</p>");
    h += callTablesHtml(d.timeline, d.diagnosis, nullptr, style);
    if (!d.message.empty())
        h += QStringLiteral("<p><i>") + esc(d.message) + QStringLiteral("</i></p>");
    return h;
}

} // namespace callscope
