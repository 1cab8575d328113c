#include "connectors/copy_text.h"

namespace callscope {

// COPY text format: tab-separated, \N for NULL, backslash escapes.
void splitCopyLine(std::string_view line, std::vector<std::string>& fields,
                   std::vector<bool>& nulls) {
    fields.clear();
    nulls.clear();
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    std::string cur;
    bool isNull = false;
    for (std::size_t i = 0; i <= line.size(); ++i) {
        if (i == line.size() || line[i] == '\t') {
            fields.push_back(std::move(cur));
            nulls.push_back(isNull);
            cur.clear();
            isNull = false;
            continue;
        }
        const char ch = line[i];
        if (ch != '\\' || i + 1 >= line.size()) {
            cur += ch;
            continue;
        }
        const char n = line[++i];
        switch (n) {
        case 'N':
            isNull = true;
            break;
        case 't':
            cur += '\t';
            break;
        case 'n':
            cur += '\n';
            break;
        case 'r':
            cur += '\r';
            break;
        case 'b':
            cur += '\b';
            break;
        case 'f':
            cur += '\f';
            break;
        case 'v':
            cur += '\v';
            break;
        default:
            if (n >= '0' && n <= '7') { // up to three octal digits
                int v = n - '0';
                for (int k = 0;
                     k < 2 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7'; ++k)
                    v = v * 8 + (line[++i] - '0');
                cur += static_cast<char>(v);
            } else {
                cur += n;
            }
        }
    }
}

} // namespace callscope
