#include "connectors/copy_text.h"

namespace callscope {

// COPY text format: tab-separated, \N for NULL, backslash escapes.
void splitCopyLine(std::string_view line, std::vector<std::string>& fields,
                   std::vector<bool>& nulls) {
    nulls.clear();
    if (!line.empty() && line.back() == '\n')
        line.remove_suffix(1);
    // The field strings are kept from line to line: their buffers are reused.
    std::size_t count = 0;
    const auto nextField = [&]() -> std::string& {
        if (count == fields.size())
            fields.emplace_back();
        std::string& f = fields[count++];
        f.clear();
        return f;
    };
    std::string* field = &nextField();
    bool isNull = false;
    for (std::size_t i = 0; i <= line.size(); ++i) {
        // A run of plain characters in one append (most fields have no escape).
        std::size_t run = i;
        while (run < line.size() && line[run] != '\t' && line[run] != '\\')
            ++run;
        if (run > i) {
            field->append(line.data() + i, run - i);
            i = run;
        }
        if (i == line.size() || line[i] == '\t') {
            nulls.push_back(isNull);
            isNull = false;
            if (i < line.size())
                field = &nextField();
            continue;
        }
        std::string& cur = *field;
        if (i + 1 >= line.size()) {
            cur += '\\';
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
    fields.resize(count);
}

} // namespace callscope
