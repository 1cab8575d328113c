#pragma once
// PostgreSQL's COPY text format, as COPY ... TO STDOUT writes it.
#include <string>
#include <string_view>
#include <vector>

namespace callscope {

// Splits one line (with or without its newline) into fields: tab-separated,
// \N for NULL (nulls[i] true, fields[i] empty), backslash escapes (\t \n \r
// \b \f \v, up to three octal digits, any other character as itself).
void splitCopyLine(std::string_view line, std::vector<std::string>& fields,
                   std::vector<bool>& nulls);

} // namespace callscope
