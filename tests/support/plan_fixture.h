#pragma once
// Plan fixtures of tests/fixtures/, as JSON documents the plan tests edit.
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "base/text_file.h"

namespace pase::test {

/// tests/fixtures/NAME parsed.
inline nlohmann::json plan_fixture(const std::string& name) {
  return nlohmann::json::parse(read_text_file(source_path("tests/fixtures/" + name)));
}

/// The layer of `document` called `name` (the test fails if there is none).
inline nlohmann::json& plan_layer(nlohmann::json& document, const std::string& name) {
  for (nlohmann::json& l : document["layers"])
    if (l["name"] == name) return l;
  FAIL("no layer " << name);
  return document;
}

}  // namespace pase::test
