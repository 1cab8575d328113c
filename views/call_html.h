#pragma once
// One call's details as HTML, written once for the drill-down and the
// reports: the diagnosis, its evidence, the server record and each lane's
// events. Every string from data goes through htmlText.
#include "models/diagnosis.h"
#include "models/timeline.h"

#include <QString>

#include <functional>
#include <string>

namespace callscope {

struct CallHtmlStyle {
    // Reports: bordered tables with header rows (class "grid"); on screen,
    // plain tables.
    bool print = false;
    // How a sibling callId is written: a link that opens it on screen, the
    // escaped id in a report.
    std::function<QString(const std::string& callId)> callId;
    // Reports put times, callIds and digests in cells that never wrap (and
    // elide what is too long); unset, the screen's forms. Each returns the
    // whole cell (<td>…</td>) or, for the digest, its markup.
    std::function<QString(EpochMillis at)> timeCell;
    std::function<QString(const std::string& callId)> callIdCell;
    std::function<QString(const std::string& digest)> digest;
};

// The verdict, each question with its answer (the decisive one in bold) and
// the sibling callIds.
QString diagnosisHtml(const Diagnosis& diagnosis, const CallHtmlStyle& style);

// The evidence that decided the diagnosis, the server record (with the
// result snapshot when one is given, as markup: a report's payload or its
// redaction note) and the attempts, receipts and caller events in time order.
QString callTablesHtml(const CallTimeline& timeline, const Diagnosis& diagnosis,
                       const QString* resultSnapshotHtml, const CallHtmlStyle& style);

} // namespace callscope
