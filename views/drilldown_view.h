#pragma once
// One callId in depth: the two-lane timeline, the details (record, attempts,
// receipts, caller events), the diagnosis and sibling callIds one click away.
#include "models/dashboard_data.h"

#include <QWidget>

class QLineEdit;
class QLabel;
class QProgressBar;
class QPushButton;
class QTextBrowser;
class QComboBox;
class QSplitter;

namespace callscope {

class TimelineWidget;

class DrilldownView : public QWidget {
    Q_OBJECT
public:
    explicit DrilldownView(QWidget* parent = nullptr);
    // Starts a lookup (the owner sends it to the backend).
    void lookup(const QString& query);
    void showDetail(const CallDetail& detail);
    void focusSearch();
    std::uint64_t generation() const { return m_generation; }
    QString currentCallId() const { return m_callId; }
    TimelineWidget* timeline() const { return m_timeline; }
    QTextBrowser* details() const { return m_details; }
    QLabel* title() const { return m_title; }
    QSplitter* splitter() const { return m_splitter; } // timeline over details

signals:
    void callRequested(const QString& query, quint64 generation);
    void cancelRequested();
    void callShown(const QString& callId); // a lookup found this callId

private:
    void setBusy(bool busy);
    QString detailsHtml(const CallDetail& d) const;

    QLineEdit* m_search;
    QPushButton* m_go;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_title;
    QComboBox* m_anomaly; // which anomaly's evidence is outlined
    TimelineWidget* m_timeline;
    QTextBrowser* m_details;
    QSplitter* m_splitter;
    std::uint64_t m_generation = 0;
    QString m_query, m_queryShown; // the last lookup, raw and as the search box shows it
    QString m_callId;
    std::vector<Anomaly> m_anomalies;
    CallTimeline m_current;
};

} // namespace callscope
