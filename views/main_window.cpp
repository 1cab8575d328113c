#include "views/main_window.h"

#include <QLabel>
#include <QTabWidget>

namespace callscope {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), m_tabs(new QTabWidget(this)) {
    setWindowTitle(QStringLiteral("callscope"));
    for (const auto& name : {QStringLiteral("Overview"), QStringLiteral("Anomalies"),
                             QStringLiteral("Drill-down"), QStringLiteral("Instances")})
        m_tabs->addTab(new QLabel(name, m_tabs), name);
    setCentralWidget(m_tabs);
    resize(1280, 800);
}

} // namespace callscope
