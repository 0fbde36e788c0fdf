#pragma once
// Suggestions for a name that was not found: the candidates closest to it by
// edit distance (case-insensitive), for messages such as
// "no joint named 'LF_KFE' (did you mean 'quad/LF_KFE'?)".

#include <string>
#include <vector>

namespace plume::detail {

/// Levenshtein distance (insertions, deletions, substitutions) between a and b.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// Up to `max` candidates within a plausible distance of `name`, closest
/// first: one that ends with "/" + name (a world's prefixed name) or equals it
/// ignoring case, then one that starts with the other ("stand", "standing"),
/// then those within an edit distance of a third of the name (at least 2).
std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates,
                                     std::size_t max = 3);

/// " (did you mean 'a' or 'b'?)" for the close names, or "" when there are none.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

/// "'a', 'b', 'c'" (at most `max` names, then ", … (N in all)").
std::string quoted_list(const std::vector<std::string>& names, std::size_t max = 12);

}  // namespace plume::detail
