#pragma once

#include <string>
#include <vector>

namespace crossbow {

// "; did you mean 'Conv'?" for the known name nearest to `name` (case-insensitive edit distance
// under half its length), or "" when none is near: for messages about unknown names.
std::string DidYouMean(const std::string& name, const std::vector<std::string>& known);

// "a, b or c".
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace crossbow
