#pragma once
// One callId in depth: the two-lane timeline with its key, the details
// (record, attempts, receipts, caller events), the diagnosis and sibling
// callIds one click away; back and forward across the calls shown
// (Alt+Left/Right, the mouse's back/forward buttons, the ◀ ▶ buttons).
#include "models/dashboard_data.h"

#include <QStringList>
#include <QWidget>

class QLineEdit;
class QLabel;
class QProgressBar;
class QPushButton;
class QTextBrowser;
class QComboBox;
class QSplitter;
class QShortcut;
class QToolButton;

namespace callscope {

class GroupTimelineWidget;
class TimelineWidget;

class DrilldownView : public QWidget {
    Q_OBJECT
public:
    explicit DrilldownView(QWidget* parent = nullptr);
    // Starts a lookup (the owner sends it to the backend); once found, the
    // callId joins the history (dropping anything ahead of the current one).
    void lookup(const QString& query);
    void showDetail(const CallDetail& detail);
    void focusSearch();
    std::uint64_t generation() const { return m_generation; }
    QString currentCallId() const { return m_callId; }
    TimelineWidget* timeline() const { return m_timeline; }
    // The call's group on one axis (hidden when it is in none).
    GroupTimelineWidget* groupTimeline() const { return m_group; }
    // Looks the current call up again with `others` beside it on one axis.
    void compareWith(const QStringList& others);
    QPushButton* compareButton() const { return m_compare; }
    QTextBrowser* details() const { return m_details; }
    QLabel* title() const { return m_title; }
    QComboBox* evidenceChoice() const { return m_anomaly; } // which anomaly is outlined
    QSplitter* splitter() const { return m_splitter; }      // timeline over details

    // History of the callIds shown: back and forward look them up again
    // without adding to it.
    bool canGoBack() const { return m_historyIndex > 0; }
    bool canGoForward() const { return m_historyIndex + 1 < m_history.size(); }
    const QStringList& history() const { return m_history; }
    int historyIndex() const { return m_historyIndex; }
    QToolButton* backButton() const { return m_backButton; }
    QToolButton* forwardButton() const { return m_forwardButton; }
    // The view's own Alt+Left/Right (on by default). A window that gives the
    // same keys to its own actions turns these off: two shortcuts on one key
    // are ambiguous and neither fires.
    void setHistoryShortcutsEnabled(bool enabled);

public slots:
    void back();
    void forward();

signals:
    void callRequested(const QString& query, quint64 generation);
    void compareRequested(const QString& callId, const QStringList& others, quint64 generation);
    void cancelRequested();
    void callShown(const QString& callId); // a lookup found this callId
    void historyChanged();                 // canGoBack/canGoForward may have changed

protected:
    void mousePressEvent(QMouseEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void startLookup(const QString& query, bool fromHistory);
    void pushHistory(const QString& callId);
    void goTo(int index);
    void updateHistoryButtons();
    void setTitle(const QString& text, const QString& tip = {});
    void elideTitle();
    void setBusy(bool busy);
    QString detailsHtml(const CallDetail& d) const;

    QToolButton* m_backButton;
    QToolButton* m_forwardButton;
    QShortcut* m_backKey;
    QShortcut* m_forwardKey;
    QLineEdit* m_search;
    QPushButton* m_go;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_title;
    QComboBox* m_anomaly; // which anomaly's evidence is outlined
    TimelineWidget* m_timeline;
    GroupTimelineWidget* m_group;
    QPushButton* m_compare;
    QTextBrowser* m_details;
    QSplitter* m_splitter;
    std::uint64_t m_generation = 0;
    std::uint64_t m_historyGeneration = 0; // the lookup back()/forward() started
    QString m_query, m_queryShown;         // the last lookup, raw and as the search box shows it
    QString m_callId;
    QString m_titleText, m_titleTip; // the title in full (the label may elide it)
    QString m_titleId;               // the part never elided first: the callId shown
    QStringList m_history;
    int m_historyIndex = -1;
    std::vector<Anomaly> m_anomalies;
    CallTimeline m_current;
};

} // namespace callscope
