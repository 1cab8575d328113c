#pragma once
// The dashboard's main window: one tab per surface of SPEC §4.1. The
// surfaces themselves arrive with the dashboard issue; this is the frame.
#include <QMainWindow>

class QTabWidget;

namespace callscope {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

private:
    QTabWidget* m_tabs;
};

} // namespace callscope
