// World files: what every section shares: messages that name FILE:LINE and
// the element, structure checks (no unknown attributes, text or children)
// and typed attributes (numbers with a range, integers, booleans, vectors).
#include "sim/world_file_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "plume/error.hpp"

namespace plume::detail::world_xml {

const char* describe(Range r) {
  switch (r) {
    case Range::Any: return "finite";
    case Range::Positive: return "finite and positive";
    case Range::NonNegative: return "finite and non-negative";
    case Range::UnitInterval: return "within [0, 1]";
  }
  return "";
}

bool in_range(double x, Range r) {
  if (!std::isfinite(x)) return false;
  switch (r) {
    case Range::Any: return true;
    case Range::Positive: return x > 0.0;
    case Range::NonNegative: return x >= 0.0;
    case Range::UnitInterval: return x >= 0.0 && x <= 1.0;
  }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && is_space(s[a])) ++a;
  while (b > a && is_space(s[b - 1])) --b;
  return s.substr(a, b - a);
}

bool parse_double(const std::string& token, double& x) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  if (first == last) return false;
  const auto [ptr, ec] = std::from_chars(first, last, x, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    // Overflow: report as infinite; underflow: as zero (std::from_chars leaves x unchanged).
    x = (*first == '-') ? -HUGE_VAL : HUGE_VAL;
    const std::string digits(first, last);
    const std::size_t e = digits.find_first_of("eE");
    if (e != std::string::npos && e + 1 < digits.size() && digits[e + 1] == '-') x = 0.0;
    return ptr == last;
  }
  return ec == std::errc() && ptr == last;
}

std::vector<std::string> split_vector(const std::string& text) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n && is_space(text[i])) ++i;
  if (i == n) return tokens;
  while (true) {
    std::size_t start = i;
    while (i < n && !is_space(text[i]) && text[i] != ',') ++i;
    tokens.push_back(text.substr(start, i - start));
    while (i < n && is_space(text[i])) ++i;
    if (i == n) break;
    if (text[i] == ',') {
      ++i;
      while (i < n && is_space(text[i])) ++i;
      if (i == n) {
        tokens.emplace_back();  // trailing comma
        break;
      }
    }
  }
  return tokens;
}

std::string WorldReader::where(const XMLElement* e) const {
  return source_ + ":" + std::to_string(e->GetLineNum()) + ": <" + e->Name() + ">: ";
}

void WorldReader::fail(const XMLElement* e, const std::string& message) const {
  throw WorldError(where(e) + message);
}

void WorldReader::malformed(const tinyxml2::XMLDocument& doc) const {
  // tinyxml2 reports the line where the offending element (or text) starts and,
  // for element errors, its name ("… Line number=N: XMLElement name=model").
  const std::string detail = doc.ErrorStr() ? doc.ErrorStr() : "";
  std::string element = "world";
  const std::size_t name = detail.find("XMLElement name=");
  if (name != std::string::npos) {
    std::string n = detail.substr(name + 16);
    const std::size_t end = n.find_first_of(" \t\n\"'");
    if (end != std::string::npos) n = n.substr(0, end);
    if (!n.empty()) element = n;
  }
  std::string what;
  switch (doc.ErrorID()) {
    case tinyxml2::XML_ERROR_MISMATCHED_ELEMENT: what = "the element is not closed by its matching end tag"; break;
    case tinyxml2::XML_ERROR_PARSING_ELEMENT: what = "the element is malformed or not closed"; break;
    case tinyxml2::XML_ERROR_PARSING_ATTRIBUTE:
      what = "a malformed attribute (a missing quote or '=', or an attribute given twice)";
      break;
    case tinyxml2::XML_ERROR_PARSING_TEXT: what = "text that is not XML"; break;
    case tinyxml2::XML_ERROR_PARSING_COMMENT: what = "a comment that is not closed"; break;
    case tinyxml2::XML_ERROR_PARSING_DECLARATION: what = "a malformed <?xml … ?> declaration"; break;
    case tinyxml2::XML_ERROR_PARSING_CDATA: what = "a malformed CDATA section"; break;
    case tinyxml2::XML_ERROR_PARSING_UNKNOWN: what = "a malformed <! … > construct"; break;
    case tinyxml2::XML_ERROR_PARSING: what = "the file ends before the element is closed, or is not XML"; break;
    default: {
      what = doc.ErrorName();
      if (what.rfind("XML_ERROR_", 0) == 0) what = what.substr(10);
      std::transform(what.begin(), what.end(), what.begin(), [](char c) {
        return c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      });
    }
  }
  const int line = std::max(1, doc.ErrorLineNum());
  throw WorldError(source_ + ":" + std::to_string(line) + ": <" + element + ">: malformed XML: " + what);
}

void WorldReader::check_attributes(const XMLElement* e, std::initializer_list<const char*> allowed) const {
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    const std::string name = a->Name();
    bool ok = false;
    for (const char* x : allowed) ok = ok || name == x;
    if (!ok) {
      std::string list;
      for (const char* x : allowed) list += (list.empty() ? "" : ", ") + std::string(x);
      fail(e, "unknown attribute '" + name + "'" +
                  (list.empty() ? std::string(" (this element takes no attributes)") : " (expected one of: " + list + ")"));
    }
  }
}

// Text other than whitespace inside an element is a mistake (values go in attributes).
void WorldReader::check_no_text(const XMLElement* e) const {
  for (const tinyxml2::XMLNode* n = e->FirstChild(); n; n = n->NextSibling()) {
    if (const tinyxml2::XMLText* t = n->ToText()) {
      if (!trim(t->Value() ? t->Value() : "").empty()) {
        fail(e, "unexpected text '" + trim(t->Value()) + "' (values are given as attributes)");
      }
    }
  }
}

void WorldReader::check_no_children(const XMLElement* e) const {
  check_no_text(e);
  if (const XMLElement* c = e->FirstChildElement()) {
    fail(c, std::string("unknown element inside <") + e->Name() + "> (it has no child elements)");
  }
}

std::optional<std::string> WorldReader::attribute(const XMLElement* e, const char* name) {
  const char* v = e->Attribute(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

std::string WorldReader::required(const XMLElement* e, const char* name) const {
  std::optional<std::string> v = attribute(e, name);
  if (!v) fail(e, std::string("missing attribute '") + name + "'");
  return *v;
}

std::optional<double> WorldReader::number(const XMLElement* e, const char* name, Range range) const {
  const std::optional<std::string> text = attribute(e, name);
  if (!text) return std::nullopt;
  const std::string token = trim(*text);
  double x = 0.0;
  if (!parse_double(token, x)) fail(e, std::string(name) + "=\"" + *text + "\" is not a number");
  if (!std::isfinite(x)) fail(e, std::string(name) + "=\"" + *text + "\" is not finite");
  if (!in_range(x, range)) fail(e, std::string(name) + "=\"" + *text + "\" must be " + describe(range));
  return x;
}

double WorldReader::number_or(const XMLElement* e, const char* name, double fallback, Range range) const {
  return number(e, name, range).value_or(fallback);
}

std::optional<double> WorldReader::required_number(const XMLElement* e, const char* name, Range range) const {
  required(e, name);
  return number(e, name, range);
}

// An integer given as a number with no fractional part ("8", "5e7"), at least `minimum`.
std::optional<long> WorldReader::integer(const XMLElement* e, const char* name, long minimum) const {
  const std::optional<double> x = number(e, name);
  if (!x) return std::nullopt;
  if (*x != std::floor(*x) || *x < static_cast<double>(minimum) || *x > 9.0e15) {
    fail(e, std::string(name) + "=\"" + *attribute(e, name) + "\" must be an integer ≥ " + std::to_string(minimum));
  }
  return static_cast<long>(*x);
}

std::optional<bool> WorldReader::boolean(const XMLElement* e, const char* name) const {
  const std::optional<std::string> text = attribute(e, name);
  if (!text) return std::nullopt;
  const std::string t = trim(*text);
  if (t == "true" || t == "1") return true;
  if (t == "false" || t == "0") return false;
  fail(e, std::string(name) + "=\"" + *text + "\" must be true or false");
}

// A vector attribute. `expected` < 0: any length ≥ 1; `what` explains the
// expected length in the message ("nq of model 'quad'").
std::optional<VectorX> WorldReader::vector(const XMLElement* e, const char* name, Eigen::Index expected,
                                           const std::string& what) const {
  const std::optional<std::string> text = attribute(e, name);
  if (!text) return std::nullopt;
  const std::vector<std::string> tokens = split_vector(*text);
  if (tokens.empty()) fail(e, std::string(name) + " is empty" + expectation(expected, what));
  VectorX x(static_cast<Eigen::Index>(tokens.size()));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string entry = std::string(name) + " entry " + std::to_string(i);
    if (tokens[i].empty()) fail(e, entry + " is empty (separate numbers by spaces or single commas)");
    double v = 0.0;
    if (!parse_double(tokens[i], v)) fail(e, entry + " ('" + tokens[i] + "') is not a number");
    if (!std::isfinite(v)) fail(e, entry + " ('" + tokens[i] + "') is not finite");
    x(static_cast<Eigen::Index>(i)) = v;
  }
  if (expected >= 0 && x.size() != expected) {
    fail(e, std::string(name) + " has " + std::to_string(x.size()) + " entries" + expectation(expected, what));
  }
  return x;
}

std::string WorldReader::expectation(Eigen::Index expected, const std::string& what) {
  if (expected < 0) return "";
  return ", expected " + std::to_string(expected) + (what.empty() ? "" : " (" + what + ")");
}

std::optional<Vec3> WorldReader::vec3(const XMLElement* e, const char* name) const {
  const std::optional<VectorX> x = vector(e, name, 3, "x y z");
  if (!x) return std::nullopt;
  return Vec3(*x);
}

// URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll).
Mat3 WorldReader::rpy_rotation(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
      .toRotationMatrix();
}

void WorldReader::check_name(const std::string& name, const XMLElement* e) const {
  if (name.empty() || name.find_first_of("/|#,\"") != std::string::npos ||
      std::any_of(name.begin(), name.end(), is_space)) {
    fail(e, "name '" + name + "' must be non-empty without spaces or any of / | # , \"");
  }
}

}  // namespace plume::detail::world_xml
