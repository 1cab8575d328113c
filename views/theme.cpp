#include "views/theme.h"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace callscope {
namespace {

const QString kKey = QStringLiteral("view/theme");

struct Original {
    QString style;
    QPalette palette;
    bool saved = false;
};

Original& original() {
    static Original o;
    return o;
}

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x25, 0x28, 0x2e), base(0x1c, 0x1e, 0x23), text(0xe3, 0xe6, 0xea);
    const QColor disabled(0x7a, 0x80, 0x8a), highlight(0x3d, 0x8e, 0xd9);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x2a, 0x2d, 0x34));
    p.setColor(QPalette::ToolTipBase, QColor(0x31, 0x35, 0x3c));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x2f, 0x33, 0x3a));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x3a, 0x3e, 0x46));
    p.setColor(QPalette::Midlight, QColor(0x33, 0x37, 0x3e));
    p.setColor(QPalette::Mid, QColor(0x24, 0x27, 0x2c));
    p.setColor(QPalette::Dark, QColor(0x16, 0x18, 0x1c));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xb0, 0xf0));
    p.setColor(QPalette::LinkVisited, QColor(0xa8, 0x8c, 0xe0));
    for (const auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

QString name(Theme t) {
    switch (t) {
    case Theme::Light:
        return QStringLiteral("light");
    case Theme::Dark:
        return QStringLiteral("dark");
    case Theme::System:
        break;
    }
    return QStringLiteral("system");
}

void apply(Theme t) {
    Original& o = original();
    if (!o.saved) {
        o.style = QApplication::style()->name();
        o.palette = QApplication::palette();
        o.saved = true;
    }
    if (t == Theme::System) {
        QApplication::setStyle(QStyleFactory::create(o.style));
        QApplication::setPalette(o.palette);
        return;
    }
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(t == Theme::Dark ? darkPalette()
                                              : QApplication::style()->standardPalette());
}

} // namespace

Theme currentTheme() {
    const QString v = QSettings().value(kKey).toString();
    return v == QLatin1String("dark")    ? Theme::Dark
           : v == QLatin1String("light") ? Theme::Light
                                         : Theme::System;
}

void initTheme() {
    if (const Theme t = currentTheme(); t != Theme::System)
        apply(t);
}

void applyTheme(Theme theme) {
    QSettings().setValue(kKey, name(theme));
    apply(theme);
}

bool isDarkPalette() {
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace callscope
