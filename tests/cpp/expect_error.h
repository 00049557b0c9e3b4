#pragma once

// EXPECT_ERROR(statement, type, part): `statement` throws `type` and its message contains
// `part` (the operator, flag, blob or path that a user needs to find the fault). A test that
// checked the type alone would pass on any error of that type, from anywhere.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#define EXPECT_ERROR(statement, type, part)                                                 \
  do {                                                                                      \
    try {                                                                                   \
      statement;                                                                            \
      ADD_FAILURE() << "expected " #type " from: " #statement;                              \
    } catch (const type& e) {                                                               \
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)                        \
          << "'" << (part) << "' missing from the message of " #statement ": " << e.what(); \
    }                                                                                       \
  } while (0)

namespace crossbow::testing {

// The message of what `body` throws; a test failure, and "", when it throws nothing.
inline std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

}  // namespace crossbow::testing
