#include "names.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace plume::detail {

namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates,
                                     std::size_t max) {
  const std::string key = lower(name);
  // A typo changes about a third of a name at most; short names allow 2 edits.
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    const std::string lc = lower(c);
    std::size_t d;
    const bool prefixed = lc.size() > key.size() && lc.compare(lc.size() - key.size() - 1, std::string::npos, "/" + key) == 0;
    const std::string& shorter = lc.size() < key.size() ? lc : key;
    const std::string& longer = lc.size() < key.size() ? key : lc;
    if (lc == key || prefixed) {
      d = 0;
    } else if (shorter.size() >= 3 && longer.compare(0, shorter.size(), shorter) == 0) {
      d = 1;  // one is the start of the other: "stand", "standing"
    } else {
      d = edit_distance(key, lc);
      if (d > limit) continue;
      ++d;
    }
    scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() == max) break;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = close_names(name, candidates);
  if (close.empty()) return "";
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i) {
    if (i > 0) text += i + 1 == close.size() ? " or " : ", ";
    text += "'" + close[i] + "'";
  }
  return text + "?)";
}

std::string quoted_list(const std::vector<std::string>& names, std::size_t max) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) text += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max) text += ", … (" + std::to_string(names.size()) + " in all)";
  return text;
}

}  // namespace plume::detail
