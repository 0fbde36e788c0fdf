#pragma once
// expect_error<E>(f, {needles…}): f() must throw E whose message holds every
// needle; returns the message ("" and a test failure when nothing is thrown).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace plume::test {

template <class E, class F>
std::string expect_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& n : needles) EXPECT_NE(what.find(n), std::string::npos) << "'" << n << "' not in: " << what;
    return what;
  }
  ADD_FAILURE() << "no exception";
  return "";
}

}  // namespace plume::test
