#include "connectors/copy_text.h"

#include <charconv>
#include <cstring>

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

namespace {

// A big-endian signed integer of `n` bytes.
std::int64_t bigEndian(const char* p, int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
        v = v << 8 | static_cast<unsigned char>(p[i]);
    if (n < 8 && (v >> (8 * n - 1)) != 0) // (negative: sign-extended)
        v |= ~std::uint64_t{0} << (8 * n);
    return static_cast<std::int64_t>(v);
}

void writeInt(std::string& out, std::int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.assign(buf, r.ptr);
}

// Microseconds since 2000-01-01 UTC -> epoch milliseconds, as timeField()
// reads the same time's text.
std::int64_t millisOf(std::int64_t micros2000) {
    constexpr std::int64_t epoch2000 = 946'684'800'000'000; // in epoch microseconds
    constexpr std::int64_t year1 = -62'135'596'800'000;     // 0001-01-01, epoch ms
    constexpr std::int64_t year10000 = 253'402'300'800'000; // 10000-01-01, epoch ms
    // (Margins for the rounding below: no sum may overflow.)
    if (micros2000 > INT64_MAX - epoch2000 - 1000)
        return kTimeClamp; // (infinity among them)
    if (micros2000 < INT64_MIN + epoch2000 + 1000)
        return -kTimeClamp;
    const std::int64_t ms = roundToMillis(micros2000 + epoch2000);
    if (ms >= year10000)
        return kTimeClamp;
    if (ms < year1)
        return -kTimeClamp; // BC
    return ms;
}

} // namespace

// COPY binary format: a header (signature, flags, extension) in the first
// message, then per row a 16-bit field count and per field a 32-bit length
// (-1: NULL) and its bytes; a count of -1 ends it. Integers big-endian.
int splitBinaryCopyRow(std::string_view message, bool first, const std::vector<CopyBinary>& kinds,
                       std::vector<std::string>& fields, std::vector<bool>& nulls) {
    const char* p = message.data();
    const char* const end = p + message.size();
    if (first) {
        static constexpr char kSignature[11] = {'P',  'G',    'C',  'O',  'P', 'Y',
                                                '\n', '\377', '\r', '\n', '\0'};
        if (message.size() < 19 || std::memcmp(p, kSignature, 11) != 0)
            return -1;
        if (bigEndian(p + 11, 4) >> 16 != 0)
            return -1; // a flag it must understand (OIDs included, or later ones)
        p += 15;       // the signature and the flags
        const std::int64_t extension = bigEndian(p, 4);
        p += 4;
        if (extension < 0 || extension > end - p)
            return -1;
        p += extension;
        if (p == end)
            return 0;
    }
    if (end - p < 2)
        return -1;
    const std::int64_t count = bigEndian(p, 2);
    p += 2;
    if (count == -1)
        return p == end ? 0 : -1;
    if (count != static_cast<std::int64_t>(kinds.size()))
        return -1;
    fields.resize(kinds.size());
    nulls.assign(kinds.size(), false);
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        if (end - p < 4)
            return -1;
        const std::int64_t length = bigEndian(p, 4);
        p += 4;
        std::string& f = fields[i];
        if (length == -1) {
            f.clear();
            nulls[i] = true;
            continue;
        }
        if (length < 0 || length > end - p)
            return -1;
        switch (kinds[i]) {
        case CopyBinary::Text:
            f.assign(p, static_cast<std::size_t>(length));
            break;
        case CopyBinary::Int:
            if (length != 2 && length != 4 && length != 8)
                return -1;
            writeInt(f, bigEndian(p, static_cast<int>(length)));
            break;
        case CopyBinary::Timestamp:
            if (length != 8)
                return -1;
            writeInt(f, millisOf(bigEndian(p, 8)));
            break;
        }
        p += length;
    }
    return p == end ? 1 : -1;
}

} // namespace callscope
